"""Version 2 of the bundled dataset (data/cases-v2.jsonl, data/dev-v2.jsonl): the hard set. Long
histories of mostly unrelated work, and in every case one question of each of nine kinds that
make memory hard (paraphrase, coreference, split facts, aggregation, time, update chains,
near-duplicates, near misses, selective forgetting); see data/README.md. It builds on version
1's phrase banks and session writer; its own phrase banks are in phrases_v2.py. The output stays as it was, byte for byte.

Usage: through make_cases.py (`python data/make_cases.py --version 2`, `--check`).
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone

from cases_v1 import STOP, WORD, Chunk, Sessions, cap, say_date, say_days
from phrases_v1 import (ACKS, CLUSTER_ASK, CLUSTER_MOVE, CLUSTER_SAY, ECHO, EXPLAIN_ITEMS, FREEZE_ASK, FREEZE_SAY, IDK,
                        NOISE_QA, NOISE_STATEMENTS, OPENERS, OWNER_ASK, OWNER_HANDOVER, OWNER_SAY, PORT_ASK, PORT_SAY,
                        PREFS, PREF_CHANGE, PREF_TOPICS, RELEASE_ASK, RELEASE_BUMP, RELEASE_SAY, SESSION_OPENERS,
                        SHORT_REPLIES, STORE_ASK, STORE_SAY)
from phrases_v2 import (ALIAS_FUNCS, ALIAS_NOUNS, ALIAS_SAY, CITIES, COREF_ASK, COREF_INTRO, COREF_REPLY, COREF_SAY,
                        COREF_VERB, DURATION_ASK, DURATION_END, DURATION_START, NEAR_SUFFIXES, OFFSITE_ASK,
                        OFFSITE_RETRACT, OFFSITE_SAY, OWNER_RETRACT, OWNS_ASK, PAGE_ASK, PAGE_SAY, PARA_ASK, PARA_ECHO,
                        PARA_SAY, PORT_RETRACT, PRIVATE, PRIVATE_ASK, PRIVATE_RETRACT, PRIVATE_SAY, QUESTION_FRAMES,
                        ROLLOUTS, ROLLOUT_ASK, ROLLOUT_SAY, SPLIT_ENGINE_SAY, SPLIT_FREEZE_LEN, SPLIT_FREEZE_START,
                        SPLIT_LEAD_SAY, SPLIT_SQUAD_SAY, SPLIT_SUM_ASK, SPLIT_SUM_SAY, SPLIT_VERSION_SAY, SPRINT_SAY,
                        SQUADS, TIME_ASK, TIME_ASKED, TIME_ASK_FUTURE, TIME_DONE, TIME_FUTURE, TIME_PAST, TWIN_ASK,
                        TWIN_SAY, UNRELATED, UNRELATED_FILL, UNRELATED_QA)
from vocabulary import (CLUSTERS, FIRST, LAST, MONTHS, NUMBER_WORDS, REGIONS, SERVICES, STORES, V2_EXTRA_SERVICES,
                        WEEKDAYS, month_day, pool_split)

# ---------------------------------------------------------------------------------------------
# Version 2: the hard set. Long histories of mostly unrelated work, and nine kinds of
# question that make memory hard in real agent use. Each question says its kind in meta.kind and
# keeps the contract's six types, so every stage reads it unchanged.
# ---------------------------------------------------------------------------------------------

V2_KINDS = ("paraphrase", "coreference", "split", "aggregation", "time", "update_chain",
            "near_duplicate", "near_miss", "forgetting")
V2_FILES = {"test": "cases-v2.jsonl", "dev": "dev-v2.jsonl"}
V2_GENERATOR = "data/make_cases.py --version 2"
# One question of each kind per case: 42 test cases give 42 questions of each kind, 378 in all.
V2_TEST_CASES, V2_DEV_CASES = 42, 8
# Remarks that name a service a question is about without stating anything asked.
PASSING_MENTIONS = 4


def unframe(question: str) -> str:
    """The question inside its frame (QUESTION_FRAMES), as its kind wrote it."""
    for frame in QUESTION_FRAMES:
        pattern = re.escape(frame).replace(re.escape("{q}"), "(?P<q>.+)").replace(re.escape("{first}"), r"\w+")
        m = re.fullmatch(pattern, question)
        if m:
            return m.group("q")
    raise ValueError(f"no frame of QUESTION_FRAMES matches {question!r}")


@dataclass
class HardQuestion:
    """One version 2 question before turn ids are known (evidence and marks are chunk tags)."""
    kind: str
    qtype: str
    text: str
    gold: str
    evidence: list
    keywords: list
    superseded: list = field(default_factory=list)
    outdated: list = field(default_factory=list)
    meta: dict = field(default_factory=dict)
    echoes: list = field(default_factory=list)  # remarks on the same topic that state no value


def content_stems(text: str, drop: set) -> set:
    """Content words of a text, stemmed to five letters, without stop words and without the
    words of `drop` (an entity's own tokens)."""
    return {w[:5] for w in WORD.findall(text.lower()) if w not in STOP and w not in drop and not w.isdigit()}


def previous_weekday(d: date, weekday: int) -> date:
    """The latest date strictly before d that falls on weekday (0 = Monday)."""
    back = (d.weekday() - weekday - 1) % 7 + 1
    return d - timedelta(days=back)


def next_weekday(d: date, weekday: int) -> date:
    """The first date strictly after d that falls on weekday."""
    ahead = (weekday - d.weekday() - 1) % 7 + 1
    return d + timedelta(days=ahead)


class HardCase(Sessions):
    """One version 2 case: a long history of mostly unrelated work around a few facts that are
    hard to retrieve or to use, and one question of each kind asked after it."""

    def __init__(self, rng: random.Random, case_id: str, pools: dict, kinds: list[str]) -> None:
        r = rng
        self.rng, self.case_id, self.kinds = rng, case_id, kinds
        n_sessions = r.randint(14, 20)
        self.services = r.sample(pools["services"], 20)
        firsts = r.sample(pools["first"], 14)
        lasts = r.sample(pools["last"], 12)
        # Two pairs of people share a surname (near-duplicates).
        self.people = [f"{f} {l}" for f, l in zip(firsts[:12], lasts)]
        self.people += [f"{firsts[12]} {lasts[0]}", f"{firsts[13]} {lasts[1]}"]
        self.clusters = [f"{w}-{n}" for w, n in zip(r.sample(pools["cluster_words"], 28),
                                                     r.sample(pools["cluster_numbers"], 28))]
        funcs = r.sample(ALIAS_FUNCS, len(self.services))
        kinds_st = r.sample(STORES, len(STORES))
        self.world, self.alias = {}, {}
        for i, svc in enumerate(self.services):
            kind, ver = kinds_st[i % len(kinds_st)]
            self.world[svc] = {
                "owner": self.people[i % 12], "cluster": self.clusters[i], "store": f"{kind} {ver(r)}",
                "store_kind": kind, "release": f"{r.randint(1, 9)}.{r.randint(0, 30)}.{r.randint(0, 20)}",
                "port": str(r.choice([p for p in range(7001, 9990) if p % 1000 and p not in (8080, 8443, 9090)])),
            }
            self.alias[svc] = f"the {funcs[i]} {r.choice(ALIAS_NOUNS)}"
        self.spare_clusters = self.clusters[len(self.services):]
        # Sessions on working days, one to six days apart.
        start = datetime(2025, 9, 1, tzinfo=timezone.utc) + timedelta(days=r.randint(0, 240))
        self.times, t = [], start
        for _ in range(n_sessions):
            while t.weekday() > 4:
                t += timedelta(days=1)
            self.times.append(t.replace(hour=r.randint(8, 17), minute=r.choice((0, 10, 20, 30, 40, 50))))
            t += timedelta(days=r.randint(1, 6))
        self.asked = (self.times[-1] + timedelta(days=r.randint(1, 6))).replace(hour=9, minute=0)
        self.chunks: list[Chunk] = []
        self.questions: list[HardQuestion] = []
        self.turn_meta: dict = {}     # tag -> {"retracted_by": tag}
        self.free = list(self.services)  # services no question has used yet
        self.stated: dict = {}        # (svc, attr) -> tag of the one statement of a background value
        self.mentioned: set = set()   # services some question is about (passing mentions later)
        self.prefs_used: set = set()
        self.sprint: tuple | None = None
        self._tag = 0
        self.decks: dict = {}

    # -- helpers ------------------------------------------------------------------------------

    def last(self) -> int:
        """The index of the last session."""
        return len(self.times) - 1

    def sessions(self, n: int, lo: int = 0, hi: int | None = None) -> list[int]:
        """n distinct session indexes in [lo, hi], ascending."""
        hi = self.last() if hi is None else hi
        return sorted(self.rng.sample(range(lo, hi + 1), n))

    def any_session(self) -> int:
        """A random session index."""
        return self.rng.randint(0, self.last())

    def take(self) -> str:
        """A service no question has used yet."""
        svc = self.free.pop(self.rng.randrange(len(self.free)))
        self.mentioned.add(svc)
        return svc

    def first(self, person: str) -> str:
        """A person's first name."""
        return person.split()[0]

    def opener(self, text: str) -> str:
        """A user statement with an optional opener; service names keep their lower case."""
        prefix = self.rng.choice(OPENERS)
        if prefix:
            return prefix + text
        return text if re.split(r"[\s':]", text, maxsplit=1)[0] in self.services else cap(text)

    def fact(self, session: int, text: str, ack: bool = True) -> str:
        """One user statement (and maybe an acknowledgement) in a session; returns its tag."""
        tg = self.tag()
        turns = [("user", self.opener(text), tg)]
        if ack and self.rng.random() < 0.6:
            turns.append(("assistant", self.rng.choice(ACKS), None))
        self.chunks.append(Chunk(session, turns))
        return tg

    def remark(self, session: int, text: str) -> None:
        """A user remark that states nothing a question asks."""
        first = re.split(r"[\s':]", text, maxsplit=1)[0]
        self.chunks.append(Chunk(session, [("user", text if first in self.services else cap(text), None)]))

    def background(self, attr: str, n: int, exclude: tuple = ()) -> None:
        """State attr for n services no question is about: same-topic distractors with values
        that are true in this case's world."""
        pool = [s for s in self.services if s not in self.mentioned and s not in exclude]
        bank = {"owner": OWNER_SAY, "cluster": CLUSTER_SAY, "store": STORE_SAY, "release": RELEASE_SAY,
                "port": PORT_SAY}[attr]
        for svc in self.rng.sample(pool, min(n, len(pool))):
            if (svc, attr) not in self.stated:
                v = self.world[svc][attr]
                self.stated[(svc, attr)] = self.fact(self.any_session(), self.rng.choice(bank).format(svc=svc, p=v, v=v))

    def ask(self, q: HardQuestion) -> bool:
        """Keep a question; always True, so makers can end with `return self.ask(...)`."""
        self.questions.append(q)
        return True

    # -- the nine kinds; each adds its turns and one question ---------------------------------

    def q_paraphrase(self) -> bool:
        r = self.rng
        svc = self.take()
        attr = r.choice(("cluster", "store", "port", "owner", "release"))
        v = self.world[svc][attr]
        ref = self.alias[svc] if r.random() < 0.5 else svc
        drop = set(WORD.findall(svc.lower())) | set(WORD.findall(ref.lower())) | set(WORD.findall(v.lower()))
        pairs = [(say, ask) for say in PARA_SAY[attr] for ask in PARA_ASK[attr]
                 if not content_stems(say.format(svc=svc, v=v, p=v), drop) & content_stems(ask.format(ref=ref), drop)]
        say, ask = r.choice(pairs)
        s1, s2 = self.sessions(2)
        ev = [self.fact(s2, say.format(svc=svc, v=v, p=v))]
        if ref != svc:
            ev.append(self.fact(s1, r.choice(ALIAS_SAY).format(svc=svc, alias=ref)))
        self.background(attr, 3)
        echoes = [e.format(ref=ref) for e in PARA_ECHO[attr]]
        return self.ask(HardQuestion("paraphrase", "single_hop", ask.format(ref=ref), v, ev, [svc, v],
                                     meta={"ref": ref}, echoes=echoes))

    def q_coreference(self) -> bool:
        r = self.rng
        svc = self.take()
        attr = r.choice(("cluster", "store", "port", "release"))
        v = self.world[svc][attr]
        person = r.choice(self.people)
        intro = r.choice(COREF_INTRO)
        t1, t3 = self.tag(), self.tag()
        s = self.any_session()
        self.chunks.append(Chunk(s, [("user", self.opener(intro.format(first=self.first(person), svc=svc)), t1),
                                     ("assistant", r.choice(COREF_REPLY), None),
                                     ("user", r.choice(COREF_SAY[attr]).format(v=v, first=self.first(person)), t3)]))
        # Another service moved by someone else, its value stated by name: the distractor.
        other = next(p for p in r.sample(self.people, len(self.people)) if self.first(p) != self.first(person))
        decoy = self.take()
        self.fact(self.any_session(), r.choice(COREF_INTRO).format(first=self.first(other), svc=decoy))
        self.background(attr, 2)
        ask = r.choice(COREF_ASK[attr]).format(svc=svc, first=self.first(person), verb=COREF_VERB[intro])
        echoes = [f"Still need to write down what changed when {self.first(person)} worked on {svc}."]
        return self.ask(HardQuestion("coreference", "multi_hop", ask, v, [t1, t3], [v],
                                     meta={"antecedent": svc}, echoes=echoes))

    def q_split(self) -> bool:
        r = self.rng
        svc = self.take()
        sub = r.choice(("sum", "store", "freeze", "squad"))
        s1, s2 = self.sessions(2)
        if sub == "sum":
            r1, r2 = r.sample(REGIONS, 2)
            a, b = r.randint(6, 40), r.randint(6, 40)
            ev = [self.fact(s1, r.choice(SPLIT_SUM_SAY).format(n=a, svc=svc, r=r1)),
                  self.fact(s2, r.choice(SPLIT_SUM_SAY).format(n=b, svc=svc, r=r2))]
            decoy = self.take()
            self.fact(self.any_session(), r.choice(SPLIT_SUM_SAY).format(n=r.randint(6, 40), svc=decoy, r=r1))
            q = r.choice(SPLIT_SUM_ASK).format(svc=svc)
            gold, kw, derivation = str(a + b), [svc, str(b)], {"op": "sum", "values": [a, b]}
        elif sub == "store":
            kind, ver = self.world[svc]["store"].split(" ", 1)
            ev = [self.fact(s1, r.choice(SPLIT_ENGINE_SAY).format(svc=svc, kind=kind)),
                  self.fact(s2, r.choice(SPLIT_VERSION_SAY).format(svc=svc, ver=ver))]
            self.background("store", 2)
            q = r.choice(STORE_ASK).format(svc=svc)
            gold, kw, derivation = f"{kind} {ver}", [svc, ver], {"op": "join", "parts": [kind, ver]}
        elif sub == "freeze":
            start = self.day(s1) + timedelta(days=r.randint(3, 25))
            n = r.choice((5, 7, 9, 10, 12, 14, 21))
            said = say_date(r, start)
            ev = [self.fact(s1, r.choice(SPLIT_FREEZE_START).format(svc=svc, d=said)),
                  self.fact(s2, r.choice(SPLIT_FREEZE_LEN).format(svc=svc, dur=say_days(r, n)))]
            decoy = self.take()
            self.fact(self.any_session(), r.choice(FREEZE_SAY).format(
                svc=decoy, d=say_date(r, start + timedelta(days=r.choice((-4, 3, 6)))), dur=say_days(r, r.choice((7, 14)))))
            q = r.choice(FREEZE_ASK).format(svc=svc)
            gold, kw = month_day(start + timedelta(days=n)), [svc, said]
            derivation = {"op": "date_plus", "start": start.isoformat(), "days": n}
        else:
            squad, other_squad = r.sample(SQUADS, 2)
            lead, other_lead = r.sample(self.people, 2)
            ev = [self.fact(s1, r.choice(SPLIT_SQUAD_SAY).format(svc=svc, squad=squad)),
                  self.fact(s2, r.choice(SPLIT_LEAD_SAY).format(p=lead, squad=squad))]
            self.fact(self.any_session(), r.choice(SPLIT_LEAD_SAY).format(p=other_lead, squad=other_squad))
            q = r.choice(OWNER_ASK).format(svc=svc)
            gold, kw, derivation = lead, [lead, squad], {"op": "join", "parts": [lead]}
        return self.ask(HardQuestion("split", "multi_hop", q, gold, ev, kw, meta={"derivation": derivation}))

    def q_aggregation(self) -> bool:
        r = self.rng
        if r.random() < 0.4:
            svc = self.take()
            n = r.randint(3, 6)
            lines = r.sample(PAGE_SAY, n)
            ev = [self.fact(s, line.format(svc=svc), ack=False) for s, line in zip(self.sessions(n), lines)]
            decoy = self.take()
            for s, line in zip(self.sessions(2), r.sample(PAGE_SAY, 2)):
                self.fact(s, line.format(svc=decoy), ack=False)
            q = r.choice(PAGE_ASK).format(svc=svc)
            return self.ask(HardQuestion("aggregation", "multi_hop", q, str(n), ev, [svc],
                                         meta={"derivation": {"op": "count", "n": n}}))
        thing = r.choice(ROLLOUTS)
        movers = [self.take() for _ in range(r.randint(3, 4))]
        ev = [self.fact(s, r.choice(ROLLOUT_SAY).format(svc=svc, thing=thing))
              for s, svc in zip(self.sessions(len(movers)), movers)]
        how = r.choice(("first", "last", "after"))
        at = {"first": 0, "last": len(movers) - 1, "after": r.randint(1, len(movers) - 1)}[how]
        q = ROLLOUT_ASK[how].format(thing=thing, prev=movers[at - 1])
        self.remark(self.any_session(), f"Which team goes next onto {thing} is still being decided.")
        return self.ask(HardQuestion("aggregation", "multi_hop", q, movers[at], ev, [movers[at]],
                                     meta={"derivation": {"op": "order", "sequence": movers, "pick": how}}))

    def q_time(self) -> bool:
        r = self.rng
        svc = self.take()
        e = r.choice(TIME_DONE)
        sub = r.choice(("weekday", "ago", "sprint", "duration", "coming"))
        if sub == "sprint" and self.last() < 3:
            sub = "ago"
        if sub == "duration":
            s1, s2 = self.sessions(2)
            ev = [self.fact(s1, r.choice(DURATION_START).format(svc=svc, e=e)),
                  self.fact(s2, r.choice(DURATION_END).format(svc=svc, e=e))]
            n = (self.day(s2) - self.day(s1)).days
            q = r.choice(DURATION_ASK).format(svc=svc, e=TIME_ASKED[e])
            return self.ask(HardQuestion("time", "temporal", q, f"{n} days", ev, [svc, e],
                                         meta={"derivation": {"op": "days_between", "sessions": 2}}))
        s = self.any_session() if sub != "sprint" else r.randint(2, self.last())
        d = self.day(s)
        ev = []
        if sub == "weekday":
            wd = r.choice([w for w in range(5) if w != d.weekday()])
            target, rel = previous_weekday(d, wd), f"this past {WEEKDAYS[wd]}"
        elif sub == "coming":
            wd = r.choice([w for w in range(5) if w != d.weekday()])
            target, rel = next_weekday(d, wd), f"this coming {WEEKDAYS[wd]}"
        elif sub == "ago":
            n = r.choice((1, 2, 3, 4, 5, 10))
            target = d - timedelta(days=n)
            rel = {1: "yesterday", 2: "the day before yesterday"}[n] if n < 3 else f"{NUMBER_WORDS[n]} days ago"
        else:
            if self.sprint is None:
                weeks = r.choice((2, 3))
                self.sprint = (weeks, self.fact(r.randint(0, s), r.choice(SPRINT_SAY).format(n=NUMBER_WORDS[weeks])))
            weeks, sprint_tag = self.sprint
            ev.append(sprint_tag)
            target, rel = d - timedelta(days=2 * 7 * weeks), "exactly two sprints ago today"
        say = TIME_FUTURE if sub == "coming" else TIME_PAST
        ev.insert(0, self.fact(s, r.choice(say).format(svc=svc, e=e, rel=rel, first=self.first(r.choice(self.people)))))
        # The same work on another service on another day, and echoes of the topic.
        decoy = self.take()
        s2 = self.any_session()
        self.fact(s2, r.choice(TIME_PAST).format(svc=decoy, e=e, rel="yesterday", first=self.first(r.choice(self.people))))
        q = r.choice(TIME_ASK_FUTURE if sub == "coming" else TIME_ASK).format(svc=svc, e=TIME_ASKED[e])
        echoes = [f"The write-up for the {svc} {e} is still missing."]
        return self.ask(HardQuestion("time", "temporal", q, month_day(target), ev, [svc, e],
                                     meta={"derivation": {"op": "relative_date", "phrase": rel,
                                                          "session_date": d.isoformat()}}, echoes=echoes))

    def q_update_chain(self) -> bool:
        r = self.rng
        depth = r.randint(3, 4)
        points = self.sessions(depth)
        if r.random() < 0.3:
            free = [p for p in PREFS if p[0] not in self.prefs_used and len(p[1]) >= 5]
            key, options, user_say, col_say, q_user, _ = r.choice(free)
            self.prefs_used.add(key)
            values = r.sample(list(options), 3)
            if depth == 4:
                values.append(values[0])  # drifting back to where it started
            tags = [self.fact(points[0], r.choice(user_say).format(v=values[0][0]))]
            for s, (old, new) in zip(points[1:], zip(values, values[1:])):
                tags.append(self.fact(s, r.choice(PREF_CHANGE).format(topic=PREF_TOPICS[key], old=old[0], new=new[0])))
            self.fact(self.any_session(), r.choice(col_say).format(p=r.choice(self.people), v=values[1][0]))
            gold = values[-1][1]
            outdated = sorted({g for _, g in values[:-1]} - {gold})
            return self.ask(HardQuestion("update_chain", "preference", q_user, gold, [tags[-1]], [gold],
                                         tags[:-1], outdated, meta={"depth": depth}))
        svc = self.take()
        attr = r.choice(("owner", "cluster", "release"))
        if attr == "owner":
            chain = r.sample(self.people, depth)
            tags = [self.fact(points[0], r.choice(OWNER_SAY).format(svc=svc, p=chain[0]))]
            tags += [self.fact(s, r.choice(OWNER_HANDOVER).format(svc=svc, old=o, new=n))
                     for s, o, n in zip(points[1:], chain, chain[1:])]
        elif attr == "cluster":
            chain = [self.spare_clusters.pop() for _ in range(depth)]
            tags = [self.fact(points[0], r.choice(CLUSTER_SAY).format(svc=svc, v=chain[0]))]
            tags += [self.fact(s, r.choice(CLUSTER_MOVE).format(svc=svc, old=o, new=n))
                     for s, o, n in zip(points[1:], chain, chain[1:])]
        else:
            maj, mi = r.randint(1, 6), r.randint(0, 20)
            chain = []
            for _ in range(depth):
                mi += r.randint(1, 3)
                chain.append(f"{maj}.{mi}.{r.randint(0, 12)}")
            tags = [self.fact(points[0], r.choice(RELEASE_SAY).format(svc=svc, v=chain[0]))]
            tags += [self.fact(s, r.choice(RELEASE_BUMP).format(svc=svc, old=o, new=n))
                     for s, o, n in zip(points[1:], chain, chain[1:])]
        self.background(attr, 2)
        ask = {"owner": OWNER_ASK, "cluster": CLUSTER_ASK, "release": RELEASE_ASK}[attr]
        return self.ask(HardQuestion("update_chain", "knowledge_update", r.choice(ask).format(svc=svc), chain[-1],
                                     [tags[-1]], [svc, chain[-1]], tags[:-1], chain[:-1], meta={"depth": depth},
                                     echoes=[r.choice(ECHO[attr]).format(svc=svc)]))

    def q_near_duplicate(self) -> bool:
        r = self.rng
        if r.random() < 0.6:
            svc = self.take()
            attr = r.choice(("release", "port", "cluster"))
            r1, r2 = r.sample(REGIONS, 2)
            v1 = self.world[svc][attr]
            if attr == "release":
                maj, mi, pa = v1.split(".")
                v2 = f"{maj}.{int(mi) + r.randint(1, 3)}.{pa}"
            elif attr == "port":
                v2 = str(int(v1) + r.choice((1, 2, 10, 100)))
            else:
                v2 = self.spare_clusters.pop()
            s1, s2 = self.sessions(2)
            if r.random() < 0.5:
                s1, s2 = s2, s1
            self.fact(s1, r.choice(TWIN_SAY[attr]).format(svc=svc, r=r1, v=v1))
            tg = self.fact(s2, r.choice(TWIN_SAY[attr]).format(svc=svc, r=r2, v=v2))
            return self.ask(HardQuestion("near_duplicate", "single_hop", TWIN_ASK[attr].format(svc=svc, r=r2), v2,
                                         [tg], [svc, v2], meta={"distractor_answers": [v1], "twin": r1}))
        # Two people with one surname, each owning one service.
        a, b = (self.people[0], self.people[12]) if r.random() < 0.5 else (self.people[1], self.people[13])
        if r.random() < 0.5:
            a, b = b, a
        mine, theirs = self.take(), self.take()
        tg = self.fact(self.any_session(), r.choice(OWNER_SAY).format(svc=mine, p=a))
        self.fact(self.any_session(), r.choice(OWNER_SAY).format(svc=theirs, p=b))
        return self.ask(HardQuestion("near_duplicate", "single_hop", r.choice(OWNS_ASK).format(p=a), mine, [tg],
                                     [a, mine], meta={"distractor_answers": [theirs], "twin": b}))

    def q_near_miss(self) -> bool:
        r = self.rng
        sub = r.choice(("region", "person", "service", "event"))
        if sub == "region":
            svc = self.take()
            r1, r2 = r.sample(REGIONS, 2)
            attr = r.choice(("release", "port"))
            self.fact(self.any_session(), r.choice(TWIN_SAY[attr]).format(svc=svc, r=r1, v=self.world[svc][attr]))
            q, near, asked = TWIN_ASK[attr].format(svc=svc, r=r2), [svc, r1], [svc, r2]
        elif sub == "person":
            # A first name and a surname of two different people: a name nobody in the case has.
            firsts = {self.first(p) for p in self.people}
            lasts = {p.split()[1] for p in self.people}
            names = {p for p in self.people}
            cands = sorted(f"{f} {l}" for f in firsts for l in lasts if f"{f} {l}" not in names)
            ghost = r.choice(cands)
            svc = self.take()
            near = next(p for p in self.people if p.split()[1] == ghost.split()[1])
            self.fact(self.any_session(), r.choice(OWNER_SAY).format(svc=svc, p=near))
            q, near, asked = r.choice(OWNS_ASK).format(p=ghost), [near], [ghost]
        elif sub == "service":
            svc = self.take()
            head = svc.split("-")[0]
            ghost = next(f"{head}-{s}" for s in r.sample(NEAR_SUFFIXES, len(NEAR_SUFFIXES))
                         if f"{head}-{s}" not in self.services)
            attr = r.choice(("owner", "cluster", "port"))
            v = self.world[svc][attr]
            bank = {"owner": OWNER_SAY, "cluster": CLUSTER_SAY, "port": PORT_SAY}[attr]
            self.fact(self.any_session(), r.choice(bank).format(svc=svc, p=v, v=v))
            ask = {"owner": OWNER_ASK, "cluster": CLUSTER_ASK, "port": PORT_ASK}[attr]
            q, near, asked = r.choice(ask).format(svc=ghost), [svc], [ghost]
        else:
            svc = self.take()
            e, ghost_e = r.sample(TIME_DONE, 2)
            s = self.any_session()
            self.fact(s, r.choice(TIME_FUTURE).format(svc=svc, e=e, rel="this coming Friday" if self.day(s).weekday() < 4
                                                      else "this coming Monday"))
            q, near, asked = r.choice(TIME_ASK_FUTURE).format(svc=svc, e=TIME_ASKED[ghost_e]), [svc, e], [svc, ghost_e]
        return self.ask(HardQuestion("near_miss", "abstention", q, IDK, [], [],
                                     meta={"near_miss": near, "never_said": asked}))

    def q_forgetting(self) -> bool:
        r = self.rng
        sub = r.choice(("offsite", "private", "port", "owner"))
        s1, s2 = self.sessions(2)
        if sub == "offsite":
            city = r.choice(CITIES)
            d = self.day(s1) + timedelta(days=r.randint(20, 60))
            said = f"{MONTHS[d.month - 1]} {d.day}"
            t1 = self.fact(s1, r.choice(OFFSITE_SAY).format(city=city, d=said))
            t2 = self.fact(s2, r.choice(OFFSITE_RETRACT).format(city=city))
            q, gold, outdated, qtype, ev, kw = r.choice(OFFSITE_ASK), IDK, [city], "abstention", [], []
        elif sub == "private":
            thing = r.choice(PRIVATE)
            d = self.day(s1) + timedelta(days=r.randint(3, 30))
            t1 = self.fact(s1, r.choice(PRIVATE_SAY).format(thing=thing, d=say_date(r, d)))
            t2 = self.fact(s2, r.choice(PRIVATE_RETRACT).format(thing=thing))
            q, gold, outdated, qtype, ev, kw = r.choice(PRIVATE_ASK).format(thing=thing), IDK, [month_day(d)], "abstention", [], []
        elif sub == "port":
            svc = self.take()
            wrong = self.world[svc]["port"]
            t1 = self.fact(s1, r.choice(PORT_SAY).format(svc=svc, v=wrong))
            t2 = self.fact(s2, r.choice(PORT_RETRACT).format(svc=svc))
            self.background("port", 2)
            q, gold, outdated, qtype, ev, kw = r.choice(PORT_ASK).format(svc=svc), IDK, [wrong], "abstention", [], []
        else:
            svc = self.take()
            old, new = r.sample(self.people, 2)
            t1 = self.fact(s1, r.choice(OWNER_SAY).format(svc=svc, p=old))
            t2 = self.fact(s2, r.choice(OWNER_RETRACT).format(svc=svc, old=old, new=new))
            self.background("owner", 2)
            q, gold, outdated, qtype, ev, kw = r.choice(OWNER_ASK).format(svc=svc), new, [old], "knowledge_update", [t2], [svc, new]
        self.turn_meta[t1] = t2
        return self.ask(HardQuestion("forgetting", qtype, q, gold, ev, kw, [t1], outdated, meta={"retraction": t2}))

    # -- noise and layout -------------------------------------------------------------------

    def noise_chunk(self, s: int) -> Chunk:
        """Mostly unrelated work, sometimes chatter about the case's services; lines are drawn
        from per-case decks and filled afresh, so they rarely repeat within a case."""
        r = self.rng
        person = r.choice(self.people)
        focus = sorted(self.mentioned) if self.mentioned and r.random() < 0.5 else self.services
        fill = {"svc": r.choice(focus), "p": self.first(person), "full": person, "first": self.first(person),
                "n": r.randint(2, 40), **{k: r.choice(v) for k, v in UNRELATED_FILL.items()}}
        roll = r.random()
        if roll < 0.45:
            turns = [("user", self.draw("unrelated", UNRELATED).format(**fill), None)]
            if r.random() < 0.4:
                turns.append(("assistant", r.choice(SHORT_REPLIES), None))
        elif roll < 0.6:
            question, answer = self.draw("uqa", UNRELATED_QA + NOISE_QA)
            turns = [("user", question.format(**fill), None), ("assistant", answer, None)]
        elif roll < 0.7:
            prompt, pool = self.draw("explain", EXPLAIN_ITEMS)
            sents = r.sample(pool, r.randint(2, 4))
            turns = [("user", prompt.format(**fill), None),
                     ("assistant", " ".join(x.format(**fill) for x in sents), None)]
        else:
            turns = [("user", self.draw("stmt", NOISE_STATEMENTS).format(**fill), None)]
            if r.random() < 0.3:
                turns.append(("assistant", r.choice(SHORT_REPLIES), None))
        return Chunk(s, turns)

    def draw(self, deck: str, pool: tuple):
        """Next item of a shuffled per-case deck over pool, reshuffled when it runs out."""
        if not self.decks.get(deck):
            self.decks[deck] = self.rng.sample(list(pool), len(pool))
        return self.decks[deck].pop()

    def layout(self) -> list[dict]:
        """Pad sessions with noise, order chunks, assign turn ids; return the sessions."""
        r = self.rng
        by_session = {i: [] for i in range(len(self.times))}
        for ch in self.chunks:
            by_session[ch.session].append(ch)
        sessions, self.tag_to_id = [], {}
        for i, t in enumerate(self.times):
            chunks = by_session[i] + [self.noise_chunk(i) for _ in range(r.randint(6, 14))]
            r.shuffle(chunks)
            turns = [("user", r.choice(SESSION_OPENERS), None)] if r.random() < 0.5 else []
            for ch in chunks:
                turns.extend(ch.turns)
            sessions.append(self.session_record(i, t, turns))
        # Retracted turns say so (turn meta is not given to the systems, only to the metrics).
        for s in sessions:
            for turn in s["turns"]:
                for tg, by in self.turn_meta.items():
                    if self.tag_to_id[tg] == turn["turn_id"]:
                        turn["meta"] = {"retracted_by": self.tag_to_id[by]}
        return sessions

    def build(self) -> dict:
        """Make one question of each kind, lay out the sessions, return the case."""
        makers = {k: getattr(self, f"q_{k}") for k in V2_KINDS}
        for kind in self.kinds:
            makers[kind]()
        for q in self.questions:
            for text in q.echoes:
                self.remark(self.any_session(), text)
        # Every service a question is about comes up in passing, as the work of a team does, so
        # that its name alone does not find the evidence.
        with_svc = [t for t in NOISE_STATEMENTS if "{svc}" in t]
        for svc in sorted(self.mentioned):
            for _ in range(PASSING_MENTIONS):
                person = self.rng.choice(self.people)
                self.remark(self.any_session(), self.draw("subject", with_svc).format(
                    svc=svc, p=self.first(person), full=person))
        sessions = self.layout()
        ids = self.tag_to_id
        qs = []
        for k, q in enumerate(self.questions, 1):
            meta = {"kind": q.kind, "keywords": q.keywords, **q.meta}
            if "retraction" in meta:
                meta["retraction"] = ids[meta["retraction"]]
            if q.superseded:
                meta["superseded_evidence"] = [ids[t] for t in q.superseded]
                meta["outdated_answers"] = q.outdated
            text = self.rng.choice(QUESTION_FRAMES).format(q=q.text, first=self.first(self.rng.choice(self.people)))
            qs.append({"qid": f"{self.case_id}q{k}", "type": q.qtype, "asked_at": self.asked.strftime("%Y-%m-%dT%H:%M:%SZ"),
                       "question": text, "gold_answer": q.gold, "evidence": [ids[t] for t in q.evidence], "meta": meta})
        return {"case_id": self.case_id, "sessions": sessions, "questions": qs,
                "meta": {"size": "long", "generator": V2_GENERATOR}}


# ---------------------------------------------------------------------------------------------
# What --check verifies on every version 2 question, besides the files matching the generator
# ---------------------------------------------------------------------------------------------

def _names(text: str, name: str) -> bool:
    """Whether the text names a service (a hyphenated name, punctuation around it allowed)."""
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) is not None


