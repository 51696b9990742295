"""run.py's options for the metrics and for long runs: a budget sweep from one search, repeats
that are real repeats, the model-free pass, --limit, --shard, time-aware search, the progress line."""
from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys

import pytest

import judge
import run
import score
from cli import Progress, run_cli
from conftest import ROOT, TINY, backend_config, write_config
from contract import Hit
from dataset import load_dataset


def records(path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def run_system(cfg: str, backend: str, out, *extra: str) -> int:
    return run_cli(run.main, ["--config", cfg, "--backend", backend, "--out", str(out), *extra])


def test_the_default_budget_is_what_top_k_typical_turns_of_the_default_dataset_fill():
    """config.yaml's top_k and context_token_budget agree by the sweep's own rule (k = budget /
    the dataset's typical turn as a context line, run.typical_hit_tokens), as config.yaml and
    docs/development.md say: k hits of the typical size fill the budget, so neither is far
    looser than the other; a new default dataset, budget or k that breaks the agreement fails
    here."""
    import math
    from config import load_config
    from context import make_counter
    cfg = load_config(os.path.join(ROOT, "config.yaml"))
    with open(cfg["dataset"], encoding="utf-8") as fh:
        first = json.loads(fh.readline())["case_id"]
    typical = run.typical_hit_tokens(cfg["dataset"], first, make_counter(cfg["tokenizer"]))
    assert math.ceil(cfg["context_token_budget"] / typical) == cfg["top_k"], typical


def test_a_budget_sweep_searches_once_and_answers_at_each_budget(tmp_path, fake_llm, monkeypatch):
    import backends.keyword
    config = write_config(tmp_path, top_k=10, context_token_budget=270)
    searches = []
    original = backends.keyword.KeywordBackend.search
    monkeypatch.setattr(backends.keyword.KeywordBackend, "search",
                        lambda self, ns, q, k: searches.append(k) or original(self, ns, q, k))
    out = tmp_path / "keyword.jsonl"
    assert run_system(config, "keyword", out, "--budgets", "20,60,2000") == 0
    recs = records(out)
    assert len(recs) == 6 * 3 and len(searches) == 6
    # k fills the largest budget with hits of the typical size: the first case's six turns, as
    # context lines, are 24, 17, 22, 22, 18 and 23 tokens (approx, len // 4), median 22, and
    # ceil(2000 / 22) = 91 is above top_k 10 scaled by 2000 / 270 (75).
    assert set(searches) == {91}
    assert all(r["top_k"] == 91 for r in recs)
    by_q: dict = {}
    for r in recs:
        by_q.setdefault(r["qid"], {})[r["context_token_budget"]] = r
    for q in by_q.values():
        assert q[20]["retrieved_ids"] == q[60]["retrieved_ids"] == q[2000]["retrieved_ids"]  # one search
        assert q[20]["context_tokens"] <= 20 and q[60]["context_tokens"] <= 60
        assert q[20]["hits_kept"] <= q[60]["hits_kept"] <= q[2000]["hits_kept"]
    # Finished in dataset order, then budget.
    order = [q["qid"] for c in load_dataset(TINY) for q in c["questions"]]
    assert [(r["qid"], r["context_token_budget"]) for r in recs] == [(q, b) for q in order for b in (20, 60, 2000)]
    # Resumes: nothing to redo.
    before = fake_llm.requests
    assert run_system(config, "keyword", out, "--budgets", "20,60,2000") == 0
    assert fake_llm.requests == before and len(records(out)) == 18


def test_a_single_budget_searches_with_the_configured_top_k_and_a_sweep_with_the_same_k_in_every_shard(
        tmp_path, fake_llm, capsys):
    config = write_config(tmp_path, top_k=10, context_token_budget=270)  # k from the first case wins: 91 > 75
    out = tmp_path / "one.jsonl"
    assert run_system(config, "keyword", out, "--retrieval-only", "--budgets", "8000") == 0
    assert {r["top_k"] for r in records(out)} == {10}  # the contract's k, whatever the budget
    # A sweep's k comes from the dataset's first case, not the shard's or the --limit's.
    ks = set()
    for i in range(2):
        out = tmp_path / f"shard{i}.jsonl"
        assert run_system(config, "keyword", out, "--retrieval-only", "--budgets", "500,2000", "--shard", f"{i}/2") == 0
        ks |= {r["top_k"] for r in records(out)}
    assert ks == {91} and "k=91 (recorded as top_k)" in capsys.readouterr().err  # ceil(2000 / 22)


def test_repeats_are_real_repeats_with_their_own_cache_entries(tmp_path, fake_llm, config):
    out = tmp_path / "none.jsonl"
    assert run_system(config, "none", out, "--repeat", "2") == 0
    recs = records(out)
    assert sorted({r["repeat"] for r in recs}) == [0, 1] and len(recs) == 12
    asked = lambda: fake_llm.requests - fake_llm.preflights  # noqa: E731
    assert asked() == 12 and not any(r["cached"] for r in recs)  # repeat 1 is asked again
    assert run_system(config, "none", tmp_path / "again.jsonl", "--repeat", "2") == 0
    assert fake_llm.requests == 13  # a rerun of both repeats is served from the cache, its preflight too
    assert run_system(config, "none", tmp_path / "nocache.jsonl", "--no-cache") == 0
    assert asked() == 18 and fake_llm.preflights == 2  # --no-cache asks the endpoint


def test_the_retrieval_only_pass_needs_no_endpoint_and_asks_no_model(tmp_path, monkeypatch, config, capsys):
    monkeypatch.delenv("LLM_BASE_URL", raising=False)
    monkeypatch.delenv("LLM_API_KEY", raising=False)
    runs = []
    for backend in ("none", "oracle", "keyword"):
        runs.append(str(tmp_path / f"{backend}.jsonl"))
        assert run_system(config, backend, runs[-1], "--retrieval-only") == 0
    recs = records(runs[2])
    assert all(r["answer"] is None and r["retrieval_only"] and r["error"] is None for r in recs)
    assert all(r["retrieved_ids"] is not None for r in recs)
    verdicts = str(tmp_path / "verdicts.jsonl")
    assert run_cli(judge.main, ["--config", config, "--runs", *runs, "--out", verdicts]) == 0
    assert records(verdicts) == []  # nothing to grade
    out = tmp_path / "s.json"
    assert run_cli(score.main, ["--config", config, "--runs", *runs, "--baseline", "keyword", "--json", str(out),
                                "--resamples", "20"]) == 0
    s = {x["label"]: x for x in json.load(open(out))["systems"]}
    assert s["oracle"]["recall_all_in_context"] == 1.0 and s["keyword"]["accuracy"] is None


def test_the_retrieval_only_pass_sends_zero_requests_even_with_an_endpoint(tmp_path, fake_llm, config):
    assert run_system(config, "keyword", tmp_path / "k.jsonl", "--retrieval-only") == 0
    assert fake_llm.requests == 0


def test_retrieval_only_and_answered_files_are_not_one_comparison(tmp_path, fake_llm, config, capsys):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert run_system(config, "keyword", a, "--retrieval-only") == 0 and run_system(config, "none", b) == 0
    capsys.readouterr()
    assert run_cli(score.main, ["--config", config, "--runs", str(a), str(b), "--baseline", "keyword",
                                "--verdicts", str(tmp_path / "v.jsonl")]) == 2
    assert "retrieval_only" in capsys.readouterr().err


def test_limit_runs_the_first_cases_and_says_so(tmp_path, fake_llm, config, capsys):
    out = tmp_path / "none.jsonl"
    assert run_system(config, "none", out, "--limit", "1") == 0
    first = load_dataset(TINY)[0]
    recs = records(out)
    assert [r["qid"] for r in recs] == [q["qid"] for q in first["questions"]] and all(r["limit"] == 1 for r in recs)
    assert "not comparable" in capsys.readouterr().err
    verdicts = str(tmp_path / "v.jsonl")
    assert run_cli(judge.main, ["--config", config, "--runs", str(out), "--out", verdicts]) == 0
    js = tmp_path / "s.json"
    assert run_cli(score.main, ["--config", config, "--runs", str(out), "--verdicts", verdicts, "--baseline", "none",
                                "--json", str(js), "--resamples", "10"]) == 0
    scores = json.loads(js.read_text())
    warnings = " ".join(scores["warnings"])
    assert "--limit 1" in warnings and "not comparable" in warnings
    assert scores["coverage"] == {"dataset_questions": 6, "planned_questions": 3, "scored_questions": 3, "limit": [1],
                                  "shards": [], "sample": [], "partial": False}
    assert "PARTIAL: 3 of the dataset's 6 questions scored" in capsys.readouterr().out


@pytest.mark.parametrize("limit", ["0", "-3"])
def test_a_limit_below_one_is_refused(tmp_path, fake_llm, config, limit, capsys):
    assert run_system(config, "none", tmp_path / "x.jsonl", f"--limit={limit}") == 2
    assert "--limit must be at least 1" in capsys.readouterr().err
    assert fake_llm.requests == 0 and not (tmp_path / "x.jsonl").exists()


def test_the_help_says_limit_counts_cases(capsys):
    with pytest.raises(SystemExit):
        run.main(["--help"])
    assert "only the first N cases (not questions)" in " ".join(capsys.readouterr().out.split())


def copy_of_the_code(dest) -> str:
    """The repository's Python code in dest (the scripts and backends/), to edit without
    touching the checkout."""
    shutil.copytree(ROOT, dest, ignore=lambda folder, names: [
        n for n in names if not (n.endswith(".py") or (n == "backends" and folder == ROOT))])
    return str(dest)


def test_a_backend_edited_without_a_version_bump_is_not_resumed(tmp_path, fake_llm):
    repo = copy_of_the_code(tmp_path / "repo")
    cfg = write_config(tmp_path)

    def run_in_copy(backend: str, *extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "run.py", "--config", cfg, "--backend", backend,
                               "--out", str(tmp_path / f"{backend}.jsonl"), *extra], cwd=repo,
                              capture_output=True, text=True, timeout=120)
    for backend in ("keyword", "bm25", "none"):
        assert run_in_copy(backend).returncode == 0
    before = {b: records(tmp_path / f"{b}.jsonl") for b in ("keyword", "bm25", "none")}
    assert len({r["backend_code_sha256"] for r in before["keyword"]}) == 1
    assert before["keyword"][0]["backend_code_sha256"] != before["bm25"][0]["backend_code_sha256"]
    assert {r["backend_code_sha256"] for r in before["none"]} == {None}  # a control is run.py's own code
    with open(os.path.join(repo, "backends", "keyword.py"), "a", encoding="utf-8") as fh:
        fh.write("\n# an edit that keeps the version\n")
    # bm25 imports keyword.py's tokenizer: its code changed too. The controls did not.
    for backend in ("keyword", "bm25"):
        r = run_in_copy(backend)
        assert r.returncode == 2, r.stderr
        assert "written by other code of backend" in r.stderr and "--fresh" in r.stderr
    assert run_in_copy("none").returncode == 0
    r = run_in_copy("keyword", "--fresh")
    assert r.returncode == 0, r.stderr
    after = records(tmp_path / "keyword.jsonl")
    old_code = before["keyword"][0]["backend_code_sha256"]
    assert len(after) == 6 and old_code not in {r["backend_code_sha256"] for r in after}


