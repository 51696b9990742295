"""Builders of run records and verdicts for hand-computed fixtures: every field run.py and
judge.py write, so score.py reads them as it reads real files."""
from __future__ import annotations

import json

from grading import RULES_SHA256
from interface import verdict_identity

CONTRACT = {"dataset_sha256": "d" * 64, "answer_model": "m", "prompt_sha256": "p" * 64, "top_k": 10,
            "tokenizer": "approx", "answer_max_tokens": 64, "seed": 7, "retrieval_only": False, "limit": None,
            "context_token_budget": 1200}
RULES_ONLY = {"rules_sha256": RULES_SHA256, "judge_model": None, "judge_prompt_sha256": None}


def run_record(backend: str, qid: str, case: str, answer: str | None, evidence: list, retrieved: list | None,
               **fields) -> dict:
    """A run record as run.py writes it; `fields` override any field."""
    rec = {"run_id": "r", "backend": backend, "backend_id": backend, "backend_version": "v", "repeat": 0, "time_aware": False,
           "extra_wait_s": 0.0, "shard": None, **CONTRACT,
           "internal_model": None, "flush_note": None, "deterministic": False, "case_id": case, "cluster": case, "qid": qid,
           "type": "single_hop", "question": f"question {qid}", "asked_at": "2026-06-01", "gold_answer": "g",
           "evidence": evidence, "meta": {}, "retrieved_ids": retrieved, "context_ids": retrieved,
           "context_tokens": 10, "keyword_ranks": None, "hits_returned": None, "hits_kept": None, "hits_cut": None, "k_limited": False, "answer": answer,
           "served_model": "m-served", "usage": None, "finish_reason": "stop", "retries": 0,
           "ingest_s": 0.0, "flush_s": 0.0, "added_items": None, "added_sha256": None, "internal_usage": None,
           "search_ms": 1.0, "search_calls_in_flight": 0, "cached": False, "error": None}
    rec.update(fields)
    return rec


def verdict_for(rec: dict, verdict: str | None, by: str = "exact", grader: dict = RULES_ONLY) -> dict:
    """The verdict judge.py writes for this record."""
    return {"run_id": rec["run_id"], "backend": rec["backend"], "backend_version": rec["backend_version"],
            "repeat": rec["repeat"], "context_token_budget": rec["context_token_budget"], "case_id": rec["case_id"],
            "qid": rec["qid"], "type": rec["type"], "question": rec["question"], "gold_answer": rec["gold_answer"],
            "answer": rec["answer"], **verdict_identity(rec, grader), "grader": "rules-only", "rubric": "default",
            "by": by, "verdict": verdict, "rules_only_verdict": None, "judge_served_model": None, "response_format": None, "cached": False,
            "judge_error": None}


def write_jsonl(path, rows: list[dict]) -> str:
    """Write rows as JSON Lines; return the path as a string."""
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def write_comparison(tmp_path, systems: dict, correct=lambda r: r["answer"] == "yes") -> tuple[list[str], str]:
    """One run file per system and one verdicts file grading each record correct when
    correct(record); returns (run paths, verdicts path)."""
    runs = [write_jsonl(tmp_path / f"{name}.jsonl", recs) for name, recs in systems.items()]
    verdicts = [verdict_for(r, "correct" if correct(r) else "incorrect") for recs in systems.values() for r in recs]
    return runs, write_jsonl(tmp_path / "verdicts.jsonl", verdicts)