def _states(text: str, value: str) -> bool:
    """Whether the text states the value: as the grader finds a value in an answer (dates and
    numbers normalized), or written as it is between non-word characters (":9685/healthz",
    "Maren Vance's"), which the grader's stricter boundaries leave out."""
    from rules import states_value
    return states_value(text, value) or re.search(rf"(?<!\w){re.escape(value)}(?!\w)", text, re.I) is not None


def resolve_relative(phrase: str, said_on: date, others: list[str]) -> date:
    """The date a relative phrase names, said on said_on; a sprint's length comes from the other
    evidence turns ("a sprint here is two weeks")."""
    words = {w: n for n, w in NUMBER_WORDS.items()}
    if phrase == "yesterday":
        return said_on - timedelta(days=1)
    if phrase == "the day before yesterday":
        return said_on - timedelta(days=2)
    m = re.fullmatch(r"(\w+) days ago", phrase)
    if m:
        return said_on - timedelta(days=words[m.group(1)])
    m = re.fullmatch(r"this (past|coming) (\w+)", phrase)
    if m:
        day = WEEKDAYS.index(m.group(2))
        return (previous_weekday if m.group(1) == "past" else next_weekday)(said_on, day)
    if phrase == "exactly two sprints ago today":
        weeks = next(words[w] for t in others for w in WORD.findall(t) if w in words and "sprint" in t)
        return said_on - timedelta(days=2 * 7 * weeks)
    raise ValueError(f"unknown relative phrase {phrase!r}")


