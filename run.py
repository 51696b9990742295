"""Run one system over the dataset and write one record per question (per budget and repeat).

For each case: reset a namespace unique to this run and case, add one session at a time in
chronological order, flush; then for each question search once with the raw question, build
the shared context at each token budget from the same hits, ask the pinned answer model with
the shared prompt, and append the record. Besides real backends (backends/), three controls
check the harness itself: `none` (empty context), `oracle` (exactly the gold evidence turns)
and `full_context` (every turn, newest kept when the budget cuts, shown oldest first).

Rerunning the same command resumes: finished records stay, missing and failed ones are redone.
A finished file is in dataset order.

  --budgets 500,2000,8000  one search per question with a k large enough for the largest
                           budget (enough hits of the dataset's typical turn to fill it, and at
                           least top_k scaled by largest budget / context_token_budget); a
                           context and an answer per budget (the budget curve)
  --repeat N               run the system N times (repeat 0..N-1): the noise floor; each
                           repeat has its own response-cache entries, and a backend that does
                           not declare itself deterministic is ingested again per repeat
  --retrieval-only         ingest and search, ask no model: the model-free pass
  --limit N                the first N cases (N at least 1), in dataset order (not comparable to a
                           full run)
  --sample N               a stratified sample: N questions of each kind (all of a kind with fewer),
                           drawn by the config's seed, the same for every system; only the cases
                           holding one are ingested (not comparable to a run on every question)
  --shard I/N              the cases whose cluster hashes to share I of N (I = 0..N-1), so N
                           machines split one run; merge.py joins the shard files
  --estimate               make no model call and write nothing: print the calls, tokens and
                           dollar cost the run would make for the records still to do in --out
                           (ingestion and search run, as in --retrieval-only, so the prompts are
                           the ones the run sends), and the judge calls judge.py would make

The config's max_cost (USD) caps what the run file's calls cost as recorded (prices.run_cost:
the records already in --out and each one written): the run stops once it is reached, exit 3,
and the same command resumes after max_cost is raised.

Usage:
  RUN=$(python -c "import yaml; print(yaml.safe_load(open('config.yaml'))['run_id'])")   # config.yaml's run_id
  python run.py --config config.yaml --backend none --out runs/$RUN/none.jsonl
  python run.py --config config.yaml --backend keyword --out runs/$RUN/keyword.jsonl --workers 8
  python run.py --config config.yaml --backend keyword --out runs/$RUN/keyword.jsonl --fresh
  python run.py --config config.yaml --backend keyword --out runs/$RUN/sweep/keyword.jsonl --budgets 500,2000,8000
  python run.py --config config.yaml --backend keyword --out runs/$RUN/retrieval/keyword.jsonl --retrieval-only
  python run.py --config config.yaml --backend keyword --out runs/$RUN/keyword.jsonl --estimate
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from dataclasses import dataclass
from typing import TextIO

from backends import code_sha256, load_backend
from cli import EXIT_OK, EXIT_UNFINISHED, CostCapReached, InputError, Progress, ServiceDown, run_cli, stop_note
from config import load_config
from context import answer_prompt, build_context, make_counter, render_line
from contract import CONTROL_NAMES, Hit, items_sha256, keyword_ranks, session_items
from dataset import dataset_index, iter_cases, parse_shard, select_cases
from fileio import dumps, output_lock, output_path, read_resumable, sha256_data, sha256_text, write_atomic
from formats import BUDGET_FIELD, RUN_FORMAT, RUN_IDENTITY_FIELDS, run_key
from llm import LLMClient, server_info
from workers import Workers
from prices import Cap, PriceTable, call_cost, load_prices, refuse_unpriced, run_cost, tokens_cost, usd, write_cost
from rubrics import judge_prompt, rubric_for

# Fields that must agree between the records already in --out and this run for a resume to
# be a resume and not a silent mix of two different experiments: this system's own identity,
# and the contract that judge.py and score.py hold constant across files (formats.py).
# Budget and repeat vary within one file; each record's must be one this run makes.
IDENTITY_FIELDS = RUN_IDENTITY_FIELDS + ("shard",)


# ---------------------------------------------------------------------------------------------
# Systems: the controls and a wrapper around a real backend share one small surface.
# ---------------------------------------------------------------------------------------------

class Control:
    """none / oracle / full_context: hits computed from the case itself, no memory system."""
    version = "control"
    internal_model = None
    flush_note = None
    deterministic = True
    time_aware = False
    # A control's hits come from the case itself (every turn, or the evidence), whatever k is:
    # k never bounds its context (k_limited is false).
    searches_with_k = False

    def __init__(self, name: str) -> None:
        self.name = name
        self.newest_first = name == "full_context"
        self._hits: dict[str, Hit] = {}  # the current case's turns as hits, in order

    def ingest(self, case: dict, namespace: str, cfg: dict, extra_wait_s: float) -> dict:
        """Controls store nothing; the case's turns are turned into hits once, not per question."""
        self._hits = {it.item_id: Hit(text=it.text, score=1.0, source_ids=(it.item_id,),
                                      timestamp=it.metadata["timestamp"])
                      for s in case["sessions"] for it in session_items(s)}
        return {"ingest_s": None, "flush_s": None, "added_items": 0, "added_sha256": None}

    def release(self, namespace: str) -> None:
        """Nothing is stored."""

    def internal_usage(self) -> dict | None:
        """Controls call no model of their own."""
        return None

    def hits(self, case: dict, question: dict, namespace: str, k: int) -> tuple[list[Hit], float | None]:
        """The control's hits; search_ms is None because nothing is searched."""
        if self.name == "none":
            return [], None
        if self.name == "oracle":
            return [self._hits[i] for i in question["evidence"]], None
        # full_context: every turn, newest first so that the budget keeps the newest
        return list(reversed(self._hits.values())), None


