"""The artifact audit (artifacts.py, blind.py): it FAILs a dataset whose evidence turns carry a
planted tell and PASSes one without; the cue reader ranks each case with a model that never saw
it; the query-blind backends ignore the question; bad input exits 2; the model-free report shows
the audit."""
from __future__ import annotations

import json
import os
import random

import pytest

import artifacts
import blind
from cli import EXIT_CHECK_FAILED, run_cli
from conftest import ROOT, write_config
from contract import MemoryItem
from fileio import dumps
from report_pipeline import make_report, pipeline

SERVICES = [f"{a}-{n}" for a in ("kestrel", "petrel", "dipper", "heron", "osprey") for n in range(10, 50)]
OPENERS = ("So, ", "Also ", "Right, ", "Then ", "")


def fact(rng: random.Random, service: str, opener: str) -> str:
    """A fact-shaped turn: the same shape for evidence and filler, so only a planted tell tells."""
    return f"{opener}{service} listens on port {rng.randint(1000, 9999)} after the last change."


def make_cases(n_cases: int, tell: str | None, turns: int = 150, seed: int = 0, marks=None,
               ack: bool = True) -> list[dict]:
    """n_cases cases of `turns` fact-shaped turns over 5 sessions and 4 questions each (two kinds),
    each asking the port of a service stated in one turn. With `tell`, every evidence turn opens
    with it and, with `ack`, is followed by an acknowledgement. marks(case) -> (tell, decoy) sets
    the tell per case, and a decoy opener that a tenth of the other turns open with."""
    rng = random.Random(seed)
    cases = []
    for c in range(n_cases):
        case_id = f"case{c:03d}"
        services = rng.sample(SERVICES, turns)
        evidence_at = set(rng.sample(range(turns - 1), 4))
        opener, decoy = marks({"case_id": case_id}) if marks else (tell, None)
        texts = []
        for i, svc in enumerate(services):
            if i in evidence_at and opener:
                texts.append(fact(rng, svc, opener))
            elif i - 1 in evidence_at and opener and ack:
                texts.append("Noted.")
            else:
                texts.append(fact(rng, svc, decoy if decoy and rng.random() < 0.1 else rng.choice(OPENERS)))
        per = turns // 5
        sessions = [{"session_id": f"s{s}", "timestamp": f"2026-03-0{s + 1}T10:00:00Z",
                     "turns": [{"turn_id": f"{case_id}-t{i}", "role": "user", "text": texts[i]}
                               for i in range(s * per, (s + 1) * per)]} for s in range(5)]
        questions = [{"qid": f"{case_id}-q{j}", "type": "single_hop", "asked_at": "2026-03-09T10:00:00Z",
                      "question": f"Which port does {services[i]} listen on?", "gold_answer": "port",
                      "evidence": [f"{case_id}-t{i}"], "meta": {"kind": "alpha" if j % 2 else "beta"}}
                     for j, i in enumerate(sorted(evidence_at))]
        cases.append({"case_id": case_id, "sessions": sessions, "questions": questions})
    return cases


def write(tmp_path, cases: list[dict], name: str = "cases.jsonl") -> str:
    path = tmp_path / name
    path.write_text("".join(dumps(c) + "\n" for c in cases), encoding="utf-8")
    return str(path)


def audit(tmp_path, cases: list[dict], *extra: str) -> tuple[int, dict]:
    dataset = write(tmp_path, cases)
    cfg = write_config(tmp_path, dataset=dataset)
    out = tmp_path / "artifacts.json"
    code = run_cli(artifacts.main, ["--config", cfg, "--k", "5", "--resamples", "300", "--out", str(out), *extra])
    return code, json.loads(out.read_text()) if out.exists() else {}


