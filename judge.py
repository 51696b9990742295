"""Grade every answer in the run files, blinded and shuffled across systems.

Layers, in order (rules first, no model involved; then the judge), each verdict naming the layer
that decided it. The rules decide only what is beyond doubt (rules.py); with an LLM judge
configured, only an answer equal to the gold (`exact`) and a plain decline of an answerable question
(`declined`):
  exact       the answer equals the gold under the verdict normalization, alone or after an
              opening such as "It's" (Unicode NFKC; whitespace, punctuation and the case of plain
              words aside; numbers and dates written one way; every number, year, sign, currency
              or unit symbol, "#", "+", "?" and the case of acronyms and units kept)
  declined    the question is answerable (contract.is_answerable) and the answer only declines:
              incorrect (unless the gold itself speaks of doubt: "She was not sure yet")
  abstention  no judge: the question is unanswerable and the answer declines, and says nothing else
  contains    no judge: the answer states the gold on word boundaries, with its case where case
              tells words apart, not glued into a longer value, and no other candidate anywhere
              (another number or date part, an option or a name the question offers, a hedge, a
              negation, a list, a question form, a known outdated value); the question's own words
              may surround it ("The ingestion cluster runs Kafka 3.7.")
  llm         otherwise, when judge_model is set: an LLM judge that sees only the question, the
              gold and the answer (never the system, the context or other answers), with the
              rubric of the question's source benchmark; non-JSON output is `unparseable`; the
              judge's one-sentence reason, when it gives one, is kept as `judge_reason`
  no_match    otherwise, with no judge model: incorrect (a strict lower bound, said in reports)

Every verdict also says what the rules alone (no judge) would decide (`rules_only_verdict`,
null when no rule decides), so score.py can count where the rules and the judge disagree.

The config's max_cost (USD) caps what the verdicts file's judge calls cost as recorded (the
verdicts kept in --out and each one written): judging stops once it is reached, exit 3, and the
same command resumes after max_cost is raised.

--calibrate grades a labelled set (data/calibration.jsonl: answers labelled right or wrong, the
tuning set the rules were tuned on) by the same layers, and --heldout a second one
(data/heldout.jsonl, written by someone who never read the rules); it prints this grader's
false-accept and false-reject rates on each set, with 95% Wilson intervals, per kind and
overall, with Cohen's kappa; the JSON names the grader, so score.py shows only the rates of the
grader that graded the run. A judge model is trusted only after this.

A judge panel grades the same answers with another judge: --judge-model ID overrides the config's
judge_model, and --judge-endpoint PREFIX reads that judge's endpoint from the environment
variables PREFIX_BASE_URL and PREFIX_API_KEY (never written anywhere) instead of LLM_BASE_URL and
LLM_API_KEY. The rules decide first, as for any judge; each judge's verdicts go to a file of its
own (default results/RUN_ID/verdicts-JUDGE.jsonl) and its calibration to calibration-JUDGE.json;
panel.py compares them.

Usage:
  RUN=$(python -c "import yaml; print(yaml.safe_load(open('config.yaml'))['run_id'])")   # config.yaml's run_id
  python judge.py --config config.yaml --runs runs/$RUN/*.jsonl --out results/$RUN/verdicts.jsonl
  python judge.py --config config.yaml --runs runs/$RUN/*.jsonl --out results/$RUN/verdicts.jsonl --fresh
  python judge.py --config config.yaml --calibrate data/calibration.jsonl --heldout data/heldout.jsonl \
      --out results/$RUN/calibration.json
  python judge.py --config config.yaml --runs runs/$RUN/*.jsonl --judge-model MODEL_ID --judge-endpoint JUDGE2
  python judge.py --config config.yaml --calibrate data/calibration.jsonl --heldout data/heldout.jsonl \
      --judge-model MODEL_ID --judge-endpoint JUDGE2
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import threading
from collections import Counter
from datetime import datetime, timezone

from cli import EXIT_OK, EXIT_UNFINISHED, CostCapReached, InputError, Progress, run_cli, stop_note
from config import SAMPLING_DEFAULTS, load_config, results_dir
from dataset import dataset_from, parse_shard, shard_of
from fileio import (dumps, output_lock, output_path, read_resumable, sha256_file, sha256_text, write_atomic,
                    write_json_atomic)
from formats import (BUDGET_FIELD, CALIBRATION_FORMAT, VERDICT_FORMAT, VERDICT_IDENTITY_FIELDS, check_verdict,
                     load_comparison, record_key, verdict_identity)
from grading import decide, load_calibration
from metrics import calibration_rates
from prices import Cap, call_cost, load_prices, refuse_unpriced
from rubrics import (JUDGE_SCHEMA, RESPONSE_FORMATS, RUBRICS, judge_prompt, parse_judge_reply, rubric_for,
                     rubric_template)
from rules import RULES_SHA256
from wording import error_rate_text, rate
from llm import LLMClient
from workers import Workers

# Names of RESPONSE_FORMATS entries, as recorded in each verdict.
FORMAT_NAMES = tuple(f["type"] if f else "none" for f in RESPONSE_FORMATS)
# A format the server never accepted is given up for every request after this many different
# requests were refused with it; fewer could be the content of one request, not the format.
FORMAT_REJECTIONS_TO_DROP = 2
# --judge-endpoint PREFIX: the prefix of environment variable names, as a shell writes them.
ENDPOINT_PREFIX = re.compile(r"[A-Z][A-Z0-9_]*")


# ---------------------------------------------------------------------------------------------
# Resuming and the response format
# ---------------------------------------------------------------------------------------------

class FormatChooser:
    """The response formats to try for a judge request, strictest first, shared by the judge
    threads. A request refused with a 400 tries the next format itself; the shared starting
    point moves down only when a format the server has never accepted was refused on
    FORMAT_REJECTIONS_TO_DROP different requests, so one request whose content causes a 400
    does not loosen the format of every later one."""

    def __init__(self) -> None:
        self._start = 0
        self._accepted: set = set()
        self._rejections = [0] * len(RESPONSE_FORMATS)
        self._lock = threading.Lock()

    def order(self) -> list[int]:
        """Indices into RESPONSE_FORMATS to try, in order."""
        with self._lock:
            return list(range(self._start, len(RESPONSE_FORMATS)))

    def accepted(self, i: int) -> None:
        with self._lock:
            self._accepted.add(i)

    def rejected(self, i: int) -> None:
        with self._lock:
            if i in self._accepted:
                return  # the server takes this format: the request's content caused the 400
            self._rejections[i] += 1
            if self._rejections[i] >= FORMAT_REJECTIONS_TO_DROP and self._start == i:
                self._start = min(i + 1, len(RESPONSE_FORMATS) - 1)


def load_verdicts(path: str, records: list[dict], grader: dict) -> tuple[dict, int]:
    """Verdicts in `path` that still hold for these records under this grader, keyed by
    record_key, and how many were dropped to be graded again: failed judge calls, and verdicts
    whose identity changed (another gold, answer, annotation, rule set or judge). Verdicts of
    records outside this comparison are kept as they are. The file is rewritten without the
    dropped lines, so it stays one line per graded answer."""
    rows, dropped = read_resumable(path)
    current = {record_key(r): r for r in records}
    done: dict = {}
    others: list[str] = []
    for lineno, v, line in rows:
        check_verdict(v, f"{path}:{lineno}")
        key = record_key(v)
        if key not in current:
            others.append(line)
        elif (v["judge_error"] is None and key not in done
              and {f: v[f] for f in VERDICT_IDENTITY_FIELDS} == verdict_identity(current[key], grader)):
            done[key] = line
        else:
            dropped += 1
    if dropped:
        write_atomic(path, "".join(others) + "".join(done.values()))
    return done, dropped


# ---------------------------------------------------------------------------------------------
# Grading
# ---------------------------------------------------------------------------------------------

def grader_identity(judge_model: str | None, sampling: dict | None = None) -> dict:
    """Who grades: the rule set, and the judge model with every prompt and schema it may get,
    and its sampling settings (config judge_sampling) when they differ from SAMPLING_DEFAULTS.
    A judge at the defaults is identified by its prompts and schema alone, so verdicts of a
    default judge match whether or not the config spells the defaults out; the trade-off is that
    a change of SAMPLING_DEFAULTS itself does not change the identity."""
    prompts = None
    if judge_model:
        extra = [sampling] if sampling is not None and sampling != SAMPLING_DEFAULTS else []
        prompts = sha256_text(json.dumps([rubric_template(r) for r in sorted(RUBRICS)] + [JUDGE_SCHEMA] + extra,
                                         sort_keys=True, ensure_ascii=False))
    return {"rules_sha256": RULES_SHA256, "judge_model": judge_model, "judge_prompt_sha256": prompts}


def ask_judge(client: LLMClient, chooser: FormatChooser, judge_model: str, max_tokens: int,
              rec: dict, rubric: str) -> dict:
    """The LLM layer for one answer: the verdict fields, with the response format used."""
    messages = [{"role": "user", "content": judge_prompt(rubric, rec["question"], rec["gold_answer"], rec["answer"])}]
    order = chooser.order()
    for i in order:
        c = client.complete(judge_model, messages, max_tokens, response_format=RESPONSE_FORMATS[i])
        refused = c.error is not None and c.error.startswith("bad_request")
        if refused and i != order[-1]:
            chooser.rejected(i)
            continue
        if c.error is None:
            chooser.accepted(i)
        break
    if c.error:
        return {"verdict": None, "judge_reason": None, "judge_error": c.error, "cached": False,
                "response_format": FORMAT_NAMES[i], "usage": c.usage}
    verdict, reason = parse_judge_reply(c.text)
    return {"verdict": verdict, "judge_reason": reason, "judge_error": None, "judge_served_model": c.served_model,
            "cached": c.cached, "response_format": FORMAT_NAMES[i], "usage": c.usage}


def base_verdict(rec: dict, identity: dict, grader_name: str) -> dict:
    """The fields every verdict carries: what was graded, and by whom (copied through for jq)."""
    return {"format": VERDICT_FORMAT, "run_id": rec["run_id"], "backend": rec["backend"],
            "backend_version": rec["backend_version"],
            "repeat": rec["repeat"], BUDGET_FIELD: rec[BUDGET_FIELD], "case_id": rec["case_id"], "qid": rec["qid"],
            "type": rec["type"], "question": rec["question"], "gold_answer": rec["gold_answer"],
            "answer": rec["answer"], **identity, "grader": grader_name, "rubric": rubric_for(rec),
            "by": None, "verdict": None, "judge_reason": None, "rules_only_verdict": rules_only(rec),
            "judge_served_model": None,
            "response_format": None, "cached": False, "judge_error": None,
            # The judge call's token usage as the endpoint reported it (score.py prices it);
            # null when no judge was asked.
            "usage": None}


def rules_only(rec: dict) -> str | None:
    """What a rule decides for this answer with no judge configured (grading.decide), or None
    when no rule does (`no_match`)."""
    decided = decide(rec, False) if rec["answer"] is not None else None
    return decided[0] if decided and decided[1] != "no_match" else None


class VerdictWriter:
    """Appends verdicts from the main thread only, flushing each; counts for the progress line."""

    def __init__(self, fh, progress: Progress) -> None:
        self.fh, self.progress = fh, progress
        self.written = self.errors = self.llm = self.cached = 0

    def write(self, v: dict) -> None:
        self.fh.write(dumps(v) + "\n")
        self.fh.flush()
        self.written += 1
        self.errors += v["judge_error"] is not None
        self.cached += bool(v["cached"])
        self.progress.update(self.written, errors=self.errors, cached=self.cached)


# ---------------------------------------------------------------------------------------------
# Calibration: the grader on labelled answers, its false accepts and false rejects
# ---------------------------------------------------------------------------------------------

def grade_labelled(items: list[dict], cfg: dict, workers: int, env: str = "LLM") -> list[tuple]:
    """(verdict, layer, judge_error) for each labelled item, by main()'s decision: grading.decide,
    then ask_judge for what it leaves to the judge."""
    judge_model = cfg["judge_model"]
    graded: list = [None] * len(items)
    for i, item in enumerate(items):
        decided = decide(item, bool(judge_model))
        if decided is not None:
            graded[i] = (decided[0], decided[1], None)
    need_llm = [i for i, g in enumerate(graded) if g is None]
    if need_llm:
        client = LLMClient(cfg, role="judge", workers=workers, env=env)
        chooser, pool = FormatChooser(), Workers(max(1, workers))
        client.preflight(judge_model, cfg["judge_max_tokens"])  # exit 2 in seconds if it cannot work
        for i in need_llm:
            pool.submit(i, ask_judge, client, chooser, judge_model, cfg["judge_max_tokens"], items[i],
                        rubric_for(items[i]))
        for i, res in pool.results(block=True):
            graded[i] = (res["verdict"], "llm", res["judge_error"])
    return graded


def set_report(role: str, path: str, items: list[dict], graded: list[tuple]) -> dict:
    """One labelled set's rates, per kind and overall, with Wilson intervals and kappa. A failed
    or unparseable judge call counts as the grader being wrong, whatever the label (the worst
    case), and is counted apart in judge_failures."""
    failed = [i for i, (v, _, err) in enumerate(graded) if err is not None or v == "unparseable"]
    wrong_way = {"correct": "incorrect", "incorrect": "correct"}
    verdicts = [wrong_way[items[i]["label"]] if i in failed else v for i, (v, _, _) in enumerate(graded)]
    errors = sum(graded[i][2] is not None for i in failed)
    return {
        "set": role, "calibration_set": path, "calibration_sha256": sha256_file(path), "items": len(items),
        **calibration_rates(items, verdicts),
        "decided_by": dict(sorted(Counter(layer for _, layer, _ in graded).items())),
        "judge_failures": {"unparseable": len(failed) - errors, "judge_errors": errors,
                           "ids": [items[i]["id"] for i in failed]},
        "false_accept_ids": [it["id"] for it, v in zip(items, verdicts) if it["label"] == "incorrect" and v == "correct"],
        "false_reject_ids": [it["id"] for it, v in zip(items, verdicts) if it["label"] == "correct" and v != "correct"],
    }


def print_set(report: dict) -> None:
    """A set's overall rates, then each kind's, written by wording.py's formatters as score.py
    and the report write the same rates."""
    o = report["overall"]
    tuned = "tuned on" if report["set"] == "tuning" else "never tuned on"
    print(f"{report['set']} set {report['calibration_set']} ({tuned}), {o['n']} answers (rates with their 95% CI, "
          f"Wilson): false accepts "
          f"{error_rate_text(o['false_accepts'], o['known_wrong'], o['false_accept_rate'], o['false_accept_ci95'])}"
          f", false rejects "
          f"{error_rate_text(o['false_rejects'], o['known_right'], o['false_reject_rate'], o['false_reject_ci95'])}"
          f", kappa {rate(report['kappa'])}; judge failures (counted as wrong) "
          f"{len(report['judge_failures']['ids'])}, of which {report['judge_failures']['judge_errors']} failed calls")
    for kind, r in report["by_kind"].items():
        value, name = ((r["false_accept_rate"], "false accept") if r["known_wrong"]
                       else (r["false_reject_rate"], "false reject"))
        print(f"  {kind:<24} n={r['n']:<4} {name} {rate(value)}")


def calibrate(a: argparse.Namespace) -> int:
    """Grade the tuning set (--calibrate) and the held-out set (--heldout, optional) as main()
    grades answers, print and write this grader's error rates on each; exit 3 when judge calls
    failed beyond max_error_rate. The top level of the JSON is the tuning set's (what score.py
    and report.py read); `heldout` holds the held-out set's, or null."""
    cfg = judge_config(a)
    sets = [("tuning", a.calibrate, load_calibration(a.calibrate))]
    if a.heldout:
        sets.append(("heldout", a.heldout, load_calibration(a.heldout)))
    judge_model = cfg["judge_model"]
    workers = a.workers if a.workers is not None else cfg["workers"]
    out = a.out or os.path.join(results_dir(cfg["run_id"]), f"calibration{judge_suffix(a)}.json")
    items = [item for _, _, set_items in sets for item in set_items]
    print(f"calibrate: {len(items)} labelled answers in {len(sets)} set(s) (judge model: "
          f"{judge_model or 'none, rules only'})", file=sys.stderr)
    graded = grade_labelled(items, cfg, workers, a.judge_endpoint or "LLM")
    reports, start = [], 0
    for role, path, set_items in sets:
        reports.append(set_report(role, path, set_items, graded[start:start + len(set_items)]))
        start += len(set_items)
    report = {"format": CALIBRATION_FORMAT, "grader": grader_identity(judge_model, cfg["judge_sampling"]),
              "grading": "rules, then the LLM judge" if judge_model else "rules only",
              "created_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
              **reports[0], "heldout": reports[1] if len(reports) > 1 else None}
    write_json_atomic(out, report)
    print(f"grader: {judge_model or 'rules only'} (rules {RULES_SHA256[:12]})")
    for r in reports:
        print_set(r)
    print(f"wrote {out}", file=sys.stderr)
    errors = sum(g[2] is not None for g in graded)
    if errors and errors / len(items) > cfg["max_error_rate"]:
        print("error: some judge calls failed; rerun the same command to retry them", file=sys.stderr)
        return EXIT_UNFINISHED
    return EXIT_OK


