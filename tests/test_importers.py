"""Tests of the dataset importers in data/: the real LoCoMo and LongMemEval files from
../shared/datasets (skipped when absent, unless MEMBENCH_REQUIRE_DATASETS=1, which `make test`
sets so that CI cannot skip them silently), hand-written fixtures for the seed-001 two-file
layout and the Mneme corpus, and the streaming JSON-array reader on tiny buffers.

Run: python -m pytest tests/test_importers.py -q
"""
from __future__ import annotations

import importlib.util
import io
import json
import os
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Iterator

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import metrics  # noqa: E402
from cli import EXIT_BAD_INPUT, InputError, run_cli  # noqa: E402
from contract import is_answerable  # noqa: E402
from dataset import dataset_counts, load_dataset, parse_time  # noqa: E402
from records import run_record, verdict_for  # noqa: E402

SHARED = os.path.join(ROOT, "..", "shared", "datasets")
LOCOMO = os.path.join(SHARED, "locomo", "locomo10.json")
LME_ORACLE = os.path.join(SHARED, "longmemeval", "longmemeval_oracle_2q.json")
LME_S = os.path.join(SHARED, "longmemeval", "longmemeval_s_e47becba.json")
FIXTURES = os.path.join(ROOT, "tests", "data", "importers")

REQUIRE_DATASETS = "MEMBENCH_REQUIRE_DATASETS"


def shared(path: str) -> str:
    """path if the shared datasets folder holds it; else skip, or fail under MEMBENCH_REQUIRE_DATASETS=1."""
    # The same rule as test_embedded.py's MEMBENCH_REQUIRE_EMBEDDED: `make test` sets it, and
    # CI has the folder, so a missing file there is a broken setup, not a reason to skip.
    if os.path.exists(path):
        return path
    message = f"shared dataset file not found at {path} (never copied into the repo)"
    if os.environ.get(REQUIRE_DATASETS) == "1":
        pytest.fail(f"{message}; {REQUIRE_DATASETS}=1 requires it")
    pytest.skip(message)


def load_script(name: str) -> ModuleType:
    """Import data/<name>.py (data/ is a folder of scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "data", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


locomo_mod = load_script("import_locomo")
lme_mod = load_script("import_longmemeval")
dialogs_mod = load_script("import_dialogs")
mneme_mod = load_script("import_mneme")
common = sys.modules["importlib_common"]


def run(module: ModuleType, argv: list[str], capsys: pytest.CaptureFixture) -> tuple[int, str]:
    """Run an importer's main through run_cli; return (exit code, stderr)."""
    code = run_cli(module.main, argv)
    return code, capsys.readouterr().err


