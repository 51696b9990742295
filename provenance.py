"""Provenance that must be earned: whether the turns a hit names could have produced it.

Recall is computed from the ids a system returns with each hit, never from the hit's text, so a
service that named every turn of its case beside one short hit would score recall 1.00. check.py's
provenance check holds each hit the answer model read to the turns it names, with the rules
here: at most a bound of them (checks.provenance_max_sources), each sharing a content word with
the hit. The record keeps the hits' texts (context_text) and their ids in rank order
(context_ids), not which hit named which id; hits the budget cut keep neither, and are held to
the bound only, in aggregate."""
from __future__ import annotations

import re
from collections.abc import Iterable

from context import hit_texts
from contract import session_items


# English function words: a hit and a turn that share only these share nothing. The bundled set,
# LoCoMo and LongMemEval are English; in another language every word counts as content, which
# makes the check more lenient there, never stricter.
FUNCTION_WORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being below between both
but by can could did didn do does doesn doing don down during each few for from further had has have having he
her here hers herself him himself his how i if in into is isn it its itself just me more most my myself no nor
not now of off on once only or other our ours ourselves out over own same she should so some such than that the
their theirs them themselves then there these they this those through to too under until up very was wasn we
were what when where which while who whom why will with won would you your yours yourself yourselves
d ll m re s t ve
""".split())


def words(text: str) -> set[str]:
    """A text's words: Unicode \\w+ runs, lowercased."""
    return set(re.findall(r"\w+", text.lower()))


def content_words(text: str) -> set[str]:
    """A turn's words less the function words; a turn of function words alone ("Are you?")
    keeps them all, so that it is still held to something."""
    found = words(text)
    return (found - FUNCTION_WORDS) or found


def case_sources(cases: Iterable[dict]) -> dict:
    """case_id -> turn id -> (the turn as stored, whitespace collapsed as a context line
    collapses it; its content words). The stored text is contract.session_items's, the words
    are the turn's own text's: the role a stored turn starts with is the harness's, not the
    turn's, and would be a word every hit shares."""
    out: dict = {}
    for case in cases:
        turns = {t["turn_id"]: t for s in case["sessions"] for t in s["turns"]}
        out[case["case_id"]] = {it.item_id: (" ".join(it.text.split()), content_words(turns[it.item_id]["text"]))
                                for s in case["sessions"] for it in session_items(s)}
    return out


def shares(hit: set, t: str, own: dict) -> bool:
    """The hit (its words) shares a content word with turn t of its case (`own`, case_sources's
    entry). A turn the case does not hold is the leakage check's, and a turn without a word (an
    emoji) cannot be held to it: neither counts against the hit."""
    return t not in own or not own[t][1] or bool(hit & own[t][1])


def can_split(hits: list[set], ids: list[str], own: dict, bound: int) -> bool:
    """Whether the ids, in rank order, can be split into one run per hit (hits in rank order,
    each run 1 to `bound` ids) where each hit shares a word with every turn of its run. The
    record keeps the hits' texts and their ids in order (context_text, context_ids), not which
    hit named which id; when each hit names one turn, or one hit names them all, one split
    exists and this is exact, and otherwise a record fails only when no split could pass."""
    reach = {0}  # how many ids the hits so far can have named
    for hit in hits:
        after = set()
        for start in reach:
            for end in range(start + 1, min(start + bound, len(ids)) + 1):
                if not shares(hit, ids[end - 1], own):
                    break
                after.add(end)
        reach = after
    return len(ids) in reach


def hold_record(path: str, lineno: int, r: dict, own: dict, bound: int) -> dict:
    """One record's hits held to the turns they name: how many hits were read, how many are the
    stored text of their one turn, how many the budget cut, and the finding (None when the hits
    earn their ids). `own`: case_sources's entry for the record's case."""
    ids = r["context_ids"]
    where = {"file": path, "line": lineno, "qid": r["qid"], "repeat": r["repeat"], "ids_named": len(r["retrieved_ids"])}
    texts = hit_texts(r["context_text"]) if r["context_text"] is not None else None
    held = {"hits_read": 0, "verbatim": 0, "unread": 0, "finding": None}
    if texts is None or len(texts) > len(ids) or (ids and not texts):
        # run.py writes one render_line per hit, each hit with an id; a timestamp holding a line
        # break would hide the hits from this check, so it is a finding, not a skip.
        why = "its context cannot be read back as one `[rank] (time) text` line per hit with an id each"
        held["finding"] = {"text": f"{path}:{lineno}: {r['qid']} (repeat {r['repeat']}): {why}", **where,
                           "hits_read": None, "reasons": [why]}
        return held
    hit_words = [words(h) for h in texts]
    held["hits_read"] = len(texts)
    if len(texts) == len(ids):  # one turn per hit: is each hit that turn as stored?
        held["verbatim"] = sum(t in own and own[t][0] == h for h, t in zip(texts, ids))
    # A record that does not count its cut hits (hits_cut null) is held as if none were cut.
    cut, cut_ids = r["hits_cut"] or 0, len(r["retrieved_ids"]) - len(ids)
    held["unread"] = cut
    reasons = []
    if not can_split(hit_words, ids, own, bound):
        least = -(-len(ids) // len(texts))  # the most turns per hit, at the least, over any split
        unshared = [t for t in ids if not any(shares(h, t, own) for h in hit_words)]
        reasons.append(f"{len(texts)} hit(s) read name {len(ids)} turn(s)"
                       + (f", at least {least} per hit (bound {bound})" if least > bound else "")
                       + (f"; {len(unshared)} share no word with any hit: {', '.join(unshared[:5])}" if unshared
                          else "" if least > bound else
                          "; no split of them, in rank order, gives each hit turns it shares a word with"))
    if cut_ids > cut * bound:
        reasons.append(f"{cut} hit(s) cut by the budget name {cut_ids} turn(s), more than {bound} per hit")
    if reasons:
        held["finding"] = {"text": f"{path}:{lineno}: {r['qid']} (repeat {r['repeat']}): " + "; ".join(reasons),
                           **where, "hits_read": len(texts), "reasons": reasons}
    return held


def tally(path: str, rows: list[tuple[int, dict]], cases: dict, bound: int) -> tuple[dict, list[dict]]:
    """A run file's records held (hold_record): its numbers and its findings. `provenance` in the
    numbers: `verified` when every hit read is the stored text of the one turn it names,
    `plausible` when the hits pass but are not all stored turns (the ids are the system's own
    claim, tested for plausibility only), `unearned` on a finding, None when no hit was read."""
    bad, checked, untraced, hits_read, verbatim, unread = [], 0, 0, 0, 0, 0
    for lineno, r in rows:
        if r["context_ids"] is None:  # no provenance, or the question failed
            untraced += 1
            continue
        checked += 1
        held = hold_record(path, lineno, r, cases[r["case_id"]], bound)
        hits_read, verbatim, unread = hits_read + held["hits_read"], verbatim + held["verbatim"], unread + held["unread"]
        if held["finding"] is not None:
            bad.append(held["finding"])
    numbers = {"file": path, "max_sources": bound, "records_checked": checked, "records_unearned": len(bad),
               "hits_read": hits_read, "hits_verbatim": verbatim, "hits_cut_unread": unread,
               "no_provenance": untraced, "internal_model": rows[0][1]["internal_model"],
               "provenance": "unearned" if bad else None if not hits_read else
               "verified" if verbatim == hits_read else "plausible"}
    return numbers, bad