class BackendSystem:
    """A real memory system behind the MemoryBackend protocol."""
    newest_first = False
    searches_with_k = True

    def __init__(self, backend, time_aware_search: bool) -> None:
        self.backend = backend
        self.name = backend.name
        self.version = backend.version
        self.internal_model = getattr(backend, "internal_model", None)
        self.flush_note = getattr(backend, "flush_note", None)
        # Optional declarations of a backend (backends/README.md): its search is byte-for-byte
        # repeatable (ingested once for all repeats), it calls a model through llm_client (whose
        # usage is counted apart), it uses the question's date as "now" (time-aware search).
        self.deterministic = bool(getattr(backend, "deterministic", False))
        self._llm = getattr(backend, "llm_client", None)
        self.time_aware = time_aware_search and getattr(backend, "uses_time", False)

    def ingest(self, case: dict, namespace: str, cfg: dict, extra_wait_s: float) -> dict:
        """reset, one add per session in order, flush, then any extra wait (check.py's indexing
        lag test); returns the record's ingest fields, with a hash of exactly what was added so
        that leakage (a question or gold passed to add) can be checked afterwards."""
        self.backend.reset(namespace)
        added = []
        t0 = time.perf_counter()
        for session in case["sessions"]:
            items = session_items(session)
            self.backend.add(namespace, items)
            added.extend(items)
        t1 = time.perf_counter()
        self.backend.flush(namespace, cfg["flush_timeout_s"])
        t2 = time.perf_counter()
        if extra_wait_s:
            time.sleep(extra_wait_s)
        return {"ingest_s": round(t1 - t0, 3), "flush_s": round(t2 - t1, 3), "added_items": len(added),
                "added_sha256": items_sha256(added)}

    def release(self, namespace: str) -> None:
        """Empty a finished case's namespace (reset), so memory stays flat over a long run.
        A failure here cannot change an answer already searched; it is reported, not fatal."""
        try:
            self.backend.reset(namespace)
        except Exception as e:
            print(f"warning: {self.name}: releasing namespace {namespace} failed: {backend_error(e)}",
                  file=sys.stderr)

    def internal_usage(self) -> dict | None:
        """The backend's own model calls so far (its llm_client's counters), or None."""
        return self._llm.usage_snapshot() if self._llm is not None else None

    def hits(self, case: dict, question: dict, namespace: str, k: int) -> tuple[list[Hit], float]:
        """Search with the raw question (and its date as "now" for a time-aware backend); a
        backend returning more than k is a backend bug."""
        t0 = time.perf_counter()
        if self.time_aware:
            hits = list(self.backend.search(namespace, question["question"], k, now=question["asked_at"]))
        else:
            hits = list(self.backend.search(namespace, question["question"], k))
        ms = round((time.perf_counter() - t0) * 1000, 2)
        if len(hits) > k:
            raise RuntimeError(f"search returned {len(hits)} hits for k={k}")
        return hits, ms


def make_system(name: str, cfg: dict):
    """A control by name, or the backend module of that name."""
    if name in CONTROL_NAMES:
        return Control(name)
    return BackendSystem(load_backend(name, cfg), cfg["time_aware_search"])


def system_code_sha256(name: str, cfg: dict) -> str | None:
    """The backend's code identity (backends.code_sha256); None for a control, which is part of
    this script."""
    return None if name in CONTROL_NAMES else code_sha256(name, cfg)


def backend_error(e: Exception) -> str:
    """The short, stable error a backend failure leaves in a record."""
    return f"backend: {type(e).__name__}: {e}"[:300]


def provenance(hits) -> list[str] | None:
    """Source ids of the hits in rank order; None (not measurable) if any hit has none."""
    if any(not h.source_ids for h in hits):
        return None
    return [sid for h in hits for sid in h.source_ids]


def usage_delta(before: dict | None, after: dict | None) -> dict | None:
    """What a backend's own model calls cost between two snapshots."""
    if before is None or after is None:
        return None
    return {k: after[k] - before[k] for k in after}


# ---------------------------------------------------------------------------------------------
# Options
# ---------------------------------------------------------------------------------------------

def parse_budgets(text: str | None, cfg: dict) -> list[int]:
    """--budgets '500,2000,8000' as a sorted list; the config's budget when absent."""
    if text is None:
        return [cfg["context_token_budget"]]
    try:
        budgets = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise InputError(f"--budgets {text!r}: expected token counts separated by commas, e.g. 500,2000,8000") from None
    if not budgets or budgets[0] < 1:
        raise InputError(f"--budgets {text!r}: each budget must be at least 1")
    return budgets


