"""The judge calibration set (data/calibration.jsonl) and the second tuning set
(data/tuning2.jsonl, written by hand): the first file is what its generator writes, the second is
data; their questions are real ones from the bundled data (the second's besides a few of its
own), bad lines are refused naming path:line and the field, and the rates and kappa match
hand-computed fixtures. Run with -s to see the rule layer's rates on each set."""
from __future__ import annotations

import json
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "data"))

from cli import InputError  # noqa: E402
from fileio import read_jsonl  # noqa: E402
from grading import DATE_WRONG_KINDS, RIGHT_KINDS, WRONG_KINDS, decide, load_calibration  # noqa: E402
from metrics import calibration_rates  # noqa: E402
from stats import cohen_kappa, wilson_interval  # noqa: E402
from labelled import rules_verdicts  # noqa: E402

CALIBRATION = os.path.join(ROOT, "data", "calibration.jsonl")
TUNING2 = os.path.join(ROOT, "data", "tuning2.jsonl")
BUNDLED_TYPES = {"single_hop", "multi_hop", "temporal", "knowledge_update", "abstention", "preference"}


def test_calibration_file_is_exactly_what_its_generator_writes():
    import make_calibration
    assert make_calibration.main(["--check"]) == 0


def bundled_questions() -> dict[str, dict]:
    return {q["qid"]: q for name in ("dev.jsonl", "cases.jsonl")
            for _, case in read_jsonl(os.path.join(ROOT, "data", name)) for q in case["questions"]}


def test_calibration_set_uses_real_questions_of_every_bundled_type():
    items = load_calibration(CALIBRATION)
    assert len(items) >= 400
    assert {i["type"] for i in items} == BUNDLED_TYPES
    questions = bundled_questions()
    for item in items:
        q = questions[item["qid"]]
        assert (item["type"], item["question"], item["gold_answer"], item["meta"]) == \
               (q["type"], q["question"], q["gold_answer"], q["meta"]), item["id"]


def test_second_tuning_set_copies_the_bundled_questions_it_uses():
    items = load_calibration(TUNING2)
    assert len(items) >= 500 and {i["type"] for i in items} == BUNDLED_TYPES
    questions = bundled_questions()
    bundled = [i for i in items if i["qid"] in questions]
    assert len(bundled) >= 0.8 * len(items)  # the rest are its writer's own questions
    for item in bundled:
        q = questions[item["qid"]]
        assert (item["type"], item["question"], item["gold_answer"], item["meta"]) == \
               (q["type"], q["question"], q["gold_answer"], q["meta"]), item["id"]


def test_the_tuning_sets_together_have_every_kind():
    kinds = {i["kind"] for path in (CALIBRATION, TUNING2) for i in load_calibration(path)}
    assert kinds == set(RIGHT_KINDS + WRONG_KINDS) - set(DATE_WRONG_KINDS)  # those are the date set's


GOOD = {"id": "c1", "qid": "mb001q2", "type": "preference", "question": "Which config file format does the user prefer?",
        "gold_answer": "TOML", "meta": {}, "answer": "They prefer TOML.", "label": "correct", "kind": "paraphrase"}


