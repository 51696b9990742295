"""Write one run file's answers in a benchmark's own output format, for that benchmark's scorer.

  longmemeval  hypotheses.jsonl, one line per question, {"question_id": ..., "hypothesis": ...}:
               what LongMemEval's src/generation/run_generation.py writes and its
               src/evaluation/evaluate_qa.py reads (xiaowu0162/LongMemEval, commit 9e0b455f).
  locomo       a JSON list of LoCoMo's samples, each {"sample_id": ..., "qa": [...]}, each qa item
               as the LoCoMo file holds it with the answer under "<model>_prediction" (--model,
               default the run's answer_model): what LoCoMo's QA evaluation reads, one sample's
               qa list at a time (eval_question_answering, task_eval/evaluation.py,
               snap-research/locomo branch `code`, commit 92286325).

Question ids map back to the benchmark's own: a LongMemEval question's qid is its question_id
(data/import_longmemeval.py); a LoCoMo question's is "<sample_id>-q<its position in qa>"
(data/import_locomo.py), checked against the LoCoMo file (--locomo) by the question's text and
category. A sample holds the questions the run answered, in the file's order. LoCoMo's scorer
reads `answer` for every question, and 444 of its 446 category-5 questions have none: such an item
gets the gold memory-bench grades it against ("Not mentioned in the conversation"); the scorer
grades category 5 by the prediction alone. Refused, exit 2 naming file:line and the field: a
question of another source, one the LoCoMo file does not hold as the run does, a question without
an answer (a retrieval-only run, a failed call: rerun run.py), and a run file that is not one run
of this dataset.

Usage:
  python export.py longmemeval --run runs/RUN/bm25.jsonl --config lme.yaml --out results/RUN/hypotheses-bm25.jsonl
  python export.py locomo --run runs/RUN/bm25.jsonl --config locomo.yaml \\
      --locomo PATH/locomo10.json --out results/RUN/locomo-bm25.json
  python export.py locomo ... --model gpt-4o-mini      # the prediction key: gpt-4o-mini_prediction
  python export.py longmemeval --run FILE --manifest results/RUN/manifest-RUN.json --out FILE
"""
from __future__ import annotations

import argparse
import os
import re
import sys

from cli import EXIT_OK, InputError, run_cli
from dataset import Dataset, dataset_from, dataset_index
from fileio import dumps, loads, output_path, sha256_data, write_atomic, write_json_atomic
from formats import BUDGET_FIELD, read_run_files

BENCHMARKS = ("longmemeval", "locomo")
# data/import_locomo.py names a question "<sample_id>-q<0-based position in the sample's qa>".
LOCOMO_QID = re.compile(r"(.+)-q(0|[1-9][0-9]*)")


def run_answers(path: str, dataset: Dataset, repeat: int, budget: int | None) -> list[tuple[str, dict]]:
    """("path:line", record) of the run file's answers at this repeat and budget, one per
    question, in the file's order; an InputError for a record without an answer."""
    rows = read_run_files([path], dataset)
    budgets = sorted({r[BUDGET_FIELD] for _, _, r in rows})
    if budget is None and len(budgets) > 1:
        raise InputError(f"{path}: holds the budgets {', '.join(map(str, budgets))}; one answer per question is "
                         f"exported: choose one with --budget")
    chosen = [(f"{p}:{n}", r) for p, n, r in rows
              if r["repeat"] == repeat and (budget is None or r[BUDGET_FIELD] == budget)]
    if not chosen:
        raise InputError(f"{path}: holds no record of repeat {repeat}" + (f" and budget {budget}" if budget else "")
                         + f" (it holds repeats {sorted({r['repeat'] for _, _, r in rows})} and budgets {budgets})")
    for at, r in chosen:
        if r["retrieval_only"]:
            raise InputError(f"{at}: field 'retrieval_only' is true: a retrieval-only run has no answers to export; "
                             f"export a run that answered (run.py without --retrieval-only)")
        if r["answer"] is None:
            raise InputError(f"{at}: field 'answer' is null for question {r['qid']!r} (error: {r['error']}); rerun "
                             f"run.py with the same command to redo it, then export")
    return chosen


def require_source(at: str, rec: dict, source: str) -> None:
    """Refuse a question an importer of another source made (meta.source)."""
    found = rec["meta"].get("source")  # optional in the contract: only importers write it
    if found != source:
        raise InputError(f"{at}: field 'meta.source' of question {rec['qid']!r} is {found!r}, not {source!r}: its id "
                         f"does not map back to {source}'s own; export a run of a dataset made by "
                         f"data/import_{source}.py")


def longmemeval_lines(answers: list[tuple[str, dict]]) -> str:
    """hypotheses.jsonl: {"question_id", "hypothesis"} per question, as run_generation.py writes."""
    for at, r in answers:
        require_source(at, r, "longmemeval")
    return "".join(dumps({"question_id": r["qid"], "hypothesis": r["answer"]}) + "\n" for _, r in answers)


