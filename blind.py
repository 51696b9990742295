"""The artifact audit's shared parts: query-blind retrieval beside real systems, the surface-cue
reader, the audit's numbers and verdict, and the one reader of its file (artifacts.json).

A benchmark generator leaves tells: evidence turns that open with a stock phrase, a fact followed
by an acknowledgement, a sentence shape found only where the evidence is. A system that never
reads the question can then find evidence, and the benchmark measures the generator, not memory.
The audit runs three query-blind systems beside the real ones:

- `newest` (backends/newest.py): the k newest turns;
- `random` (backends/random.py): k turns drawn with a seed fixed per case and question;
- `cues`: a logistic regression over surface features of a turn alone (length, digits,
  punctuation, first and last words, role, position, the turns around it), learned on the
  evidence labels of half the cases (split by a hash of the case's cluster) and used to rank the
  other half's turns, with no question. Each half is ranked by the model of the other half
  (two-fold cross-fitting), so every case is ranked by a model that never saw it; the learning
  lives here and not in a backend because it needs the gold evidence, which no backend is given.

Its recall and paired intervals are metrics.py's (retrieval_values, retrieval_differences).
"""
from __future__ import annotations

import hashlib
import re
import zlib
from collections import defaultdict
from typing import NamedTuple

import numpy as np

from backends import load_backend
from cli import InputError
from contract import kind_of, session_items
from fileio import read_json
from formats import BUDGET_FIELD, check_format
from metrics import retrieval_differences, retrieval_values
from stats import RESAMPLES, SEED, mean
from wording import interval_text, rate

ARTIFACTS_FORMAT = "artifacts/1"
BLIND_BACKENDS = ("newest", "random")
CUES = "cues"
BLIND_SYSTEMS = BLIND_BACKENDS + (CUES,)
# The stated limit: a query-blind system above this share of questions with some evidence turn
# among its k retrieved fails the audit, on any kind, even when the baseline is higher still.
DEFAULT_LIMIT = 0.15
OVERALL = "all"  # the kind key of the figures over every question
# The cue reader's hashed features: enough buckets that distinct openers rarely share one.
HASH_BUCKETS = 4096
# Plain gradient descent on the standardized features: full batch, fixed steps, L2, so that the
# model is the same on every machine; the positives are weighted to the negatives' total, since
# evidence is a few percent of the turns.
STEPS, LEARNING_RATE, L2 = 300, 0.5, 1e-3
DENSE_FEATURES = 21  # the dense shape features turn_features writes first
_WORD = re.compile(r"[A-Za-z']+")
_DIGIT = re.compile(r"[0-9]")


# ---------------------------------------------------------------------------------------------
# The two halves of the cue reader
# ---------------------------------------------------------------------------------------------

def cluster_of(case: dict) -> str:
    """The case's cluster (its id unless the dataset groups cases)."""
    return case.get("cluster", case["case_id"])  # optional in the contract


def half_of(case: dict) -> int:
    """Which half (0 or 1) a case belongs to for the cue reader: a stable hash of its cluster, so
    cases cut from one conversation never sit on both sides."""
    return int(hashlib.sha256(cluster_of(case).encode("utf-8")).hexdigest()[:16], 16) % 2


# ---------------------------------------------------------------------------------------------
# Records: what metrics.py reads of a run record, for one search of one question
# ---------------------------------------------------------------------------------------------

def search_record(system: str, case: dict, question: dict, ranked_ids: list[str], k: int) -> dict:
    """A question's retrieval as the fields metrics.py's recall and paired intervals read (a run
    record's names): the turns ranked first, at most k, are both what was retrieved and what the
    audit counts as the context (no budget is applied: the audit measures at k)."""
    top = list(ranked_ids[:k])
    return {"backend": system, "qid": question["qid"], "case_id": case["case_id"], "cluster": cluster_of(case),
            "kind": kind_of(question), "type": question["type"], BUDGET_FIELD: 0, "repeat": 0, "top_k": k,
            "evidence": question["evidence"], "meta": question.get("meta") or {},  # meta is optional
            "retrieved_ids": top, "context_ids": top}


def backend_records(name: str, config: dict, cases: list[dict], k: int) -> list[dict]:
    """Run a backend as run.py does (reset, one add per session in order, flush, one search per
    question with its raw text), without a model, and keep each question's ranked turn ids."""
    backend = load_backend(name, config)
    out = []
    for case in cases:
        namespace = f"artifacts-{name}-{case['case_id']}"
        backend.reset(namespace)
        for session in case["sessions"]:
            backend.add(namespace, session_items(session))
        backend.flush(namespace, config["flush_timeout_s"])
        for q in case["questions"]:
            hits = backend.search(namespace, q["question"], k)
            if any(not h.source_ids for h in hits):
                raise InputError(f"backend {name!r} returned hits without source ids: the audit needs provenance")
            out.append(search_record(name, case, q, [sid for h in hits for sid in h.source_ids], k))
        backend.reset(namespace)
    return out


