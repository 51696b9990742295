"""Version 5 of the bundled dataset: version 4's cases, with every question's evidence fitting the
default context budget and coreference asked by what was said of the service.

Two things version 4 got wrong are fixed here; everything else is version 4's, drawn the same way:

- The oracle control is given exactly a question's evidence, cut to the same token budget as every
  system. Version 4's statements are long (as real chat's answer turns are), so three or four of
  them could outgrow the budget, and the oracle was then given part of its evidence: the control
  no longer bracketed anything. Here a question is asked only if all its evidence turns, as context
  lines, fit EVIDENCE_BUDGET tokens (the default context_token_budget, counted as the default
  `approx` counter counts). Only aggregation's three or four turns come near it; a case has many
  aggregation candidates, so one that fits is always there. Nothing about a turn changes: the
  pick only passes over candidates whose turns together run long.
- A coreference question names the service by what someone did to it ("the service Ama moved
  behind the new ingress"), never by its name. Asked by name, the words a question shares with
  its turns were the name alone, which the short mentions repeat in many turns that answer
  nothing, and the fact turn's "that one" shares none: a retriever found either turn no more often
  than a reader that never sees the question. By what was done, the question shares the act's
  words with the turn that names the service, and the answer turn is the one right after it,
  which is what coreference asks a memory to follow.

Usage: through make_cases.py (`python data/make_cases.py --version 5`, `--check`).
"""
from __future__ import annotations

import cases_v3
import cases_v4
from contract import Hit
from context import approx_tokens, render_line

FILES = {"test": "cases-v5.jsonl", "dev": "dev-v5.jsonl"}
GENERATOR = "data/make_cases.py --version 5"
TEST_CASES, DEV_CASES = cases_v3.TEST_CASES, cases_v3.DEV_CASES
PREFIXES = ("mg", "mgdev")  # case ids: version 4's are mf001 and mfdev001
EVIDENCE_BUDGET = 270  # tokens (approx): config.yaml's context_token_budget; a test holds them equal
LONGEST_ROLE = "assistant"  # a turn's role is set when the case is laid out; count the longer one
TIMESTAMP = "2000-01-01T00:00:00Z"  # as long as every session's timestamp


def evidence_tokens(texts: list) -> int:
    """What a question's evidence turns cost as context lines, as the oracle control is given them,
    or more: each turn's role is counted as the longer of the two, and its timestamp as long as any
    (both are set when the case is laid out, after the questions are picked)."""
    lines = [render_line(rank, Hit(text=f"{LONGEST_ROLE}: {t}", score=1.0, timestamp=TIMESTAMP))
             for rank, t in enumerate(texts, 1)]
    return approx_tokens("\n".join(lines))


class Case5(cases_v4.Case4):
    """A version 4 case whose questions' evidence fits the budget, and whose coreference
    questions name the service by what was done to it."""

    generator = GENERATOR

    def corefs(self) -> None:
        """A service named, then its value said of "that one" in the next turn; asked by the act."""
        r = self.rng
        P = cases_v3.P
        for first in r.sample([p.split()[0] for p in self.people], cases_v3.COUNTS["coref"]):
            attr = r.choice(tuple(P.COREF_SAY))
            svc, v = self.take(attr), self.value(attr)
            intro, verb = r.choice(P.COREF_INTRO)
            t1, t2 = self.say(self.anywhere(), intro.format(first=first, svc=svc),
                              r.choice(P.COREF_SAY[attr]).format(v=v))
            r.choice((svc, verb))  # version 4 drew the name or the act here: the draw is kept, so that
            # what follows is drawn as in version 4
            self.add("coreference", "multi_hop", P.COREF_ASK[attr].format(ref=f"the service {first} {verb}"), v,
                     [t1, t2], [t2], antecedent=svc)

    def pick(self) -> list:
        """One question of each kind, drawn from the candidates whose evidence fits the budget."""
        text = {tag: t for u in self.units for tag, t in zip(u.tags, u.texts)}
        fitting = {k: [q for q in self.cands[k] if evidence_tokens([text[t] for t in dict.fromkeys(q.evidence)])
                       <= EVIDENCE_BUDGET] for k in cases_v3.KINDS}
        short = [k for k, qs in fitting.items() if not qs]
        if short:
            raise RuntimeError(f"{self.case_id}: no candidate of {short} fits {EVIDENCE_BUDGET} tokens")
        return [self.rng.choice(fitting[k]) for k in cases_v3.KINDS]


def make_split_v5(n_cases: int, seed: int, dev: bool) -> list[dict]:
    """Generate one version 5 split; version 3's checks and guess-rate limits hold on it."""
    return cases_v3.make_split_v3(n_cases, seed, dev, factory=Case5, prefixes=PREFIXES)
