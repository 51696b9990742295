"""The human audit of the judge, an instrument with an error of its own: draw a sample of verdicts
for a person to label blind, then join the labels back and report how often the grader agrees
with them.

sample  draws a seeded sample of graded answers, stratified by system and verdict (each
        stratum gets its share of n by largest remainder, so the sample is self-weighting and
        the overall agreement needs no weights), in shuffled order, and writes two files:
        - the sheet, for the labeller: audit_id, question, gold_answer, answer, and empty
          human_verdict and note columns; no system name and no verdict. CSV in UTF-8 with a
          byte-order mark, which spreadsheet apps need to read UTF-8 (Excel otherwise shows
          Cyrillic as mojibake); a cell that begins with = + - @ gets a leading apostrophe, so a
          spreadsheet shows it as text instead of running it as a formula;
        - the key (JSONL), which the labeller does not open: each audit id's system, qid, budget,
          repeat and the judge's verdict and layer.
        Existing files are refused unless --force. Audit ids carry a tag of the sample, so a
        sheet joined with another sample's key is refused.
join    reads the labelled sheet (as saved by a spreadsheet: comma, semicolon or tab separated,
        UTF-8 with or without the mark) and reports judge-human agreement and Cohen's kappa,
        overall, per system and per grading layer. Labels, case-insensitive: correct, c, 1, yes
        (correct) and incorrect, i, 0, no (incorrect). A row with an empty or unreadable label
        is listed with its sheet line and left out, never guessed; the command then exits 5.
        The judge's `unparseable` counts as incorrect, as in the scores. A system is flagged
        when its agreement is clearly lower than the others': at least 3 disagreements and a
        one-sided Fisher exact test of its disagreements against the other systems pooled
        below p = 0.05 (the judge is then not neutral for this dataset: tighten the rubric).

Usage:
  RUN=$(python -c "import yaml; print(yaml.safe_load(open('config.yaml'))['run_id'])")   # config.yaml's run_id
  python audit.py sample --verdicts results/$RUN/verdicts.jsonl --n 100 --seed 11 \\
      --out-sheet results/$RUN/audit-sheet.csv --out-key results/$RUN/audit-key.jsonl
  python audit.py join results/$RUN/audit-sheet.csv results/$RUN/audit-key.jsonl --out results/$RUN/audit.json
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import math
import os
import random
import sys
from collections import defaultdict

from cli import EXIT_OK, EXIT_SHEET_INCOMPLETE, InputError, run_cli
from fileio import dumps, not_utf8_error, read_jsonl, sha256_text, write_atomic, write_json_atomic
from formats import (AUDIT_FORMAT, AUDIT_KEY_FORMAT, BUDGET_FIELD, VERDICT_IDENTITY_FIELDS, check_verdict,
                     read_audit_key, record_key)
from stats import cohen_kappa, fisher_greater
from wording import rate

SHEET_COLUMNS = ("audit_id", "question", "gold_answer", "answer", "human_verdict", "note")
KEY_FIELDS = ("audit_id", "backend", "repeat", BUDGET_FIELD, "qid", "verdict", "by")
LABELS = {"correct": "correct", "c": "correct", "1": "correct", "yes": "correct",
          "incorrect": "incorrect", "i": "incorrect", "0": "incorrect", "no": "incorrect"}
SPELLINGS = "correct/incorrect, c/i, 1/0 or yes/no"
# Spreadsheet apps run a cell that begins with one of these as a formula (OWASP, CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
FLAG_MIN_DISAGREEMENTS = 3
FLAG_P = 0.05  # an audit of about 100 answers has little power per system; 0.05, not stricter


# ---------------------------------------------------------------------------------------------
# sample
# ---------------------------------------------------------------------------------------------

def allocate(sizes: dict, n: int) -> dict:
    """n spread over strata in proportion to their sizes, by largest remainder (Hamilton);
    ties go to the stratum that sorts first, so the split is the same on every machine."""
    total = sum(sizes.values())
    quotas = {k: n * size / total for k, size in sizes.items()}
    out = {k: math.floor(q) for k, q in quotas.items()}
    for k in sorted(quotas, key=lambda k: (-(quotas[k] - out[k]), k))[:n - sum(out.values())]:
        out[k] += 1
    return out


def draw(verdicts: list[dict], n: int, seed: int) -> list[dict]:
    """A seeded sample of n verdicts stratified by (system, verdict), in shuffled order."""
    strata: dict = defaultdict(list)
    for v in sorted(verdicts, key=record_key):  # file order must not change the sample
        strata[(v["backend"], v["verdict"])].append(v)
    rng = random.Random(seed)
    take = allocate({k: len(vs) for k, vs in strata.items()}, min(n, len(verdicts)))
    sample = [v for k in sorted(strata) for v in rng.sample(strata[k], take[k])]
    rng.shuffle(sample)  # the labeller must not see the strata as blocks
    return sample


def safe_cell(text: str) -> str:
    """A cell a spreadsheet shows as the text it is, never as a formula."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def sheet_text(rows: list[dict]) -> str:
    """The blind sheet as CSV text, starting with the byte-order mark."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(SHEET_COLUMNS)
    for r in rows:
        writer.writerow([r["audit_id"], safe_cell(r["question"]), safe_cell(r["gold_answer"]),
                         safe_cell(r["answer"]), "", ""])
    return "\ufeff" + buf.getvalue()


def sample(a: argparse.Namespace) -> int:
    """Write the blind sheet and its key."""
    if a.n < 1:
        raise InputError("--n must be at least 1")
    for path in (a.out_sheet, a.out_key):
        if os.path.exists(path) and not a.force:
            raise InputError(f"{path}: exists; a sheet may already be labelled: choose another path, or pass --force")
    verdicts = []
    for lineno, v in read_jsonl(a.verdicts):
        check_verdict(v, f"{a.verdicts}:{lineno}")
        if v["verdict"] is not None:  # a failed run or judge call has nothing to audit
            verdicts.append(v)
    if not verdicts:
        raise InputError(f"{a.verdicts}: no graded answer to sample")
    picked = draw(verdicts, a.n, a.seed)
    tag = sha256_text(json.dumps([a.seed, sorted(map(list, map(record_key, picked)))]))[:6]
    rows, keys = [], []
    for i, v in enumerate(picked, 1):
        audit_id = f"{tag}-{i:03d}"
        rows.append({"audit_id": audit_id, "question": v["question"], "gold_answer": v["gold_answer"],
                     "answer": v["answer"]})
        keys.append({"format": AUDIT_KEY_FORMAT, "audit_id": audit_id, "backend": v["backend"], "repeat": v["repeat"],
                     BUDGET_FIELD: v[BUDGET_FIELD], "case_id": v["case_id"], "qid": v["qid"], "type": v["type"],
                     "verdict": v["verdict"], "by": v["by"], **{f: v[f] for f in VERDICT_IDENTITY_FIELDS},
                     "seed": a.seed, "verdicts_file": a.verdicts})
    write_atomic(a.out_key, "".join(dumps(k) + "\n" for k in keys))
    write_atomic(a.out_sheet, sheet_text(rows))
    counts: dict = defaultdict(int)
    for v in picked:
        counts[(v["backend"], v["verdict"])] += 1
    split = ", ".join(f"{b} {verdict} {n}" for (b, verdict), n in sorted(counts.items()))
    print(f"sampled {len(picked)} of {len(verdicts)} graded answers (seed {a.seed}), by system and verdict: {split}")
    if len(picked) < a.n:
        print(f"note: --n {a.n} is more than there are graded answers: all of them are in the sheet")
    print(f"wrote {a.out_sheet} (for the labeller: fill human_verdict with {SPELLINGS}) and {a.out_key} (the key: "
          f"not to be opened while labelling)")
    return EXIT_OK


# ---------------------------------------------------------------------------------------------
# join
# ---------------------------------------------------------------------------------------------

def read_key(path: str) -> dict:
    """audit_id -> key line; a line without the fields, or an id used twice, is an error."""
    out: dict = {}
    for lineno, k in read_audit_key(path):
        missing = [f for f in KEY_FIELDS if f not in k]
        if missing:
            raise InputError(f"{path}:{lineno}: not an audit key line (no field '{missing[0]}'); pass the key "
                             f"that audit.py sample wrote")
        if k["audit_id"] in out:
            raise InputError(f"{path}:{lineno}: audit id {k['audit_id']!r} repeats line {out[k['audit_id']]['line']}")
        out[k["audit_id"]] = {**k, "line": lineno}
    if not out:
        raise InputError(f"{path}: no audit ids")
    return out


def read_sheet(path: str) -> list[tuple[int, str, str]]:
    """(line, audit_id, label cell) per labelled-or-not row of the sheet, as a spreadsheet app
    may have saved it; blank rows are left out."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            text = fh.read()
    except OSError as e:
        raise InputError(f"{path}: cannot open: {e.strerror}") from None
    except UnicodeDecodeError:
        raise not_utf8_error(path) from None
    try:
        dialect = csv.Sniffer().sniff(text.split("\n", 1)[0], delimiters=",;\t")
    except csv.Error:
        raise InputError(f"{path}:1: not a CSV header; expected the columns {', '.join(SHEET_COLUMNS)}") from None
    reader = csv.reader(io.StringIO(text, newline=""), dialect)
    header = [h.strip() for h in next(reader, [])]
    for column in ("audit_id", "human_verdict"):
        if column not in header:
            raise InputError(f"{path}:1: no column '{column}'; expected the columns of the sheet audit.py wrote: "
                             f"{', '.join(SHEET_COLUMNS)}")
    id_col, label_col = header.index("audit_id"), header.index("human_verdict")
    rows, start = [], reader.line_num + 1
    for cells in reader:
        line, start = start, reader.line_num + 1
        if not any(c.strip() for c in cells):
            continue
        cells = [c.strip() for c in cells] + [""] * (len(header) - len(cells))  # a short row: cells left empty
        rows.append((line, cells[id_col], cells[label_col]))
    return rows