@pytest.mark.parametrize("change, field", [
    ({"label": None}, "label"),                   # None: the field is removed
    ({"label": "right"}, "label"),
    ({"kind": "sarcastic"}, "kind"),
    ({"type": "trivia"}, "type"),
    ({"kind": "hedge"}, "label"),                 # a known-wrong kind labelled correct
    ({"kind": "outdated", "label": "incorrect"}, "meta"),  # outdated needs meta.outdated_answers
    ({"kind": "outdated_in_sentence", "label": "incorrect"}, "meta"),
    ({"meta": []}, "meta"),
    ({"answer": " "}, "answer"),
    ({"note": "x"}, "note"),
    ({"id": "c0"}, "id"),                         # repeats the first line's id
])
def test_a_bad_calibration_line_is_refused_naming_path_line_and_field(tmp_path, change, field):
    bad = {k: v for k, v in {**GOOD, **change}.items() if v is not None}
    path = tmp_path / "calibration.jsonl"
    path.write_text(json.dumps({**GOOD, "id": "c0"}) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as e:
        load_calibration(str(path))
    assert str(e.value).startswith(f"{path}:2: ") and f"'{field}'" in str(e.value)


def test_calibration_rates_match_a_hand_computed_fixture():
    items = [{"kind": k, "label": label} for k, label in (
        ("verbose", "correct"), ("verbose", "correct"), ("paraphrase", "correct"),
        ("hedge", "incorrect"), ("hedge", "incorrect"), ("outdated", "incorrect"))]
    verdicts = ["correct", "incorrect", "unparseable", "correct", "incorrect", "incorrect"]
    # Known right: 3, of which 2 rejected (item 2, and item 3 whose unparseable counts as
    # incorrect): false-reject rate 2/3. Known wrong: 3, of which 1 accepted (item 4): 1/3.
    # Per kind: verbose rejects 1 of 2, paraphrase 1 of 1, hedge accepts 1 of 2, outdated 0 of 1.
    # Kappa: agreement on items 1, 5, 6 = 3/6; labels 3 correct / 3 incorrect, verdicts 2 / 4,
    # chance = (3*2 + 3*4) / 36 = 1/2; kappa = (1/2 - 1/2) / (1 - 1/2) = 0.
    # Wilson 95% intervals: 1 of 3 is [0.0615, 0.7923], 2 of 3 its mirror [0.2077, 0.9385].
    rates = calibration_rates(items, verdicts)
    assert rates["overall"] == {"n": 6, "known_wrong": 3, "known_right": 3, "false_accepts": 1,
                                "false_rejects": 2, "false_accept_rate": pytest.approx(1 / 3),
                                "false_reject_rate": pytest.approx(2 / 3),
                                "false_accept_ci95": pytest.approx([0.0615, 0.7923], abs=1e-4),
                                "false_reject_ci95": pytest.approx([0.2077, 0.9385], abs=1e-4)}
    by_kind = {k: (r["false_accept_rate"], r["false_reject_rate"]) for k, r in rates["by_kind"].items()}
    assert by_kind == {"verbose": (None, 0.5), "paraphrase": (None, 1.0), "hedge": (0.5, None), "outdated": (0.0, None)}
    assert rates["kappa"] == 0.0


def test_wilson_interval_matches_hand_computed_values():
    # p = 0, n = 10: centre = (z^2 / 20) / (1 + z^2 / 10) = 0.13873, half the same: [0, 0.27754].
    assert wilson_interval(0, 10) == pytest.approx([0.0, 0.27754], abs=1e-5)
    # p = 1/2, n = 100: centre 0.5, half = z / (1 + z^2/100) * sqrt(0.0025 + z^2/40000) = 0.09617.
    assert wilson_interval(50, 100) == pytest.approx([0.40383, 0.59617], abs=1e-5)
    assert wilson_interval(10, 10) == pytest.approx([0.72246, 1.0], abs=1e-5)
    assert wilson_interval(0, 0) is None


def test_cohen_kappa_matches_hand_computed_values_and_is_none_when_undefined():
    # 10 items, 8 agreements: observed 0.8; each rater says correct 5 times: chance 0.5;
    # kappa = (0.8 - 0.5) / (1 - 0.5) = 0.6.
    pairs = [("correct", "correct")] * 4 + [("incorrect", "incorrect")] * 4 + \
            [("correct", "incorrect"), ("incorrect", "correct")]
    assert cohen_kappa(pairs) == pytest.approx(0.6)
    assert cohen_kappa([("correct", "correct"), ("incorrect", "incorrect")]) == 1.0
    assert cohen_kappa([]) is None
    assert cohen_kappa([("correct", "correct")] * 3) is None   # chance agreement is 1: undefined


def test_calibration_rates_refuse_a_missing_verdict():
    with pytest.raises(ValueError):
        calibration_rates([{"kind": "verbose", "label": "correct"}], [None])


@pytest.mark.parametrize("path", [CALIBRATION, TUNING2])
@pytest.mark.parametrize("with_judge", [False, True])
def test_rules_never_accept_a_known_wrong_calibration_answer(path, with_judge):
    items = load_calibration(path)
    accepted = [i["id"] for i in items
                if i["label"] == "incorrect" and (decide(i, with_judge) or ("",))[0] == "correct"]
    assert accepted == []
    if not with_judge:
        rates = calibration_rates(items, rules_verdicts(items))
        o = rates["overall"]
        print(f"\nrules only on {o['n']} items of {os.path.basename(path)}: false accepts {o['false_accepts']}/{o['known_wrong']}, "
              f"false rejects {o['false_rejects']}/{o['known_right']}, kappa {rates['kappa']:.3f}")
        for kind, r in rates["by_kind"].items():
            rate = r["false_accept_rate"] if kind in WRONG_KINDS else r["false_reject_rate"]
            print(f"  {kind:<24} n={r['n']:<3} {'false accept' if kind in WRONG_KINDS else 'false reject'} {rate:.3f}")
