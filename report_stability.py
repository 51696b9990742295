"""The report's line on the ranking's stability: whether the ranking of the systems held across the
judges (panel.py's panel.json, report.py --panel) and the readers (sweep.py's JSON, report.py
--sweep) that were run, and where not, which pair of systems changed order; "one judge, one
reader: stability not measured" when one of each ran. The words are agreement.stability_text's,
as panel.py and sweep.py print them; here the files are read and held to this report's scores.
"""
from __future__ import annotations

from agreement import PANEL_FORMAT, SWEEP_FORMAT, stability_text
from cli import InputError
from fileio import read_json, sha256_file
from formats import check_format
from report_document import Strong, segs
from report_sections import retrieval_only

PANEL_FIELDS = ("format", "baseline", "judges", "stability", "inputs")
SWEEP_FIELDS = ("format", "baseline", "readers", "stability")


def read_panel(path: str, scores: dict) -> dict:
    """panel.json of this report's run files and baseline; an InputError naming the field
    that does not belong."""
    panel = read_json(path, "judge panel of panel.py --json", PANEL_FIELDS)
    check_format(panel, PANEL_FORMAT, path, "rerun panel.py")
    if sorted(panel["inputs"]["runs"].values()) != sorted(scores["inputs"]["runs"].values()):
        raise InputError(f"--panel {path}: field 'inputs.runs' names other run files than --scores was made from "
                         f"(their sha256 differ); rerun panel.py on these runs")
    if panel["baseline"] != scores["baseline"]:
        raise InputError(f"--panel {path}: field 'baseline' is {panel['baseline']!r}, the scores' is "
                         f"{scores['baseline']!r}; rerun panel.py with --baseline {scores['baseline']}")
    return panel


def read_sweep(path: str, scores_path: str) -> dict:
    """A sweep (sweep.py --json) that holds this report's scores.json among its readers."""
    sweep = read_json(path, "reader sweep of sweep.py --json", SWEEP_FIELDS)
    check_format(sweep, SWEEP_FORMAT, path, "rerun sweep.py")
    if sha256_file(scores_path) not in {r["sha256"] for r in sweep["readers"]}:
        raise InputError(f"--sweep {path}: field 'readers' holds no reader whose scores are {scores_path} (by "
                         f"sha256); rerun sweep.py with these scores among its --scores")
    return sweep


def stability_line(scores: dict, scores_path: str, panel_path: str | None, sweep_path: str | None) -> list | None:
    """The first screen's line, from report.py's --panel and --sweep (each optional); None for a
    retrieval-only report, which no judge graded and no reader answered (given either: refused)."""
    if retrieval_only(scores):
        if panel_path or sweep_path:
            raise InputError(f"{scores_path}: scores retrieval-only runs, which no judge graded and no reader "
                             f"answered: --panel and --sweep are for answered runs")
        return None
    panel = read_panel(panel_path, scores) if panel_path else None
    sweep = read_sweep(sweep_path, scores_path) if sweep_path else None
    return segs(Strong("Ranking across judges and readers"), f": {stability_text(panel, sweep)}.")
