"""The docs run as written: every shell block of README.md and docs/*.md that opens with
```sh runnable is run in a copy of the repository against the fake endpoint, README.md's blocks
first (one comparison, start to end), then each page of docs/ in name order, each block in its
own `bash -e` with `python` on PATH; every block must exit 0, and what the jq recipes print is
checked against the files they read."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import CI, ROOT
from fake_llm import FakeLLM

PAGES = ["README.md"] + sorted(os.path.join("docs", f) for f in os.listdir(os.path.join(ROOT, "docs"))
                               if f.endswith(".md"))
BLOCK = re.compile(r"^```sh runnable\n(.*?)^```[ \t]*$", re.M | re.S)
# What the copy of the repository leaves out: environments, caches, and what earlier runs wrote.
IGNORED = shutil.ignore_patterns(".git", ".venv", ".venv-*", ".cache", "__pycache__", ".pytest_cache", "imported")


def runnable(page: str) -> list[str]:
    """The runnable shell blocks of a page, in order."""
    with open(os.path.join(ROOT, page), encoding="utf-8") as fh:
        return BLOCK.findall(fh.read())


def read_jsonl(path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """Every runnable block run in a copy of the repository; {(page, index): CompletedProcess}
    and the copy's path."""
    if shutil.which("jq") is None:
        why = "jq is not installed (apt-get install jq; make test installs it)"
        pytest.fail(why) if CI else pytest.skip(why)
    base = tmp_path_factory.mktemp("docs")
    repo = base / "repo"
    shutil.copytree(ROOT, repo, ignore=IGNORED)
    for folder in ("runs", "results"):  # nothing an earlier run of this checkout left there
        for entry in (repo / folder).iterdir():
            if entry.name != ".gitkeep":
                shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
    bin_dir = base / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)  # `python` as the docs write it
    server = FakeLLM().start()
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "LLM_BASE_URL": server.url,
           "LLM_API_KEY": "sk-test-not-a-secret"}
    env.pop("LLM_SERVER_INFO", None)
    done = {}
    try:
        for page in PAGES:
            for i, block in enumerate(runnable(page)):
                done[(page, i)] = subprocess.run(["bash", "-e", "-c", block], cwd=repo, env=env, capture_output=True,
                                                 text=True, timeout=900)
    finally:
        server.stop()
    return {"blocks": done, "repo": repo}


def output(ran, needle: str) -> str:
    """What the one runnable block holding `needle` printed."""
    found = [(key, p) for key, p in ran["blocks"].items() if needle in runnable(key[0])[key[1]]]
    assert len(found) == 1, f"{len(found)} runnable blocks hold {needle!r}"
    return found[0][1].stdout


def test_there_are_runnable_blocks_in_the_readme_and_in_docs():
    assert runnable("README.md") and sum(len(runnable(p)) for p in PAGES[1:]) >= 5


def test_every_runnable_block_passes_as_written(ran):
    failed = [f"{page} block {i + 1} exited {p.returncode}:\n{runnable(page)[i]}\n{p.stderr[-3000:]}"
              for (page, i), p in ran["blocks"].items() if p.returncode != 0]
    assert not failed, "\n\n".join(failed)


def test_the_readme_makes_one_comparison_and_ends_on_its_first_table(ran):
    repo = ran["repo"]
    assert (repo / "results" / "latest" / "report.html").exists()
    assert (repo / "runs" / "latest" / "bm25.jsonl").exists()
    out = ran["blocks"][("README.md", 0)].stdout.splitlines()
    assert out[-1].startswith("report: results/") and out[-1].endswith("report.html (open it from disk)")
    header = next(line for line in out if line.startswith("system "))
    assert "Δ vs baseline [95% CI]" in header
    scores = json.load(open(repo / "results" / "latest" / "scores.json"))
    assert [d["system"] for d in scores["differences"]] == ["bm25"]
    assert json.load(open(repo / "results" / "latest" / "calibration.json"))["heldout"]["calibration_set"] == \
        "data/heldout.jsonl"


def test_the_recipe_for_keyword_finding_the_evidence_and_answering_wrongly_joins_the_verdicts(ran):
    repo = ran["repo"]
    verdicts = {(v["qid"], v["repeat"], v["context_token_budget"]): v["verdict"]
                for v in read_jsonl(repo / "results" / "latest" / "verdicts.jsonl") if v["backend"] == "keyword"}
    expected = [[r["qid"], r["answer"]] for r in read_jsonl(repo / "runs" / "latest" / "keyword.jsonl")
                if r["retrieved_ids"] is not None and set(r["evidence"]) & set(r["retrieved_ids"])
                and verdicts[(r["qid"], r["repeat"], r["context_token_budget"])] in ("incorrect", "unparseable")]
    printed = [json.loads(line) for line in output(ran, 'IN("incorrect", "unparseable")').splitlines()]
    assert expected and printed == expected[:10]  # `| head`
    right = {q for (q, _, _), v in verdicts.items() if v == "correct"}
    assert not right & {qid for qid, _ in printed}