# ---------------------------------------------------------------------------------------------
# The surface-cue reader
# ---------------------------------------------------------------------------------------------

def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def _bucket(name: str) -> int:
    return zlib.crc32(name.encode("utf-8")) % HASH_BUCKETS


class TurnFeatures(NamedTuple):
    """The surface features of a case's turns, in history order: dense shape features (one row per
    turn) and hashed names as (turn, bucket) pairs, 1 where present."""
    ids: list
    dense: np.ndarray   # turns x DENSE_FEATURES
    rows: np.ndarray    # the turn of each hashed feature
    buckets: np.ndarray  # its bucket


def turn_features(case: dict) -> TurnFeatures:
    """Each turn's surface features, read from the turn and its neighbours only (never a
    question): its length, digits, capitals and punctuation, its place in its session and in the
    history, its neighbours' lengths; hashed, its role and first and last words and its
    neighbours' roles and first words (an acknowledgement after a fact shows there)."""
    turns = [(si, j, len(s["turns"]), t) for si, s in enumerate(case["sessions"]) for j, t in enumerate(s["turns"])]
    n, sessions = len(turns), len(case["sessions"])
    dense = np.zeros((n, DENSE_FEATURES), dtype=np.float64)
    rows, buckets = [], []
    for i, (si, j, size, t) in enumerate(turns):
        text, words = t["text"], _words(t["text"])
        digits = len(_DIGIT.findall(text))
        capitals = sum(1 for w in text.split()[1:] if w[:1].isupper())
        prev_t = turns[i - 1][3] if i > 0 else None
        next_t = turns[i + 1][3] if i + 1 < n else None
        end = text.rstrip()[-1:]
        dense[i] = [
            np.log1p(len(text)), np.log1p(len(words)), float(digits > 0), np.log1p(digits), np.log1p(capitals),
            text.count("?"), text.count("!"), text.count(","), text.count(":"), text.count("("), text.count('"'),
            float(end == "."), float(end == "?"), float(end == "!"),
            j / max(size - 1, 1), float(j == 0), float(j == size - 1), si / max(sessions - 1, 1), i / max(n - 1, 1),
            np.log1p(len(prev_t["text"])) if prev_t else 0.0, np.log1p(len(next_t["text"])) if next_t else 0.0,
        ]
        names = [f"role:{t['role']}"]
        names += [f"first:{words[0]}", f"first2:{' '.join(words[:2])}", f"last:{words[-1]}"] if words else ["empty"]
        for side, other in (("prev", prev_t), ("next", next_t)):
            if other is not None:
                ow = _words(other["text"])
                names += [f"{side}_role:{other['role']}", f"{side}_first:{ow[0] if ow else ''}",
                          f"{side}_first2:{' '.join(ow[:2])}"]
        for b in sorted({_bucket(name) for name in names}):
            rows.append(i)
            buckets.append(b)
    return TurnFeatures([t["turn_id"] for _, _, _, t in turns], dense, np.array(rows, dtype=np.int64),
                        np.array(buckets, dtype=np.int64))


def evidence_labels(case: dict, ids: list[str]) -> np.ndarray:
    """1 for a turn that is evidence of some question of the case, else 0."""
    evidence = {e for q in case["questions"] for e in q["evidence"]}
    return np.array([float(i in evidence) for i in ids], dtype=np.float64)


