"""Provenance must be earned: recall is computed from the turns a hit names (its source_ids), so
a service that names every turn of its case beside one short hit would score recall 1.00 if
nothing held the claim to the hit. check.py's provenance check holds every hit the answer model
read to the turns it names (at most checks.provenance_max_sources of them, each sharing a word
with it): a spoofing service FAILs naming itself and the reason, honest systems PASS, and the
report's deviation line shows the FAIL. docs/checks.md's table says, for every shipped system,
whether its provenance is verified from the text it returns or is its own claim."""
from __future__ import annotations

import json
import os

import pytest
import yaml

import backends
import check
import manifest
import report
import run
import score
from cli import run_cli
from conftest import ROOT, TINY, write_config
from contract import CONTROL_NAMES
from dataset import load_dataset
from memory_service import MemoryService
from metrics import recall_metrics
from records import read_records, run_record, write_comparison

# A short hit (13 tokens by len // 4) that shares no content word with any turn of tiny.jsonl.
SPOOF = "Everything you asked about is covered by this memory."


def http_section(svc: MemoryService) -> dict:
    """The http adapter's config section for the test service."""
    return {"base_url": svc.url, "token_env": "MEMORY_API_KEY", "poll_interval_s": 0.05}


def model_free(tmp_path, monkeypatch, claim_all, checks: dict | None = None) -> tuple[str, list[str]]:
    """keyword and an http service (claim_all as MemoryService takes it) run model-free on the
    tiny dataset; (config, run files)."""
    svc = MemoryService(index_delay_s=0.0, token="svc-token", claim_all=claim_all).start()
    monkeypatch.setenv("MEMORY_API_KEY", "svc-token")
    try:
        cfg = write_config(tmp_path, workers=1, backends={"http": http_section(svc)}, checks=checks or {})
        runs = []
        for name in ("keyword", "http"):
            out = str(tmp_path / "runs" / f"{name}.jsonl")
            assert run_cli(run.main, ["--config", cfg, "--backend", name, "--out", out, "--retrieval-only"]) == 0
            runs.append(out)
    finally:
        svc.stop()
    return cfg, runs


def checked(cfg: str, runs: list[str], out) -> tuple[int, dict]:
    """check.py on model-free runs: (exit code, its results by id)."""
    code = run_cli(check.main, ["--runs", *runs, "--config", cfg, "--out", str(out)])
    return code, {c["id"]: c for c in json.loads(out.read_text())["checks"]}


# ---------------------------------------------------------------------------------------------
# A service that names every turn beside one short hit
# ---------------------------------------------------------------------------------------------

def test_a_service_naming_every_turn_beside_one_short_hit_fails_naming_itself_and_the_reason(
        tmp_path, monkeypatch, capsys):
    cfg, runs = model_free(tmp_path, monkeypatch, lambda texts: SPOOF)
    spoofed = read_records(runs[1])
    # What the check is for: unchecked, one short hit is a perfect recall, in context too.
    assert all(r["hits_kept"] == 1 and r["context_text"].endswith(f") {SPOOF}") for r in spoofed)
    recall = recall_metrics(spoofed)
    assert recall["recall_any_at_k"] == recall["recall_all_in_context"] == 1.0
    code, c = checked(cfg, runs, tmp_path / "checks.json")
    p = c["provenance/http"]
    assert code == 4 and p["status"] == "FAIL"
    assert "http's ids are not earned by its hits: a store must return what it stored" in p["summary"]
    assert p["numbers"]["provenance"] == "unearned" and p["numbers"]["records_unearned"] == len(spoofed) == 6
    # Each finding names the file:line, the question and why: the one hit names every turn of its
    # case, and the turns it shares no word with.
    cases = {c["case_id"]: [t["turn_id"] for s in c["sessions"] for t in s["turns"]] for c in load_dataset(TINY)}
    for item in p["items"]:
        rec = spoofed[item["line"] - 1]
        assert item["qid"] == rec["qid"] and item["ids_named"] == len(cases[rec["case_id"]])
        assert f"1 hit(s) read name {len(cases[rec['case_id']])} turn(s); " in item["text"]
        assert f"share no word with any hit: {cases[rec['case_id']][0]}" in item["text"]
    assert f"FAIL  provenance/http: {runs[1]}: 6 of 6 question(s)" in capsys.readouterr().out
    # keyword returns the turns it stored: the same check passes it, every hit read.
    k = c["provenance/keyword"]
    assert k["status"] == "PASS" and k["numbers"]["provenance"] == "verified"
    assert k["numbers"]["hits_read"] == k["numbers"]["hits_verbatim"] > 0


