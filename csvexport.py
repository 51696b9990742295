"""Every table of a scores.json (score.py) or compare.json (compare.py) as CSV files, for a
spreadsheet or a paper: one file per table, one row per system (per type, per difference, per
question), the numbers exactly as the JSON holds them (unrounded; an empty cell is a value that
was not measured, and the JSON beside it says why).

Tables are derived from the JSON's own rows, so a field added to a system row appears as a
column without a change here: scalars are columns, a two-number interval is two columns
(`accuracy_ci_low`, `accuracy_ci_high`), a mapping of counts (failure causes, the layers that
decided the verdicts) is one column per key, and nested rows (per type, per difference) are
tables of their own. score.py --csv DIR and compare.py write them.
"""
from __future__ import annotations

import csv
import io
import os

from fileio import write_atomic


def _cells(prefix: str, value) -> dict:
    """One field as columns: a scalar as is, a [low, high] interval as two, a mapping of scalars
    (or of [low, high]) as one column per key; anything else (a nested table) is left to its
    own table."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return {prefix: value}
    if isinstance(value, list) and len(value) == 2 and all(isinstance(x, (int, float)) for x in value):
        return {f"{prefix}_low": value[0], f"{prefix}_high": value[1]}
    if isinstance(value, dict) and all(v is None or isinstance(v, (str, int, float, bool, list)) for v in value.values()):
        out: dict = {}
        for k, v in value.items():
            out.update(_cells(f"{prefix}.{k}", v))
        return out
    return {}


def flat(row: dict, skip: tuple = ()) -> dict:
    """A JSON row as CSV cells (see _cells), nested tables and `skip` left out."""
    out: dict = {}
    for key, value in row.items():
        if key not in skip:
            out.update(_cells(key, value))
    return out


def interval_cells(prefix: str, d: dict | None) -> dict:
    """A paired difference's point, interval and counts as columns under a prefix."""
    keys = ("difference", "ci_low", "ci_high", "standard_error", "questions", "clusters")
    return {f"{prefix}{k}": (d or {}).get(k) for k in keys}


def tables(scores: dict) -> dict[str, list[dict]]:
    """Every table of a scores.json-shaped dict (score.py's or compare.py's) that has a row:
    name -> rows (a model-free run has no differences in accuracy, two runs no steps)."""
    systems = scores["systems"]
    out = {
        "systems": [flat(s, skip=("by_type",)) for s in systems],
        "by_type": [{"system": s["label"], "budget": s["budget"], "type": t, **flat(v)}
                    for s in systems for t, v in s["by_type"].items()],
        "differences": [{**flat(d, skip=("by_type", "abstention")), **interval_cells("abstention_", d["abstention"])}
                        for d in scores["differences"]],
        "differences_by_type": [{"system": d["system"], "baseline": d["baseline"], "budget": d["budget"], "type": t,
                                 **interval_cells("", x)} for d in scores["differences"] for t, x in d["by_type"].items()],
        "retrieval_differences": [flat(d) for d in scores["retrieval_differences"]],
        "minimum_detectable_difference": [{"budget": b, **flat(m)}
                                          for b, m in scores["minimum_detectable_difference"].items()],
        "questions": [flat(q) for q in scores["questions"]],
    }
    if "steps" in scores:  # compare.py's run-over-run history
        out["steps"] = [flat(s) for s in scores["steps"]]
    return {name: rows for name, rows in out.items() if rows}


def csv_text(rows: list[dict]) -> str:
    """Rows as CSV text: the header is every column of any row, in first-seen order."""
    columns = list(dict.fromkeys(k for r in rows for k in r))
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: "" if r.get(k) is None else r[k] for k in columns})
    return buf.getvalue()


def write_tables(folder: str, scores: dict, prefix: str = "") -> list[str]:
    """Write every table of `scores` into folder as PREFIX+NAME.csv (atomically); the paths."""
    os.makedirs(folder, exist_ok=True)
    paths = []
    for name, rows in tables(scores).items():
        path = os.path.join(folder, f"{prefix}{name}.csv")
        write_atomic(path, csv_text(rows))
        paths.append(path)
    return paths