def parser() -> argparse.ArgumentParser:
    """The command line."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default="config.yaml", help="the judge's settings, and the dataset the runs are held "
                                                            "against unless --manifest names it (default config.yaml)")
    ap.add_argument("--manifest", help="a manifest-RUN.json: the dataset the runs are held against")
    ap.add_argument("--runs", nargs="+", help="run files written by run.py")
    ap.add_argument("--out", help="results/$RUN/verdicts.jsonl (resumable); with --calibrate, the rates as JSON "
                                  "(default results/RUN_ID/calibration.json, the config's run_id)")
    ap.add_argument("--workers", type=int, help="concurrent judge calls (default: config workers)")
    ap.add_argument("--fresh", action="store_true", help="discard --out and regrade everything")
    ap.add_argument("--allow-partial", action="store_true",
                    help="grade only the questions every run file answered, instead of refusing partial files")
    ap.add_argument("--shard", help="I/N: grade only the answers of share I (0-based) of N; merge.py joins them")
    ap.add_argument("--calibrate", metavar="CALIBRATION_JSONL",
                    help="grade this labelled set (the tuning set) and report the grader's error rates, instead "
                         "of grading runs")
    ap.add_argument("--heldout", metavar="HELDOUT_JSONL",
                    help="with --calibrate: also grade this held-out labelled set and report its rates apart")
    ap.add_argument("--judge-model", metavar="ID",
                    help="grade with this judge model instead of the config's judge_model (a judge panel: "
                         "default --out results/RUN_ID/verdicts-ID.jsonl, or calibration-ID.json)")
    ap.add_argument("--judge-endpoint", metavar="PREFIX",
                    help="the judge's endpoint from the environment variables PREFIX_BASE_URL and PREFIX_API_KEY "
                         "instead of LLM_BASE_URL and LLM_API_KEY (e.g. JUDGE2)")
    return ap


def judge_config(a: argparse.Namespace) -> dict:
    """The config, with --judge-model in place of its judge_model when given; an InputError for
    a --judge-endpoint without a judge model, or not a prefix of environment variable names."""
    cfg = load_config(a.config)
    if a.judge_model is not None:
        cfg = {**cfg, "judge_model": a.judge_model}
    if a.judge_endpoint is not None:
        if not ENDPOINT_PREFIX.fullmatch(a.judge_endpoint):
            raise InputError(f"--judge-endpoint {a.judge_endpoint!r}: expected the prefix of environment variable "
                             f"names, in capitals (JUDGE2 reads JUDGE2_BASE_URL and JUDGE2_API_KEY)")
        if not cfg["judge_model"]:
            raise InputError("--judge-endpoint needs a judge model: pass --judge-model ID (the config's judge_model "
                             "is null, so the rules alone would grade and no endpoint would be asked)")
    return cfg


def judge_suffix(a: argparse.Namespace) -> str:
    """The part of a default file name that names the judge of --judge-model ("" without it):
    its id with every character a file name should not hold made '_'."""
    return f"-{re.sub(r'[^A-Za-z0-9._-]', '_', a.judge_model)}" if a.judge_model else ""


def judge_cap(cfg: dict, done: dict) -> Cap | None:
    """The config's max_cost over this verdicts file's judge calls as recorded (the verdicts kept
    and each one written), or None without one; exit 2 before any call when the judge model is
    not priced."""
    if cfg["max_cost"] is None:
        return None
    table = load_prices(cfg["price_table"])
    refuse_unpriced(table, [("judge_model", cfg["judge_model"])], cfg["config_path"])
    kept = [json.loads(line) for line in done.values()]
    spent = sum(call_cost(table, v["judge_model"], v["usage"]) or 0.0 for v in kept)
    return Cap(table, float(cfg["max_cost"]), spent, "this verdicts file's judge calls")


def grade(a: argparse.Namespace, argv: list[str] | None, cfg: dict, client: LLMClient | None, workers: int,
          todo: list[tuple[dict, tuple | None]], graded_before: int, total: int, grader: dict,
          grader_name: str, cap: Cap | None = None) -> VerdictWriter:
    """Write a verdict for each record to grade, appending to a.out as each completes: the run's
    failure, the rules' decision, or the LLM judge's answer; the VerdictWriter says what was
    written."""
    judge_model = cfg["judge_model"]
    if client is not None:
        client.preflight(judge_model, cfg["judge_max_tokens"])  # exit 2 in seconds if it cannot work
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    chooser = FormatChooser()
    pool = Workers(max(1, workers))
    with open(a.out, "a", encoding="utf-8") as fh:
        out = VerdictWriter(fh, Progress("judge", len(todo), "verdicts"))
        try:
            for rec, decided in todo:
                v = base_verdict(rec, verdict_identity(rec, grader), grader_name)
                if rec["answer"] is None:
                    # The run failed for this question: no answer to grade. Counted as an error
                    # in score.py; rerunning run.py then judge.py grades the new answer.
                    out.write({**v, "by": "run_error"})
                elif decided is not None:
                    out.write({**v, "verdict": decided[0], "by": decided[1]})
                else:
                    pool.submit(v, ask_judge, client, chooser, judge_model, cfg["judge_max_tokens"], rec, v["rubric"])
            for v, result in pool.results(block=True):
                out.write({**v, "by": "llm", **result})
                out.llm += 1
                if cap is not None:
                    cap.charge(call_cost(cap.table, judge_model, result["usage"]))
                    if cap.reached():
                        raise CostCapReached(cap.text())
        except KeyboardInterrupt as e:  # Ctrl-C, or SIGTERM (Terminated): say what is kept, and how to go on
            out.progress.close()
            raise type(e)(stop_note("judge.py", a.out, graded_before + out.written - out.errors,
                                    total, "verdicts", argv)) from None
        except CostCapReached as e:  # queued calls are dropped; one in flight is redone (from the cache) on resume
            pool.stop()
            out.progress.close()
            kept = stop_note("judge.py", a.out, graded_before + out.written - out.errors, total, "verdicts", argv)
            raise CostCapReached(f"{e}; {kept}, once max_cost in {a.config} is raised") from None
        out.progress.close()
    return out


def judge_runs(a: argparse.Namespace, argv: list[str] | None) -> int:
    """The verdicts, in order: the comparison, what is graded, the rest shuffled and graded."""
    shard = parse_shard(a.shard)

    cfg = judge_config(a)
    workers = a.workers if a.workers is not None else cfg["workers"]
    # A retrieval-only record has no answer to grade (run.py --retrieval-only); score.py shows
    # its retrieval columns and says accuracy was not measured.
    dataset = dataset_from(a.config if not a.manifest else None, a.manifest)
    records = [r for r in load_comparison(a.runs, dataset, a.allow_partial).records if not r["retrieval_only"]
               and (shard is None or shard_of(r, shard[1]) == shard[0])]
    judge_model = cfg["judge_model"]
    grader = grader_identity(judge_model, cfg["judge_sampling"])
    grader_name = f"{judge_model or 'rules-only'}:{RULES_SHA256[:12]}"
    if a.fresh and os.path.exists(a.out):
        os.unlink(a.out)
    done, dropped = load_verdicts(a.out, records, grader)

    # Interleave all systems with the config seed, so that judge drift over time or a warm
    # cache cannot favour one system.
    records.sort(key=record_key)
    random.Random(cfg["seed"]).shuffle(records)
    # Each record with an answer is decided once, here (grading.decide); None leaves it to the judge.
    todo = [(r, decide(r, bool(judge_model)) if r["answer"] is not None else None)
            for r in records if record_key(r) not in done]
    need_llm = [r for r, decided in todo if r["answer"] is not None and decided is None]
    undecided = len(need_llm) + sum(decided is not None and decided[1] == "no_match" for _, decided in todo)
    client = LLMClient(cfg, role="judge", workers=workers, env=a.judge_endpoint or "LLM") if need_llm else None
    print(f"judge: {len(records)} records, {len(records) - len(todo)} already graded, {len(todo)} to grade "
          f"({dropped} graded again: failed, or graded against another gold, answer, annotation or grader; "
          f"{undecided} undecided by rules; judge model: {judge_model or 'none, rules only'})", file=sys.stderr)

    cap = judge_cap(cfg, done) if need_llm else None
    if cap is not None and cap.reached():
        raise CostCapReached(f"{cap.text()}, before this command made a call; "
                             f"{stop_note('judge.py', a.out, len(records) - len(todo), len(records), 'verdicts', argv)}"
                             f", once max_cost in {a.config} is raised")
    out = grade(a, argv, cfg, client, workers, todo, len(records) - len(todo), len(records), grader, grader_name,
                cap)
    print(f"wrote {a.out}: {out.written} new verdicts ({out.llm} by the LLM judge), "
          f"{out.errors} judge errors", file=sys.stderr)
    if out.errors and out.errors / len(records) > cfg["max_error_rate"]:
        print("error: some judge calls failed; rerun the same command to retry them", file=sys.stderr)
        return EXIT_UNFINISHED
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    """Judge all records; exit 3 when judge calls failed beyond max_error_rate."""
    ap = parser()
    a = ap.parse_args(argv)
    if a.heldout and not a.calibrate:
        ap.error("--heldout needs --calibrate")
    if a.calibrate:
        return calibrate(a)
    if a.runs and not a.out and a.judge_model:
        a.out = os.path.join(results_dir(load_config(a.config)["run_id"]), f"verdicts{judge_suffix(a)}.jsonl")
    if not a.runs or not a.out:
        ap.error("--runs and --out are required (unless --calibrate; --out defaults with --judge-model)")
    output_path(a.out, "--out")
    with output_lock(a.out):
        return judge_runs(a, argv)


if __name__ == "__main__":
    sys.exit(run_cli(main))
