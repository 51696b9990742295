"""A judge panel: one comparison's answers graded by several judges (judge.py --judge-model, each
to its own verdicts file), and what changes with the judge. Prints and writes (--json, panel.json
beside the scores by convention):

- accuracy per system under each judge and under the panel's majority (an answer is right when
  more than half of the judges say so), each with its 95% cluster-bootstrap interval, computed by
  metrics.py as score.py computes it;
- agreement between the judges on whether each answer is right: Cohen's kappa per pair and
  Fleiss' kappa over the panel, overall, per system and per kind, each with its 95% interval from
  the cluster bootstrap over cases (the resamples score.py draws);
- whether the ranking of the systems (the controls aside) is the same under every judge, Kendall's
  tau-b between each pair of judges' rankings, each pair of systems whose order changes, and
  whether each paired difference to the baseline keeps its sign and its verdict (separated or not)
  under every judge.

A panel of one judge has no agreement or stability to measure, and says so. Every verdicts file
must grade exactly these run files under these rules (score.py's refusal, with the file and line);
two files of one judge are refused. score.py's output is untouched: it scores one judge's
verdicts, and report.py --panel puts this file's one line on the first screen.

Usage:
  RUN=$(python -c "import yaml; print(yaml.safe_load(open('config.yaml'))['run_id'])")   # config.yaml's run_id
  python panel.py --runs runs/$RUN/*.jsonl --verdicts results/$RUN/verdicts.jsonl \\
      results/$RUN/verdicts-MODEL_ID.jsonl --baseline keyword --json results/$RUN/panel.json
  python report.py --scores results/$RUN/scores.json ... --panel results/$RUN/panel.json
"""
from __future__ import annotations

import argparse
import sys

from agreement import (MAJORITY, MAJORITY_RULE, PANEL_FORMAT, agreement, majority_pairs, publish, resolve_baseline,
                       scored_view, stability, stability_lines, stability_text)
from cli import InputError, run_cli
from dataset import dataset_from
from fileio import output_path, sha256_file
from formats import load_comparison
from metrics import pair_verdicts
from stats import RESAMPLES, SEED
from wording import estimate_text, rate

ONE_JUDGE = ("a panel of one judge: agreement between judges, and whether the ranking holds under another "
             "judge, are not measured; grade the same runs with another judge (judge.py --judge-model ID)")


def judge_label(pairs: list[tuple[dict, dict | None]], path: str) -> str:
    """A verdicts file's judge: its judge model, or "rules only"; pair_verdicts has refused a
    file that mixes graders."""
    graded = [v for _, v in pairs if v is not None]
    if not graded:
        raise InputError(f"{path}: grades no answer (retrieval-only runs): a panel needs answered runs")
    return graded[0]["judge_model"] or "rules only"


def read_panel(records: list[dict], paths: list[str]) -> tuple[list[str], list[list]]:
    """Each verdicts file paired with the records (pair_verdicts: refused, naming the file and
    line, unless it grades exactly these answers), and its judge's label; the same judge twice
    is refused."""
    labels, panel = [], []
    for path in paths:
        pairs = pair_verdicts(records, path)
        label = judge_label(pairs, path)
        if label in labels:
            raise InputError(f"{path}: judge {label!r} again (also {paths[labels.index(label)]}): a panel needs "
                             f"each judge once")
        labels.append(label)
        panel.append(pairs)
    return labels, panel


def panel_figures(records: list[dict], paths: list[str], baseline: str, resamples: int, seed: int) -> dict:
    """Every figure of panel.json but its inputs."""
    base = resolve_baseline(baseline, records)
    labels, panel = read_panel(records, paths)
    views = {label: scored_view(pairs, base, resamples, seed) for label, pairs in zip(labels, panel)}
    several = len(labels) > 1
    majority = scored_view(majority_pairs(panel), base, resamples, seed) if several else None
    return {"baseline": base, "judges": [{"label": label, "verdicts": path, "sha256": sha256_file(path)}
                                         for label, path in zip(labels, paths)],
            "majority_rule": MAJORITY_RULE if several else None,
            "views": {**views, **({MAJORITY: majority} if several else {})},
            "agreement": agreement(panel, labels, resamples, seed) if several else None,
            "stability": stability(views), "note": None if several else ONE_JUDGE}


# ---------------------------------------------------------------------------------------------
# stdout
# ---------------------------------------------------------------------------------------------

def kappa_text(k: dict) -> str:
    """A kappa with its interval, or n/a with the reason."""
    return estimate_text(k["kappa"], k["ci"]) if k["kappa"] is not None else f"n/a ({k['note']})"


def agreement_lines(name: str, a: dict) -> list[str]:
    """One line of agreement: Fleiss' kappa, then Cohen's per pair."""
    pairs = "; ".join(f"{c['judges'][0]} / {c['judges'][1]} {kappa_text(c)}" for c in a["cohen_kappa"])
    return [f"{name}: {a['answers']} answers, all judges alike on {rate(a['unanimous_share'])}; Fleiss' kappa "
            f"{kappa_text(a['fleiss_kappa'])}; Cohen's kappa {pairs}"]


def render_text(p: dict) -> str:
    """The panel's tables, in the order of its JSON."""
    out = [f"judge panel: {', '.join(j['label'] for j in p['judges'])} (baseline {p['baseline']})"]
    if p["note"]:
        out.append(f"note: {p['note']}")
    out.append("\naccuracy on answerable questions [95% CI] under each judge"
               + (f" and the majority ({p['majority_rule']})" if p["majority_rule"] else ""))
    for label, view in p["views"].items():
        out.append(f"{label}: " + ", ".join(f"{s['system']} {estimate_text(s['accuracy'], s['accuracy_ci'])}"
                                            for s in view["systems"]))
    if p["agreement"]:
        out.append("\nagreement between the judges on whether each answer is right (95% cluster-bootstrap CI)")
        out += agreement_lines("overall", p["agreement"]["overall"])
        for group in ("by_system", "by_kind"):
            for name, a in p["agreement"][group].items():
                out += agreement_lines(f"  {group[3:]} {name}", a)
    out += stability_lines(p["stability"], "judge")
    out.append(f"\n{stability_text(p, None)}.")
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    """Grade-by-grade figures of a judge panel; optionally written as JSON for report.py."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", nargs="+", required=True, help="the run files the judges graded")
    ap.add_argument("--verdicts", nargs="+", required=True, help="one verdicts file per judge (judge.py), the "
                                                                 "config's judge first")
    ap.add_argument("--baseline", required=True, help="the system every other is compared with")
    ap.add_argument("--config", default="config.yaml", help="names the dataset, unless --manifest is given")
    ap.add_argument("--manifest", help="a manifest-RUN.json: the dataset the runs are held against")
    ap.add_argument("--resamples", type=int, default=RESAMPLES)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--allow-partial", action="store_true", help="as score.py's")
    ap.add_argument("--json", help="write the figures here (results/RUN/panel.json), for report.py --panel")
    a = ap.parse_args(argv)
    if a.resamples < 1:
        raise InputError("--resamples must be at least 1")
    if a.json:
        output_path(a.json, "--json")
    comparison = load_comparison(a.runs, dataset_from(a.config, a.manifest), a.allow_partial)
    figures = panel_figures(comparison.records, a.verdicts, a.baseline, a.resamples, a.seed)
    panel = {"format": PANEL_FORMAT, **figures, "resamples": a.resamples, "seed": a.seed,
             "inputs": {"runs": {p: sha256_file(p) for p in a.runs}}}
    return publish(panel, a.json, render_text)


if __name__ == "__main__":
    sys.exit(run_cli(main))