def _order_pick(q: dict, texts: list[str], dates: dict) -> tuple[list[str], str]:
    """An order question's services in the order its evidence sessions state them, and the one
    its derivation picks (the first, the last, or the one after the service the question names)."""
    derivation = q["meta"]["derivation"]
    seq = derivation["sequence"]
    said = [next(s for s in seq if _names(t, s)) for t in texts]
    order = [s for _, s in sorted(zip((dates[e] for e in q["evidence"]), said))]
    how = derivation["pick"]
    if how == "after":  # the one after the service the question names
        prev = next(s for s in seq if _names(q["question"], s))
        return order, order[order.index(prev) + 1]
    if how in ("first", "last"):
        return order, {"first": order[0], "last": order[-1]}[how]
    # a generator bug: no question asks this
    raise ValueError(f"{q['qid']}: unknown order pick {how!r}; expected first, last or after")


def check_case_v2(case: dict) -> list[str]:
    """The problems of one version 2 case: evidence resolves, the gold is stated by the evidence
    (or computed from it as meta.derivation says) and not guessable from the question,
    distractors and outdated values differ from the gold, retracted turns are marked, and the
    near-miss entity is never said."""
    from normalization import verdict_normalize
    problems = []
    turns = {t["turn_id"]: t for s in case["sessions"] for t in s["turns"]}
    dates = {t["turn_id"]: date.fromisoformat(s["timestamp"][:10]) for s in case["sessions"] for t in s["turns"]}
    for q in case["questions"]:
        qid, meta, gold, kind = q["qid"], q["meta"], q["gold_answer"], q["meta"]["kind"]
        bad = lambda why: problems.append(f"{qid} ({kind}): {why}")  # noqa: E731
        if kind not in V2_KINDS:
            bad(f"unknown kind {kind!r}")
            continue
        missing = [e for e in q["evidence"] + meta.get("superseded_evidence", []) if e not in turns]
        if missing:
            bad(f"evidence {missing} is not in the case")
            continue
        texts = [turns[e]["text"] for e in q["evidence"]]
        if q["type"] != "abstention" and _states(q["question"], gold):
            bad("the gold is in the question")
        for o in meta.get("outdated_answers", []) + meta.get("distractor_answers", []):
            if verdict_normalize(o) == verdict_normalize(gold):
                bad(f"a distractor or outdated value {o!r} is the gold")
            elif not any(_states(t["text"], o) for tid, t in turns.items() if tid not in q["evidence"]):
                bad(f"the distractor or outdated value {o!r} is never stated outside the evidence")
        if meta["keywords"] and not any(all(k.lower() in t.lower() for k in meta["keywords"]) for t in texts):
            bad("the keywords do not co-occur in an evidence turn")
        # A distractor: some turn outside the evidence shares a content word with the question.
        qwords = {w[:5] for w in WORD.findall(q["question"].lower()) if w not in STOP}
        if not any(qwords & {w[:5] for w in WORD.findall(t["text"].lower())}
                   for tid, t in turns.items() if tid not in q["evidence"]):
            bad("no turn outside the evidence shares a word with the question")
        derivation = meta.get("derivation")
        if q["type"] == "abstention":
            # A near miss: what is asked is never said in one turn; what it resembles is.
            if "never_said" in meta and any(all(_states(t["text"], w) for w in meta["never_said"])
                                            for t in turns.values()):
                bad(f"{meta['never_said']} is said in the history, so this is no near miss")
            if "near_miss" in meta and not any(all(_states(t["text"], w) for w in meta["near_miss"])
                                               for t in turns.values()):
                bad(f"the near miss {meta['near_miss']} is never said")
        elif derivation is None or derivation["op"] == "join":
            parts = derivation["parts"] if derivation else [gold]
            if " ".join(parts) != gold:
                bad(f"the gold is not its parts {parts} joined")
            elif not all(any(_states(t, p) for t in texts) for p in parts):
                bad("the gold is not stated by its evidence")
        elif derivation["op"] == "sum":
            a, b = derivation["values"]
            if str(a + b) != gold or not (_states(texts[0], str(a)) and _states(texts[1], str(b))):
                bad("the sum is not stated by its evidence")
        elif derivation["op"] == "count":
            if len(q["evidence"]) != derivation["n"] or str(derivation["n"]) != gold:
                bad("the count differs from its evidence")
        elif derivation["op"] == "order":
            order, pick = _order_pick(q, texts, dates)
            if order != derivation["sequence"] or pick != gold:
                bad("the order is not the order of its evidence")
        elif derivation["op"] == "date_plus":
            start = date.fromisoformat(derivation["start"])
            end = start + timedelta(days=derivation["days"])
            if month_day(end) != gold or not any(_states(t, month_day(start)) for t in texts):
                bad("the freeze end is not computed from its evidence")
        elif derivation["op"] == "days_between":
            n = (dates[q["evidence"][1]] - dates[q["evidence"][0]]).days
            if f"{n} days" != gold:
                bad("the duration is not the days between its evidence sessions")
        elif derivation["op"] == "relative_date":
            if derivation["phrase"] not in texts[0] or dates[q["evidence"][0]].isoformat() != derivation["session_date"]:
                bad("the relative date is not said in its evidence's session")
            elif month_day(resolve_relative(derivation["phrase"], dates[q["evidence"][0]], texts[1:])) != gold:
                bad("the gold is not the date its relative phrase names")
        for e in meta.get("superseded_evidence", []) if kind == "forgetting" else []:
            if turns[e].get("meta", {}).get("retracted_by") != meta["retraction"]:
                bad(f"the retracted turn {e} is not marked retracted_by {meta['retraction']}")
    return problems