class CueReader:
    """Logistic regression on turn_features, learned on some cases' evidence labels. The dense
    features are standardized on the training turns; a hashed one is scaled by its spread there,
    and a name never seen in training weighs nothing. The hashed part is computed with bincount over the (turn,
    bucket) pairs, not as a dense matrix: no BLAS threads, which on a shared machine cost more
    than the sums."""

    def __init__(self, cases: list[dict]) -> None:
        self.trained_on = sorted(c["case_id"] for c in cases)
        feats = [turn_features(c) for c in cases]
        offsets = np.cumsum([0] + [len(f.ids) for f in feats])
        dense = np.vstack([f.dense for f in feats])
        rows = np.concatenate([f.rows + o for f, o in zip(feats, offsets)])
        buckets = np.concatenate([f.buckets for f in feats])
        y = np.concatenate([evidence_labels(c, f.ids) for c, f in zip(cases, feats)])
        n = len(y)
        self.positives, self.turns = int(y.sum()), n
        self.centre, self.scale = dense.mean(axis=0), dense.std(axis=0) + 1e-9
        z = (dense - self.centre) / self.scale
        # A hashed feature is 1 / its standard deviation where present (scaled as the dense ones are,
        # so gradient descent moves every weight at a comparable rate), 0 where absent or never seen.
        share = np.bincount(buckets, minlength=HASH_BUCKETS) / n
        self.hashed_value = np.where(share > 0, 1.0 / np.sqrt(share * (1 - share) + 1e-9), 0.0)
        weights = np.where(y > 0, (n - y.sum()) / max(y.sum(), 1.0), 1.0)
        weights /= weights.sum()
        self.w_dense, self.w_hashed, self.b = np.zeros(DENSE_FEATURES), np.zeros(HASH_BUCKETS), 0.0
        for _ in range(STEPS):
            logit = self._scores(z, rows, buckets, n) + self.b
            g = weights * (0.5 * (1.0 + np.tanh(logit / 2)) - y)  # the logistic function, without exp's overflow
            self.w_dense -= LEARNING_RATE * ((z * g[:, None]).sum(axis=0) + L2 * self.w_dense)
            self.w_hashed -= LEARNING_RATE * (np.bincount(buckets, weights=g[rows] * self.hashed_value[buckets],
                                                          minlength=HASH_BUCKETS) + L2 * self.w_hashed)
            self.b -= LEARNING_RATE * g.sum()

    def _scores(self, z: np.ndarray, rows: np.ndarray, buckets: np.ndarray, n: int) -> np.ndarray:
        """The linear score of n turns (without the bias) from their standardized dense features
        and their hashed (turn, bucket) pairs."""
        hashed = self.w_hashed[buckets] * self.hashed_value[buckets]
        return (z * self.w_dense).sum(axis=1) + np.bincount(rows, weights=hashed, minlength=n)

    def rank(self, case: dict) -> list[str]:
        """The case's turn ids, the most evidence-like first (ties: the newer turn first)."""
        f = turn_features(case)
        scores = self._scores((f.dense - self.centre) / self.scale, f.rows, f.buckets, len(f.ids))
        order = sorted(range(len(f.ids)), key=lambda i: (-float(scores[i]), -i))
        return [f.ids[i] for i in order]


def cue_records(cases: list[dict], k: int) -> tuple[list[dict], dict]:
    """The cue reader's records, each case ranked by the model learned on the other half, and what
    each model learned on. A half whose other half has no evidence to learn from is not ranked
    (its questions are left out, said in the returned summary)."""
    halves = {0: [c for c in cases if half_of(c) == 0], 1: [c for c in cases if half_of(c) == 1]}
    out, folds = [], []
    for scored in (0, 1):
        train = halves[1 - scored]
        fold = {"scored_half": scored, "trained_on": sorted(c["case_id"] for c in train),
                "scored": sorted(c["case_id"] for c in halves[scored]), "note": None}
        if not halves[scored]:
            fold["note"] = "no case in this half"
        elif not any(q["evidence"] for c in train for q in c["questions"]):
            fold["note"] = "the other half has no evidence turn to learn from: this half is not ranked"
            fold["scored"] = []
        else:
            reader = CueReader(train)
            for case in halves[scored]:
                ranking = reader.rank(case)
                out += [search_record(CUES, case, q, ranking, k) for q in case["questions"]]
        folds.append(fold)
    return out, {"folds": folds, "dense_features": DENSE_FEATURES, "hash_buckets": HASH_BUCKETS, "steps": STEPS,
                 "learning_rate": LEARNING_RATE, "l2": L2}


# ---------------------------------------------------------------------------------------------
# The audit's numbers and verdict
# ---------------------------------------------------------------------------------------------

def recall_table(records: list[dict], kinds: list[str]) -> dict:
    """recall_any@k per system and kind (and OVERALL), on the questions it can be measured on (gold
    evidence), with how many: metrics.retrieval_values' figure, averaged."""
    by: dict = defaultdict(lambda: defaultdict(list))
    for r in records:
        v = retrieval_values(r)
        if v is not None:
            by[r["backend"]][r["kind"]].append(v["recall_any_at_k"])
            by[r["backend"]][OVERALL].append(v["recall_any_at_k"])
    return {s: {kind: {"recall_any_at_k": mean(by[s][kind]), "n": len(by[s][kind])} for kind in kinds + [OVERALL]}
            for s in sorted(by)}


def differences_table(records: list[dict], baseline: str, kinds: list[str], resamples: int = RESAMPLES,
                      seed: int = SEED) -> dict:
    """Each system minus the baseline in recall_any@k, per kind and OVERALL, with the 95% paired
    cluster-bootstrap interval: metrics.retrieval_differences on the kind's questions."""
    out: dict = defaultdict(dict)
    for kind in kinds + [OVERALL]:
        subset = [r for r in records if kind == OVERALL or r["kind"] == kind]
        for d in retrieval_differences(subset, baseline, resamples, seed):
            if d["metric"] == "recall_any_at_k":
                out[d["system"]][kind] = {key: d[key] for key in ("difference", "ci_low", "ci_high", "questions",
                                                                  "clusters", "separated", "note")}
    return dict(out)