def search_k(cfg: dict, budgets: list[int], hit_tokens: float | None) -> int:
    """k for one search that serves every budget. One budget: the config's top_k (the contract).
    A sweep (a k large enough for the largest budget): enough hits of the typical
    size (hit_tokens, typical_hit_tokens) to fill the largest budget, and never fewer than
    top_k scaled by largest budget / context_token_budget. Scaling top_k alone left bm25 at
    8,000 tokens using 23% of the budget with no hit cut on the bundled data: k, not the
    budget, made that point of the curve."""
    if len(budgets) == 1:
        return cfg["top_k"]
    scaled = math.ceil(cfg["top_k"] * budgets[-1] / cfg["context_token_budget"])
    return max(cfg["top_k"], scaled, math.ceil(budgets[-1] / hit_tokens))


def typical_hit_tokens(path: str, case_id: str, counter) -> float:
    """The median tokens of one turn as a context line (render_line, the configured tokenizer),
    over the turns of one case: the dataset's first, so that every shard and --limit of a run
    computes the same k, and reading it costs one line of the file, not a second pass."""
    cases = iter_cases(path, {case_id})
    case = next(cases)
    cases.close()
    lines = [render_line(1, Hit(text=it.text, score=1.0, timestamp=it.metadata["timestamp"]))
             for s in case["sessions"] for it in session_items(s)]
    return statistics.median(counter.count(line) for line in lines)


# ---------------------------------------------------------------------------------------------
# Resume
# ---------------------------------------------------------------------------------------------

def load_done(path: str, identity: dict, keys: set, rewrite: bool = True) -> tuple[dict, int]:
    """Records already finished in `path` by the same run, keyed by run_key, and how many lines
    were dropped (failed records, or a last line cut by a crash). The file is rewritten
    atomically without the dropped lines before new records are appended (unless rewrite is
    false: --estimate writes nothing)."""
    rows, dropped = read_resumable(path)
    done: dict = {}
    for lineno, rec, line in rows:
        for key in IDENTITY_FIELDS:
            if rec.get(key) != identity[key]:  # .get: a foreign file may lack the field
                if key == "backend_code_sha256":
                    raise InputError(f"{path}:{lineno}: written by other code of backend {identity['backend_id']!r} "
                                     f"(field 'backend_code_sha256' is {str(rec.get(key))[:12]}..., its code now "
                                     f"has {identity[key][:12]}...), and the version says {identity['backend_version']!r} "
                                     f"for both: those answers may not be what this code gives. Use --fresh to run "
                                     f"it again, or bump the backend's version and choose another --out")
                raise InputError(f"{path}:{lineno}: holds a different run (field '{key}' is "
                                 f"{rec.get(key)!r}, this run has {identity[key]!r}); "
                                 f"use --fresh to start over or choose another --out")
        key = run_key(rec)
        if key not in keys:
            raise InputError(f"{path}:{lineno}: question {key[0]!r} at budget {key[1]!r}, repeat {key[2]!r} is not "
                             f"one this run makes (another dataset, --budgets, --repeat, --limit or --sample): use --fresh")
        if rec["error"] is not None or key in done:
            dropped += 1  # redo failures; never keep two records of one question
            continue
        done[key] = line
    if dropped and rewrite:
        write_atomic(path, "".join(done.values()))
    return done, dropped


# ---------------------------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------------------------

class Writer:
    """Appends records from the main thread only, flushing each so a crash loses nothing
    already answered; counts what it wrote for the progress line."""

    def __init__(self, fh: TextIO, progress: Progress, count_records: bool, cap: CostCap | None = None) -> None:
        self.fh, self.progress, self.cap = fh, progress, cap
        self.count_records = count_records  # False while the progress line counts cases
        self.written = self.errors = self.cached = 0

    def write(self, record: dict) -> None:
        """Append one record; past max_cost, stop the run (CostCapReached) with it written."""
        self.fh.write(dumps(record) + "\n")
        self.fh.flush()
        self.written += 1
        self.errors += record["error"] is not None
        self.cached += bool(record["cached"])
        self.progress.update(self.written if self.count_records else None, errors=self.errors, cached=self.cached)
        if self.cap is not None:
            self.cap.add(record)
            if self.cap.reached():
                raise CostCapReached(self.cap.text())


class CostCap(Cap):
    """The config's max_cost over the run file's calls as recorded (prices.run_cost: what
    score.py reports for it), the records kept in --out and each one written."""

    def __init__(self, table: PriceTable, limit: float, kept: list[dict]) -> None:
        super().__init__(table, limit, run_cost(table, kept), "this run file's calls")
        self.cases = {(r["case_id"], r["repeat"]) for r in kept if r["internal_usage"] is not None}

    def add(self, record: dict) -> None:
        """Count one written record's answer call and, once per case and repeat, its write calls."""
        self.charge(call_cost(self.table, record["answer_model"], record["usage"]))
        case = (record["case_id"], record["repeat"])
        if record["internal_usage"] is not None and case not in self.cases:
            self.cases.add(case)
            self.charge(write_cost(self.table, record))


def finish(record: dict, completion) -> dict:
    """Fill the answer fields of a record from a model completion."""
    return {**record, "answer": completion.text, "served_model": completion.served_model,
            "usage": completion.usage, "finish_reason": completion.finish_reason,
            "retries": max(0, completion.attempts - 1), "cached": completion.cached, "error": completion.error}