# Answers a capable model without memory might give: the values people guess when they do not
# know (common ports, small counts, round durations, today's date, the popular tools).
def plausible_guesses(q: dict) -> list[str]:
    """The guesses a model without memory would plausibly give to a question."""
    asked = date.fromisoformat(q["asked_at"][:10])
    text = unframe(q["question"]).lower()
    if "how many" in text and "days" in text:
        return ["7 days", "14 days", "30 days", "3 days"]
    if "how many" in text:
        return ["2", "3", "4", "5"]
    if "date" in text or text.startswith("when"):
        return [month_day(asked + timedelta(days=n)) for n in (-7, -1, 0, 1, 7)]
    if "port" in text:
        return ["8080", "443", "3000", "5432"]
    if "version" in text or "release" in text or "build" in text:
        return ["1.0.0", "2.0", "Postgres 15", "latest"]
    for pref in PREFS:
        if text in (pref[4].lower(), pref[5].lower()):
            return [g or p for p, g in pref[1]]
    return ["I don't know"]


def guess_max(qtype: str) -> float:
    """check.py's default limit on the `none` control for a type (config.CHECK_DEFAULTS, none_max): the
    share of a type's questions a plausible guess gets right must stay at or below it."""
    from config import CHECK_DEFAULTS, limit_for
    return limit_for(CHECK_DEFAULTS, "none_max", qtype)