def test_shards_split_the_cases_and_every_case_lands_in_exactly_one(tmp_path, fake_llm, config):
    seen = []
    for i in range(3):
        out = tmp_path / f"s{i}.jsonl"
        assert run_system(config, "none", out, "--shard", f"{i}/3") == 0
        seen += [r["qid"] for r in records(out)]
        assert all(r["shard"] == f"{i}/3" for r in records(out))
    assert sorted(seen) == sorted(q["qid"] for c in load_dataset(TINY) for q in c["questions"])


@pytest.mark.parametrize("bad", ["3/3", "-1/2", "a/b", "1"])
def test_a_bad_shard_is_refused(tmp_path, fake_llm, config, bad):
    assert run_system(config, "none", tmp_path / "x.jsonl", f"--shard={bad}") == 2


def test_a_time_aware_backend_gets_the_question_date_only_when_switched_on():
    class Recency:
        name, version, uses_time = "recency", "1", True

        def __init__(self):
            self.nows = []

        def search(self, namespace, query, k, now=None):
            self.nows.append(now)
            return [Hit("x", 1.0, ("t1",), "2026-01-01")]
    q = {"question": "q?", "asked_at": "2026-06-01"}
    backend = Recency()
    on, off = run.BackendSystem(backend, True), run.BackendSystem(backend, False)
    on.hits({}, q, "ns", 5)
    off.hits({}, q, "ns", 5)
    assert backend.nows == ["2026-06-01", None] and on.time_aware and not off.time_aware