def test_an_honest_service_behind_the_same_adapter_passes_as_verified(tmp_path, monkeypatch):
    cfg, runs = model_free(tmp_path, monkeypatch, None)
    code, c = checked(cfg, runs, tmp_path / "checks.json")
    p = c["provenance/http"]
    assert code == 0 and p["status"] == "PASS" and p["numbers"]["provenance"] == "verified"
    assert p["numbers"]["hits_read"] == p["numbers"]["hits_verbatim"] > 0 and p["numbers"]["records_unearned"] == 0


def test_a_hit_naming_more_turns_than_the_bound_fails_though_it_holds_them_all(tmp_path, monkeypatch):
    # One chunk holding every stored turn's text, naming them all: it shares a word with each, so
    # only the bound tells. tiny.jsonl's cases have 6 and 5 turns.
    cfg, runs = model_free(tmp_path, monkeypatch, " ".join, checks={"provenance_max_sources": 4})
    code, c = checked(cfg, runs, tmp_path / "checks.json")
    p = c["provenance/http"]
    assert code == 4 and p["status"] == "FAIL" and p["numbers"]["max_sources"] == 4
    assert {i["ids_named"] for i in p["items"]} == {6, 5} and len(p["items"]) == 6
    assert all(", at least 6 per hit (bound 4)" in i["text"] or ", at least 5 per hit (bound 4)" in i["text"]
               for i in p["items"])
    assert not any("share no word" in i["text"] or "no split" in i["text"] for i in p["items"])
    # Under the default bound the chunk is plausible: its ids are its claim, not its stored text.
    (tmp_path / "relaxed").mkdir()
    relaxed = write_config(tmp_path / "relaxed", dataset=TINY)
    code, c = checked(relaxed, runs, tmp_path / "checks-default.json")
    p = c["provenance/http"]
    assert code == 0 and p["status"] == "PASS" and p["numbers"]["provenance"] == "plausible"
    assert p["numbers"]["hits_verbatim"] == 0 and p["numbers"]["max_sources"] == 10


def test_the_failed_check_is_a_deviation_on_the_reports_first_screen(tmp_path, monkeypatch):
    svc = MemoryService(index_delay_s=0.0, token="svc-token", claim_all=lambda texts: SPOOF).start()
    monkeypatch.setenv("MEMORY_API_KEY", "svc-token")
    results = tmp_path / "results"
    try:
        cfg = write_config(tmp_path, workers=1, backends={"http": http_section(svc)})
        assert run_cli(manifest.main, [cfg, "--backends", "keyword", "http", "--out-dir", str(results)]) == 0
        runs = [str(tmp_path / "runs" / f"{b}.jsonl") for b in ("keyword", "http")]
        for name, out in zip(("keyword", "http"), runs):
            assert run_cli(run.main, ["--config", cfg, "--backend", name, "--out", out, "--retrieval-only"]) == 0
    finally:
        svc.stop()
    m = str(next(results.glob("manifest-*.json")))
    assert run_cli(check.main, ["--runs", *runs, "--manifest", m, "--config", cfg,
                                "--out", str(results / "checks.json")]) == 4
    assert run_cli(score.main, ["--runs", *runs, "--baseline", "keyword", "--manifest", m, "--resamples", "200",
                                "--json", str(results / "scores.json")]) == 0
    md = results / "report.md"
    assert run_cli(report.main, ["--scores", str(results / "scores.json"), "--manifest", m, "--runs", *runs,
                                 "--checks", str(results / "checks.json"), "--out", str(md)]) == 0
    lines = [x for x in md.read_text(encoding="utf-8").splitlines() if x.startswith("- **Deviation**")]
    assert any("Check FAIL: `provenance/http`: " in x and "http's ids are not earned by its hits" in x for x in lines)


# ---------------------------------------------------------------------------------------------
# The rule on hand-built records: several hits, rewritten facts, hits the budget cut
# ---------------------------------------------------------------------------------------------

def provenance_of(tmp_path, recs: list[dict], checks: dict | None = None) -> dict:
    """check.py's provenance result for one system's records (write_comparison's dataset: turn t of
    case c reads "turn t of c")."""
    tmp_path.mkdir()
    runs, verdicts, cfg = write_comparison(tmp_path, {"sys": recs}, checks=checks or {})
    out = tmp_path / "checks.json"
    run_cli(check.main, ["--runs", *runs, "--verdicts", verdicts, "--config", cfg, "--out", str(out)])
    return {c["id"]: c for c in json.loads(out.read_text())["checks"]}["provenance/sys"]


def two_hits(first: str, second: str, ids: list, **fields) -> dict:
    """A record of case c1 whose context holds two hits with these texts, naming these ids."""
    return run_record("sys", "q1", "c1", "yes", ["ta"], ids, context_text=f"[1] (2026-05-01T10:00:00Z) {first}\n"
                      f"[2] (2026-05-01T10:00:00Z) {second}", **fields)


