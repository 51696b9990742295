"""A judge panel, as a user runs it: judge.py grades the same answers with a second judge on its
own endpoint (--judge-model, --judge-endpoint), panel.py gives the kappas the judges' known
disagreement implies and the pair of systems whose order flips between them, and report.py's
first screen names that pair; with one judge and one reader it says stability was not measured.
Bad input exits 2 naming the file and line."""
from __future__ import annotations

import json
import os

import pytest

from conftest import script
from fake_llm import FakeLLM, answer_for
from fileio import sha256_file
from formats import MANIFEST_FORMAT
from records import run_record, write_comparison

# Ten questions in ten cases per system; each answer is "right" (states the gold in other words
# than the gold alone, so the rules leave it to the judge), "wrong", or hedged with "perhaps",
# which judge B grades the other way from judge A.
ANSWERS = {"keyword": "rrrrrrwwww",   # A 6 right, B 6
           "bm25": "RRrrrrrwww",      # A 7 right, B 5 (R: right, hedged)
           "hash": "rrrWwwwwww"}      # A 3 right, B 4 (W: wrong, hedged)
# Of the 30 answers the judges disagree on 3 (the hedged ones): observed agreement 27/30; judge A
# says right to 16, judge B to 15.
N, AGREE, YES_A, YES_B = 30, 27, 16, 15


def records() -> dict:
    """The three systems' run records."""
    text = {"r": "It was blue {i}, as far as I recall", "w": "It was red {i}, as far as I recall",
            "R": "Perhaps it was blue {i}", "W": "Perhaps it was red {i}"}
    return {name: [run_record(name, f"q{i}", f"c{i}", text[a].format(i=i), ["t1"], ["t1"], gold_answer=f"blue {i}")
                   for i, a in enumerate(answers)] for name, answers in ANSWERS.items()}


def judge_b(body: dict) -> str | None:
    """Judge B: judge A's verdict (the fake endpoint's), turned over for a hedged answer."""
    prompt = body["messages"][-1]["content"]
    if "Reference answer:" not in prompt:
        return None
    verdict = json.loads(answer_for(prompt))["verdict"]
    if "perhaps" in prompt.split("Candidate answer:", 1)[1].lower():
        verdict = {"correct": "incorrect", "incorrect": "correct"}[verdict]
    return json.dumps({"verdict": verdict})


