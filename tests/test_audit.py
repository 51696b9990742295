"""audit.py, the human audit of the judge: a seeded sample stratified by system and verdict, a
blind sheet that a spreadsheet opens, a key kept apart, and agreement and kappa joined back
against hand-computed values, with missing labels reported by sheet line."""
from __future__ import annotations

import csv
import io
import json
import math

import pytest

import audit
from cli import run_cli
from records import run_record, verdict_for, write_jsonl

# (correct, incorrect, unparseable) verdicts per system, 20 answers each.
MIX = {"alpha": (10, 10, 0), "beta": (15, 5, 0), "gamma": (4, 14, 2)}


def verdicts_file(tmp_path, answers: dict | None = None) -> str:
    """60 verdicts of three systems with the MIX of verdicts; `answers` overrides answers by qid."""
    rows = []
    for name, (c, i, u) in MIX.items():
        kinds = ["correct"] * c + ["incorrect"] * i + ["unparseable"] * u
        for n, kind in enumerate(kinds):
            qid = f"q{n:02d}"
            rec = run_record(name, qid, f"c{n}", (answers or {}).get(qid, f"answer {n}"), [], [])
            rows.append(verdict_for(rec, kind, by="llm" if kind == "unparseable" or n % 2 else "exact"))
    return write_jsonl(tmp_path / "verdicts.jsonl", rows)


def sample(tmp_path, n: int, seed: int = 11, *extra: str, answers: dict | None = None) -> tuple[int, str, str]:
    sheet, key = tmp_path / "audit-sheet.csv", tmp_path / "audit-key.jsonl"
    code = run_cli(audit.main, ["sample", "--verdicts", verdicts_file(tmp_path, answers), "--n", str(n),
                                "--seed", str(seed), "--out-sheet", str(sheet), "--out-key", str(key), *extra])
    return code, str(sheet), str(key)


