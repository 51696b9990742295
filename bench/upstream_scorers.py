"""Do the benchmarks' own scorers read what export.py writes, and score it as score.py does?

Given a checkout of LongMemEval and of LoCoMo at the commits answer_prompts.py names (e.g. `git
archive` of each into a folder), and the benchmarks' data files:

  1. the named prompts: each one's text is a string constant of the upstream file it names;
  2. LoCoMo: imports the LoCoMo file (data/import_locomo.py), runs one system with `answer_prompt:
     locomo` against tests/fake_llm.py's endpoint (answers deterministically: the first memory
     line), grades (judge.py, rules) and scores (score.py --json), exports (export.py locomo), then
     runs LoCoMo's eval_question_answering (task_eval/evaluation.py) on each exported sample and
     compares its F1 with score.py's token_f1, question by question;
  3. LongMemEval: imports the LongMemEval files, runs the system with `answer_prompt: longmemeval`,
     exports hypotheses.jsonl (export.py longmemeval) and runs LongMemEval's evaluate_qa.py on it
     with its judge model pointed (OPENAI_BASE_URL) at a fake endpoint that answers "yes" when the
     response contains the reference answer, or declines on an abstention question, else "no":
     every hypothesis must be read and labelled.

The upstream code runs in a subprocess with --python (default: this interpreter), which needs
what it imports: numpy, regex and nltk (LoCoMo; its bert_score import gets a stand-in, the metric
is not asked for), openai, backoff, tqdm and numpy (LongMemEval). Nothing is written in the
repository: the work folder is --work, else a fresh temporary folder.

Usage:
  python bench/upstream_scorers.py LONGMEMEVAL_DIR LOCOMO_DIR --locomo-file LOCOMO10_JSON \\
      --longmemeval-file LME_ORACLE_JSON --longmemeval-file LME_S_JSON
  python bench/upstream_scorers.py ... --backend keyword --work scratch/
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
import tempfile

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]

from answer_prompts import NAMED_PROMPTS  # noqa: E402
from cli import EXIT_OK, InputError, run_cli  # noqa: E402
from fake_llm import FakeLLM  # noqa: E402

# What LoCoMo's scorer is run as: its file loaded as a module, eval_question_answering on each
# sample's file; prints one JSON list of scores per sample.
LOCOMO_SCORER = """
import importlib.util, json, sys, types
sys.modules["bert_score"] = types.SimpleNamespace(score=None)  # imported, never called for F1
spec = importlib.util.spec_from_file_location("locomo_evaluation", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
print(json.dumps([[float(x) for x in module.eval_question_answering(path, sys.argv[2])[0]] for path in sys.argv[3:]]))
"""
DECLINES = ("don't know", "do not know", "not mentioned", "no information")


def step(cmd: list[str], env: dict | None = None, cwd: str = ROOT) -> subprocess.CompletedProcess:
    """Run one command; an error with its output when it fails."""
    print("$ " + " ".join(cmd), file=sys.stderr, flush=True)
    done = subprocess.run(cmd, cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"failed ({done.returncode}): {' '.join(cmd)}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done


def string_constants(path: str) -> set[str]:
    """Every string constant of a Python file."""
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    return {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def check_prompts(dirs: dict) -> list[str]:
    """Each named prompt's text found verbatim in the upstream file it names."""
    lines = []
    for p in NAMED_PROMPTS.values():
        path = os.path.join(dirs[p.repository], p.file)
        found = p.text in string_constants(path)
        lines.append(f"prompt {p.name}: {'verbatim in' if found else 'NOT FOUND in'} {p.repository} {p.file}")
        if not found:
            raise SystemExit("\n".join(lines))
    return lines


def write_config(work: str, name: str, dataset: str, prompt: str) -> str:
    """The repository's config with this dataset and named prompt, its cache in the work folder."""
    with open(os.path.join(ROOT, "config.yaml"), encoding="utf-8") as fh:
        cfg = yaml.safe_load(fh)
    cfg.update(run_id=f"upstream-{name}", dataset=dataset, answer_prompt=prompt, cache_dir=os.path.join(work, "cache"))
    path = os.path.join(work, f"{name}.yaml")
    with open(path, "w", encoding="utf-8") as fh:
        yaml.safe_dump(cfg, fh, allow_unicode=True)
    return path


def run_and_score(work: str, name: str, config: str, backend: str, env: dict) -> tuple[str, dict]:
    """run.py, judge.py (rules) and score.py --json on one system: the run file and score.py's
    question rows by qid."""
    run = os.path.join(work, "runs", f"{name}-{backend}.jsonl")
    verdicts = os.path.join(work, f"{name}-verdicts.jsonl")
    scores = os.path.join(work, f"{name}-scores.json")
    py = sys.executable
    step([py, "run.py", "--config", config, "--backend", backend, "--out", run], env)
    step([py, "judge.py", "--config", config, "--runs", run, "--out", verdicts], env)
    step([py, "score.py", "--config", config, "--runs", run, "--verdicts", verdicts, "--baseline", backend,
          "--json", scores, "--resamples", "200"], env)
    with open(scores, encoding="utf-8") as fh:
        rows = {q["qid"]: q for q in json.load(fh)["questions"]}
    return run, rows


def locomo_check(a: argparse.Namespace, work: str, env: dict) -> list[str]:
    """LoCoMo's F1 of the export beside score.py's token_f1, question by question."""
    dataset = os.path.join(work, "locomo.jsonl")
    step([sys.executable, "data/import_locomo.py", a.locomo_file, "--out", dataset])
    config = write_config(work, "locomo", dataset, "locomo")
    run, ours = run_and_score(work, "locomo", config, a.backend, env)
    export = os.path.join(work, "locomo-predictions.json")
    step([sys.executable, "export.py", "locomo", "--run", run, "--config", config, "--locomo", a.locomo_file,
          "--out", export, "--model", "memory-bench"])
    with open(export, encoding="utf-8") as fh:
        samples = json.load(fh)
    with open(run, encoding="utf-8") as fh:
        records = [json.loads(line) for line in fh]
    # The export keeps each sample's answered questions in the file's order: the run's qids,
    # sorted by their position, name them in the same order.
    qids = {s["sample_id"]: sorted((r["qid"] for r in records if r["case_id"] == s["sample_id"]),
                                   key=lambda q: int(q.rsplit("-q", 1)[1])) for s in samples}
    paths = []
    for s in samples:
        paths.append(os.path.join(work, f"locomo-sample-{s['sample_id']}.json"))
        with open(paths[-1], "w", encoding="utf-8") as fh:
            json.dump(s, fh)  # one sample per file, as evaluate_gpts.py writes and evaluation.py reads at this commit
    scorer = os.path.join(a.locomo_dir, "task_eval", "evaluation.py")
    out = step([a.python, "-c", LOCOMO_SCORER, scorer, "memory-bench_prediction", *paths]).stdout
    upstream_scores = json.loads(out.strip().splitlines()[-1])
    pairs = []  # (qid, category, upstream F1, score.py's token_f1)
    for s, scores in zip(samples, upstream_scores):
        if len(scores) != len(s["qa"]) or len(scores) != len(qids[s["sample_id"]]):
            raise SystemExit(f"{s['sample_id']}: {len(scores)} scores for {len(s['qa'])} questions")
        for qid, qa, score in zip(qids[s["sample_id"]], s["qa"], scores):
            pairs.append((qid, qa["category"], score, ours[qid]["token_f1"]))
    differ = [p for p in pairs if abs(p[2] - p[3]) > 1e-9]
    mean = lambda xs: sum(xs) / len(xs)  # noqa: E731
    lines = [f"locomo: {len(pairs)} questions in {len(samples)} samples read by eval_question_answering; "
             f"F1 {mean([p[2] for p in pairs]):.4f} upstream, {mean([p[3] for p in pairs]):.4f} score.py; "
             f"{len(pairs) - len(differ)} of {len(pairs)} equal per question (|difference| <= 1e-9), "
             f"largest difference {max((abs(p[2] - p[3]) for p in pairs), default=0):.3g}"]
    for c in sorted({p[1] for p in pairs}):
        sel = [p for p in pairs if p[1] == c]
        lines.append(f"  category {c}: {len(sel)} questions, F1 {mean([p[2] for p in sel]):.4f} upstream, "
                     f"{mean([p[3] for p in sel]):.4f} score.py")
    lines += [f"  differs: {p[0]} category {p[1]}: upstream {p[2]:.4f}, score.py {p[3]:.4f}" for p in differ[:10]]
    return lines


def judge_reply(body: dict) -> str | None:
    """The fake judge of LongMemEval's evaluate_qa.py: "yes" when the model response holds the
    reference answer (or, on an abstention question, declines), else "no"; None for the other
    prompts (run.py's answers keep the fake endpoint's own reply)."""
    prompt = body["messages"][-1]["content"]
    m = re.search(r"\n\n(?:Correct Answer|Rubric|Explanation): (.*?)\n\nModel Response: (.*?)\n\n(?:Is|Does) the model",
                  prompt, re.S)
    if m is None:
        return None
    reference, response = m.group(1).strip().lower(), m.group(2).strip().lower()
    if prompt.startswith("I will give you an unanswerable question"):
        return "yes" if any(d in response for d in DECLINES) else "no"
    return "yes" if reference in response else "no"


def longmemeval_check(a: argparse.Namespace, work: str, env: dict, server: FakeLLM) -> list[str]:
    """LongMemEval's evaluate_qa.py reading the export, every hypothesis labelled."""
    dataset = os.path.join(work, "longmemeval.jsonl")
    parts, references = [], []
    for i, path in enumerate(a.longmemeval_file):
        part = os.path.join(work, f"longmemeval-{i}.jsonl")
        step([sys.executable, "data/import_longmemeval.py", path, "--out", part])
        with open(part, encoding="utf-8") as fh:
            parts.append(fh.read())
        with open(path, encoding="utf-8") as fh:
            references += json.load(fh)
    with open(dataset, "w", encoding="utf-8") as fh:
        fh.write("".join(parts))
    reference = os.path.join(work, "longmemeval-reference.json")
    with open(reference, "w", encoding="utf-8") as fh:
        json.dump(references, fh)
    config = write_config(work, "longmemeval", dataset, "longmemeval")
    run, ours = run_and_score(work, "longmemeval", config, a.backend, env)
    hypotheses = os.path.join(work, "hypotheses.jsonl")
    step([sys.executable, "export.py", "longmemeval", "--run", run, "--config", config, "--out", hypotheses])
    server.responder = judge_reply
    scorer = os.path.join(a.longmemeval_dir, "src", "evaluation", "evaluate_qa.py")
    done = step([a.python, scorer, "gpt-4o", hypotheses, reference], cwd=work,
                env={"OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "not-a-key"})
    with open(hypotheses, encoding="utf-8") as fh:
        written = [json.loads(line) for line in fh]
    with open(hypotheses + ".eval-results-gpt-4o", encoding="utf-8") as fh:
        labelled = [json.loads(line) for line in fh]
    skipped = done.stdout.count("Warning: skipping")
    accuracy = re.search(r"Accuracy: ([0-9.]+)", done.stdout).group(1)
    labels = {e["question_id"]: e["autoeval_label"]["label"] for e in labelled}
    rules = {qid: ours[qid]["correct"] for qid in labels}
    return [f"longmemeval: {len(written)} hypotheses written, {len(labelled)} labelled by evaluate_qa.py, {skipped} "
            f"skipped as not in the reference; its accuracy {accuracy} (fake judge), "
            f"{sum(labels.values())} yes; the rules' verdicts correct on {sum(1 for v in rules.values() if v)}"]


def main(argv: list[str] | None = None) -> int:
    """The prompts, then LoCoMo's scorer, then LongMemEval's."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("longmemeval_dir", help="a checkout of LongMemEval at the commit answer_prompts.py names")
    ap.add_argument("locomo_dir", help="a checkout of LoCoMo's branch `code` at the commit answer_prompts.py names")
    ap.add_argument("--locomo-file", required=True, help="locomo10.json")
    ap.add_argument("--longmemeval-file", action="append", required=True,
                    help="a LongMemEval file (longmemeval_s.json, _oracle, ...); repeat for several")
    ap.add_argument("--backend", default="bm25", help="the system whose answers are exported (default bm25)")
    ap.add_argument("--python", default=sys.executable, help="the interpreter that runs the upstream code")
    ap.add_argument("--work", help="where the runs and exports go (default: a fresh temporary folder)")
    a = ap.parse_args(argv)
    for d in (a.longmemeval_dir, a.locomo_dir):
        if not os.path.isdir(d):
            raise InputError(f"{d}: not a folder (a checkout of the upstream repository)")
    work = os.path.abspath(a.work or tempfile.mkdtemp(prefix="upstream-scorers-"))
    os.makedirs(work, exist_ok=True)
    lines = check_prompts({"xiaowu0162/LongMemEval": a.longmemeval_dir, "snap-research/locomo": a.locomo_dir})
    server = FakeLLM().start()
    try:
        env = {"LLM_BASE_URL": server.url, "LLM_API_KEY": "not-a-key"}
        lines += locomo_check(a, work, env)
        lines += longmemeval_check(a, work, env, server)
    finally:
        server.stop()
    print("\n".join(lines))
    print(f"(work folder: {work})", file=sys.stderr)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(run_cli(main))