def test_the_keyword_reference_never_uses_time(tmp_path, fake_llm):
    cfg = write_config(tmp_path, time_aware_search=True)
    out = tmp_path / "keyword.jsonl"
    assert run_system(cfg, "keyword", out) == 0
    assert not any(r["time_aware"] for r in records(out))


def test_progress_line_format_off_and_on_a_terminal():
    class Tty(io.StringIO):
        def isatty(self):
            return True
    plain = io.StringIO()
    p = Progress("run keyword", 10, "records", stream=plain)
    p.phase("case 2/5")
    p.update(4, errors=1, cached=2)
    p.close()
    last = plain.getvalue().splitlines()[-1]
    assert last.startswith("run keyword: 4/10 records [case 2/5], ") and last.endswith(", 2 cached, 1 errors")
    assert "/s, ETA " in last
    tty = Tty()
    p = Progress("judge", 3, "verdicts", stream=tty)
    p.update(1, errors=0, cached=0)
    p.close()
    assert tty.getvalue().startswith("\r\033[K") and tty.getvalue().endswith("\n")
    # Cases while ingesting, then records while answering: each count with its own rate and ETA.
    plain = io.StringIO()
    p = Progress("run keyword", 5, "cases", stream=plain)
    p.phase("ingesting and searching, answers held")
    p.t0 -= 10  # 2 cases in 10 s: 0.20/s, 3 left: 15 s
    p.update(2, errors=0, cached=0)
    p.update(None, errors=1, cached=0)  # a failed search's record: counted as an error, not a case
    assert p.line() == ("run keyword: 2/5 cases [ingesting and searching, answers held], 0.20/s, ETA 0:15, "
                        "0 cached, 1 errors")
    p.switch(12, "records", "answering", done=2)  # 2 failed records were written while searching
    p.t0 -= 4
    p.update(6, errors=1, cached=3)  # 4 answered in 4 s: 1.00/s, 6 left
    assert p.line() == "run keyword: 6/12 records [answering], 1.00/s, ETA 0:06, 3 cached, 1 errors"