def agreement(pairs: list[tuple[str, str]]) -> dict:
    """Agreement of (judge, human) verdict pairs, with kappa and the two kinds of disagreement."""
    agree = sum(j == h for j, h in pairs)
    return {"n": len(pairs), "agree": agree, "agreement": agree / len(pairs) if pairs else None,
            "kappa": cohen_kappa(pairs),
            "judge_correct_human_incorrect": sum(j == "correct" and h == "incorrect" for j, h in pairs),
            "judge_incorrect_human_correct": sum(j == "incorrect" and h == "correct" for j, h in pairs)}


def flag_systems(by_system: dict) -> list[dict]:
    """Systems whose agreement is clearly lower than the others' (see the module docstring)."""
    flagged = []
    for name, s in by_system.items():
        off = s["n"] - s["agree"]
        rest_off = sum(x["n"] - x["agree"] for k, x in by_system.items() if k != name)
        rest_n = sum(x["n"] for k, x in by_system.items() if k != name)
        if off >= FLAG_MIN_DISAGREEMENTS and rest_n:
            p = fisher_greater(off, s["n"], rest_off, rest_n)
            s["p_value"] = p
            if p < FLAG_P:
                flagged.append({"system": name, "agreement": s["agreement"], "disagreements": off, "n": s["n"],
                                "others_agreement": (rest_n - rest_off) / rest_n, "p_value": p})
    return flagged


