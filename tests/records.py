"""Builders of run records, verdicts and the dataset they belong to, for hand-computed fixtures:
every field run.py and judge.py write, so the stages read them as they read real files."""
from __future__ import annotations

import json

from contract import is_answerable
from fileio import dumps, sha256_file
from formats import RUN_FORMAT, VERDICT_FORMAT, verdict_identity
from rules import RULES_SHA256

CONTRACT = {"dataset_sha256": "d" * 64, "answer_model": "m", "prompt_sha256": "p" * 64, "top_k": 10,
            "tokenizer": "approx", "answer_max_tokens": 64,
            "answer_sampling": {"max_tokens_param": "max_tokens", "temperature": 0.0, "send_seed": True}, "seed": 7,
            "retrieval_only": False, "limit": None, "sample": None,
            "context_token_budget": 1200}
RULES_ONLY = {"rules_sha256": RULES_SHA256, "judge_model": None, "judge_prompt_sha256": None}


def context_text(case: str, retrieved: list | None) -> str | None:
    """The context run.py would have sent for these turns of write_dataset's case."""
    if retrieved is None:
        return None
    return "\n".join(f"[{i}] (2026-05-01T10:00:00Z) user: turn {t} of {case}" for i, t in enumerate(retrieved, 1)) \
        or "(no memories)"


def run_record(backend: str, qid: str, case: str, answer: str | None, evidence: list, retrieved: list | None,
               **fields) -> dict:
    """A run record as run.py writes it; `fields` override any field."""
    rec = {"format": RUN_FORMAT, "run_id": "r", "backend": backend, "backend_id": backend, "backend_version": "v",
           "backend_code_sha256": "c" * 64, "repeat": 0, "time_aware": False, "extra_wait_s": 0.0, "shard": None,
           **CONTRACT,
           "internal_model": None, "flush_note": None, "deterministic": False, "case_id": case, "cluster": case,
           "qid": qid, "type": "single_hop", "question": f"question {qid}", "asked_at": "2026-06-01",
           "gold_answer": "g", "evidence": evidence, "meta": {}, "retrieved_ids": retrieved, "context_ids": retrieved,
           "context_text": context_text(case, retrieved),
           "context_tokens": 10, "keyword_ranks": None, "hits_returned": None, "hits_kept": None, "hits_cut": None,
           "k_limited": False, "answer": answer, "served_model": "m-served", "usage": None, "finish_reason": "stop",
           "retries": 0, "ingest_s": 0.0, "flush_s": 0.0, "added_items": None, "added_sha256": None,
           "internal_usage": None, "search_ms": 1.0, "search_calls_in_flight": 0, "cached": False, "error": None}
    rec.update(fields)
    return rec


def verdict_for(rec: dict, verdict: str | None, by: str = "exact", grader: dict = RULES_ONLY) -> dict:
    """The verdict judge.py writes for this record."""
    return {"format": VERDICT_FORMAT, "run_id": rec["run_id"],
            "backend": rec["backend"], "backend_version": rec["backend_version"], "repeat": rec["repeat"],
            "context_token_budget": rec["context_token_budget"], "case_id": rec["case_id"], "qid": rec["qid"],
            "type": rec["type"], "question": rec["question"], "gold_answer": rec["gold_answer"],
            "answer": rec["answer"], **verdict_identity(rec, grader), "grader": "rules-only", "rubric": "default",
            "by": by, "verdict": verdict, "judge_reason": None, "rules_only_verdict": None, "judge_served_model": None,
            "response_format": None, "cached": False, "judge_error": None, "usage": None}


def write_jsonl(path, rows: list[dict]) -> str:
    """Write rows as JSON Lines; return the path as a string."""
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def write_dataset(path, records: list[dict]) -> str:
    """A valid dataset holding the cases and questions of these records, in the order they first
    appear: one session per case with every turn the records name; the sha256 of the file."""
    cases: dict = {}
    for r in records:
        case = cases.setdefault(r["case_id"], {"cluster": r["cluster"], "turns": {"t0": None}, "questions": {}})
        for t in list(r["evidence"]) + list(r["retrieved_ids"] or []) + list(r["context_ids"] or []):
            case["turns"][t] = None
        case["questions"].setdefault(r["qid"], r)
    lines = []
    for cid, c in cases.items():
        turns = [{"turn_id": t, "role": "user", "text": f"turn {t} of {cid}"} for t in c["turns"]]
        questions = [{"qid": q["qid"], "type": q["type"], "asked_at": q["asked_at"], "question": q["question"],
                      "gold_answer": q["gold_answer"], "meta": q["meta"],
                      "evidence": [] if q["type"] == "abstention" else q["evidence"] or
                      (["t0"] if is_answerable(q) else [])} for q in c["questions"].values()]
        lines.append({"case_id": cid, **({"cluster": c["cluster"]} if c["cluster"] != cid else {}),
                      "sessions": [{"session_id": "s1", "timestamp": "2026-05-01T10:00:00Z", "turns": turns}],
                      "questions": questions})
    path.write_text("".join(dumps(c) + "\n" for c in lines), encoding="utf-8")
    return sha256_file(str(path))


def write_comparison(tmp_path, systems: dict, correct=lambda r: r["answer"] == "yes", by: str = "exact",
                     **config) -> tuple[list[str], str, str]:
    """The dataset of these records, one run file per system (made from that dataset), one
    verdicts file grading each answer correct when correct(record), as judge.py would (a failed
    question's verdict is null, by run_error; a retrieval-only record has none), and a config
    naming the dataset (with `config` overrides); returns (run paths, verdicts path, config)."""
    sha = write_dataset(tmp_path / "cases.jsonl", [r for recs in systems.values() for r in recs])
    systems = {name: [{**r, "dataset_sha256": sha} for r in recs] for name, recs in systems.items()}
    runs = [write_jsonl(tmp_path / f"{name}.jsonl", recs) for name, recs in systems.items()]
    verdicts = [verdict_for(r, None, by="run_error") if r["answer"] is None else
                verdict_for(r, "correct" if correct(r) else "incorrect", by=by)
                for recs in systems.values() for r in recs if not r["retrieval_only"]]
    from conftest import write_config  # pytest's: bench/ scripts use the rest of this module without it
    cfg = write_config(tmp_path, dataset=str(tmp_path / "cases.jsonl"), **config)
    return runs, write_jsonl(tmp_path / "verdicts.jsonl", verdicts), cfg


def read_records(path) -> list[dict]:
    """The records of a JSONL file."""
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]