def blind_failures(recall: dict, differences: dict, blind: list[str], limit: float) -> list[str]:
    """Why the audit fails, one line per query-blind system and kind: its recall above the limit,
    or its interval against the baseline not below 0 (within the noise of the baseline, or above
    it; with no interval, as with one cluster, nothing excludes that). Empty: PASS."""
    reasons = []
    for s in blind:
        for kind, r in recall.get(s, {}).items():
            if r["recall_any_at_k"] is None:
                continue
            if r["recall_any_at_k"] > limit:
                reasons.append(f"{s} on {kind}: recall_any@k {r['recall_any_at_k']:.3f} is above the limit {limit:g}")
            d = differences.get(s, {}).get(kind)
            if d is None or d["difference"] is None:
                continue
            if d["ci_high"] is None:
                reasons.append(f"{s} on {kind}: no interval against the baseline ({d['note'] or 'one cluster'}), so "
                               f"nothing excludes that it does as well")
            elif d["ci_high"] >= 0:
                reasons.append(f"{s} on {kind}: {d['difference']:+.3f} [{d['ci_low']:+.3f}, {d['ci_high']:+.3f}] "
                               f"against the baseline, within its noise or above it")
    return reasons


def table(audit: dict) -> tuple[list[str], list[list[str]]]:
    """The audit as a table, one row per kind and one for all questions: the questions measured,
    the baseline's recall_any@k, then each other system's with its difference to the baseline and
    interval. artifacts.py prints it and the model-free report shows it."""
    others = [s for s in audit["systems"] if s != audit["baseline"]] + list(audit["blind_systems"])
    header = ["kind", "questions", f"{audit['baseline']} (baseline)"] + others
    rows = []
    for kind in audit["kinds"] + [OVERALL]:
        base = audit["recall"][audit["baseline"]][kind]
        row = [kind, str(base["n"]), rate(base["recall_any_at_k"])]
        for s in others:
            r = audit["recall"].get(s, {}).get(kind)
            d = audit["differences"].get(s, {}).get(kind)
            if r is None or r["recall_any_at_k"] is None:
                row.append("n/a")
            else:
                row.append(rate(r["recall_any_at_k"]) + (f" ({interval_text(d)})" if d else ""))
        rows.append(row)
    return header, rows


def summary(audit: dict) -> str:
    """What the verdict (audit["verdict"], said before this text) held the systems to, and for a
    FAIL how many reasons and the first."""
    held = (f"every query-blind system ({', '.join(audit['blind_systems'])}) at most {audit['limit']:g} "
            f"recall_any@{audit['k']} on every kind, and below the baseline {audit['baseline']} by a paired interval "
            f"that excludes 0")
    if audit["verdict"] == "PASS":
        return f"{held}."
    return f"the audit holds {held}; {len(audit['reasons'])} reason(s), the first: {audit['reasons'][0]}."


def side_by_side(audits: list[tuple[str, dict]]) -> tuple[list[str], list[list[str]]]:
    """Several audits (each with a column title) side by side: one row per kind and system (the
    baseline first, then the query-blind systems), each cell that dataset's recall_any@k with the
    difference to its baseline and interval, "–" where the dataset has no such kind; the questions
    measured and the verdict last."""
    kinds = sorted({kind for _, a in audits for kind in a["kinds"]}) + [OVERALL]
    header = ["kind", "system"] + [title for title, _ in audits]
    rows = [["questions", ""] + [str(a["recall"][a["baseline"]][OVERALL]["n"]) for _, a in audits]]
    for kind in kinds:
        for role in ("baseline",) + BLIND_SYSTEMS:
            row = [kind, role if role != "baseline" else "baseline (" + ", ".join(sorted({a["baseline"] for _, a in
                                                                                          audits})) + ")"]
            for _, a in audits:
                system = a["baseline"] if role == "baseline" else role
                r = a["recall"].get(system, {}).get(kind)
                d = a["differences"].get(system, {}).get(kind) if role != "baseline" else None
                if r is None or r["recall_any_at_k"] is None:
                    row.append("–" if kind not in a["kinds"] + [OVERALL] else "n/a")
                else:
                    row.append(rate(r["recall_any_at_k"]) + (f" ({interval_text(d)})" if d else ""))
            rows.append(row)
    rows.append(["verdict", ""] + [a["verdict"] for _, a in audits])
    return header, rows


def read_artifacts(path: str) -> dict:
    """artifacts.json as artifacts.py wrote it, refused when it is another format."""
    obj = read_json(path, "artifact audit of artifacts.py", ("format",))
    check_format(obj, ARTIFACTS_FORMAT, path, "rerun artifacts.py")
    return obj
