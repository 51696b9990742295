"""sweep.py on hand-made scores.json files, as a user runs it: the ranking under each reader,
Kendall's tau-b between them and the pair of systems that flips, which paired differences keep
their sign and their verdict; comparisons whose contracts differ in anything but the answer model,
or files missing a field, exit 2 naming the file and the field."""
from __future__ import annotations

import copy
import json

import pytest

from conftest import script
from formats import SCORES_FORMAT
from records import CONTRACT


def scores(model: str, accuracy: dict, differences: dict) -> dict:
    """A scores.json holding what sweep.py reads: the contract, the system rows (the none control
    first) and each difference to keyword, {system: (difference, separated)}."""
    systems = [{"label": name, "backend": name, "budget": 1200, "accuracy": acc, "accuracy_ci": [acc - 0.1, acc + 0.1]}
               for name, acc in {"none": 0.1, **accuracy}.items()]
    return {"format": SCORES_FORMAT, "baseline": "keyword", "budgets": [1200],
            "contract": {**CONTRACT, "answer_model": model},
            "coverage": {"scored_questions": 40, "dataset_questions": 40}, "systems": systems,
            "differences": [{"system": name, "baseline": "keyword", "budget": 1200, "difference": d,
                             "ci_low": d - 0.05 if sep else d - 0.2, "ci_high": d + 0.05 if sep else d + 0.2,
                             "separated": sep} for name, (d, sep) in differences.items()]}


# Reader A ranks bm25 > keyword > hash, reader B keyword > bm25 > hash: of the three pairs two keep
# their order and one flips, tau-b = (2 - 1) / 3. bm25's difference changes sign and verdict;
# hash's keeps both.
READER_A = scores("reader-a-2026-01-01", {"keyword": 0.6, "bm25": 0.7, "hash": 0.3},
                  {"bm25": (0.1, True), "hash": (-0.3, True)})
READER_B = scores("reader-b-2026-01-01", {"keyword": 0.6, "bm25": 0.5, "hash": 0.4},
                  {"bm25": (-0.1, False), "hash": (-0.2, True)})


def write(tmp_path, name: str, obj: dict) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(obj), encoding="utf-8")
    return str(path)


def test_the_sweep_gives_each_readers_ranking_tau_and_the_pair_that_flips(tmp_path):
    a, b = write(tmp_path, "a.json", READER_A), write(tmp_path, "b.json", READER_B)
    out = tmp_path / "sweep.json"
    done = script("sweep.py", "--scores", a, b, "--json", str(out))
    assert done.returncode == 0, done.stderr
    sweep = json.loads(out.read_text(encoding="utf-8"))
    (ranking,) = sweep["stability"]["ranking"]
    assert ranking["by_view"] == {"reader-a-2026-01-01": ["bm25", "keyword", "hash"],
                                  "reader-b-2026-01-01": ["keyword", "bm25", "hash"]}
    assert ranking["kendall_tau_b"][0]["tau"] == pytest.approx(1 / 3)
    assert [f["systems"] for f in ranking["flips"]] == [["bm25", "keyword"]]
    held = {d["system"]: (d["sign_holds"], d["separation_holds"]) for d in sweep["stability"]["differences"]}
    assert held == {"bm25": (False, False), "hash": (True, True)}
    assert sweep["stability"]["ranking_holds"] is False and sweep["stability"]["differences_hold"] is False
    assert "Kendall's tau-b reader-a-2026-01-01 / reader-b-2026-01-01: +0.333" in done.stdout
    assert "bm25 and keyword change order" in done.stdout


def test_readers_that_rank_alike_hold(tmp_path):
    same = scores("reader-c-2026-01-01", {"keyword": 0.5, "bm25": 0.65, "hash": 0.2},
                  {"bm25": (0.15, True), "hash": (-0.3, True)})
    done = script("sweep.py", "--scores", write(tmp_path, "a.json", READER_A), write(tmp_path, "c.json", same))
    assert done.returncode == 0, done.stderr
    assert "the ranking held across 2 readers" in done.stdout and "+1.000" in done.stdout


@pytest.mark.parametrize("field, value", [("top_k", 20), ("prompt_sha256", "q" * 64), ("sample", 4)])
def test_a_contract_that_differs_in_more_than_the_answer_model_exits_2_naming_file_and_field(tmp_path, field, value):
    other = copy.deepcopy(READER_B)
    other["contract"][field] = value
    b = write(tmp_path, "b.json", other)
    done = script("sweep.py", "--scores", write(tmp_path, "a.json", READER_A), b)
    assert done.returncode == 2 and f"{b}: field 'contract.{field}'" in done.stderr
    assert "only the answer model may differ" in done.stderr and "Traceback" not in done.stderr


def test_bad_scores_exit_2_naming_file_and_field(tmp_path):
    a = write(tmp_path, "a.json", READER_A)
    missing = copy.deepcopy(READER_B)
    del missing["systems"][1]["accuracy"]
    b = write(tmp_path, "b.json", missing)
    done = script("sweep.py", "--scores", a, b)
    assert done.returncode == 2 and f"{b}: systems[1] has no field 'accuracy'" in done.stderr
    fewer = copy.deepcopy(READER_B)
    fewer["systems"] = fewer["systems"][:-1]
    b = write(tmp_path, "b.json", fewer)
    done = script("sweep.py", "--scores", a, b)
    assert done.returncode == 2 and f"{b}: field 'systems'" in done.stderr
    done = script("sweep.py", "--scores", a, write(tmp_path, "twice.json", READER_A))
    assert done.returncode == 2 and "field 'contract.answer_model'" in done.stderr and "each reader once" in done.stderr
    (tmp_path / "torn.json").write_text("{", encoding="utf-8")
    done = script("sweep.py", "--scores", a, str(tmp_path / "torn.json"))
    assert done.returncode == 2 and f"{tmp_path / 'torn.json'}: not valid JSON" in done.stderr
