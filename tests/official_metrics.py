"""The answers of the metric fixture (tests/data/metric_fixture.jsonl) and the script that wrote
it: answers to real LoCoMo questions with the EM and F1 that the official evaluation code gives
them, which tests/test_grading_metrics.py holds normalization.exact_match and normalization.token_f1 to.

The fixture names each question by its conversation and position in the shared datasets
folder's locomo10.json and each answer by its edit of the gold (answers_for); it holds no text
of the dataset, which is never copied into the repository. The test rebuilds golds and answers
from the shared file with the functions below.

The official code is not part of memory-bench and no test imports it: run this script once,
outside the tests, with the two files named on the command line, in an environment that has
what they import (numpy, regex and nltk; LoCoMo's file also imports bert_score, used only for a
metric the fixture does not ask for, so a stand-in takes its place):

  - LoCoMo: task_eval/evaluation.py of snap-research/locomo (branch `code`, commit
    92286325a40764bee61f77824ddb95233b11c4d6). The F1 of an answer is eval_question_answering's
    score for it (its category rules: F1 over Porter stems, category 1 over comma-separated
    parts, category 3 against the gold up to ';', category 5 by its "not mentioned" phrases);
    the EM is exact_match_score against the same gold (category 5: the score, LoCoMo having
    no other).
  - SQuAD: evaluate-v2.0.py of rajpurkar/SQuAD-explorer (commit
    eee5fdbf62f8613a7812b03419e6b29617b74fd1): compute_exact and compute_f1.

Usage:
  python tests/official_metrics.py LOCOMO_EVALUATION_PY SQUAD_EVALUATE_PY LOCOMO10_JSON
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
import types

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "metric_fixture.jsonl")
PER_CATEGORY = 8  # questions per LoCoMo category, taken from every conversation in turn
# A category-5 question has no 'answer' in LoCoMo's file; the importer's gold stands in for it
# (data/import_locomo.py, ADVERSARIAL_GOLD).
ADVERSARIAL_GOLD = "Not mentioned in the conversation"


def gold_of(qa: dict) -> str:
    """The gold memory-bench grades a LoCoMo question against."""
    return ADVERSARIAL_GOLD if qa["category"] == 5 else str(qa["answer"])


def answers_for(gold: str, category: int, other: str) -> list[str]:
    """Fixed edits of a gold, right and wrong: articles, case, punctuation, endings, a part of a
    list, the list reordered, another value (other), a hedge, nothing, declines."""
    if category == 5:
        return ["Not mentioned in the conversation.", "No information available.", "I don't know.",
                "That is not mentioned anywhere.", other]
    words = gold.split()
    out = [gold, f"The {gold.lower()}.", gold.upper(), f"I think it was {gold}", words[0], other, "",
           " ".join(w + "s" if w.isalpha() and not w.endswith("s") else w for w in words),
           " ".join(w[:-1] if w.endswith("s") and len(w) > 3 else w for w in words),
           gold.replace("-", " ").replace(",", " and")]
    parts = [p.strip() for p in gold.split(",")]
    if len(parts) > 1:
        out += [", ".join(reversed(parts)), parts[0], f"{parts[-1]}, {other}"]
    if ";" in gold:
        out += [gold.split(";")[0], gold.split(";")[1].strip()]
    return out


def picked(conversations: list[dict]) -> list[tuple[int, int]]:
    """(conversation index, question index) of PER_CATEGORY questions per category, taking the
    conversations in turn so that every one contributes."""
    taken: dict[int, list] = {c: [] for c in range(1, 6)}
    for i in range(max(len(c["qa"]) for c in conversations)):
        for k, conv in enumerate(conversations):
            if i < len(conv["qa"]) and len(taken[conv["qa"][i]["category"]]) < PER_CATEGORY:
                taken[conv["qa"][i]["category"]].append((k, i))
    return [ref for refs in taken.values() for ref in refs]


def fixture_rows(conversations: list[dict]) -> list[dict]:
    """Every (question, answer) of the fixture: references, category, gold and answer text."""
    refs = picked(conversations)
    rows = []
    for n, (k, i) in enumerate(refs):
        qa = conversations[k]["qa"][i]
        ok, oi = next(r for r in refs[n + 1:] + refs if conversations[r[0]]["qa"][r[1]]["category"] == qa["category"]
                      and r != (k, i))
        other_qa = conversations[ok]["qa"][oi]
        other = str(other_qa["adversarial_answer"] if qa["category"] == 5 else other_qa["answer"])
        for a, answer in enumerate(answers_for(gold_of(qa), qa["category"], other)):
            rows.append({"sample_id": conversations[k]["sample_id"], "qa_index": i, "answer_index": a,
                         "category": qa["category"], "gold": gold_of(qa), "answer": answer})
    return rows


def load(path: str, name: str) -> types.ModuleType:
    """Import a file as a module under a name."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("locomo_evaluation_py")
    ap.add_argument("squad_evaluate_py")
    ap.add_argument("locomo10_json")
    a = ap.parse_args(argv)
    sys.modules["bert_score"] = types.SimpleNamespace(score=None)  # imported by LoCoMo's file, never called here
    locomo = load(a.locomo_evaluation_py, "locomo_evaluation")
    squad = load(a.squad_evaluate_py, "squad_evaluate")
    with open(a.locomo10_json, encoding="utf-8") as fh:
        rows = fixture_rows(json.load(fh))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "qa.json")
        with open(path, "w", encoding="utf-8") as fh:
            json.dump({"qa": [{"category": r["category"], "answer": r["gold"], "prediction": r["answer"],
                               "evidence": []} for r in rows]}, fh)
        scores, _, _ = locomo.eval_question_answering(path, "prediction")
    with open(OUT, "w", encoding="utf-8") as fh:
        for r, score in zip(rows, scores):
            ref = {k: r[k] for k in ("sample_id", "qa_index", "answer_index", "category")}
            gold = r["gold"].split(";")[0].strip() if r["category"] == 3 else r["gold"]
            em = score if r["category"] == 5 else locomo.exact_match_score(r["answer"], gold)
            fh.write(json.dumps({"metric": "locomo", **ref, "em": bool(em), "f1": float(score)}) + "\n")
        for r in rows:
            ref = {k: r[k] for k in ("sample_id", "qa_index", "answer_index", "category")}
            fh.write(json.dumps({"metric": "squad", **ref, "em": bool(squad.compute_exact(r["gold"], r["answer"])),
                                 "f1": float(squad.compute_f1(r["gold"], r["answer"]))}) + "\n")
    print(f"wrote {OUT}: {2 * len(rows)} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