def test_the_counting_recipes_print_what_the_files_hold(ran):
    repo = ran["repo"]
    lost = [r for r in read_jsonl(repo / "runs" / "latest" / "full_context.jsonl")
            if set(r["evidence"]) - set(r["context_ids"] or [])]
    assert int(output(ran, "full_context.jsonl | wc -l").strip()) == len(lost)
    layers: dict = {}
    for v in read_jsonl(repo / "results" / "latest" / "verdicts.jsonl"):
        layers[str(v["by"]) if v["by"] is not None else "null"] = layers.get(v["by"] or "null", 0) + 1
    printed = dict(reversed(line.split()) for line in output(ran, "uniq -c").splitlines())
    assert {k: int(n) for k, n in printed.items()} == layers
    scores = json.load(open(repo / "results" / "latest" / "scores.json"))
    reader = [[x["system"], x["qid"]] for x in scores["questions"] if x["cause"] == "reader_miss"]
    assert [json.loads(line) for line in output(ran, 'select(.cause == "reader_miss")').splitlines()] == reader[:10]


def test_the_prompt_recipe_prints_the_context_the_model_read(ran):
    first = next(r for r in read_jsonl(ran["repo"] / "runs" / "latest" / "keyword.jsonl") if r["context_text"])
    assert output(ran, "first(inputs").rstrip("\n") == first["context_text"]


def test_the_recipe_comparing_two_runs_finds_the_rerun_of_a_deterministic_system_the_same(ran):
    assert output(ran, "diff <(jq") == "the same hits\n"


def test_the_recipe_comparing_two_run_ids_finds_todays_keyword_equal_to_the_readmes(ran):
    # keyword is deterministic and its answers come from the response cache: no difference
    [d] = [json.loads(line) for line in output(ran, "compare.json").splitlines()]
    assert d["system"].endswith("-today/keyword") and d["baseline"].endswith("/keyword") and "-today" not in d["baseline"]
    assert d["difference"] == d["ci_low"] == d["ci_high"] == 0


def test_the_walk_through_puts_a_new_backend_into_reports_of_its_own_run_id(ran):
    repo = ran["repo"]
    scores = json.load(open(repo / "results" / "mine" / "scores.json"))
    assert [s["label"] for s in scores["systems"]] == ["none", "oracle", "keyword", "recent"]
    assert [d["system"] for d in scores["differences"]] == ["recent"]
    rows = json.load(open(repo / "results" / "index.json"))["rows"]
    assert {"mine"} < {run_id for r in rows for run_id in r["run_ids"]}  # beside the README's run id
    assert (repo / "results" / "latest" / "report.html").exists()  # the README's report untouched


def test_every_jq_block_has_its_output_checked():
    checked = ('IN("incorrect", "unparseable")', "full_context.jsonl | wc -l", "uniq -c", 'select(.cause == "reader_miss")',
               "first(inputs", "diff <(jq", "compare.json")
    for page in PAGES:
        for block in runnable(page):
            if re.search(r"(^|\|\s*|<\()jq\b", block, re.M):
                assert any(c in block for c in checked), f"{page}: a jq recipe whose output no test checks:\n{block}"


def test_the_readme_picture_is_a_small_first_screen_of_the_default_run():
    """docs/first-screen.png says what run it shows (docs/screenshot.py writes it in); that run
    must be what `make bench` runs now: config.yaml's dataset, byte for byte, and the Makefile's
    systems and sample (`make plan`). A new default dataset or system fails here until `make
    bench && make picture` takes the picture again."""
    Image = pytest.importorskip("PIL.Image", reason="Pillow comes with the plotting extra (requirements-plots.txt)")
    import yaml
    from fileio import sha256_file
    path = os.path.join(ROOT, "docs", "first-screen.png")
    with Image.open(path) as image:
        assert image.format == "PNG" and image.size == (1366, 768)
        shown = json.loads(image.text["memory-bench"])
    assert os.path.getsize(path) < 150_000
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
        assert "](docs/first-screen.png)" in fh.read()
    with open(os.path.join(ROOT, "config.yaml"), encoding="utf-8") as fh:
        dataset = yaml.safe_load(fh)["dataset"]
    assert (shown["dataset"], shown["dataset_sha256"]) == (dataset, sha256_file(os.path.join(ROOT, dataset)))
    env = {k: v for k, v in os.environ.items() if k not in ("LLM_BASE_URL", "MAKEFLAGS", "MAKELEVEL")}
    plan = json.loads(subprocess.run(["make", "-s", "--no-print-directory", "plan"], cwd=ROOT, env=env, check=True,
                                     capture_output=True, text=True).stdout)
    assert shown["systems"] == plan["systems"].split() and shown["sample"] == plan["sample"]
    assert shown["model_free_systems"] == plan["model_free_systems"].split()
