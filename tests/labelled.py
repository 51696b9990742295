"""How often the rules are wrong on labelled answers, counted once: grading.decide's verdicts
(the decision judge.py records) through metrics.calibration_rates (the count judge.py
--calibrate writes)."""
from __future__ import annotations

from grading import decide
from metrics import calibration_rates


def rule_errors(items: list[dict], with_judge: bool) -> dict:
    """The overall counts of calibration_rates for the answers decide decides, with the ids of
    the false accepts and rejects and how many it left to the judge (with_judge only). Items
    need `id` and `label`; a `kind` is optional here (tests/data/rule_labels.jsonl has none)."""
    decided = [(item, decide(item, with_judge)) for item in items]
    kept = [(item, d) for item, d in decided if d is not None]
    rates = calibration_rates([{"label": item["label"], "kind": "all"} for item, _ in kept], [d[0] for _, d in kept])
    return {**rates["overall"], "undecided": len(items) - len(kept),
            "false_accept_ids": [i["id"] for i, d in kept if i["label"] == "incorrect" and d[0] == "correct"],
            "false_reject_ids": [i["id"] for i, d in kept if i["label"] == "correct" and d[0] != "correct"]}


def rules_verdicts(items: list[dict]) -> list[str]:
    """The rules-only verdict of each item (no judge: every answer decided)."""
    return [decide(item, False)[0] for item in items]