def ask(pool: Workers, client: LLMClient, cfg: dict, record: dict, prompt: str) -> None:
    """Queue one answer call with the shared prompt and the pinned model."""
    pool.submit(record, client.complete, cfg["answer_model"], [{"role": "user", "content": prompt}],
                cfg["answer_max_tokens"], None, record["repeat"])


def base_record(identity: dict, system, case: dict, q: dict) -> dict:
    """A question's record before retrieval and answer: who, what, and the contract."""
    return {**identity, "internal_model": system.internal_model, "flush_note": system.flush_note,
            # Informational, outside the identity (a backend's declaration is not part of the
            # contract, and resume must not depend on it): check.py holds a system that declares
            # itself deterministic, whose searches run.py reuses across repeats, to identical reruns.
            "deterministic": system.deterministic,
            "case_id": case["case_id"], "cluster": case.get("cluster", case["case_id"]),  # optional
            "qid": q["qid"], "type": q["type"], "question": q["question"], "asked_at": q["asked_at"],
            "gold_answer": q["gold_answer"], "evidence": q["evidence"],
            "meta": q.get("meta", {}),  # meta is optional in the contract
            # context_text: the context exactly as the answer model read it (full_context's lines
            # oldest first, a backend's own memory texts as it returned them), so that the report
            # shows the prompt as sent (context.answer_prompt rebuilds it from this record).
            "retrieved_ids": None, "context_ids": None, "context_text": None, "context_tokens": None,
            "keyword_ranks": None,
            "hits_returned": None, "hits_kept": None, "hits_cut": None, "k_limited": None,
            "answer": None, "served_model": None, "usage": None, "finish_reason": None, "retries": 0,
            "ingest_s": None, "flush_s": None, "added_items": None, "added_sha256": None, "internal_usage": None,
            "search_ms": None, "search_calls_in_flight": None, "cached": False, "error": None}


def sort_in_dataset_order(path: str, order: dict) -> None:
    """Rewrite a finished run file in dataset order (then budget, then repeat), so two runs
    diff line by line; records are written as they complete, which is not the dataset's order
    with several workers."""
    rows, _ = read_resumable(path)
    rows.sort(key=lambda row: (order[row[1]["qid"]], row[1][BUDGET_FIELD], row[1]["repeat"]))
    write_atomic(path, "".join(line for _, _, line in rows))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", required=True, help="config.yaml")
    ap.add_argument("--backend", required=True, help="none, oracle, full_context or a backends/ module")
    ap.add_argument("--out", required=True, help="runs/$RUN/NAME.jsonl (appended to, resumable)")
    ap.add_argument("--workers", type=int, help="concurrent model calls (default: config workers)")
    ap.add_argument("--budgets", help="token budgets for one search each, e.g. 500,2000,8000 (default: config)")
    ap.add_argument("--repeat", type=int, help="run the system N times (default: config repeats)")
    ap.add_argument("--retrieval-only", action="store_true", help="ingest and search only; ask no model")
    ap.add_argument("--limit", type=int, metavar="N",
                    help="only the first N cases (not questions), in dataset order; N at least 1")
    ap.add_argument("--sample", type=int, metavar="N",
                    help="a stratified sample: N questions of each kind, drawn by the config's seed; N at least 1")
    ap.add_argument("--shard", help="I/N: only the cases of share I (0-based) of N")
    ap.add_argument("--no-cache", action="store_true", help="ask the endpoint even for cached requests")
    ap.add_argument("--fresh", action="store_true", help="discard --out and start over")
    ap.add_argument("--estimate", action="store_true",
                    help="make no model call and write nothing: print the calls, tokens and dollar cost of the run "
                         "(the records still to do in --out) and of judging it")
    ap.add_argument("--extra-wait-s", type=float, default=0.0,
                    help="wait this long after flush before searching (check.py's indexing-lag test)")
    return ap.parse_args(argv)


def worker_and_repeat_counts(a: argparse.Namespace, cfg: dict) -> tuple[int, int]:
    """(workers, repeats), the flags' or else the config's; an InputError for a count below 1
    or a negative --extra-wait-s."""
    workers = a.workers if a.workers is not None else cfg["workers"]
    repeats = a.repeat if a.repeat is not None else cfg["repeats"]
    for flag, value in (("--workers", workers), ("--repeat", repeats), ("--limit", 1 if a.limit is None else a.limit),
                        ("--sample", 1 if a.sample is None else a.sample)):
        if value < 1:
            raise InputError(f"{flag} must be at least 1")
    if a.extra_wait_s < 0:
        raise InputError("--extra-wait-s must be 0 or more")
    return workers, repeats