def key_lines(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def label(sheet: str, human: dict, delimiter: str = ",") -> None:
    """Fill human_verdict per audit id, saving as a spreadsheet would (UTF-8 with the mark)."""
    with open(sheet, encoding="utf-8-sig", newline="") as fh:
        rows = list(csv.reader(fh))
    for row in rows[1:]:
        row[4] = human.get(row[0], "")
    buf = io.StringIO()
    csv.writer(buf, delimiter=delimiter).writerows(rows)
    with open(sheet, "w", encoding="utf-8-sig", newline="") as fh:
        fh.write(buf.getvalue())


def join(tmp_path, sheet: str, key: str) -> tuple[int, dict]:
    out = tmp_path / "audit.json"
    code = run_cli(audit.main, ["join", sheet, key, "--out", str(out)])
    return code, json.loads(out.read_text())


# ---------------------------------------------------------------------------------------------
# sample
# ---------------------------------------------------------------------------------------------

def test_the_sample_is_stratified_by_system_and_verdict_with_hand_computed_shares(tmp_path):
    code, _, key = sample(tmp_path, 12)
    assert code == 0
    counts: dict = {}
    for k in key_lines(key):
        counts[(k["backend"], k["verdict"])] = counts.get((k["backend"], k["verdict"]), 0) + 1
    # Quotas are 12 * size / 60: alpha 2 + 2, beta 3 + 1, gamma 0.8 / 2.8 / 0.4. Floors give 10;
    # the two largest remainders (gamma correct 0.8, gamma incorrect 0.8) get the other two.
    assert counts == {("alpha", "correct"): 2, ("alpha", "incorrect"): 2, ("beta", "correct"): 3,
                      ("beta", "incorrect"): 1, ("gamma", "correct"): 1, ("gamma", "incorrect"): 3}


def test_the_sheet_is_blind_and_opens_in_a_spreadsheet(tmp_path):
    _, sheet, key = sample(tmp_path, 60, answers={"q00": "=HYPERLINK(\"x\")", "q01": "-3 days"})
    raw = open(sheet, "rb").read()
    assert raw.startswith(b"\xef\xbb\xbf")  # UTF-8 with the byte-order mark
    with open(sheet, encoding="utf-8-sig", newline="") as fh:
        rows = list(csv.reader(fh))
    assert tuple(rows[0]) == audit.SHEET_COLUMNS
    text = raw.decode("utf-8-sig")
    for hidden in ("alpha", "beta", "gamma", "unparseable", "exact", "llm"):
        assert hidden not in text
    assert all(r[4] == "" and r[5] == "" for r in rows[1:])
    assert [r[0] for r in rows[1:]] == [k["audit_id"] for k in key_lines(key)]
    # formulas are shown as text, never run
    assert not any(cell.startswith(("=", "-")) for r in rows[1:] for cell in r)
    assert {"'=HYPERLINK(\"x\")", "'-3 days"} <= {r[3] for r in rows[1:]}
    k = key_lines(key)[0]
    for field in ("audit_id", "backend", "repeat", "context_token_budget", "qid", "verdict", "by", "judge_model"):
        assert field in k


def test_the_sample_is_seeded(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "c").mkdir()
    _, sheet_a, key_a = sample(tmp_path / "a", 12, 11)
    _, sheet_b, key_b = sample(tmp_path / "b", 12, 11)
    _, sheet_c, _ = sample(tmp_path / "c", 12, 12)
    assert open(sheet_a, "rb").read() == open(sheet_b, "rb").read()
    # the same key, but for the path each sample read its verdicts from
    assert [{**k, "verdicts_file": None} for k in key_lines(key_a)] == \
           [{**k, "verdicts_file": None} for k in key_lines(key_b)]
    assert open(sheet_a, "rb").read() != open(sheet_c, "rb").read()


def test_existing_files_are_refused_unless_force(tmp_path, capsys):
    _, sheet, _ = sample(tmp_path, 12)
    label(sheet, {})
    before = open(sheet, "rb").read()
    code, _, _ = sample(tmp_path, 12)
    assert code == 2 and "--force" in capsys.readouterr().err
    assert open(sheet, "rb").read() == before
    code, _, _ = sample(tmp_path, 12, 11, "--force")
    assert code == 0


# ---------------------------------------------------------------------------------------------
# join
# ---------------------------------------------------------------------------------------------

def test_join_reports_hand_computed_agreement_and_kappa(tmp_path, capsys):
    _, sheet, key = sample(tmp_path, 12)
    keys = key_lines(key)
    # The person agrees with the judge on every answer except two of alpha's: one the judge
    # accepted and one it rejected. Each is written in another accepted spelling.
    flip = {next(k["audit_id"] for k in keys if k["backend"] == "alpha" and k["verdict"] == v)
            for v in ("correct", "incorrect")}
    spell = {"correct": ["Correct", "c", "1", "YES"], "incorrect": ["incorrect", "I", "0", "no"]}
    human = {}
    for n, k in enumerate(keys):
        truth = k["verdict"] if k["audit_id"] not in flip else {"correct": "incorrect", "incorrect": "correct"}[k["verdict"]]
        human[k["audit_id"]] = spell[truth][n % 4]
    label(sheet, human)
    code, report = join(tmp_path, sheet, key)
    assert code == 0 and report["complete"]
    # Judge: 6 correct, 6 incorrect; person: 6 and 6; 10 of 12 agree. Chance agreement
    # (6*6 + 6*6) / 144 = 0.5, kappa = (10/12 - 0.5) / (1 - 0.5) = 2/3.
    o = report["overall"]
    assert (o["n"], o["agree"]) == (12, 10) and o["kappa"] == pytest.approx(2 / 3)
    assert o["judge_correct_human_incorrect"] == o["judge_incorrect_human_correct"] == 1
    # alpha: 2 of 4 agree, each rater 2 correct / 2 incorrect: chance 0.5, kappa 0.
    assert report["by_system"]["alpha"]["agreement"] == 0.5 and report["by_system"]["alpha"]["kappa"] == 0.0
    assert report["by_system"]["beta"]["kappa"] == 1.0 and report["by_system"]["gamma"]["agreement"] == 1.0
    assert report["flagged"] == []  # 2 disagreements: below the minimum of 3
    out = capsys.readouterr().out
    assert "judge-human agreement on 12 of 12 sampled answers: 0.833 (kappa 0.667)" in out
    # wording.rate, as every other figure: 3 significant digits.
    assert "  system alpha: 2/4 agree (0.500), kappa 0.00" in out
    assert "  system beta: 4/4 agree (1.00), kappa 1.00" in out


def test_a_system_the_judge_disagrees_with_clearly_more_is_flagged(tmp_path, capsys):
    _, sheet, key = sample(tmp_path, 60)
    keys = key_lines(key)
    alpha = [k["audit_id"] for k in keys if k["backend"] == "alpha"][:6]
    human = {k["audit_id"]: ("incorrect" if k["verdict"] == "correct" else "correct") if k["audit_id"] in alpha
             else ("correct" if k["verdict"] == "correct" else "incorrect") for k in keys}
    label(sheet, human)
    code, report = join(tmp_path, sheet, key)
    assert code == 0
    # alpha 6 disagreements of 20, the others 0 of 40: P(all 6 in alpha's 20 of 60) = C(54, 14) / C(60, 20).
    assert [f["system"] for f in report["flagged"]] == ["alpha"]
    assert report["flagged"][0]["p_value"] == pytest.approx(math.comb(54, 14) / math.comb(60, 20))
    # The judge's unparseable counts as incorrect, as in the scores: gamma's 2 agree with "incorrect".
    assert report["by_system"]["gamma"]["agreement"] == 1.0
    assert "WARN: alpha" in capsys.readouterr().out


def test_missing_and_unreadable_labels_are_reported_by_sheet_line_never_guessed(tmp_path, capsys):
    _, sheet, key = sample(tmp_path, 12, answers={f"q{n:02d}": "two\nlines" for n in range(20)})
    keys = key_lines(key)
    human = {k["audit_id"]: "correct" for k in keys}
    human[keys[2]["audit_id"]] = ""
    human[keys[5]["audit_id"]] = "maybe"
    label(sheet, human, delimiter=";")  # a spreadsheet app in a locale that saves with semicolons
    code, report = join(tmp_path, sheet, key)
    assert code == 5 and not report["complete"] and report["labelled"] == 10
    # Every answer spans two lines: row r (0-based) starts on line 2 + 2r.
    assert report["unlabelled"] == [{"line": 6, "audit_id": keys[2]["audit_id"]}]
    assert report["unreadable"] == [{"line": 12, "audit_id": keys[5]["audit_id"], "value": "maybe"}]
    out = capsys.readouterr().out
    assert f"{sheet}:12: {keys[5]['audit_id']}: 'maybe' is not a verdict" in out
    assert "correct/incorrect, c/i, 1/0 or yes/no" in out


def test_a_sheet_joined_with_another_samples_key_is_refused(tmp_path, capsys):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    _, sheet, _ = sample(tmp_path / "a", 12, 11)
    _, _, other_key = sample(tmp_path / "b", 12, 12)
    assert run_cli(audit.main, ["join", sheet, other_key, "--out", str(tmp_path / "audit.json")]) == 2
    assert "different samples" in capsys.readouterr().err