def test_a_deterministic_backend_is_ingested_once_for_all_repeats_and_another_per_repeat(tmp_path, fake_llm,
                                                                                        config, monkeypatch):
    import backends.keyword
    resets = []
    original = backends.keyword.KeywordBackend.reset
    monkeypatch.setattr(backends.keyword.KeywordBackend, "reset",
                        lambda self, ns: resets.append(ns) or original(self, ns))
    assert run_system(config, "keyword", tmp_path / "k.jsonl", "--repeat", "3") == 0
    cases = len(load_dataset(TINY))
    assert len(resets) == 2 * cases  # one reset before each case's ingestion, one releasing it
    monkeypatch.setattr(backends.keyword.KeywordBackend, "deterministic", False)
    resets.clear()
    assert run_system(config, "keyword", tmp_path / "k2.jsonl", "--repeat", "3") == 0
    assert len(resets) == 2 * cases * 3


def test_check_config_checks_every_backend_section(tmp_path, capsys):
    from backends.__main__ import main as check_config
    for section, key in (({"hash": {"dim": 1}}, "backends.hash.dim"), ({"dense": {"model": "bert"}}, "backends.dense.model"),
                         ({"keyword": {"k1": 1.2}}, "backends.keyword.k1"),
                         ({"chroma_http": {"adapter": "http", "base_url": "http://127.0.0.1:9", "results_layout": "grid"}},
                          "backends.http.results_layout")):
        cfg = write_config(tmp_path, backends=section)
        assert run_cli(check_config, ["check-config", cfg]) == 2
        assert key in capsys.readouterr().err
    assert run_cli(check_config, ["check-config", write_config(tmp_path)]) == 0


def test_bm25_with_a_half_life_ranks_the_newer_turn_first_when_time_aware(tmp_path, fake_llm):
    from backends import load_backend
    from contract import MemoryItem
    cfg = backend_config(tmp_path, {"bm25_recency": {"adapter": "bm25", "recency_half_life_days": 30}})
    b = load_backend("bm25_recency", cfg)
    old = MemoryItem("t1", "billing runs postgres postgres 14", {"timestamp": "2026-01-01T00:00:00Z"})
    new = MemoryItem("t2", "billing runs postgres 16 now after the migration", {"timestamp": "2026-05-01T00:00:00Z"})
    b.reset("ns")
    b.add("ns", [old, new])
    plain = b.search("ns", "which postgres does billing run", 2)
    timed = b.search("ns", "which postgres does billing run", 2, now="2026-06-01")
    assert [h.source_ids for h in plain] == [("t1",), ("t2",)]  # more overlap wins without time
    assert [h.source_ids for h in timed] == [("t2",), ("t1",)]  # 150 days older: halved five times
    assert b.uses_time and "recency" in b.name
    # Through run.py: the records say time-aware, only with time_aware_search on.
    for on in (True, False):
        (tmp_path / str(on)).mkdir()
        config = write_config(tmp_path / str(on), time_aware_search=on, backends=cfg["backends"])
        out = tmp_path / str(on) / "r.jsonl"
        assert run_system(config, "bm25_recency", out) == 0
        assert all(r["time_aware"] is on for r in records(out))


