"""The contract every system under test is held to: the records a backend stores and returns
(MemoryItem, Hit), the protocol it implements (MemoryBackend), the question types and which of
them are answerable, and how a case's turns become the items a system is given."""
from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Protocol

from fileio import sha256_text

# The question types the contract knows. The first six are those of the bundled data's engineering
# assistant; open_domain and adversarial from LoCoMo, assistant_recall from LongMemEval's
# single-session-assistant questions.
QUESTION_TYPES = (
    "single_hop", "multi_hop", "temporal", "knowledge_update", "abstention",
    "preference", "open_domain", "adversarial", "assistant_recall",
)

# Types whose gold says the asked fact is not in the history.
UNANSWERABLE_TYPES = ("abstention", "adversarial")

# The controls run.py computes itself; they validate the harness and are not memory systems.
CONTROL_NAMES = ("none", "oracle", "full_context")


# ---------------------------------------------------------------------------------------------
# Records and the backend protocol: add and search, the one interface every system is tested by
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class MemoryItem:
    """One stored turn: a stable id, its text and metadata (session_id, timestamp, role)."""
    item_id: str
    text: str
    metadata: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Hit:
    """One search result. source_ids is provenance: the MemoryItem ids that produced it.
    An empty tuple means the backend cannot say, and retrieval recall becomes null."""
    text: str
    score: float
    source_ids: tuple = ()
    timestamp: str = ""


class MemoryBackend(Protocol):
    """What every system under test implements. Optional attributes a backend may set:
    internal_model (an LLM it calls itself, disclosed beside its name in every report) and
    flush_note (set when readiness is assumed, e.g. after a fixed delay, not verified)."""
    name: str
    version: str

    def reset(self, namespace: str) -> None: ...
    def add(self, namespace: str, items: list[MemoryItem]) -> None: ...
    def flush(self, namespace: str, timeout_s: float) -> None: ...
    def search(self, namespace: str, query: str, k: int) -> list[Hit]: ...


def kind_of(question: dict) -> str:
    """A question's kind: meta.kind when the dataset names one (a finer grouping than the type),
    else its type."""
    return (question.get("meta") or {}).get("kind") or question["type"]  # both are optional annotations


def is_answerable(question: dict) -> bool:
    """Whether the gold is a fact stated in the history: not an abstention question, not a
    LoCoMo adversarial one, and not flagged unanswerable by an importer (meta.abstention)."""
    meta = question.get("meta") or {}  # meta is optional in the contract
    return question["type"] not in UNANSWERABLE_TYPES and not meta.get("abstention")


def no_evidence_reason(question: dict) -> str | None:
    """Why an answerable question names no evidence turn (meta.no_evidence, a sentence an
    importer writes when its source lists none), or None. Such a question is graded for
    accuracy; its recall is not defined."""
    meta = question.get("meta") or {}  # meta is optional in the contract
    reason = meta.get("no_evidence")  # optional: only importers of such sources write it
    return reason if isinstance(reason, str) and reason.strip() else None


def session_items(session: dict) -> list[MemoryItem]:
    """The items one session adds: each turn as 'role: text', with its session and time."""
    return [
        MemoryItem(item_id=t["turn_id"], text=f'{t["role"]}: {t["text"]}',
                   metadata={"session_id": session["session_id"],
                             "timestamp": session["timestamp"], "role": t["role"]})
        for t in session["turns"]
    ]


def items_sha256(items: list[MemoryItem]) -> str:
    """sha256 of exactly what a system was given to store, in order: ids, texts and metadata.
    Equal to the hash of the case's own turns (session_items) when nothing else leaked in."""
    return sha256_text("\n".join(json.dumps([it.item_id, it.text, it.metadata], sort_keys=True, ensure_ascii=False)
                                 for it in items))


def keyword_ranks(hits: list[Hit], question: dict) -> list[int] | None:
    """Ranks (1-based) of the hits that contain any expected keyword of the question
    (meta.keywords), or None when the question has no keywords. As Mneme's eval harness counts
    its recall@k: a hit counts when it contains AN expected keyword. A keyword matches on word
    boundaries, after NFKC, case folding and collapsed whitespace on both sides: "go" is not in
    "going", "pike-6" is not in "pike-61", and "Monday, November 17" matches as one phrase. A
    keyword followed by punctuation still matches ("flint-9's", ":8298/healthz"), so "3.7" is
    found in "3.7.1": the boundary is a letter or digit, not the grader's stricter reading.
    Keyword recall needs no provenance, so it is measurable for every system, including one
    that rewrites turns into facts or summaries."""
    keywords = [k for k in (question.get("meta") or {}).get("keywords") or [] if k.strip()]  # optional
    if not keywords:
        return None
    patterns = [re.compile(rf"(?<!\w){re.escape(_keyword_text(k))}(?!\w)") for k in keywords]
    return [rank for rank, h in enumerate(hits, 1) if any(p.search(_keyword_text(h.text)) for p in patterns)]


def _keyword_text(text: str) -> str:
    """The form keywords and hits are compared in: NFKC, case-folded, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())