def judge_verdict(key_line: dict) -> str:
    """The judge's verdict as the scores count it: unparseable is incorrect."""
    return "correct" if key_line["verdict"] == "correct" else "incorrect"


def join(a: argparse.Namespace) -> int:
    """Join the labelled sheet with its key; report agreement and kappa."""
    key = read_key(a.key)
    rows = read_sheet(a.sheet)
    seen: dict = {}
    labelled, unlabelled, unreadable = [], [], []
    for line, audit_id, cell in rows:
        if audit_id not in key:
            raise InputError(f"{a.sheet}:{line}: audit id {audit_id!r} is not in {a.key}: this sheet and this key "
                             f"come from different samples")
        if audit_id in seen:
            raise InputError(f"{a.sheet}:{line}: audit id {audit_id!r} is also on line {seen[audit_id]}")
        seen[audit_id] = line
        if not cell:
            unlabelled.append({"line": line, "audit_id": audit_id})
        elif cell.casefold() not in LABELS:
            unreadable.append({"line": line, "audit_id": audit_id, "value": cell})
        else:
            labelled.append((key[audit_id], LABELS[cell.casefold()]))
    absent = sorted(set(key) - set(seen))
    groups: dict = {"system": defaultdict(list), "layer": defaultdict(list)}
    for k, human in labelled:
        groups["system"][k["backend"]].append((judge_verdict(k), human))
        groups["layer"][k["by"]].append((judge_verdict(k), human))
    by_system = {name: agreement(p) for name, p in sorted(groups["system"].items())}
    flagged = flag_systems(by_system)
    report = {"format": AUDIT_FORMAT, "sheet": a.sheet, "key": a.key, "sampled": len(key), "labelled": len(labelled),
              "complete": not (unlabelled or unreadable or absent), "accepted_labels": SPELLINGS,
              "overall": agreement([(judge_verdict(k), h) for k, h in labelled]), "by_system": by_system,
              "by_layer": {name: agreement(p) for name, p in sorted(groups["layer"].items())},
              "flagged": flagged,
              "flag_rule": f"at least {FLAG_MIN_DISAGREEMENTS} disagreements and a one-sided Fisher exact test of "
                           f"the system's disagreements against the other systems pooled below p = {FLAG_P}",
              "unlabelled": unlabelled, "unreadable": unreadable, "absent": absent}
    write_json_atomic(a.out, report)

    o = report["overall"]
    print(f"judge-human agreement on {o['n']} of {len(key)} sampled answers: {rate(o['agreement'])} "
          f"(kappa {rate(o['kappa'])}); judge correct / human incorrect {o['judge_correct_human_incorrect']}, "
          f"judge incorrect / human correct {o['judge_incorrect_human_correct']}")
    for title, table in (("system", by_system), ("layer", report["by_layer"])):
        for name, s in table.items():
            print(f"  {title} {name}: {s['agree']}/{s['n']} agree ({rate(s['agreement'])}), kappa {rate(s['kappa'])}")
    for f in flagged:
        print(f"WARN: {f['system']}: agreement {rate(f['agreement'])} against {rate(f['others_agreement'])} for the "
              f"others (one-sided Fisher p={f['p_value']:.2g}): the judge is not neutral for this dataset; tighten "
              f"the rubric before reading the scores")
    for u in unlabelled:
        print(f"{a.sheet}:{u['line']}: {u['audit_id']}: no human verdict; left out")
    for u in unreadable:
        print(f"{a.sheet}:{u['line']}: {u['audit_id']}: {u['value']!r} is not a verdict (write {SPELLINGS}); left out")
    if absent:
        print(f"{len(absent)} audit id(s) of the key are not in the sheet (rows deleted?): {', '.join(absent)}")
    print(f"wrote {a.out}", file=sys.stderr)
    return EXIT_OK if report["complete"] else EXIT_SHEET_INCOMPLETE