def guess_rate(cases: list[dict]) -> dict:
    """Per contract type, the expected share of answerable questions a plausible guess gets
    right under the strict rules (the `none` control's ceiling for a capable model)."""
    from grading import decide
    per: dict = {}
    for case in cases:
        for q in case["questions"]:
            if q["type"] == "abstention":
                continue
            guesses = plausible_guesses(q)
            hits = sum(decide({**q, "answer": g}, with_judge=False)[0] == "correct" for g in guesses)
            per.setdefault(q["type"], []).append(hits / len(guesses))
    return {t: sum(v) / len(v) for t, v in per.items()}


def make_split_v2(n_cases: int, seed: int, dev: bool) -> list[dict]:
    """Generate one version 2 split: every case has one question of each kind."""
    rng = random.Random(seed)
    # Cluster names are made from the version 1 words with numbers of the split's own range, so
    # the two splits share no cluster.
    pools = {"first": pool_split(FIRST, dev), "last": pool_split(LAST, dev),
             "services": pool_split(SERVICES, dev) + pool_split(V2_EXTRA_SERVICES, dev),
             "cluster_words": sorted({c.split("-")[0] for c in CLUSTERS}),
             "cluster_numbers": list(range(50, 100) if dev else range(1, 50))}
    cases = []
    for i in range(1, n_cases + 1):
        case_id = f"{'hdev' if dev else 'hd'}{i:03d}"
        kinds = rng.sample(V2_KINDS, len(V2_KINDS))
        case = HardCase(random.Random(rng.random()), case_id, pools, kinds).build()
        # Raised, not asserted: `python -O` drops asserts, and --check must run these checks.
        problems = check_case_v2(case)
        if problems:
            raise RuntimeError(f"{case_id}: the generator made a case its own checks refuse: " + "; ".join(problems))
        cases.append(case)
    rates = guess_rate(cases)
    too_high = {t: round(v, 3) for t, v in rates.items() if v > guess_max(t)}
    if too_high:
        raise RuntimeError(f"plausible guesses get these types right too often: {too_high}")
    return cases