def manifest(tmp_path, systems: dict) -> str:
    """A manifest of these runs, as manifest.py writes it."""
    first = next(iter(systems.values()))[0]
    dataset = str(tmp_path / "cases.jsonl")
    m = {"format": MANIFEST_FORMAT, "run_id": "r", "created_utc": "2026-06-01T00:00:00Z", "git_commit": "c" * 40,
         "git_dirty": False, "dataset": dataset, "dataset_sha256": sha256_file(dataset),
         "dataset_counts": {"cases": 10, "sessions": 10, "turns": 20, "questions": 10,
                            "questions_by_type": {"single_hop": 10}},
         "config": "config.yaml", "config_sha256": "f" * 64, "answer_model": first["answer_model"],
         "judge_model": "judge-a", "sample": None, "top_k": first["top_k"],
         "context_token_budget": first["context_token_budget"], "tokenizer": first["tokenizer"],
         "endpoint": "LLM_BASE_URL", "served_model_info": None,
         "backends": [{"name": n, "id": n, "version": "v", "code_sha256": "c" * 64} for n in systems]}
    path = tmp_path / "manifest-r.json"
    path.write_text(json.dumps(m), encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The runs graded by judge A (the config's, on LLM_BASE_URL) and judge B (--judge-model on
    its own endpoint, LLM_BASE_URL pointing nowhere), in subprocesses as a user runs them."""
    tmp = tmp_path_factory.mktemp("panel")
    systems = records()
    runs, _, cfg = write_comparison(tmp, systems, judge_model="judge-a", workers=1)
    a, b = FakeLLM().start(), FakeLLM().start()
    b.responder = judge_b
    try:
        va, vb = str(tmp / "verdicts.jsonl"), str(tmp / "verdicts-judge-b.jsonl")
        done = script("judge.py", "--config", cfg, "--runs", *runs, "--out", va,
                      env={"LLM_BASE_URL": a.url, "LLM_API_KEY": "sk-a"})
        assert done.returncode == 0, done.stderr
        done = script("judge.py", "--config", cfg, "--runs", *runs, "--out", vb, "--judge-model", "judge-b",
                      "--judge-endpoint", "JUDGE_B", env={"LLM_BASE_URL": "http://127.0.0.1:9/v1", "LLM_API_KEY": "",
                                                          "JUDGE_B_BASE_URL": b.url, "JUDGE_B_API_KEY": "sk-b-secret"})
        assert done.returncode == 0, done.stderr
        assert {body["model"] for body in b.bodies} == {"judge-b"}
        assert {body["model"] for body in a.bodies} == {"judge-a"}
    finally:
        a.stop()
        b.stop()
    return {"tmp": tmp, "runs": runs, "cfg": cfg, "va": va, "vb": vb, "manifest": manifest(tmp, systems)}


def run_panel(g: dict, *verdicts: str) -> tuple[object, dict | None]:
    """panel.py on the graded runs; the process and panel.json."""
    out = g["tmp"] / "panel.json"
    done = script("panel.py", "--runs", *g["runs"], "--verdicts", *verdicts, "--baseline", "keyword", "--config",
                  g["cfg"], "--resamples", "200", "--json", str(out))
    return done, (json.loads(out.read_text(encoding="utf-8")) if done.returncode == 0 else None)


def test_each_judge_writes_its_own_verdicts_and_no_key_is_written(graded):
    rows = [json.loads(line) for line in open(graded["vb"], encoding="utf-8")]
    assert {v["judge_model"] for v in rows} == {"judge-b"} and {v["by"] for v in rows} == {"llm"}
    assert "sk-b-secret" not in open(graded["vb"], encoding="utf-8").read()


def test_two_judges_disagreeing_on_a_known_share_give_the_kappa_it_implies(graded):
    done, panel = run_panel(graded, graded["va"], graded["vb"])
    assert done.returncode == 0, done.stderr
    overall = panel["agreement"]["overall"]
    assert overall["answers"] == N and overall["unanimous"] == AGREE
    # Cohen: observed 0.9, chance (16 x 15 + 14 x 15) / 900 = 0.5, so (0.9 - 0.5) / (1 - 0.5) = 0.8.
    (cohen,) = overall["cohen_kappa"]
    assert cohen["judges"] == ["judge-a", "judge-b"] and cohen["kappa"] == pytest.approx(0.8)
    assert cohen["ci"][0] <= 0.8 <= cohen["ci"][1]
    # Fleiss (two raters: Scott's pi) pools the shares of yeses: p = 31 / 60.
    p = (YES_A + YES_B) / (2 * N)
    chance = p * p + (1 - p) * (1 - p)
    assert overall["fleiss_kappa"]["kappa"] == pytest.approx((AGREE / N - chance) / (1 - chance))
    # keyword's six right answers are right under both judges: full agreement on that system.
    assert panel["agreement"]["by_system"]["keyword"]["cohen_kappa"][0]["kappa"] == pytest.approx(1.0)
    assert set(panel["agreement"]["by_kind"]) == {"single_hop"}
    views = panel["views"]
    acc = {label: {s["system"]: s["accuracy"] for s in v["systems"]} for label, v in views.items()}
    assert acc["judge-a"] == pytest.approx({"keyword": 0.6, "bm25": 0.7, "hash": 0.3})
    assert acc["judge-b"] == pytest.approx({"keyword": 0.6, "bm25": 0.5, "hash": 0.4})
    assert acc["majority"] == pytest.approx({"keyword": 0.6, "bm25": 0.5, "hash": 0.3})  # both must say right
    (ranking,) = panel["stability"]["ranking"]
    assert [f["systems"] for f in ranking["flips"]] == [["bm25", "keyword"]]
    assert ranking["kendall_tau_b"][0]["tau"] == pytest.approx(1 / 3)
    bm25 = next(d for d in panel["stability"]["differences"] if d["system"] == "bm25")
    assert not bm25["sign_holds"] and panel["stability"]["ranking_holds"] is False
    assert "bm25 and keyword change order" in done.stdout


def test_the_first_screen_names_the_pair_that_flips_between_the_judges(graded):
    done, _ = run_panel(graded, graded["va"], graded["vb"])
    assert done.returncode == 0, done.stderr
    tmp = graded["tmp"]
    scores = str(tmp / "scores.json")
    done = script("score.py", "--runs", *graded["runs"], "--verdicts", graded["va"], "--baseline", "keyword",
                  "--manifest", graded["manifest"], "--resamples", "200", "--json", scores)
    assert done.returncode == 0, done.stderr
    common = ["--scores", scores, "--manifest", graded["manifest"], "--runs", *graded["runs"], "--verdicts",
              graded["va"]]
    done = script("report.py", *common, "--out", str(tmp / "alone" / "report.md"))
    assert done.returncode == 0, done.stderr
    alone = (tmp / "alone" / "report.md").read_text(encoding="utf-8").split("## All metrics")[0]
    assert "**Ranking across judges and readers**: one judge, one reader: stability not measured." in alone
    done = script("report.py", *common, "--panel", str(tmp / "panel.json"), "--out", str(tmp / "both" / "report.md"))
    assert done.returncode == 0, done.stderr
    screen = (tmp / "both" / "report.md").read_text(encoding="utf-8").split("## All metrics")[0]
    line = next(x for x in screen.splitlines() if "Ranking across judges and readers" in x)
    assert "did not hold across 2 judges (judge-a, judge-b)" in line
    assert "bm25 and keyword change order (judge-a: bm25 0.700 > keyword 0.600; judge-b: keyword 0.600 > bm25 " \
           "0.500)" in line
    assert "one reader: not measured across readers" in line
    assert "Ranking across judges and readers" in done.stdout  # the terminal's first screen too


def test_a_panel_of_one_says_what_it_cannot_measure(graded):
    done, panel = run_panel(graded, graded["va"])
    assert done.returncode == 0, done.stderr
    assert panel["agreement"] is None and panel["stability"]["ranking_holds"] is None
    assert "a panel of one judge" in panel["note"]
    assert "one judge, one reader: stability not measured." in done.stdout


def test_a_bad_verdicts_line_or_the_same_judge_twice_exits_2_naming_the_file(graded):
    broken = graded["tmp"] / "broken.jsonl"
    lines = open(graded["vb"], encoding="utf-8").read().splitlines()
    broken.write_text("\n".join(lines[:2] + ["{not json"] + lines[2:]) + "\n", encoding="utf-8")
    done, _ = run_panel(graded, graded["va"], str(broken))
    assert done.returncode == 2 and f"{broken}:3: invalid JSON" in done.stderr and "Traceback" not in done.stderr
    done, _ = run_panel(graded, graded["va"], graded["va"])
    assert done.returncode == 2 and "judge 'judge-a' again" in done.stderr


def test_a_judge_endpoint_that_is_not_set_exits_2_naming_its_variable(graded):
    done = script("judge.py", "--config", graded["cfg"], "--runs", *graded["runs"], "--out",
                  str(graded["tmp"] / "v-c.jsonl"), "--judge-model", "judge-c", "--judge-endpoint", "JUDGE_C",
                  env={"JUDGE_C_BASE_URL": ""})
    assert done.returncode == 2 and "JUDGE_C_BASE_URL" in done.stderr
    assert not os.path.exists(graded["tmp"] / "v-c.jsonl") or not open(graded["tmp"] / "v-c.jsonl").read()


def test_the_first_screen_says_the_ranking_held_across_readers_and_refuses_a_sweep_of_other_scores(graded):
    tmp = graded["tmp"]
    scores = str(tmp / "scores-a.json")
    done = script("score.py", "--runs", *graded["runs"], "--verdicts", graded["va"], "--baseline", "keyword",
                  "--manifest", graded["manifest"], "--resamples", "200", "--json", scores)
    assert done.returncode == 0, done.stderr
    other = json.load(open(scores, encoding="utf-8"))  # a second reader that ranks the systems alike
    other["contract"]["answer_model"] = "reader-b"
    (tmp / "scores-b.json").write_text(json.dumps(other), encoding="utf-8")
    sweep = str(tmp / "sweep.json")
    done = script("sweep.py", "--scores", scores, str(tmp / "scores-b.json"), "--json", sweep)
    assert done.returncode == 0, done.stderr
    common = ["--scores", scores, "--manifest", graded["manifest"], "--runs", *graded["runs"], "--verdicts",
              graded["va"], "--sweep", sweep, "--out", str(tmp / "sweep" / "report.md")]
    done = script("report.py", *common)
    assert done.returncode == 0, done.stderr
    screen = (tmp / "sweep" / "report.md").read_text(encoding="utf-8").split("## All metrics")[0]
    line = next(x for x in screen.splitlines() if "Ranking across judges and readers" in x)
    assert "one judge: not measured across judges; the ranking held across 2 readers (m, reader-b)" in line
    done = script("sweep.py", "--scores", str(tmp / "scores-b.json"), "--json", sweep)
    assert done.returncode == 0, done.stderr
    done = script("report.py", *common)
    assert done.returncode == 2 and f"--sweep {sweep}: field 'readers'" in done.stderr


def test_the_kappa_from_totals_is_cohens_kappa_of_the_labels():
    from stats import binary_cohen_kappa, cohen_kappa
    labels = [("y", "y")] * 14 + [("y", "n")] * 2 + [("n", "y")] + [("n", "n")] * 13
    assert float(binary_cohen_kappa(N, AGREE, YES_A, YES_B)) == pytest.approx(cohen_kappa(labels)) == pytest.approx(0.8)