def test_with_a_local_model_every_search_comes_before_the_first_answer_call(tmp_path, fake_llm, config, monkeypatch):
    import backends.keyword
    events = []
    original = backends.keyword.KeywordBackend.search
    monkeypatch.setattr(backends.keyword.KeywordBackend, "search",
                        lambda self, ns, q, k: events.append("search") or original(self, ns, q, k))
    import llm
    complete = llm.LLMClient.complete
    monkeypatch.setattr(llm.LLMClient, "complete", lambda self, *a, **k: events.append("answer") or complete(self, *a, **k))
    (tmp_path / "info.json").write_text(json.dumps({"server": "llama-cpp-python", "n_ctx": 4096}))
    monkeypatch.setenv("LLM_SERVER_INFO", str(tmp_path / "info.json"))  # as serve.py sets it
    assert run_system(config, "keyword", tmp_path / "k.jsonl") == 0
    assert events.index("answer") > max(i for i, e in enumerate(events) if e == "search")
    records_ = records(tmp_path / "k.jsonl")
    assert len(records_) == 6 and all(r["search_calls_in_flight"] == 0 for r in records_)


def test_with_a_local_model_the_progress_line_counts_cases_while_searching_then_records(tmp_path, fake_llm, config,
                                                                                      monkeypatch, capsys):
    (tmp_path / "info.json").write_text(json.dumps({"server": "llama-cpp-python", "n_ctx": 4096}))
    monkeypatch.setenv("LLM_SERVER_INFO", str(tmp_path / "info.json"))  # as serve.py sets it
    monkeypatch.setattr(Progress, "EVERY_S", 0.0)  # every update printed
    assert run_system(config, "keyword", tmp_path / "k.jsonl") == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("run keyword: ")]
    # Cases first (no record count frozen at 0 while the answers wait), then records only.
    units = [line.split()[3] for line in lines]
    assert units == ["cases"] * units.count("cases") + ["records"] * units.count("records") and "cases" in units
    assert lines[units.count("cases") - 1].startswith("run keyword: 2/2 cases [ingesting and searching, answers held], ")
    assert lines[-1].startswith("run keyword: 6/6 records [answering], ")


def test_the_baseline_can_be_named_by_its_backend_name(tmp_path, fake_llm):
    cfg = write_config(tmp_path, backends={"bm25_recency": {"adapter": "bm25", "recency_half_life_days": 30}})
    runs = []
    for b in ("none", "bm25_recency"):
        runs.append(str(tmp_path / f"{b}.jsonl"))
        assert run_system(cfg, b, runs[-1]) == 0
    assert records(runs[1])[0]["backend"].startswith("bm25 (recency")  # the display name differs
    verdicts = str(tmp_path / "v.jsonl")
    assert run_cli(judge.main, ["--config", cfg, "--runs", *runs, "--out", verdicts]) == 0
    out = tmp_path / "s.json"
    assert run_cli(score.main, ["--config", cfg, "--runs", *runs, "--verdicts", verdicts, "--baseline", "bm25_recency",
                                "--json", str(out), "--resamples", "10"]) == 0
    assert json.load(open(out))["baseline"].startswith("bm25 (recency")


def test_repeats_resume_when_a_later_repeat_needs_questions_an_earlier_one_finished(tmp_path, fake_llm, config):
    out = tmp_path / "keyword.jsonl"
    assert run_system(config, "keyword", out, "--repeat", "2") == 0
    full = records(out)
    # Keep repeat 0 of the first question only: repeat 0 must redo the others, repeat 1 all six.
    keep = [r for r in full if r["repeat"] == 0][:1]
    out.write_text("".join(json.dumps(r) + "\n" for r in keep))
    assert run_system(config, "keyword", out, "--repeat", "2") == 0
    again = records(out)
    assert sorted((r["qid"], r["repeat"]) for r in again) == sorted((r["qid"], r["repeat"]) for r in full)
    strip = lambda rs: sorted((r["qid"], r["repeat"], r["answer"], tuple(r["retrieved_ids"])) for r in rs)
    assert strip(again) == strip(full)