def test_the_audit_fails_a_dataset_whose_evidence_opens_with_a_stock_phrase(tmp_path, capsys):
    code, a = audit(tmp_path, make_cases(24, tell="FYI: "))
    assert code == EXIT_CHECK_FAILED and a["verdict"] == "FAIL"
    assert a["format"] == blind.ARTIFACTS_FORMAT and a["kinds"] == ["alpha", "beta"]
    # Only the reader of surface cues finds the tell; newest and random stay at chance.
    assert a["recall"]["cues"]["all"]["recall_any_at_k"] > 0.8
    assert a["recall"]["random"]["all"]["recall_any_at_k"] < 0.15
    assert any(r.startswith("cues on all: recall_any@k") for r in a["reasons"])
    assert all(r.startswith("cues ") for r in a["reasons"])
    out = capsys.readouterr().out
    assert "FAIL: the audit holds every query-blind system" in out and "cues" in out.splitlines()[1]


def test_the_audit_passes_a_dataset_without_a_tell(tmp_path):
    code, a = audit(tmp_path, make_cases(24, tell=None))
    assert (code, a["verdict"], a["reasons"]) == (0, "PASS", [])
    assert a["recall"]["keyword"]["all"]["recall_any_at_k"] > 0.9
    for s in blind.BLIND_SYSTEMS:
        for kind in ("alpha", "beta", "all"):
            assert a["recall"][s][kind]["recall_any_at_k"] <= 0.15
            assert a["differences"][s][kind]["ci_high"] < 0
    assert a["recall"]["keyword"]["all"]["n"] == a["recall"]["cues"]["all"]["n"] == 96  # every case ranked


def test_a_limit_below_what_chance_gives_fails_the_same_dataset(tmp_path):
    code, a = audit(tmp_path, make_cases(24, tell=None), "--limit", "0.0")
    assert code == EXIT_CHECK_FAILED and any("above the limit 0" in r for r in a["reasons"])


def test_the_cue_reader_never_learns_on_the_half_it_ranks(tmp_path):
    # In one half evidence opens with "FYI " and a tenth of the other turns with "Heads up "; in the
    # other half the reverse. A reader that learned on the half it ranks finds its evidence; one
    # that learned on the other half alone ranks the decoys first and finds less than chance.
    marks = {0: ("FYI ", "Heads up "), 1: ("Heads up ", "FYI ")}
    cases = make_cases(24, tell=None, marks=lambda c: marks[blind.half_of(c)], ack=False)
    assert {blind.half_of(c) for c in cases} == {0, 1}
    records, summary = blind.cue_records(cases, 5)
    found = [blind.retrieval_values(r)["recall_any_at_k"] for r in records]
    assert len(found) == 96 and sum(found) / len(found) < 0.05
    for fold in summary["folds"]:
        assert fold["scored"] and not set(fold["trained_on"]) & set(fold["scored"])
    # Learned on the very half it ranks, the same reader finds nearly all of it: the fixture tells.
    for half in (0, 1):
        own = [c for c in cases if blind.half_of(c) == half]
        reader = blind.CueReader(own)
        hits = [bool(set(q["evidence"]) & set(reader.rank(c)[:5])) for c in own for q in c["questions"]]
        assert sum(hits) / len(hits) > 0.8


def test_the_query_blind_backends_ignore_the_question():
    from backends.newest import NewestBackend
    from backends.random import RandomBackend
    items = [MemoryItem(f"t{i}", f"user: turn {i}", {"timestamp": "2026-03-01T10:00:00Z"}) for i in range(40)]
    newest = NewestBackend()
    newest.add("n", items[:20])
    newest.add("n", items[20:])
    assert [h.source_ids[0] for h in newest.search("n", "turn 3?", 3)] == ["t39", "t38", "t37"]
    assert newest.search("n", "anything else", 3) == newest.search("n", "turn 3?", 3)
    rnd, other = RandomBackend(), RandomBackend()
    rnd.add("a", items)
    other.add("b", items)  # another run's namespace: the same case and question draw the same turns
    first = [h.source_ids[0] for h in rnd.search("a", "q1", 5)]
    assert first == [h.source_ids[0] for h in other.search("b", "q1", 5)] and len(set(first)) == 5
    assert first != [h.source_ids[0] for h in rnd.search("a", "q2", 5)]  # another question, another draw


@pytest.mark.parametrize("extra, message", [(("--limit", "1.5"), "--limit 1.5"),
                                            (("--systems", "oracle"), "--systems oracle"),
                                            (("--systems", "cues"), "--systems cues"),
                                            (("--systems", "nonesuch"), "unknown backend 'nonesuch'")])