def run_identity(a: argparse.Namespace, cfg: dict, system, counter, top_k: int) -> dict:
    """The contract fields every record of this run carries: a record resumes only under the
    same ones (load_done)."""
    return {"format": RUN_FORMAT,
            "run_id": cfg["run_id"], "backend": system.name, "backend_id": a.backend, "backend_version": system.version,
            "backend_code_sha256": system_code_sha256(a.backend, cfg),
            "time_aware": system.time_aware, "extra_wait_s": a.extra_wait_s, "shard": a.shard,
            "dataset_sha256": sha256_data(cfg["dataset"]), "answer_model": cfg["answer_model"],
            "prompt_sha256": sha256_text(cfg["answer_prompt"]), "top_k": top_k,
            "tokenizer": counter.name, "answer_max_tokens": cfg["answer_max_tokens"],
            "answer_sampling": cfg["answer_sampling"], "seed": cfg["seed"],
            "retrieval_only": a.retrieval_only, "limit": a.limit, "sample": a.sample}


@dataclass(frozen=True)
class Plan:
    """What one run.py command does: the system on these cases (their questions as --sample keeps
    them), at these budgets and repeats, under the config; the records it makes (keys, each
    (qid, budget, repeat)) and those already written (done, keyed so, from a run it resumes)."""
    cfg: dict
    system: object
    identity: dict
    counter: object
    cases: list
    budgets: list
    repeats: int
    keys: frozenset
    done: dict

    def todo(self) -> set[str]:
        """The ids of the cases with a record still to do."""
        return {c["case_id"] for c in self.cases
                if any((q["qid"], b, r) not in self.done
                       for q in c["questions"] for b in self.budgets for r in range(self.repeats))}

    def planned(self) -> dict:
        """Each case's questions the run asks (a --sample keeps some of a case's)."""
        return {c["case_id"]: c["questions"] for c in self.cases}


def answer_cases(a: argparse.Namespace, argv: list[str] | None, plan: Plan, client: LLMClient | None, workers: int,
                 cap: CostCap | None = None) -> Writer:
    """Ingest, search and answer every case with a record still to do, appending the records
    to a.out as they complete; the Writer says what was written."""
    cfg, system, identity, counter = plan.cfg, plan.system, plan.identity, plan.counter
    budgets, repeats, done, total = plan.budgets, plan.repeats, plan.done, len(plan.keys)
    # The embedded model (serve.py sets LLM_SERVER_INFO) shares this machine's two cores: a
    # backend that embeds its turns while the model answers starves llama.cpp's spinning thread
    # pool (one generated token took a second instead of 11 ms, bench/README.md) and slows its
    # own search timings. So with a local model every case is ingested and searched first and
    # answered after; with a remote endpoint ingestion and answering overlap.
    served = server_info()
    local_model = served is not None
    warn_context_window(served, budgets, cfg, counter, a.retrieval_only)
    hold = local_model and not a.retrieval_only
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    pool = Workers(workers)
    todo = plan.todo()
    # While answers are held, no record is written until every case is searched: the progress
    # line counts cases (done/total, rate, ETA), then records once answering starts.
    if cap is not None and todo and cap.reached():
        raise CostCapReached(f"{cap.text()}, before this command made a call; "
                             f"{stop_note('run.py', a.out, len(done), total, 'records', argv)}, once max_cost in "
                             f"{a.config} is raised")
    if client is not None and todo:
        client.preflight(cfg["answer_model"], cfg["answer_max_tokens"])  # exit 2 in seconds if it cannot work
    progress = (Progress(f"run {system.name}", len(todo), "cases") if hold
                else Progress(f"run {system.name}", total - len(done), "records"))
    with open(a.out, "a", encoding="utf-8") as fh:
        writer = Writer(fh, progress, count_records=not hold, cap=cap)
        try:
            held = []  # with a model on this machine: the answer calls wait until every search is done
            planned = plan.planned()
            for n, case in enumerate(iter_cases(cfg["dataset"], todo), 1):
                case = {**case, "questions": planned[case["case_id"]]}
                progress.phase("ingesting and searching, answers held" if hold else f"case {n}/{len(todo)}")
                for record, prompt in run_case(system, case, identity, cfg, counter, budgets, repeats, done,
                                               pool.pending):
                    if prompt is None:
                        writer.write(record)
                    elif hold:
                        held.append((record, prompt))
                    else:
                        ask(pool, client, cfg, record, prompt)
                if hold:
                    progress.update(n, errors=writer.errors, cached=writer.cached)
                # Write what has finished while the next case ingests; a crash then loses only the
                # calls in flight, whose questions have no record and are redone on resume.
                for record, completion in pool.results(block=False):
                    writer.write(finish(record, completion))
            for record, prompt in held:
                ask(pool, client, cfg, record, prompt)
            if hold:
                writer.count_records = True
                progress.switch(total - len(done), "records", "answering", done=writer.written)
            elif not a.retrieval_only:
                progress.phase("answering")
            for record, completion in pool.results(block=True):
                writer.write(finish(record, completion))
        except KeyboardInterrupt as e:  # Ctrl-C, or SIGTERM (Terminated): say what is kept, and how to go on
            progress.close()
            raise type(e)(stop_note("run.py", a.out, len(done) + writer.written - writer.errors, total, "records",
                                    argv)) from None
        except CostCapReached as e:  # queued calls are dropped; one in flight is redone (from the cache) on resume
            pool.stop()
            progress.close()
            kept = stop_note("run.py", a.out, len(done) + writer.written - writer.errors, total, "records", argv)
            raise CostCapReached(f"{e}; {kept}, once max_cost in {a.config} is raised") from None
        progress.close()
    return writer