def test_missing_shared_file_skips_unless_required(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = str(tmp_path / "locomo10.json")
    monkeypatch.delenv(REQUIRE_DATASETS, raising=False)
    with pytest.raises(pytest.skip.Exception, match="not found"):
        shared(missing)
    monkeypatch.setenv(REQUIRE_DATASETS, "1")
    with pytest.raises(pytest.fail.Exception, match=f"{REQUIRE_DATASETS}=1 requires it"):
        shared(missing)
    (tmp_path / "locomo10.json").write_text("[]")
    assert shared(missing) == missing


# ---------------------------------------------------------------------------------------------
# Streaming JSON-array reader
# ---------------------------------------------------------------------------------------------

TRICKY = ('[\n  {"a": "x], [y", "b": [1, 2, {"c": "\\"}"}]},\n  12345,\n  -0.5e3 ,"π ✓ \\u00e9",\n'
          '  true, null,\n  [],\n  {}, "", {"nested": {"deep": [[["]"]]]}}\n]\n')


@pytest.mark.parametrize("bufsize", [*range(1, 17), 64, 1 << 20])
def test_stream_parser_matches_json_loads_on_small_buffers(bufsize: int) -> None:
    got = list(common.iter_json_array(io.StringIO(TRICKY), "t.json", bufsize))
    assert [v for _, v in got] == json.loads(TRICKY)
    assert [index for index, _ in got] == list(range(10))


@pytest.mark.parametrize("bufsize", [1, 4, 1 << 20])
def test_stream_parser_on_real_records(bufsize: int) -> None:
    shared(LME_ORACLE)
    with open(LME_ORACLE, encoding="utf-8") as fh:
        expected = json.load(fh)
    with open(LME_ORACLE, encoding="utf-8") as fh:
        got = [v for _, v in common.iter_json_array(fh, LME_ORACLE, bufsize)]
    assert got == expected


def test_stream_parser_yields_the_first_element_before_reading_the_rest_of_the_file() -> None:
    text = "[" + ",".join(json.dumps({"i": i, "pad": "x" * 100}) for i in range(1000)) + "]"
    fh = io.StringIO(text)
    elements = common.iter_json_array(fh, "t.json", 64)
    assert next(elements) == (0, {"i": 0, "pad": "x" * 100})
    assert fh.tell() < 1000 < len(text)
    assert [i for i, _ in elements] == list(range(1, 1000))


@pytest.mark.parametrize("text, message", [
    ('{"a": 1}', "t.json:1: expected a JSON array ('[') at the top level"),
    ('\n\n x[]', "t.json:3: expected a JSON array ('[') at the top level"),
    ('', "t.json:1: expected a JSON array ('[') at the top level"),
    ('[1, 2', "t.json: the file ends inside the top-level array, after 2 elements"),
    ('[{"a": 1},\n {"b": ', "t.json: the file ends inside the top-level array, after 1 element"),
    ('[1, 2]\n x', "t.json: unexpected data after the top-level array of 2 elements"),
    ('[1\n 2]', "t.json[1]: invalid JSON in the top-level array: "),
    ('[1,\n {"a": }]', "t.json[1]: invalid JSON in the top-level array: "),
    ('[1, 2, 3,]', "t.json[3]: invalid JSON in the top-level array: "),
])
def test_stream_parser_errors_name_the_file_and_the_element(text: str, message: str) -> None:
    # ijson does not say where in the file an element starts: errors inside the array name the
    # element by its index (jq's .[index]), a file that does not open an array names the line.
    for bufsize in (1, 3, 1 << 20):
        with pytest.raises(InputError, match=f"^{re.escape(message)}"):
            list(common.iter_json_array(io.StringIO(text), "t.json", bufsize))


def test_stream_parser_empty_array() -> None:
    assert list(common.iter_json_array(io.StringIO(" [ ] \n"), "t.json", 1)) == []


def test_stream_parser_without_ijson_names_the_requirements_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ijson", None)  # makes `import ijson` raise ImportError
    with pytest.raises(InputError, match=re.escape("pip install -r data/requirements.txt")):
        list(common.iter_json_array(io.StringIO("[]"), "t.json"))


# ---------------------------------------------------------------------------------------------
# LoCoMo
# ---------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def locomo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict], str, str]:
    """Import locomo10.json once: (cases via load_dataset, stderr, output path)."""
    shared(LOCOMO)
    out = str(tmp_path_factory.mktemp("locomo") / "locomo.jsonl")
    err = io.StringIO()
    old, sys.stderr = sys.stderr, err
    try:
        assert run_cli(locomo_mod.main, [LOCOMO, "--out", out]) == 0
    finally:
        sys.stderr = old
    return load_dataset(out), err.getvalue(), out


def test_locomo_pinned_counts(locomo_run: tuple) -> None:
    cases, err, _ = locomo_run
    counts = dataset_counts(cases)
    # Every one of the file's 1,986 questions, as LoCoMo's published figures count them.
    assert (counts["cases"], counts["sessions"], counts["turns"], counts["questions"]) == (10, 272, 5882, 1986)
    assert counts["questions_by_type"] == {"multi_hop": 282, "temporal": 321, "open_domain": 96,
                                           "single_hop": 841, "adversarial": 446}
    assert "10 cases, 272 sessions, 5882 turns, 1986 questions" in err
    assert ("noted items: empty_session_skipped 16, question_kept_no_evidence 4, evidence_repaired 6, "
            "adversarial_answer_kept_in_meta 2, evidence_missing_turn 2, evidence_malformed 1, "
            "evidence_duplicate 1") in err


def test_locomo_category_mapping_and_adversarial_gold(locomo_run: tuple) -> None:
    cases, _, _ = locomo_run
    mapping = {1: "multi_hop", 2: "temporal", 3: "open_domain", 4: "single_hop", 5: "adversarial"}
    with open(LOCOMO, encoding="utf-8") as fh:
        raw = {c["sample_id"]: c for c in json.load(fh)}
    for case in cases:
        assert case["meta"]["source"] == "locomo" and case["meta"]["variant"] == "locomo10"
        assert re.fullmatch(r"[0-9a-f]{64}", case["meta"]["source_sha256"])
        assert case["meta"]["image_captions"] is True
        qa = raw[case["case_id"]]["qa"]
        assert len(case["questions"]) + len(case["meta"]["dropped_questions"]) == len(qa)
        for q in case["questions"]:
            i = int(q["qid"].rsplit("-q", 1)[1])
            assert q["qid"] == f"{case['case_id']}-q{i}"
            assert q["question"] == qa[i]["question"]
            assert q["meta"]["source"] == "locomo" and q["meta"]["category"] == qa[i]["category"]
            assert q["type"] == mapping[qa[i]["category"]]
            assert q["asked_at"] == case["sessions"][-1]["timestamp"]
            if qa[i]["category"] == 5:
                assert q["gold_answer"] == locomo_mod.ADVERSARIAL_GOLD
                assert q["meta"]["adversarial_answer"] == str(qa[i]["adversarial_answer"])
                assert q["gold_answer"] != q["meta"]["adversarial_answer"]
            else:
                assert q["gold_answer"] == str(qa[i]["answer"])  # integers become strings
                assert q["evidence"] or q["meta"]["no_evidence"] == locomo_mod.NO_EVIDENCE


# Every evidence string of locomo10.json that is not a dia_id of its conversation (the scan in
# the first test below finds them), and what the importer makes of it.
LOCOMO_REPAIRS = {
    ("conv-26-q37", "D8:6; D9:17"): ["D8:6", "D9:17"],
    ("conv-43-q18", "D:11:26"): ["D11:26"],
    ("conv-49-q31", "D9:1 D4:4 D4:6"): ["D9:1", "D4:4", "D4:6"],
    ("conv-49-q38", "D22:1 D22:2 D9:10 D9:11"): ["D22:1", "D22:2", "D9:10", "D9:11"],
    ("conv-49-q46", "D21:18 D21:22 D11:15 D11:19"): ["D21:18", "D21:22", "D11:15", "D11:19"],
    ("conv-50-q69", "D30:05"): ["D30:5"],
}
# Session 10 of conv-42 ends at D10:16 and session 4 of conv-47 at D4:25; "D" names nothing.
LOCOMO_DROPPED_EVIDENCE = {("conv-42-q58", "D10:19"), ("conv-42-q88", "D"), ("conv-47-q38", "D4:36")}
# Category 3 questions whose raw evidence list is empty.
LOCOMO_NO_EVIDENCE = {"conv-26-q30", "conv-26-q46", "conv-50-q39", "conv-50-q42"}


def test_locomo_every_bad_evidence_string_is_pinned() -> None:
    with open(shared(LOCOMO), encoding="utf-8") as fh:
        raw = json.load(fh)
    bad, empty = set(), set()
    for conv in raw:
        dia_ids = {t["dia_id"] for v in conv["conversation"].values() if isinstance(v, list) for t in v}
        for i, qa in enumerate(conv["qa"]):
            qid = f"{conv['sample_id']}-q{i}"
            bad.update((qid, ev) for ev in qa["evidence"] if ev not in dia_ids)
            if not qa["evidence"] and qa["category"] != 5:
                empty.add(qid)
    assert bad == set(LOCOMO_REPAIRS) | LOCOMO_DROPPED_EVIDENCE
    assert empty == LOCOMO_NO_EVIDENCE


def test_locomo_malformed_evidence_naming_real_turns_is_repaired(locomo_run: tuple) -> None:
    cases, err, _ = locomo_run
    questions = {q["qid"]: q for c in cases for q in c["questions"]}
    for (qid, raw), ids in LOCOMO_REPAIRS.items():
        q = questions[qid]
        assert q["meta"]["repaired_evidence"] == [{"raw": raw, "ids": ids}]
        assert [e for e in q["evidence"] if e in ids] == ids
        assert f"evidence_repaired: {LOCOMO}[" in err and f"{qid}: {raw!r} read as {ids}" in err
    assert sum("repaired_evidence" in q["meta"] for q in questions.values()) == len(LOCOMO_REPAIRS)
    # Its only evidence string was "D30:05": without the repair the question had no evidence.
    assert questions["conv-50-q69"]["evidence"] == ["D30:5"]
    assert questions["conv-26-q37"]["evidence"] == ["D8:6", "D9:17"]


def test_locomo_evidence_naming_no_turn_is_dropped_and_reported(locomo_run: tuple) -> None:
    cases, err, _ = locomo_run
    questions = {q["qid"]: q for c in cases for q in c["questions"]}
    dropped = {(q["qid"], ev) for q in questions.values() for ev in q["meta"].get("dropped_evidence", [])}
    assert dropped == LOCOMO_DROPPED_EVIDENCE
    lines = [ln for ln in err.splitlines() if ln.startswith(("evidence_malformed:", "evidence_missing_turn:"))]
    assert {re.search(r"(conv-\d+-q\d+): '([^']*)' (is not|names no)", ln).group(1, 2) for ln in lines} == dropped
    assert len(lines) == 3
    assert all(questions[qid]["evidence"] for qid, _ in dropped)  # each still has other evidence
    assert "evidence_duplicate:" in err and "conv-50-q5: 'D4:5' repeated" in err
    assert questions["conv-50-q5"]["evidence"].count("D4:5") == 1


def test_locomo_answerable_questions_without_evidence_are_kept_graded_and_reported(locomo_run: tuple) -> None:
    cases, err, _ = locomo_run
    questions = {q["qid"]: q for c in cases for q in c["questions"]}
    assert {qid for qid, q in questions.items() if not q["evidence"] and q["type"] != "adversarial"} == \
        LOCOMO_NO_EVIDENCE
    assert all(questions[qid]["meta"]["no_evidence"] == locomo_mod.NO_EVIDENCE and is_answerable(questions[qid])
               for qid in LOCOMO_NO_EVIDENCE)
    assert not any(c["meta"]["dropped_questions"] for c in cases)
    lines = [ln for ln in err.splitlines() if ln.startswith("question_kept_no_evidence:")]
    assert len(lines) == 4 and all("category 3 question" in ln and "recall not defined" in ln for ln in lines)
    # Graded for accuracy, their recall is null with the reason, and a wrong answer's cause is
    # unmeasurable (there is no evidence to tell retrieval from reading).
    q = questions["conv-26-q30"]
    r = run_record("oracle", q["qid"], "conv-26", "no", [], [], meta=q["meta"], type=q["type"])
    row = metrics.question_row(r, verdict_for(r, "incorrect"), "oracle")
    assert row["evidence_note"] == locomo_mod.NO_EVIDENCE and row["cause"] == "unmeasurable"
    assert row["evidence_retrieved"] is None and row["answerable"]


def test_locomo_sessions_turns_and_empty_sessions(locomo_run: tuple) -> None:
    cases, err, _ = locomo_run
    conv26 = next(c for c in cases if c["case_id"] == "conv-26")
    ids = [s["session_id"] for s in conv26["sessions"]]
    assert ids == [f"session_{n}" for n in range(1, 20)]  # numeric: session_10 after session_9
    assert [s["session"] for s in conv26["meta"]["skipped_empty_sessions"]] == [f"session_{n}" for n in range(20, 36)]
    assert err.count("empty_session_skipped:") == 16
    assert conv26["sessions"][0]["timestamp"] == "2023-05-08T13:56:00"  # "1:56 pm on 8 May, 2023"
    first = conv26["sessions"][0]["turns"][0]
    assert (first["turn_id"], first["role"]) == ("D1:1", "Caroline")
    for case in cases:
        stamps = [parse_time(s["timestamp"]) for s in case["sessions"]]
        assert stamps == sorted(stamps)
        assert {t["role"] for s in case["sessions"] for t in s["turns"]} == set(case["meta"]["speakers"])
    image = next(t for s in conv26["sessions"] for t in s["turns"] if t["turn_id"] == "D1:12")
    assert image["text"].endswith(" and shared a photo of a painting of a sunset over a lake.")
    assert image["meta"]["blip_caption"] == "a photo of a painting of a sunset over a lake"


def strings_in(obj: object) -> Iterator[str]:
    """Every string (key or value) inside a JSON value."""
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield k
            yield from strings_in(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from strings_in(v)


def test_locomo_derived_fields_never_reach_the_cases(locomo_run: tuple) -> None:
    cases, _, out = locomo_run
    with open(out, encoding="utf-8") as fh:
        text = fh.read()
    for key in ("observation", "session_summary", "event_summary"):
        assert f'"{key}' not in text
    with open(LOCOMO, encoding="utf-8") as fh:
        raw = json.load(fh)
    summaries: list[str] = []
    facts: set[str] = set()
    for conv in raw:
        summaries.extend(conv["session_summary"].values())
        for obs in conv["observation"].values():
            facts.update(fact for facts_ in obs.values() for fact, _ in facts_)
        for events in conv["event_summary"].values():
            facts.update(e for who, es in events.items() if who != "date" for e in es)
    assert len(summaries) > 250 and len(facts) > 2000
    # No output string is a derived fact, and no summary appears anywhere in the output text.
    assert not facts.intersection(strings_in(cases))
    assert not [s for s in summaries if json.dumps(s, ensure_ascii=False)[1:-1] in text]


def test_locomo_without_captions(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = str(tmp_path / "nocap.jsonl")
    code, err = run(locomo_mod, [shared(LOCOMO), "--out", out, "--no-image-captions"], capsys)
    assert code == 0
    cases = load_dataset(out)
    assert all(c["meta"]["image_captions"] is False for c in cases)
    image = next(t for s in cases[0]["sessions"] for t in s["turns"] if t["turn_id"] == "D1:12")
    assert "shared" not in image["text"] and "blip_caption" in image["meta"]


def test_existing_output_is_not_overwritten(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "exists.jsonl"
    out.write_text("keep me\n")
    code, err = run(locomo_mod, [shared(LOCOMO), "--out", str(out)], capsys)
    assert code == EXIT_BAD_INPUT and "--force" in err
    assert out.read_text() == "keep me\n"


# ---------------------------------------------------------------------------------------------
# LongMemEval
# ---------------------------------------------------------------------------------------------

def lme_import(tmp_path: Path, capsys: pytest.CaptureFixture, path: str, *extra: str) -> tuple[list[dict], str]:
    """Run the LongMemEval importer and load its output."""
    out = str(tmp_path / f"lme-{len(os.listdir(tmp_path))}.jsonl")
    code, err = run(lme_mod, [path, "--out", out, *extra], capsys)
    assert code == 0, err
    return load_dataset(out), err


def test_lme_oracle_turn_ids_and_abstention(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    cases, err = lme_import(tmp_path, capsys, shared(LME_ORACLE))
    by_id = {c["case_id"]: c for c in cases}
    assert set(by_id) == {"6a1eabeb", "gpt4_70e84552_abs"}
    ku = by_id["6a1eabeb"]["questions"][0]
    assert ku["type"] == "knowledge_update" and ku["asked_at"] == "2023-06-01T00:58:00"
    assert ku["evidence"] == ["answer_a25d4a91_1_5", "answer_a25d4a91_2_1"]  # has_answer turns, 1-based
    assert ku["meta"] == {"source": "longmemeval", "source_type": "knowledge-update", "abstention": False,
                          "answer_session_ids": ["answer_a25d4a91_1", "answer_a25d4a91_2"],
                          "answer_evidence": ["answer_a25d4a91_1_5", "answer_a25d4a91_2_1"]}
    q = by_id["gpt4_70e84552_abs"]["questions"][0]
    assert q["type"] == "abstention" and q["evidence"] == []
    assert q["meta"]["source"] == "longmemeval" and q["meta"]["abstention"] is True
    assert q["meta"]["source_type"] == "temporal-reasoning"
    for case in cases:
        assert case["meta"]["variant"] == "oracle" and len(case["meta"]["source_sha256"]) == 64
        for s in case["sessions"]:
            assert [t["turn_id"] for t in s["turns"]] == [f"{s['session_id']}_{j}" for j in range(1, len(s["turns"]) + 1)]


def test_lme_session_after_the_question_is_kept_and_asked_at_moves_to_it(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture) -> None:
    # gpt4_70e84552_abs is asked at 08:08 on 2023-05-30; its second answer session is dated
    # 08:29 the same day: a random clock time of LongMemEval's compile step.
    cases, err = lme_import(tmp_path, capsys, shared(LME_ORACLE))
    case = next(c for c in cases if c["case_id"] == "gpt4_70e84552_abs")
    assert [(s["session_id"], s["timestamp"], s["meta"].get("after_question", False)) for s in case["sessions"]] == [
        ("answer_b3070ec4_abs_1", "2023-05-30T04:10:00", False), ("answer_b3070ec4_abs_2", "2023-05-30T08:29:00", True)]
    q = case["questions"][0]
    assert q["asked_at"] == "2023-05-30T08:29:00" and q["meta"]["question_date"] == "2023-05-30T08:08:00"
    assert ("asked_at_moved: " in err and "question gpt4_70e84552_abs: 1 session(s) dated after question_date "
            "2023-05-30T08:08:00 (answer_b3070ec4_abs_2); kept, and asked_at moved to the last one, "
            "2023-05-30T08:29:00" in err)
    assert "noted items: asked_at_moved 1, answer_session_unflagged 1" in err
    other = next(c for c in cases if c["case_id"] == "6a1eabeb")
    assert "question_date" not in other["questions"][0]["meta"]  # asked after its sessions: untouched


def test_lme_answer_session_flagging_no_turn_adds_no_evidence(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    cases, err = lme_import(tmp_path, capsys, shared(LME_ORACLE))
    q = next(c for c in cases if c["case_id"] == "gpt4_70e84552_abs")["questions"][0]
    # Session 2 flags no turn (its fact was removed to make the question unanswerable): only
    # the flagged turn of session 1 is what the evidence would have been.
    assert q["meta"]["would_be_evidence"] == ["answer_b3070ec4_abs_1_1"]
    assert q["meta"]["unflagged_answer_sessions"] == ["answer_b3070ec4_abs_2"]
    assert "answer_session_unflagged: " in err and "answer_b3070ec4_abs_2 flag no turn" in err


def test_lme_answerable_question_without_flagged_turn_is_dropped_with_a_count(tmp_path: Path,
                                                                             capsys: pytest.CaptureFixture) -> None:
    records = [lme_record("q_none", "multi-session", [("answer_1", "2023/05/10 (Wed) 09:00", turns(2))], ["answer_1"]),
               lme_record("q_ok", "single-session-user", [("answer_2", "2023/05/10 (Wed) 09:00", turns(2, (0,)))],
                          ["answer_2"]),
               lme_record("q_abs", "single-session-user", [("answer_3", "2023/05/10 (Wed) 09:00", turns(2))],
                          ["answer_3"])]
    path = write_lme(str(tmp_path / "longmemeval_oracle.json"), records)
    cases, err = lme_import(tmp_path, capsys, path)
    assert [c["case_id"] for c in cases] == ["q_ok", "q_abs"]
    assert re.search(r"question_dropped_no_evidence: \S+longmemeval_oracle\.json\[\d+\]: question q_none: multi_hop "
                     r"question with no turn flagged has_answer; dropped", err)
    assert "question_dropped_no_evidence 1" in err and "2 cases" in err


def test_lme_s_sorted_sessions_and_small_buffer_identical(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    cases, _ = lme_import(tmp_path, capsys, shared(LME_S))
    small, _ = lme_import(tmp_path, capsys, LME_S, "--bufsize", "3")
    assert small == cases
    (case,) = cases
    assert case["meta"]["variant"] == "s"
    assert len(case["sessions"]) == 53 and sum(len(s["turns"]) for s in case["sessions"]) == 550
    stamps = [s["timestamp"] for s in case["sessions"]]
    assert stamps == sorted(stamps)
    q = case["questions"][0]
    assert (q["type"], q["gold_answer"]) == ("single_hop", "Business Administration")
    assert q["evidence"] == ["answer_280352e9_5", "answer_280352e9_6"]


def write_lme(path: str, records: list[dict]) -> str:
    """Write synthetic LongMemEval records, pretty-printed like the real files."""
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(records, fh, indent=2)
    return path


def lme_record(qid: str, qtype: str, sessions: list[tuple[str, str, list[dict]]], answer_ids: list[str],
               answer: object = "yes", date: str = "2023/06/01 (Thu) 12:00") -> dict:
    """One synthetic record; sessions are (id, date, turns)."""
    return {"question_id": qid, "question_type": qtype, "question": f"question {qid}?", "answer": answer,
            "question_date": date, "haystack_session_ids": [s[0] for s in sessions],
            "haystack_dates": [s[1] for s in sessions], "haystack_sessions": [s[2] for s in sessions],
            "answer_session_ids": answer_ids}


def turns(n: int, flagged: tuple = ()) -> list[dict]:
    """n alternating user/assistant turns, has_answer on the given 0-based indices."""
    return [{"role": "user" if j % 2 == 0 else "assistant", "content": f"turn {j}", "has_answer": j in flagged}
            for j in range(n)]


def test_lme_unsorted_duplicates_late_session_and_integer_answer(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture) -> None:
    rec = lme_record("q1", "multi-session", [
        ("sess_b", "2023/05/20 (Sat) 10:00", turns(2, flagged=(1,))),
        ("sess_a", "2023/05/10 (Wed) 09:00", turns(3)),
        ("sess_b", "2023/05/25 (Thu) 10:00", turns(2)),
        ("sess_late", "2023/06/02 (Fri) 10:00", turns(2)),
    ], answer_ids=["sess_a", "sess_b"], answer=3)
    path = write_lme(str(tmp_path / "longmemeval_m_cleaned.json"), [rec])
    (case,), err = lme_import(tmp_path, capsys, path, "--bufsize", "5")
    assert case["meta"]["variant"] == "m_cleaned"
    assert [s["session_id"] for s in case["sessions"]] == ["sess_a", "sess_b", "sess_b~2", "sess_late"]
    assert case["sessions"][2]["meta"]["original_session_id"] == "sess_b"
    assert case["sessions"][3]["meta"]["after_question"] is True
    assert "duplicate_session_renamed:" in err and "sessions_reordered:" in err
    q = case["questions"][0]
    assert q["type"] == "multi_hop" and q["gold_answer"] == "3"
    # Only flagged turns are evidence; sess_a and sess_b's renamed twin flag nothing.
    assert q["evidence"] == ["sess_b_2"]
    assert q["meta"]["unflagged_answer_sessions"] == ["sess_a", "sess_b~2"]
    # A session a day after the question moves asked_at just the same, under its own kind.
    assert q["asked_at"] == "2023-06-02T10:00:00" and q["meta"]["question_date"] == "2023-06-01T12:00:00"
    assert "asked_at_moved_to_later_day: " in err


def test_lme_per_type_sample_is_stratified_and_seeded(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    records = []
    for i in range(40):
        qtype = list(lme_mod.TYPE_MAP)[i % 6]
        qid = f"q{i}" + ("_abs" if i % 10 == 9 else "")
        records.append(lme_record(qid, qtype, [(f"s{i}", "2023/05/01 (Mon) 10:00", turns(2, (0,)))], [f"s{i}"]))
    path = write_lme(str(tmp_path / "longmemeval_s.json"), records)
    a, err = lme_import(tmp_path, capsys, path, "--per-type", "2", "--seed", "7")
    b, _ = lme_import(tmp_path, capsys, path, "--per-type", "2", "--seed", "7", "--bufsize", "13")
    c, _ = lme_import(tmp_path, capsys, path, "--per-type", "2", "--seed", "8")
    assert a == b
    assert dataset_counts(a)["questions_by_type"] == {t: 2 for t in
                                                     ("single_hop", "multi_hop", "temporal", "knowledge_update",
                                                      "abstention", "preference", "assistant_recall")}
    assert [x["case_id"] for x in a] != [x["case_id"] for x in c]
    order = [int(x["case_id"].split("_")[0][1:]) for x in a]
    assert order == sorted(order)  # file order kept
    assert a[0]["meta"]["sample"] == {"per_type": 2, "seed": 7}


def test_lme_bad_input_exits_2_with_path_and_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    ok = lme_record("q1", "single-session-user", [("s1", "2023/05/01 (Mon) 10:00", turns(2, (0,)))], ["s1"])
    bad = lme_record("q2", "single-session-gossip", [("s1", "2023/05/01 (Mon) 10:00", turns(2))], ["s1"])
    path = write_lme(str(tmp_path / "longmemeval_oracle.json"), [ok, bad])
    out = str(tmp_path / "out.jsonl")
    code, err = run(lme_mod, [path, "--out", out], capsys)
    assert code == EXIT_BAD_INPUT
    assert re.search(r"longmemeval_oracle\.json\[\d+\]: question q2: unknown question_type 'single-session-gossip'", err)
    assert not os.path.exists(out)  # nothing partial left behind
    code, err = run(lme_mod, [write_lme(str(tmp_path / "mine.json"), [ok]), "--out", out], capsys)
    assert code == EXIT_BAD_INPUT and "--variant" in err


# ---------------------------------------------------------------------------------------------
# Seed-001 two-file layout
# ---------------------------------------------------------------------------------------------

DIALOGS = os.path.join(FIXTURES, "dialogs", "dialogs.jsonl")
QUESTIONS = os.path.join(FIXTURES, "dialogs", "questions.jsonl")


# The two-file layout's questions.jsonl has no evidence field; the tests add the optional one.
DIALOGS_EVIDENCE = {"c01-q1": [[2, 1]], "c01-q2": [[2, 1]], "c01-q3": [[10, 1]], "c02-q1": [[1, 1]],
                    "c02-q3": [[1, 1]]}


def with_evidence(src: str, folder: Path, evidence: dict[str, list]) -> str:
    """A copy of a questions.jsonl fixture, each listed qid given its "evidence" pairs."""
    path = folder / os.path.basename(src)
    with open(src, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    path.write_text("".join(json.dumps({**r, **({"evidence": evidence[r["qid"]]} if r["qid"] in evidence else {})},
                                       ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def test_dialogs_fixture_imports(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = str(tmp_path / "d.jsonl")
    questions = with_evidence(QUESTIONS, tmp_path, DIALOGS_EVIDENCE)
    code, err = run(dialogs_mod, ["--dialogs", DIALOGS, "--questions", questions, "--out", out], capsys)
    assert code == 0, err
    cases = load_dataset(out)
    assert [c["case_id"] for c in cases] == ["c01", "c02"]
    assert "conversation_dropped:" in err and "c03" in err
    c01 = cases[0]
    assert [s["session_id"] for s in c01["sessions"]] == ["s1", "s2", "s10"]
    assert [t["turn_id"] for t in c01["sessions"][1]["turns"]] == ["c01-s2t1", "c01-s2t2"]  # by turn number
    assert c01["sessions"][1]["timestamp"] == "2026-03-14T10:00:00Z"
    types = {q["qid"]: q["type"] for c in cases for q in c["questions"]}
    assert types == {"c01-q1": "knowledge_update", "c01-q2": "temporal", "c01-q3": "preference",
                     "c02-q1": "single_hop", "c02-q2": "abstention", "c02-q3": "multi_hop"}
    q = {q["qid"]: q for c in cases for q in c["questions"]}
    assert q["c01-q1"]["asked_at"] == "2026-04-02T18:15:00Z"  # last message of c01
    assert q["c02-q1"]["asked_at"] == "2026-02-03T12:00:00Z"  # its own
    assert q["c02-q3"]["gold_answer"] == "5" and q["c01-q2"]["meta"]["source_type"] == "temporal-reasoning"
    assert q["c01-q3"]["evidence"] == ["c01-s10t1"] and q["c02-q2"]["evidence"] == []
    assert all(c["meta"]["variant"] == "seed001" and len(c["meta"]["source_sha256"]) == 64 for c in cases)


def test_dialogs_questions_without_evidence_are_dropped_with_a_count(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture) -> None:
    out = str(tmp_path / "d.jsonl")
    code, err = run(dialogs_mod, ["--dialogs", DIALOGS, "--questions", QUESTIONS, "--out", out], capsys)
    assert code == 0, err
    (case,) = load_dataset(out)  # c01 has no question left; c02 keeps its abstention question
    assert case["case_id"] == "c02" and [q["qid"] for q in case["questions"]] == ["c02-q2"]
    assert "questions.jsonl:6: c02-q3: multi_hop question names no evidence; dropped" in err
    assert "question_dropped_no_evidence 5" in err and "conversation_dropped 2" in err


@pytest.mark.parametrize("qid, evidence, message", [
    ("c01-q1", [[2]], r":1: field 'evidence'\[0\] is \[2\]; expected \[session, turn\] integers"),
    ("c01-q1", [[2, 1], [2, 9]], r":1: field 'evidence'\[1\] \[2, 9\] names no message of conv c01"),
    ("c01-q1", "c01-s2t1", r":1: field 'evidence' must be a list"),
    ("c02-q2", [[1, 1]], r":5: field 'evidence' must be empty for an abstention question"),
])
def test_dialogs_bad_evidence_exits_2_naming_the_line(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                       qid: str, evidence: object, message: str) -> None:
    questions = with_evidence(QUESTIONS, tmp_path, {qid: evidence})
    code, err = run(dialogs_mod, ["--dialogs", DIALOGS, "--questions", questions, "--out", str(tmp_path / "o")],
                    capsys)
    assert code == EXIT_BAD_INPUT and re.search(r"questions\.jsonl" + message, err)


def test_dialogs_unknown_type_fails_unless_default(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    bad_q = with_evidence(os.path.join(FIXTURES, "dialogs", "questions_unknown_type.jsonl"), tmp_path,
                          {"c01-q1": [[2, 1]], "c01-q2": [[1, 1]]})
    out = str(tmp_path / "d.jsonl")
    code, err = run(dialogs_mod, ["--dialogs", DIALOGS, "--questions", bad_q, "--out", out], capsys)
    assert code == EXIT_BAD_INPUT
    assert "questions_unknown_type.jsonl:2: unknown question type 'philosophical'" in err
    code, err = run(dialogs_mod, ["--dialogs", DIALOGS, "--questions", bad_q, "--out", out,
                                  "--default-type", "open_domain"], capsys)
    assert code == 0
    assert [q["type"] for q in load_dataset(out)[0]["questions"]] == ["single_hop", "open_domain"]


def test_dialogs_repeated_turn_names_both_lines(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    d = tmp_path / "dialogs.jsonl"
    line = '{"conv_id": "c", "session": 1, "turn": 1, "role": "user", "text": "hi", "ts": "2026-01-01T00:00:00Z"}\n'
    d.write_text(line + line)
    code, err = run(dialogs_mod, ["--dialogs", str(d), "--questions", QUESTIONS, "--out", str(tmp_path / "o")], capsys)
    assert code == EXIT_BAD_INPUT and re.search(r"dialogs\.jsonl:2: .*repeats .*dialogs\.jsonl:1", err)


# ---------------------------------------------------------------------------------------------
# Mneme corpus
# ---------------------------------------------------------------------------------------------

MNEME = os.path.join(FIXTURES, "mneme")


def test_mneme_fixture_one_case_per_test_point(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = str(tmp_path / "m.jsonl")
    code, err = run(mneme_mod, [MNEME, "--out", out, "--default-type", "preference"], capsys)
    assert code == 0, err
    cases = {c["case_id"]: c for c in load_dataset(out)}
    assert set(cases) == {"001_typescript_preference@t8", "002_two_points@t4"}
    ts = cases["001_typescript_preference@t8"]
    turns_ = ts["sessions"][0]["turns"]
    assert len(turns_) == 8 and all("Can you scaffold" not in t["text"] for t in turns_)  # carrying turn excluded
    q = ts["questions"][0]
    assert q["type"] == "preference" and q["gold_answer"] == "user prefers TypeScript"
    assert q["meta"]["keywords"] == ["TypeScript"] and "expected_keywords" not in q["meta"]
    assert q["evidence"] == ["001_typescript_preference-t4"]  # the only earlier turn naming TypeScript
    assert parse_time(turns_[-1]["meta"]["ts"]) < parse_time(q["asked_at"])
    assert ts["meta"]["synthetic_timestamps"] is True and len(ts["meta"]["source_sha256"]) == 64
    assert cases["002_two_points@t4"]["questions"][0]["evidence"] == ["002_two_points-t2", "002_two_points-t3"]
    assert all(c["cluster"] == c["meta"]["conversation_id"] for c in cases.values())


def write_mneme(folder: Path, conv_id: str, turns_: list[tuple[str, dict | None]]) -> str:
    """Write one Mneme corpus file of (content, test_at or None) turns, alternating roles."""
    path = folder / f"{conv_id}.json"
    rows = [{"role": "user" if j % 2 == 0 else "assistant", "content": text, **({"test_at": test} if test else {})}
            for j, (text, test) in enumerate(turns_)]
    path.write_text(json.dumps({"schema_version": "1", "id": conv_id, "turns": rows}), encoding="utf-8")
    return str(path)


def mneme_point(question: str, keywords: list[str], **extra: str) -> dict:
    """A Mneme test_at block."""
    return {"question": question, "expected_fact": f"fact for {question}", "expected_keywords": keywords, **extra}


def test_mneme_cases_of_one_conversation_share_its_cluster(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    write_mneme(tmp_path, "pets", [("My dog is Biscuit.", None), ("Noted.", None),
                                   ("What is her name?", mneme_point("dog's name?", ["Biscuit"], type="single-hop")),
                                   ("Biscuit.", None), ("She is a beagle.", None), ("Nice.", None),
                                   ("Which breed?", mneme_point("breed?", ["beagle"]))])
    write_mneme(tmp_path, "work", [("I write Rust.", None), ("OK.", None),
                                   ("Pick a language.", mneme_point("language?", ["Rust"]))])
    out = str(tmp_path / "m.jsonl")
    code, err = run(mneme_mod, [str(tmp_path), "--out", out, "--default-type", "preference"], capsys)
    assert code == 0, err
    cases = load_dataset(out)
    assert [(c["case_id"], c["cluster"]) for c in cases] == [("pets@t2", "pets"), ("pets@t6", "pets"),
                                                             ("work@t2", "work")]
    assert cases[0]["questions"][0]["type"] == "single_hop"  # its own "single-hop"
    assert cases[1]["questions"][0]["evidence"] == ["pets-t4"]


def test_mneme_test_points_without_evidence_are_dropped_with_a_count(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture) -> None:
    write_mneme(tmp_path, "c", [("What's my cat called?", mneme_point("cat?", ["Tom"])),
                                ("You have not said.", None), ("She is a beagle called Biscuit.", None),
                                ("Noted.", None), ("And the cat?", mneme_point("cat?", ["Tom"])),
                                ("Still not said.", None), ("Breed and name?", mneme_point("dog?", ["beagle", "Rex"]))])
    out = str(tmp_path / "m.jsonl")
    code, err = run(mneme_mod, [str(tmp_path), "--out", out, "--default-type", "single_hop"], capsys)
    assert code == 0, err
    (case,) = load_dataset(out)
    assert case["case_id"] == "c@t6" and case["questions"][0]["evidence"] == ["c-t2"]
    assert "c.json: turns[0].test_at: it is on the first turn" in err
    assert "c.json: turns[4].test_at: no earlier turn holds any of ['Tom']" in err
    # "Rex" is never said: Mneme's any-keyword hit still scores t2, and the summary says so.
    assert "keywords_not_together: " in err
    assert "turns[6].test_at: no earlier turn holds all of ['beagle', 'Rex']" in err
    assert "noted items: test_point_dropped_no_evidence 2, keywords_not_together 1" in err


def test_mneme_without_type_fails_naming_file_and_turn(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    code, err = run(mneme_mod, [MNEME, "--out", str(tmp_path / "m.jsonl")], capsys)
    assert code == EXIT_BAD_INPUT
    assert "001_typescript_preference.json: turns[8].test_at: no question type" in err


# ---------------------------------------------------------------------------------------------
# Every importer
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("module", [locomo_mod, lme_mod, dialogs_mod, mneme_mod])
def test_help_is_the_docstring(module: ModuleType, capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as e:
        module.main(["--help"])
    assert e.value.code == 0
    assert "Usage:" in capsys.readouterr().out


@pytest.mark.parametrize("script, name", [("import_locomo.py", "locomo.json"), ("import_longmemeval.py", "longmemeval_s.json")])
def test_a_source_file_that_is_not_utf8_is_exit_2_naming_the_line(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                                  script: str, name: str) -> None:
    src = tmp_path / name
    src.write_bytes(b'[\n  {"sample_id": "x",\n   "text": "caf\xe9"}\n]\n')
    module = {"import_locomo.py": locomo_mod, "import_longmemeval.py": lme_mod}[script]
    code, err = run(module, [str(src), "--out", str(tmp_path / "out.jsonl")], capsys)
    assert code == EXIT_BAD_INPUT and f"{src}:3: bytes that are not UTF-8" in err