def test_a_budget_the_served_model_cannot_read_is_warned_of_before_any_call(tmp_path, fake_llm, config, monkeypatch,
                                                                           capsys):
    (tmp_path / "info.json").write_text(json.dumps({"server": "llama-cpp-python", "n_ctx": 1000}))
    monkeypatch.setenv("LLM_SERVER_INFO", str(tmp_path / "info.json"))
    assert run_system(config, "none", tmp_path / "a.jsonl", "--budgets", "100,900,2000") == 0
    err = capsys.readouterr().err
    assert "the served model reads 1000 tokens; a context of budget 900, 2000" in err
    assert run_system(config, "none", tmp_path / "b.jsonl", "--budgets", "100") == 0
    assert "served model reads" not in capsys.readouterr().err
    (tmp_path / "info.json").write_text("{not json")
    assert run_system(config, "none", tmp_path / "c.jsonl") == 2
    assert "LLM_SERVER_INFO is not a readable JSON file" in capsys.readouterr().err


def test_keyword_ranks_count_a_hit_holding_any_keyword_on_word_boundaries():
    from contract import keyword_ranks
    q = {"meta": {"keywords": ["Go", "pike-6", "Monday, November 17"]}}
    hits = [Hit("user: we are going to rewrite it", 1.0),                 # 1: "go" inside "going"
            Hit("assistant: the service is written in GO.", 0.9),        # 2: any one keyword is enough
            Hit("user: pike-61 is the new cluster", 0.8),                 # 3: "pike-6" glued into "pike-61"
            Hit("user: all of pike-6's pods moved", 0.7),                 # 4: a possessive still names it
            Hit("user: the freeze starts Monday,\n  November 17", 0.6),   # 5: a phrase, whitespace collapsed
            Hit("user: the freeze starts Monday and ends November 17", 0.5)]  # 6: words apart, not the phrase
    assert keyword_ranks(hits, q) == [2, 4, 5]
    assert keyword_ranks(hits, {"meta": {"keywords": []}}) is None
    assert keyword_ranks(hits, {"meta": {}}) is None and keyword_ranks([], q) == []


def test_k_limited_says_when_k_and_not_the_budget_bounded_the_context(tmp_path, monkeypatch):
    cfg = write_config(tmp_path, top_k=2)
    out = tmp_path / "keyword.jsonl"
    assert run_system(cfg, "keyword", out, "--retrieval-only", "--budgets", "20,1200") == 0
    recs = records(out)
    assert {r["top_k"] for r in recs} == {55}  # a sweep: ceil(1200 / 22)
    one = tmp_path / "one.jsonl"
    assert run_system(cfg, "keyword", one, "--retrieval-only") == 0
    recs = records(one)
    # top_k 2 at budget 1200: every search returns its 2 hits (each case has more turns that
    # share a word with the question) and the budget cuts none: k bounded every context.
    assert all(r["hits_returned"] == 2 and r["hits_cut"] == 0 for r in recs)
    assert all(r["k_limited"] is True and r["deterministic"] is True for r in recs)
    # The sweep's k = 55 returns every matching turn, fewer than k: never k-limited; at budget
    # 20 the budget cuts hits: not k-limited either.
    assert all(r["k_limited"] is False for r in records(out))
    # A control ignores k: full_context's 6 turns of case c001 with top_k 6, nothing cut, are
    # not k-limited.
    full = tmp_path / "full.jsonl"
    (tmp_path / "k6").mkdir()
    assert run_system(write_config(tmp_path / "k6", top_k=6), "full_context", full, "--retrieval-only") == 0
    c001 = [r for r in records(full) if r["case_id"] == "c001"]
    assert len(c001) == 3 and all(r["hits_returned"] == 6 and r["hits_cut"] == 0 for r in c001)
    assert all(r["k_limited"] is False for r in records(full))
    # A failed search measured nothing: null.
    import backends.keyword
    monkeypatch.setattr(backends.keyword.KeywordBackend, "search", lambda self, ns, q, k: 1 / 0)
    failed = tmp_path / "failed.jsonl"
    assert run_system(cfg, "keyword", failed, "--retrieval-only") == 3
    assert all(r["error"].startswith("backend: ZeroDivisionError") and r["k_limited"] is None for r in records(failed))
