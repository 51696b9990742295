"""Run one system over the dataset and write one record per question.

For each case: reset a namespace unique to this run and case, add one session at a time in
chronological order, flush; then for each question search with the raw question, build the
shared context, ask the pinned answer model with the shared prompt, and append the record.
Besides real backends (backends/), three controls check the harness itself: `none` (empty
context), `oracle` (exactly the gold evidence turns) and `full_context` (every turn, newest
kept when the budget cuts, shown oldest first).

Rerunning the same command resumes: finished records stay, missing and failed ones are redone.

Usage:
  python run.py --config config.yaml --backend none --out runs/none.jsonl
  python run.py --config config.yaml --backend keyword --out runs/keyword.jsonl --workers 8
  python run.py --config config.yaml --backend keyword --out runs/keyword.jsonl --fresh
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from typing import TextIO

from backends import load_backend
from context import build_context, make_counter
from interface import (BUDGET_FIELD, CONTRACT_FIELDS, CONTROL_NAMES, EXIT_OK, EXIT_TOO_MANY_ERRORS, Hit,
                       InputError, dumps, items_sha256, load_config, load_dataset, read_resumable, run_cli, session_items,
                       sha256_file, sha256_text, write_atomic)
from llm import LLMClient, Workers

# Fields that must agree between the records already in --out and this run for a resume to
# be a resume and not a silent mix of two different experiments: this system's own identity,
# and the contract that judge.py and score.py hold constant across files (interface.py).
IDENTITY_FIELDS = ("run_id", "backend", "backend_version", "repeat", "extra_wait_s") + CONTRACT_FIELDS + (BUDGET_FIELD,)
PROGRESS_EVERY_S = 5.0


# ---------------------------------------------------------------------------------------------
# Systems: the controls and a wrapper around a real backend share one small surface.
# ---------------------------------------------------------------------------------------------

class Control:
    """none / oracle / full_context: hits computed from the case itself, no memory system."""
    version = "control"
    internal_model = None
    flush_note = None

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

    def __init__(self, backend) -> None:
        self.backend = backend
        self.name = backend.name
        self.version = backend.version
        self.internal_model = getattr(backend, "internal_model", None)
        self.flush_note = getattr(backend, "flush_note", None)

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

    def hits(self, case: dict, question: dict, namespace: str, k: int) -> tuple[list[Hit], float]:
        """Search with the raw question; a backend returning more than k is a backend bug."""
        t0 = time.perf_counter()
        hits = list(self.backend.search(namespace, question["question"], k))
        ms = round((time.perf_counter() - t0) * 1000, 2)
        if len(hits) > k:
            raise RuntimeError(f"search returned {len(hits)} hits for k={k}")
        return hits, ms


def make_system(name: str, cfg: dict):
    """A control by name, or the backend module of that name."""
    return Control(name) if name in CONTROL_NAMES else BackendSystem(load_backend(name, cfg))


def backend_error(e: Exception) -> str:
    """The short, stable error a backend failure leaves in a record."""
    return f"backend: {type(e).__name__}: {e}"[:300]


def provenance(hits) -> list[str] | None:
    """Source ids of the hits in rank order; None (not measurable) if any hit has none."""
    if any(not h.source_ids for h in hits):
        return None
    return [sid for h in hits for sid in h.source_ids]


# ---------------------------------------------------------------------------------------------
# Resume
# ---------------------------------------------------------------------------------------------

def load_done(path: str, identity: dict, qids: set) -> tuple[dict, int]:
    """Records already finished in `path` by the same run, keyed by qid, and how many lines
    were dropped (failed records, or a last line cut by a crash). The file is rewritten
    atomically without the dropped lines before new records are appended."""
    rows, dropped = read_resumable(path)
    done: dict = {}
    for lineno, rec, line in rows:
        for key in IDENTITY_FIELDS:
            if rec.get(key) != identity[key]:  # .get: a foreign file may lack the field
                raise InputError(f"{path}:{lineno}: holds a different run (field '{key}' is "
                                 f"{rec.get(key)!r}, this run has {identity[key]!r}); "
                                 f"use --fresh to start over or choose another --out")
        if rec.get("qid") not in qids:
            raise InputError(f"{path}:{lineno}: question {rec.get('qid')!r} is not in the dataset; "
                             f"the dataset changed since this file was written: use --fresh")
        if rec["error"] is not None or rec["qid"] in done:
            dropped += 1  # redo failures; never keep two records of one question
            continue
        done[rec["qid"]] = line
    if dropped:
        write_atomic(path, "".join(done.values()))
    return done, dropped


# ---------------------------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------------------------

class Writer:
    """Appends records from the main thread only, flushing each so a crash loses nothing
    already answered; counts what it wrote for the progress line."""

    def __init__(self, fh: TextIO, total: int, label: str) -> None:
        self.fh, self.total, self.label = fh, total, label
        self.written = self.errors = self.cached = 0
        self.t0 = self.last = time.monotonic()

    def write(self, record: dict) -> None:
        self.fh.write(dumps(record) + "\n")
        self.fh.flush()
        self.written += 1
        self.errors += record["error"] is not None
        self.cached += bool(record["cached"])
        now = time.monotonic()
        if now - self.last >= PROGRESS_EVERY_S:
            self.last = now
            self.progress()

    def progress(self) -> None:
        rate = self.written / max(1e-9, time.monotonic() - self.t0)
        print(f"{self.label}: {self.written}/{self.total} written, {self.errors} errors, "
              f"{self.cached} cached, {rate:.2f} q/s", file=sys.stderr, flush=True)


def finish(record: dict, completion) -> dict:
    """Fill the answer fields of a record from a model completion."""
    return {**record, "answer": completion.text, "served_model": completion.served_model,
            "usage": completion.usage, "finish_reason": completion.finish_reason,
            "retries": max(0, completion.attempts - 1), "cached": completion.cached, "error": completion.error}


def base_record(identity: dict, system, case: dict, q: dict) -> dict:
    """A question's record before retrieval and answer: who, what, and the contract."""
    return {**identity, "internal_model": system.internal_model, "flush_note": system.flush_note,
            "case_id": case["case_id"], "cluster": case.get("cluster", case["case_id"]),  # optional
            "qid": q["qid"], "type": q["type"], "question": q["question"], "asked_at": q["asked_at"],
            "gold_answer": q["gold_answer"], "evidence": q["evidence"],
            "meta": q.get("meta", {}),  # meta is optional in the contract
            "retrieved_ids": None, "context_ids": None, "context_tokens": None,
            "hits_returned": None, "hits_kept": None, "hits_cut": None,
            "answer": None, "served_model": None, "usage": None, "finish_reason": None, "retries": 0,
            "shard": None, "ingest_s": None, "flush_s": None, "added_items": None, "added_sha256": None,
            "search_ms": None, "cached": False,
            "error": None}