def run_system(a: argparse.Namespace, argv: list[str] | None) -> int:
    """The run, in order: config, cases, system, what is done, the cases left, the file sorted."""
    cfg = load_config(a.config)
    workers, repeats = worker_and_repeat_counts(a, cfg)
    budgets = parse_budgets(a.budgets, cfg)
    shard = parse_shard(a.shard)
    cases = dataset_index(cfg["dataset"])
    counter = make_counter(cfg["tokenizer"])
    hit_tokens = typical_hit_tokens(cfg["dataset"], cases[0]["case_id"], counter) if len(budgets) > 1 else None
    if a.limit is not None:
        print(f"warning: --limit {a.limit}: only the first {min(a.limit, len(cases))} cases; these numbers are not "
              f"comparable to a run on the whole dataset", file=sys.stderr)
    if a.sample is not None:
        print(f"warning: --sample {a.sample}: {a.sample} question(s) of each kind; these numbers are not comparable "
              f"to a run on every question", file=sys.stderr)
    cases = select_cases(cases, a.limit, shard, a.sample, cfg["seed"])
    # The model-free pass and the estimate need no endpoint; any other run checks the endpoint
    # variables before any work is done.
    client = None if a.retrieval_only or a.estimate else LLMClient(cfg, use_cache=not a.no_cache, workers=workers)
    # The price table is read only when it is used: a run without a cap needs none.
    prices = load_prices(cfg["price_table"]) if a.estimate or cfg["max_cost"] is not None else None
    system = make_system(a.backend, cfg)
    identity = run_identity(a, cfg, system, counter, search_k(cfg, budgets, hit_tokens))

    questions = [q for c in cases for q in c["questions"]]
    order = {q["qid"]: i for i, q in enumerate(questions)}
    keys = {(q["qid"], b, r) for q in questions for b in budgets for r in range(repeats)}
    if a.fresh and os.path.exists(a.out) and not a.estimate:
        os.unlink(a.out)
    done, dropped = ({}, 0) if a.fresh else load_done(a.out, identity, keys, rewrite=not a.estimate)
    plan = Plan(cfg, system, identity, counter, cases, budgets, repeats, frozenset(keys), done)
    if a.estimate:
        return print_estimate(a, plan, prices)
    cap = cost_cap(cfg, prices, system, done, a.retrieval_only)
    print(f"run {system.name} ({system.version}): {len(questions)} questions x {len(budgets)} budget(s) x "
          f"{repeats} repeat(s), {len(done)} records already done, {dropped} failed or cut records to redo"
          + ("; retrieval only, no model calls" if a.retrieval_only else f", {workers} workers"), file=sys.stderr)
    if hit_tokens is not None:
        print(f"budget sweep: one search per question with k={identity['top_k']} (recorded as top_k): enough hits "
              f"of {hit_tokens:g} tokens, the median turn of the dataset's first case, to fill budget {budgets[-1]}",
              file=sys.stderr)

    writer = answer_cases(a, argv, plan, client, workers, cap)
    sort_in_dataset_order(a.out, order)

    total = len(keys)
    failed = writer.errors
    calls = client.network_calls if client else 0
    print(f"wrote {a.out}: {len(done) + writer.written - failed}/{total} records done, {failed} failed, "
          f"{writer.cached} from cache, {calls} model requests", file=sys.stderr)
    if failed and failed / total > cfg["max_error_rate"]:
        print(f"error: {failed} of {total} records failed (see the 'error' field); "
              f"rerun the same command to retry them", file=sys.stderr)
        return EXIT_UNFINISHED
    return EXIT_OK


def cost_cap(cfg: dict, prices: PriceTable | None, system, done: dict, retrieval_only: bool) -> CostCap | None:
    """The max_cost cap over this run file, or None without one. A cap needs every model the
    run calls priced (the answer model, and the system's own when it counts its calls): an
    unpriced call would pass the cap unseen, so that is exit 2 before any call."""
    if cfg["max_cost"] is None or retrieval_only:
        return None
    models = [("answer_model", cfg["answer_model"])]
    if getattr(system, "_llm", None) is not None:
        models.append(("the system's own model", system.internal_model))
    refuse_unpriced(prices, models, cfg["config_path"])
    return CostCap(prices, float(cfg["max_cost"]), [json.loads(line) for line in done.values()])


