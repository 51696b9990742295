"""Version 4 of the bundled dataset: version 3's cases, shaped like real chat where retrieval feels it.

Version 3 ranks the shipped retrievers unlike real conversations (LoCoMo), because its turns are
all about as long and every service is named in about as many turns of each length. In real
chat the turn that holds an answer is long and says several things (LoCoMo's evidence turns have
37 words on average, its other turns 23), while the entity a question names comes up again and
again in short turns that say nothing about it ("what about Caroline's painting?"). So version 4
builds version 3's world, structures and questions with data/cases_v3.py unchanged, and adds:

- every statement of version 3 (facts, the facts nobody asks about, small talk) carries more of
  what people add after their point (LONG_ASIDES extra sentences, drawn alike for every one of
  them), so a fact turn is long because statements are long, not because it is evidence;
- short turns that only mention a service or a person (phrases_v4.MENTIONS), as many as
  MENTION_SHARE of the statements, in random sessions: the words a question shares with its
  answer's turn (the name, "who", "which", "the") come up in many turns that answer nothing.

A raw overlap count (keyword) still finds the long turn that shares most words; a length-normalized
cosine over the same words (hash, and a static embedding's mean, dense_wordllama) prefers the
short mention, as on real chat. Nothing marks evidence: the added sentences are drawn with the
same odds for every statement, and mentions name services at random, asked about or not.

Usage: through make_cases.py (`python data/make_cases.py --version 4`, `--check`).
"""
from __future__ import annotations

import random

import cases_v3
import phrases_v4 as P

FILES = {"test": "cases-v4.jsonl", "dev": "dev-v4.jsonl"}
GENERATOR = "data/make_cases.py --version 4"
TEST_CASES, DEV_CASES = cases_v3.TEST_CASES, cases_v3.DEV_CASES
PREFIXES = ("mf", "mfdev")  # case ids: version 3's are md001 and mdev001
LONG_ASIDES = (0, 0, 1, 2, 3, 4)  # extra sentences after a statement, on top of version 3's
MENTION_SHARE = 0.7  # short mentions per statement


class Case4(cases_v3.Case3):
    """A version 3 case with longer statements and short mentions among them."""

    generator = GENERATOR
    aside_counts = LONG_ASIDES  # later versions set their own odds, bank and share here
    asides = P.LONG_ASIDES
    mention_share = MENTION_SHARE

    def __init__(self, rng: random.Random, case_id: str, pools: dict) -> None:
        super().__init__(rng, case_id, pools)
        self.short = False  # while True, say() adds turns as they are written (mentions)

    def dress(self, text: str) -> str:
        """A statement dressed as in version 3, then LONG_ASIDES more sentences; a mention with an opener."""
        r = self.rng
        if self.short:  # an opener with version 3's odds, so that openers do not mark statements
            return cases_v3.cap(r.choice(cases_v3.P.OPENERS) + text, set(self.services))
        out = super().dress(text)
        for _ in range(r.choice(self.aside_counts)):
            out += " " + r.choice(self.asides).format(p=r.choice(self.people), n=r.randint(3, 40))
        return out

    def chatter(self) -> None:
        """Version 3's small talk, then short mentions of random services and people."""
        super().chatter()
        r = self.rng
        statements = sum(len(u.texts) for u in self.units)
        self.short = True
        for _ in range(int(statements * self.mention_share)):
            self.say(self.anywhere(), r.choice(P.MENTIONS).format(svc=r.choice(self.services),
                                                                  p=r.choice(self.people).split()[0]))
        self.short = False

    def ask(self, text: str) -> str:
        """A question as written, as real chat's questions are (LoCoMo's open with their question
        word): a lead ("remind me,") adds words that every long statement shares."""
        return cases_v3.cap(text, set(self.services))


def make_split_v4(n_cases: int, seed: int, dev: bool) -> list[dict]:
    """Generate one version 4 split; version 3's checks and guess-rate limits hold on it."""
    return cases_v3.make_split_v3(n_cases, seed, dev, factory=Case4, prefixes=PREFIXES)