def sort_in_dataset_order(path: str, order: dict) -> None:
    """Rewrite a finished run file in dataset order, so two runs diff line by line; records
    are written as they complete, which is not the dataset's order with several workers."""
    rows, _ = read_resumable(path)
    rows.sort(key=lambda row: order[row[1]["qid"]])
    write_atomic(path, "".join(line for _, _, line in rows))


def main(argv: list[str] | None = None) -> int:
    """Run one system; exit 3 when more questions failed than max_error_rate allows."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", required=True, help="config.yaml")
    ap.add_argument("--backend", required=True, help="none, oracle, full_context or a backends/ module")
    ap.add_argument("--out", required=True, help="runs/NAME.jsonl (appended to, resumable)")
    ap.add_argument("--workers", type=int, help="concurrent model calls (default: config workers)")
    ap.add_argument("--repeat", type=int, default=0, help="repeat index, for noise-floor reruns")
    ap.add_argument("--fresh", action="store_true", help="discard --out and start over")
    ap.add_argument("--extra-wait-s", type=float, default=0.0,
                    help="wait this long after flush before searching (check.py's indexing-lag test)")
    a = ap.parse_args(argv)
    if a.extra_wait_s < 0:
        raise InputError("--extra-wait-s must be 0 or more")

    cfg = load_config(a.config)
    workers = a.workers if a.workers is not None else cfg["workers"]
    if workers < 1:
        raise InputError("--workers must be at least 1")
    cases = load_dataset(cfg["dataset"])
    counter = make_counter(cfg["tokenizer"])
    client = LLMClient(cfg)  # checks the endpoint variables before any work is done
    system = make_system(a.backend, cfg)

    identity = {"run_id": cfg["run_id"], "backend": system.name, "backend_version": system.version,
                "repeat": a.repeat, "extra_wait_s": a.extra_wait_s, "dataset_sha256": sha256_file(cfg["dataset"]),
                "answer_model": cfg["answer_model"], "prompt_sha256": sha256_text(cfg["answer_prompt"]),
                "top_k": cfg["top_k"], "tokenizer": counter.name, "answer_max_tokens": cfg["answer_max_tokens"],
                "seed": cfg["seed"], BUDGET_FIELD: cfg["context_token_budget"]}
    order = {q["qid"]: i for i, q in enumerate(q for c in cases for q in c["questions"])}
    if a.fresh and os.path.exists(a.out):
        os.unlink(a.out)
    done, dropped = load_done(a.out, identity, set(order))
    print(f"run {system.name} ({system.version}): {len(order)} questions, {len(done)} already done, "
          f"{dropped} failed or cut records to redo, {workers} workers", file=sys.stderr)

    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    pool = Workers(workers)
    with open(a.out, "a", encoding="utf-8") as fh:
        writer = Writer(fh, len(order) - len(done), f"run {system.name}")
        for case in cases:
            todo = [q for q in case["questions"] if q["qid"] not in done]
            if not todo:
                continue
            namespace = f"{cfg['run_id']}-{a.backend}-r{a.repeat}-{case['case_id']}"
            for record, prompt in ask_case(system, case, todo, namespace, identity, cfg, counter):
                if prompt is None:
                    writer.write(record)
                else:
                    pool.submit(record, client.complete, cfg["answer_model"],
                                [{"role": "user", "content": prompt}], cfg["answer_max_tokens"])
            # Write what has finished while the next case ingests; a crash then loses only the
            # calls in flight, whose questions have no record and are redone on resume.
            for record, completion in pool.results(block=False):
                writer.write(finish(record, completion))
        for record, completion in pool.results(block=True):
            writer.write(finish(record, completion))
        writer.progress()
    sort_in_dataset_order(a.out, order)

    total = len(order)
    failed = writer.errors
    print(f"wrote {a.out}: {len(done) + writer.written - failed}/{total} answered, {failed} failed, "
          f"{writer.cached} from cache, {client.network_calls} model requests", file=sys.stderr)
    if failed and failed / total > cfg["max_error_rate"]:
        print(f"error: {failed} of {total} questions failed (see the 'error' field); "
              f"rerun the same command to retry them", file=sys.stderr)
        return EXIT_TOO_MANY_ERRORS
    return EXIT_OK


def ask_case(system, case: dict, todo: list[dict], namespace: str, identity: dict, cfg: dict,
             counter) -> list[tuple[dict, str | None]]:
    """Ingest one case, search each question, build its context: (record, answer prompt) per
    question, or (record with its error, None) when the system failed. The namespace is
    released afterwards, so a long run holds one case's memory at a time."""
    out = []
    try:
        ingested = system.ingest(case, namespace, cfg, identity["extra_wait_s"])
        ingest_error = None
    except InputError:
        raise  # bad config or a refused key: every case would fail the same way
    except Exception as e:  # a failing system is a result, not a crash
        ingested = {}
        ingest_error = backend_error(e)
    for q in todo:
        record = {**base_record(identity, system, case, q), **ingested, "error": ingest_error}
        if ingest_error is None:
            try:
                hits, search_ms = system.hits(case, q, namespace, cfg["top_k"])
            except InputError:
                raise
            except Exception as e:
                record["error"] = backend_error(e)
        if record["error"] is not None:
            out.append((record, None))
            continue
        ctx = build_context(hits, cfg["context_token_budget"], counter, system.newest_first)
        record.update(retrieved_ids=provenance(hits), context_ids=provenance(ctx.kept),
                      context_tokens=ctx.tokens, hits_returned=ctx.hits_returned,
                      hits_kept=ctx.hits_kept, hits_cut=ctx.hits_cut, search_ms=search_ms)
        prompt = cfg["answer_prompt"].format(asked_at=q["asked_at"], context=ctx.text, question=q["question"])
        out.append((record, prompt))
    system.release(namespace)
    return out


if __name__ == "__main__":
    sys.exit(run_cli(main))