def test_several_hits_pass_when_some_split_of_their_ids_earns_each_and_fail_when_none_does(tmp_path):
    # The record keeps the hits' texts and their ids in rank order, not which hit named which:
    # hit 1 holds ta, hit 2 holds tb and tc, so ta | tb tc is the split that earns every id.
    ok = two_hits("ta", "tb and tc", ["ta", "tb", "tc"])
    p = provenance_of(tmp_path / "ok", [ok])
    assert p["status"] == "PASS" and p["numbers"]["provenance"] == "plausible"  # not one stored turn per hit
    # The same hits with the ids in another order: tc would be hit 1's, which shares no word with it.
    swapped = two_hits("ta", "tb and tc", ["tc", "ta", "tb"])
    p = provenance_of(tmp_path / "swapped", [swapped])
    assert p["status"] == "FAIL" and "no split of them, in rank order, gives each hit turns" in p["items"][0]["text"]


def test_a_system_whose_model_rewrites_its_turns_is_warned_not_failed(tmp_path):
    # A fact drawn by an internal model that shares no word with its turn may be the extractor's
    # error: a WARN that lists it, and its provenance is the system's own claim.
    fact = two_hits("User likes teal.", "tb", ["ta", "tb"], internal_model="m")
    p = provenance_of(tmp_path / "rewrites", [fact])
    assert p["status"] == "WARN" and "internal model's (m) rewriting" in p["summary"]
    assert p["items"][0]["qid"] == "q1" and "share no word with any hit: ta" in p["items"][0]["text"]
    # Without an internal model the same record is a FAIL.
    p = provenance_of(tmp_path / "stores", [{**fact, "internal_model": None}])
    assert p["status"] == "FAIL"


def test_hits_the_budget_cut_are_held_to_the_bound(tmp_path):
    # The record keeps no text for a hit the budget cut: one such hit naming 12 turns is over the
    # default bound of 10; two such hits may name 12 between them.
    kept = ["ta"]
    cut = [f"t{i}" for i in range(12)]
    rec = run_record("sys", "q1", "c1", "yes", ["ta"], kept + cut, context_ids=kept,
                     context_text="[1] (2026-05-01T10:00:00Z) user: turn ta of c1", hits_cut=1)
    p = provenance_of(tmp_path / "one", [rec])
    assert p["status"] == "FAIL"
    assert "1 hit(s) cut by the budget name 12 turn(s), more than 10 per hit" in p["items"][0]["text"]
    p = provenance_of(tmp_path / "two", [{**rec, "hits_cut": 2}])
    assert p["status"] == "PASS" and p["numbers"]["hits_cut_unread"] == 2 and "held to the bound only" in p["summary"]


def test_a_context_that_cannot_be_read_back_hit_by_hit_is_a_finding_not_a_skip(tmp_path):
    # A service's timestamp that holds a line break splits its hit's line in two: were such a
    # record skipped, a spoofing service could hide every claim from the check that way.
    rec = run_record("sys", "q1", "c1", "yes", ["ta"], ["ta", "tb"],
                     context_text=f"[1] (2026-05-01T10:00:00Z\nsee) {SPOOF}")
    p = provenance_of(tmp_path / "broken", [rec])
    assert p["status"] == "FAIL" and p["numbers"]["records_checked"] == 1 and p["numbers"]["no_provenance"] == 0
    assert "its context cannot be read back as one `[rank] (time) text` line per hit" in p["items"][0]["text"]


@pytest.mark.parametrize("value", [0, 2.5, True, "10"])
def test_a_bad_bound_is_refused_naming_it(tmp_path, value, capsys):
    runs, verdicts, cfg = write_comparison(tmp_path, {"sys": [two_hits("a", "b", ["ta", "tb"])]},
                                           checks={"provenance_max_sources": value})
    code = run_cli(check.main, ["--runs", *runs, "--verdicts", verdicts, "--config", cfg,
                                "--out", str(tmp_path / "checks.json")])
    assert code == 2 and "'checks.provenance_max_sources' must be an integer of at least 1" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------
# The docs: which provenance is verified, which is a system's own claim
# ---------------------------------------------------------------------------------------------

def shipped_systems() -> set:
    """Every name run.py --backend takes with the shipped config: the controls, the modules of
    backends/ and config.yaml's presets."""
    with open(os.path.join(ROOT, "config.yaml"), encoding="utf-8") as fh:
        presets = yaml.safe_load(fh)["backends"]
    return set(CONTROL_NAMES) | set(backends.available()) | set(presets)


def test_the_docs_table_says_for_every_shipped_system_whose_provenance_is_verified():
    text = open(os.path.join(ROOT, "docs", "checks.md"), encoding="utf-8").read()
    table = text.split("## Provenance: verified or claimed", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|") for line in table.splitlines() if line.startswith("| `")]
    named = {name.strip(" `") for row in rows for name in row[1].split(",")}
    assert shipped_systems() <= named, sorted(shipped_systems() - named)
    assert {row[3].strip() for row in rows} <= {"verified", "checked", "own claim", "harness"}