def read_locomo(path: str) -> list[dict]:
    """The samples of a LoCoMo file (locomo10.json): a list of objects with sample_id and qa."""
    try:
        with open(path, "rb") as fh:
            samples = loads(fh.read())
    except OSError as e:
        raise InputError(f"{path}: cannot open: {e.strerror}") from None
    except ValueError as e:
        raise InputError(f"{path}: not valid JSON ({e})") from None
    if not isinstance(samples, list):
        raise InputError(f"{path}: expected a JSON list of LoCoMo samples (locomo10.json), got "
                         f"{type(samples).__name__}")
    for i, s in enumerate(samples):
        if not (isinstance(s, dict) and isinstance(s.get("sample_id"), str) and isinstance(s.get("qa"), list)):
            raise InputError(f"{path}[{i}]: not a LoCoMo sample (an object with a string 'sample_id' and a list 'qa')")
    return samples


def locomo_samples(answers: list[tuple[str, dict]], samples: list[dict], source: str, key: str) -> list[dict]:
    """The LoCoMo samples with the run's answers under `key`, each holding the questions the
    run answered in the file's order; an InputError for a question the file does not hold."""
    by_id = {s["sample_id"]: s for s in samples}
    chosen: dict = {}  # sample_id -> {position: qa item with its prediction}
    for at, r in answers:
        require_source(at, r, "locomo")
        m = LOCOMO_QID.fullmatch(r["qid"])
        if not m or m.group(1) != r["case_id"]:
            raise InputError(f"{at}: field 'qid' {r['qid']!r} is not '<sample_id>-q<position>' of its case "
                             f"{r['case_id']!r}, as data/import_locomo.py names LoCoMo's questions")
        sample_id, position = m.group(1), int(m.group(2))
        qa = by_id[sample_id]["qa"] if sample_id in by_id else []
        item = qa[position] if position < len(qa) and isinstance(qa[position], dict) else None
        if item is None or item.get("question") != r["question"] or item.get("category") != r["meta"]["category"]:
            raise InputError(f"{at}: question {r['qid']!r} is not question {position} of sample {sample_id!r} in "
                             f"{source} (" + ("no such question" if item is None else "its text or category differs")
                             + "): pass the LoCoMo file the dataset was imported from")
        if key in item:
            raise InputError(f"{source}: sample {sample_id!r} question {position} already has a field {key!r}; "
                             f"pass the LoCoMo file itself, or another --model")
        out = {**item, key: r["answer"]}
        if "answer" not in out:  # category 5: the scorer reads `answer`, and grades by the prediction alone
            out["answer"] = r["gold_answer"]
        chosen.setdefault(sample_id, {})[position] = out
    return [{"sample_id": s["sample_id"], "qa": [q for _, q in sorted(chosen[s["sample_id"]].items())]}
            for s in samples if s["sample_id"] in chosen]


def load_dataset_of(a: argparse.Namespace) -> Dataset:
    """The dataset the run file is read against: --dataset alone, else the manifest's (at
    --dataset when it moved), else the config's."""
    if a.dataset and not a.manifest:
        cases = dataset_index(a.dataset)  # first: it names a missing file as the InputError it is
        return Dataset(a.dataset, sha256_data(a.dataset), cases)
    return dataset_from(a.config, a.manifest, a.dataset)


def main(argv: list[str] | None = None) -> int:
    """Read the run file, map its questions to the benchmark's ids, write the benchmark's file."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("benchmark", choices=BENCHMARKS)
    ap.add_argument("--run", required=True, help="one run file (runs/RUN_ID/NAME.jsonl)")
    ap.add_argument("--out", required=True, help="the file to write (replaced atomically)")
    ap.add_argument("--config", default="config.yaml", help="names the dataset the run was made from (default "
                                                            "config.yaml), unless --manifest or --dataset is given")
    ap.add_argument("--manifest", help="a manifest-RUN.json: the dataset the run was made from")
    ap.add_argument("--dataset", help="the dataset the run was made from (with --manifest: where it is now)")
    ap.add_argument("--locomo", help="locomo: the LoCoMo file the dataset was imported from (locomo10.json)")
    ap.add_argument("--model", help="locomo: the prediction key's model, MODEL_prediction (default: the run's "
                                    "answer_model)")
    ap.add_argument("--repeat", type=int, default=0, help="which repeat's answers (default 0)")
    ap.add_argument("--budget", type=int, help="which budget's answers, when the run file holds several")
    a = ap.parse_args(argv)

    output_path(a.out, "--out")
    if a.benchmark == "locomo" and not a.locomo:
        raise InputError("locomo: --locomo is required: the LoCoMo file (locomo10.json) whose samples the predictions "
                         "are written into")
    if a.benchmark == "longmemeval" and (a.locomo or a.model):
        raise InputError("longmemeval: --locomo and --model are for locomo; hypotheses.jsonl names no model")
    answers = run_answers(a.run, load_dataset_of(a), a.repeat, a.budget)
    if a.benchmark == "longmemeval":
        write_atomic(a.out, longmemeval_lines(answers))
        print(f"wrote {a.out}: {len(answers)} hypotheses", file=sys.stderr)
        return EXIT_OK
    samples = read_locomo(a.locomo)
    key = f"{a.model or answers[0][1]['answer_model']}_prediction"
    out = locomo_samples(answers, samples, a.locomo, key)
    write_json_atomic(a.out, out)
    total = sum(len(s["qa"]) for s in samples)
    print(f"wrote {a.out}: {len(answers)} predictions under {key!r} in {len(out)} samples ({total - len(answers)} of "
          f"{os.path.basename(a.locomo)}'s {total} questions are not in the run)", file=sys.stderr)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(run_cli(main))