def estimate(plan: Plan, prices: PriceTable) -> dict:
    """What the run would call and spend, from the contexts run.py builds (run_case, with no
    answer asked: ingestion and search run as in --retrieval-only), before any model call:
    answer calls, their prompt tokens counted by the config's tokenizer on the prompts as sent,
    their completion tokens at answer_max_tokens each (an upper bound); the judge calls
    judge.py would make, one per answer when judge_model is set (no answer left to the rules: an
    upper bound), each prompt holding an answer of answer_max_tokens tokens. A system that calls
    a model while writing cannot be ingested without calling it: its answer prompts are bounded
    by the full budget and its ingestion is not estimated."""
    cfg, system, identity, counter = plan.cfg, plan.system, plan.identity, plan.counter
    budgets, repeats, done = plan.budgets, plan.repeats, plan.done
    notes = [f"prompt tokens are counted by the config's tokenizer ({counter.name}); an endpoint with another "
             f"tokenizer counts the same text differently",
             f"each answer call is taken to write answer_max_tokens ({cfg['answer_max_tokens']}) tokens, an upper bound",
             "every call is counted once, as if none were cached (the response cache makes a rerun free) and none "
             "retried"]
    writes_with_model = getattr(system, "_llm", None) is not None
    todo, planned = plan.todo(), plan.planned()
    prompts: list[tuple[int, dict]] = []  # (prompt tokens, record) per answer call
    if identity["retrieval_only"]:
        notes.append("--retrieval-only asks no model: no answer call, nothing to judge")
        todo = set()
    elif writes_with_model:
        notes.append(f"{system.name} calls a model while writing, which an estimate cannot do: its ingestion is not "
                     f"estimated, and each answer prompt is bounded by the full context budget")
        fixed = counter.count(answer_prompt(cfg["answer_prompt"], "", "", ""))
        for c in plan.cases:
            for q in planned[c["case_id"]]:
                for b in budgets:
                    for r in range(repeats):
                        if (q["qid"], b, r) not in done:
                            prompts.append((fixed + counter.count(q["asked_at"] + q["question"]) + b,
                                            {**q, "case_id": c["case_id"]}))
    else:
        dry = {**identity, "retrieval_only": True}
        for case in iter_cases(cfg["dataset"], todo):
            case = {**case, "questions": planned[case["case_id"]]}
            for record, _ in run_case(system, case, dry, cfg, counter, budgets, repeats, done, 0):
                if record["error"] is None:
                    text = answer_prompt(cfg["answer_prompt"], record["asked_at"], record["context_text"],
                                         record["question"])
                    prompts.append((counter.count(text), record))
    answer_model, judge_model = cfg["answer_model"], cfg["judge_model"]
    out_tokens = cfg["answer_max_tokens"] * len(prompts)
    answer = {"calls": len(prompts), "model": answer_model, "prompt_tokens": sum(n for n, _ in prompts),
              "completion_tokens": out_tokens}
    answer["cost_usd"] = tokens_cost(prices, answer_model, answer["prompt_tokens"], out_tokens)
    judge = {"calls": 0, "model": judge_model, "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0}
    if judge_model:
        judge_in = sum(counter.count(judge_prompt(rubric_for(r), r["question"], r["gold_answer"], ""))
                       + cfg["answer_max_tokens"] for _, r in prompts)
        judge = {"calls": len(prompts), "model": judge_model, "prompt_tokens": judge_in,
                 "completion_tokens": cfg["judge_max_tokens"] * len(prompts)}
        judge["cost_usd"] = tokens_cost(prices, judge_model, judge_in, judge["completion_tokens"])
        notes.append(f"every answer is taken to need the judge (judge_max_tokens {cfg['judge_max_tokens']} each), an "
                     f"upper bound: the rules decide the exact and the declining answers without it")
    else:
        notes.append("judge_model is null: the rules grade every answer, no judge call")
    ingestion = {"cost_usd": None if writes_with_model else 0.0}
    unpriced = [why for why in (prices.unpriced(answer_model) if prompts else None,
                                prices.unpriced(judge_model) if judge["calls"] else None) if why]
    parts = (answer["cost_usd"] if prompts else 0.0, judge["cost_usd"], ingestion["cost_usd"])
    return {"backend": system.name, "records_to_do": len(prompts), "answer": answer, "judge": judge,
            "ingestion": ingestion, "cost_usd": None if None in parts else sum(parts),
            "max_cost": cfg["max_cost"], "prices": prices.describe(), "unpriced": unpriced, "assumptions": notes}


def print_estimate(a: argparse.Namespace, plan: Plan, prices: PriceTable) -> int:
    """--estimate: the estimate as lines on stderr and as one JSON object on stdout (for jq)."""
    cfg, system, done = plan.cfg, plan.system, plan.done
    e = estimate(plan, prices)
    p = e["prices"]
    print(f"estimate for {system.name}, no model call made ({len(done)} records already in {a.out}; prices of "
          f"{p['file']} dated {p['date']}):", file=sys.stderr)
    for stage in ("answer", "judge"):
        s = e[stage]
        price = usd(s["cost_usd"]) if s["cost_usd"] is not None else f"n/a ({prices.unpriced(s['model'])})"
        print(f"  {stage} calls: {s['calls']:,} to {s['model'] or 'no model'}, {s['prompt_tokens']:,} prompt tokens, "
              f"at most {s['completion_tokens']:,} completion tokens: {price}", file=sys.stderr)
    ing = e["ingestion"]["cost_usd"]
    print(f"  ingestion: {'no model call' if ing == 0 else 'not estimated (see below)'}", file=sys.stderr)
    cap = "no cap" if cfg["max_cost"] is None else f"max_cost {usd(cfg['max_cost'])} stops the run there"
    print(f"  total: {usd(e['cost_usd'])} ({cap})", file=sys.stderr)
    for note in e["assumptions"]:
        print(f"  assumed: {note}", file=sys.stderr)
    print(json.dumps(e, ensure_ascii=False, allow_nan=False))
    return EXIT_OK


def warn_context_window(served: dict | None, budgets: list[int], cfg: dict, counter, retrieval_only: bool) -> None:
    """Warn, before any model call, when a budget cannot fit the served model's context window:
    the endpoint refuses those prompts (bad_request) and the records fail. Only a warning, since
    a retrieval system's k may keep its context well under the budget; and the harness's
    tokenizer is not the model's, so a budget just under the window can still overflow."""
    n_ctx = (served or {}).get("n_ctx")
    if retrieval_only or not n_ctx:
        return
    fixed = counter.count(cfg["answer_prompt"]) + cfg["answer_max_tokens"]
    over = [b for b in budgets if b + fixed > n_ctx]
    if over:
        print(f"warning: the served model reads {n_ctx} tokens; a context of budget {', '.join(map(str, over))} "
              f"with the prompt and the answer ({fixed} tokens) does not fit, and the model will refuse a context "
              f"that fills it (bad_request). Keep budgets below {n_ctx - fixed} with this model", file=sys.stderr)


def run_case(system, case: dict, identity: dict, cfg: dict, counter, budgets: list[int], repeats: int,
             done: dict, in_flight: int) -> list[tuple[dict, str | None]]:
    """Ingest one case (again per repeat unless the system is deterministic), search each
    question once per ingestion, and build its context at every budget: (record, answer
    prompt) per record still to do, or (record, None) when there is nothing to ask (the system
    failed, or a retrieval-only run). Each namespace is released afterwards, so a long run
    holds one case's memory at a time."""
    out = []
    searched: dict = {}  # qid -> (hits, search_ms, error), reused across repeats if deterministic
    for repeat in range(repeats):
        todo = [q for q in case["questions"]
                if any((q["qid"], b, repeat) not in done for b in budgets)]
        if not todo:
            continue
        # A deterministic system's searches serve every repeat, when they cover its questions
        # (after a resume, repeat 0 may have searched fewer than a later repeat needs).
        if not system.deterministic or any(q["qid"] not in searched for q in todo):
            namespace = f"{identity['run_id']}-{system.name}-r{repeat}-{case['case_id']}"
            searched, ingested = search_case(system, case, todo, namespace, identity, cfg, in_flight)
        for q in todo:
            hits, search_ms, error = searched[q["qid"]]
            for budget in budgets:
                if (q["qid"], budget, repeat) in done:
                    continue
                record = {**base_record(identity, system, case, q), **ingested, BUDGET_FIELD: budget,
                          "repeat": repeat, "search_ms": search_ms, "error": error}
                if error is None:
                    ctx = build_context(hits, budget, counter, system.newest_first)
                    record.update(retrieved_ids=provenance(hits), context_ids=provenance(ctx.kept),
                                  context_text=ctx.text, context_tokens=ctx.tokens, hits_returned=ctx.hits_returned,
                                  hits_kept=ctx.hits_kept, hits_cut=ctx.hits_cut,
                                  k_limited=k_limited(system, ctx, identity["top_k"]),
                                  keyword_ranks=keyword_ranks(hits, q), search_calls_in_flight=in_flight)
                if error is not None or identity["retrieval_only"]:
                    out.append((record, None))
                    continue
                prompt = answer_prompt(cfg["answer_prompt"], q["asked_at"], ctx.text, q["question"])
                out.append((record, prompt))
    return out


def k_limited(system, ctx, k: int) -> bool:
    """k, not the budget, bounded this context: the search returned all k hits it was allowed
    and the budget cut none of them, so a larger k could have filled more of the budget."""
    return system.searches_with_k and ctx.hits_returned == k and ctx.hits_cut == 0


def search_case(system, case: dict, todo: list[dict], namespace: str, identity: dict, cfg: dict,
                in_flight: int) -> tuple[dict, dict]:
    """Ingest a case and search its questions: ({qid: (hits, search_ms, error)}, the ingest
    fields of its records). A failing system is a result, recorded as each question's error."""
    before = system.internal_usage()
    try:
        ingested = system.ingest(case, namespace, cfg, identity["extra_wait_s"])
        ingest_error = None
    except (InputError, ServiceDown):
        raise  # bad config, a refused key, a dead endpoint: every case would fail the same way
    except Exception as e:
        ingested, ingest_error = {}, backend_error(e)
    searched = {}
    for q in todo:
        if ingest_error is not None:
            searched[q["qid"]] = ([], None, ingest_error)
            continue
        try:
            hits, search_ms = system.hits(case, q, namespace, identity["top_k"])
            searched[q["qid"]] = (hits, search_ms, None)
        except (InputError, ServiceDown):
            raise
        except Exception as e:
            searched[q["qid"]] = ([], None, backend_error(e))
    system.release(namespace)
    return searched, {**ingested, "internal_usage": usage_delta(before, system.internal_usage())}


def main(argv: list[str] | None = None) -> int:
    """Run one system; exit 3 when more questions failed than max_error_rate allows. --out must
    be a file a stage may write, and no other process may be writing it."""
    a = parse_args(argv)
    output_path(a.out, "--out")
    if a.estimate:  # writes nothing, so it neither takes the lock nor waits for a writer
        return run_system(a, argv)
    with output_lock(a.out):
        return run_system(a, argv)


if __name__ == "__main__":
    sys.exit(run_cli(main))