def main(argv: list[str] | None = None) -> int:
    """sample or join."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    s = sub.add_parser("sample", help="draw a blind sheet and its key from the verdicts")
    s.add_argument("--verdicts", required=True, help="results/$RUN/verdicts.jsonl from judge.py")
    s.add_argument("--n", type=int, default=100, help="answers to sample")
    s.add_argument("--seed", type=int, default=11)
    s.add_argument("--out-sheet", help="the blind sheet (default audit-sheet.csv beside --verdicts)")
    s.add_argument("--out-key", help="its key (default audit-key.jsonl beside --verdicts)")
    s.add_argument("--force", action="store_true", help="overwrite an existing sheet or key")
    j = sub.add_parser("join", help="join a labelled sheet with its key; report agreement and kappa")
    j.add_argument("sheet")
    j.add_argument("key")
    j.add_argument("--out", help="the agreement as JSON (default audit.json beside the sheet)")
    a = ap.parse_args(argv)
    # Beside the run's verdicts: results/RUN_ID/, one folder per comparison.
    if a.command == "sample":
        a.out_sheet = a.out_sheet or os.path.join(os.path.dirname(a.verdicts), "audit-sheet.csv")
        a.out_key = a.out_key or os.path.join(os.path.dirname(a.verdicts), "audit-key.jsonl")
    else:
        a.out = a.out or os.path.join(os.path.dirname(a.sheet), "audit.json")
    return sample(a) if a.command == "sample" else join(a)


if __name__ == "__main__":
    sys.exit(run_cli(main))