def test_bad_input_exits_2_naming_it(tmp_path, capsys, extra, message):
    code, _ = audit(tmp_path, make_cases(2, tell=None, turns=20), *extra)
    assert code == 2 and message in capsys.readouterr().err


def test_an_invalid_dataset_exits_2_naming_its_line(tmp_path, capsys):
    cases = make_cases(2, tell=None, turns=20)
    cases[1]["questions"][0]["evidence"] = ["missing-turn"]
    code, _ = audit(tmp_path, cases)
    assert code == 2 and "cases.jsonl:2" in capsys.readouterr().err


def test_the_model_free_report_shows_the_audit_table_and_verdict(tmp_path):
    paths = pipeline(tmp_path, systems=("keyword", "hash"), run_args=("--retrieval-only",))
    assert "Not run." in open(paths["md"], encoding="utf-8").read()
    out = str(tmp_path / "artifacts.json")
    code = run_cli(artifacts.main, ["--config", paths["config"], "--resamples", "100", "--out", out])
    assert code in (0, EXIT_CHECK_FAILED)
    a = blind.read_artifacts(out)
    assert make_report(paths, "--artifacts", out) == 0
    md = open(paths["md"], encoding="utf-8").read()
    section = md[md.index("## Artifact audit"):]
    assert f"**{a['verdict']}**" in section and "| kind | questions | keyword (baseline) | newest | random | cues |" \
        in section
    assert "Recall per kind, and answer-bearing recall" in md and "answer recall@k" in md


def test_an_audit_of_another_format_is_refused(tmp_path, capsys):
    path = tmp_path / "artifacts.json"
    path.write_text(json.dumps({"format": "artifacts/0"}), encoding="utf-8")
    paths = pipeline(tmp_path / "p", systems=("keyword",), run_args=("--retrieval-only",))
    assert make_report(paths, "--artifacts", str(path)) == 2
    assert "this code reads format 'artifacts/1' only: rerun artifacts.py" in capsys.readouterr().err


def test_audits_print_side_by_side_as_one_markdown_table(tmp_path, capsys):
    paths = {}
    for name, tell in (("told", "FYI: "), ("clean", None)):
        folder = tmp_path / name
        folder.mkdir()
        code, _ = audit(folder, make_cases(8, tell=tell, turns=60))
        paths[name] = str(folder / "artifacts.json")
    capsys.readouterr()
    assert run_cli(artifacts.main, ["--side-by-side", f"told={paths['told']}", f"clean={paths['clean']}"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "| kind | system | told | clean |" and lines[2] == "| questions |  | 32 | 32 |"
    assert any(line.startswith("| all | cues | ") for line in lines)
    assert lines[-1].startswith("| verdict |  | FAIL | ")
    assert run_cli(artifacts.main, ["--side-by-side", paths["told"]]) == 2
    assert "expected TITLE=PATH" in capsys.readouterr().err


def test_the_bundled_version_2_fails_on_its_tells_and_locomo_passes(tmp_path, capsys):
    from test_importers import LOCOMO, locomo_mod, shared
    cfg = write_config(tmp_path)
    v2 = tmp_path / "v2.json"
    assert run_cli(artifacts.main, ["--config", cfg, "--dataset", os.path.join(ROOT, "data", "cases-v2.jsonl"),
                                    "--resamples", "1000", "--out", str(v2)]) == EXIT_CHECK_FAILED
    a = json.loads(v2.read_text())
    assert a["recall"]["cues"]["all"]["recall_any_at_k"] > a["recall"]["keyword"]["all"]["recall_any_at_k"]
    locomo = str(tmp_path / "locomo.jsonl")
    assert run_cli(locomo_mod.main, [shared(LOCOMO), "--out", locomo]) == 0
    out = tmp_path / "locomo.json"
    assert run_cli(artifacts.main, ["--config", cfg, "--dataset", locomo, "--resamples", "1000",
                                    "--out", str(out)]) == 0, json.loads(out.read_text())["reasons"]
    assert "PASS: every query-blind system" in capsys.readouterr().out
