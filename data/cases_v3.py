"""Version 3 of the bundled dataset: evidence is a random sample of turns that look like the rest.

A case is a long chat between two engineers who take turns: most of what they say states a fact
of one of many templates (owners, ports, builds, clusters, datastores, capacity, night pages,
rollouts, dates, handovers, retractions, corrections, nicknames, "that one" after a service is
named, preferences) about many services and people, the rest is small talk. Every structure a
question can be asked about is built several times per case, and each question asks about one of
them picked at random, so the turns that answer a question are drawn from the same openers, tails,
lengths, digits, speakers and positions as every other fact, and facts are most of the history.
Nine kinds of question as in version 2, asked as a person asks them (no sentence around them).

`meta.answer_evidence` on every answerable question names the evidence turns that hold the answer
(or the values a computed gold is computed from); the other evidence turns only lead to them (a
nickname's definition, the turn that names the service "that one" means, the squad a service
follows). `check_case_v3` refuses a case whose golds are not stated or derived as its meta says.

Usage: through make_cases.py (`python data/make_cases.py --version 3`, `--check`).
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone

import phrases_v3 as P
from vocabulary import CLUSTERS, FIRST, LAST, MONTHS, NUMBER_WORDS, REGIONS, SERVICE_WORDS, STORES, WEEKDAYS, \
    month_day, pool_split

KINDS = ("paraphrase", "coreference", "split", "aggregation", "time", "update_chain", "near_duplicate",
         "near_miss", "forgetting")
FILES = {"test": "cases-v3.jsonl", "dev": "dev-v3.jsonl"}
GENERATOR = "data/make_cases.py --version 3"
TEST_CASES, DEV_CASES = 42, 8
IDK = "I don't know"
# check.py's default `none_max` limits (config.CHECK_DEFAULTS): a plausible guess must get at most this
# share of a type's answerable questions right. Stated here so that the generator imports no
# stage script; tests/test_dataset_v3.py checks that the two agree.
NONE_MAX = {"default": 0.10, "preference": 0.20}
# How many structures of each sort a case holds; questions ask about one of them at random.
COUNTS = {"plain": 24, "alias": 10, "coref": 10, "vcpu": 14, "squad": 4, "join": 5, "freeze": 5, "pages": 18,
          "rollouts": 7, "service_talk": 150, "relative": 20, "duration": 4, "chains": 12, "prefs": 5, "twins": 10,
          "events": 8, "offsite": 2, "private": 2, "port_retract": 3, "owner_fix": 4}
N_SERVICES, NAME_WORDS = 56, 6  # services per case, and the words their names are made from
ASIDE_COUNTS = (0, 0, 1)  # second sentences added to a turn, drawn alike for every turn
CHATTER_SHARE = 0.3  # small-talk turns per fact turn
WORD = re.compile(r"\w+")
STOP = set("a an the of to in on at for is are was were be by with and or what which who whose how does do "
           "did it its this that these those i my me we our you your now from as".split())


@dataclass
class Unit:
    """Consecutive turns said in one session; tags mark the turns questions cite."""
    session: int
    texts: list
    tags: list


@dataclass
class Q:
    """One question before turn ids are known (evidence and marks are tags)."""
    kind: str
    qtype: str
    text: str
    gold: str
    evidence: list
    answer: list
    keywords: list
    meta: dict = field(default_factory=dict)


def say_date(rng: random.Random, d: date) -> str:
    """A date as people write it, in one of several styles."""
    suffix = {1: "st", 2: "nd", 3: "rd", 21: "st", 22: "nd", 23: "rd", 31: "st"}.get(d.day, "th")
    return rng.choice((month_day(d), f"{d.day} {MONTHS[d.month - 1]}", f"{WEEKDAYS[d.weekday()]}, {month_day(d)}",
                       f"the {d.day}{suffix} of {MONTHS[d.month - 1]}"))


def say_days(rng: random.Random, n: int) -> str:
    """A duration in days, in words or digits, or in weeks when it divides."""
    if n % 7 == 0 and rng.random() < 0.7:
        return "one week" if n == 7 else f"{NUMBER_WORDS[n // 7]} weeks"
    return f"{NUMBER_WORDS[n]} days" if n in NUMBER_WORDS and rng.random() < 0.5 else f"{n} days"


def relative_date(phrase: str, said_on: date) -> date:
    """The date a relative phrase names, said on said_on."""
    words = {w: n for n, w in NUMBER_WORDS.items()}
    if phrase == "yesterday":
        return said_on - timedelta(days=1)
    if phrase == "the day before yesterday":
        return said_on - timedelta(days=2)
    m = re.fullmatch(r"(\w+) days ago", phrase)
    if m:
        return said_on - timedelta(days=words[m.group(1)])
    m = re.fullmatch(r"this (past|coming) (\w+)", phrase)
    if m is None:
        raise ValueError(f"unknown relative phrase {phrase!r}")
    day = WEEKDAYS.index(m.group(2))
    if m.group(1) == "past":
        return said_on - timedelta(days=(said_on.weekday() - day - 1) % 7 + 1)
    return said_on + timedelta(days=(day - said_on.weekday() - 1) % 7 + 1)


def cap(text: str, names: set) -> str:
    """The text with its first letter upper-cased, unless it starts with a service name."""
    first = re.split(r"[\s':]", text, maxsplit=1)[0]
    return text if first in names else text[0].upper() + text[1:]


def content(text: str, name: str) -> set:
    """Content words of a text, cut to five letters, without stop words, the words people start
    and end a question with, and the words of a name."""
    drop = set(WORD.findall(name.lower())) | {w for x in P.ASK_LEADS + P.ASK_ENDS for w in WORD.findall(x)}
    return {w[:5] for w in WORD.findall(text.lower()) if w not in STOP and w not in drop and not w.isdigit()}


class Case3:
    """One version 3 case: world, structures, questions, layout."""

    generator = GENERATOR  # the command that makes the case, in its meta; each version names its own

    def __init__(self, rng: random.Random, case_id: str, pools: dict) -> None:
        r = self.rng = rng
        self.case_id = case_id
        n_sessions = r.randint(16, 20)
        # Services are a few words with numbers (lantern-417, lantern-52, osprey-230): several share
        # a word, so only the exact name tells two facts of one template apart.
        words = r.sample(pools["service_words"], NAME_WORDS)
        self.services = [f"{r.choice(words)}-{n}" for n in r.sample(range(50, 1000), N_SERVICES)]
        firsts, lasts = r.sample(pools["first"], 14), r.sample(pools["last"], 12)
        people = [f"{f} {l}" for f, l in zip(firsts[:12], lasts)]
        # Two pairs of people share a surname; they own one service each and nothing else.
        self.pairs = [(people[0], f"{firsts[12]} {lasts[0]}"), (people[1], f"{firsts[13]} {lasts[1]}")]
        self.reserved = {p for pair in self.pairs for p in pair}
        self.people = people[2:]
        self.clusters = r.sample([f"{w}-{n}" for w in pools["cluster_words"] for n in pools["cluster_numbers"]], 80)
        self.ports = r.sample([p for p in range(7001, 9990) if p % 1000 and p not in (8080, 8443, 9090)], 60)
        self.releases = list(dict.fromkeys(f"{r.randint(1, 9)}.{r.randint(0, 30)}.{r.randint(0, 20)}"
                                           for _ in range(80)))
        self.free = {a: r.sample(self.services, len(self.services)) for a in
                     ("owner", "port", "release", "cluster", "store", "region", "page", "rollout", "time", "event")}
        start = datetime(2025, 9, 1, tzinfo=timezone.utc) + timedelta(days=r.randint(0, 240))
        self.times, t = [], start
        for _ in range(n_sessions):
            while t.weekday() > 4:
                t += timedelta(days=1)
            self.times.append(t.replace(hour=r.randint(8, 17), minute=r.choice((0, 10, 20, 30, 40, 50))))
            t += timedelta(days=r.randint(1, 6))
        self.asked = (self.times[-1] + timedelta(days=r.randint(1, 6))).replace(hour=9, minute=0)
        self.units: list[Unit] = []
        self.cands: dict = {k: [] for k in KINDS}
        self.turn_meta: dict = {}
        self.alias: dict = {}
        self._tag = 0

    # -- helpers ------------------------------------------------------------------------------

    def day(self, s: int) -> date:
        """The calendar date of session s."""
        return self.times[s].date()

    def last(self) -> int:
        """The index of the last session."""
        return len(self.times) - 1

    def take(self, attr: str) -> str:
        """A service whose attr no structure has used yet."""
        return self.free[attr].pop()

    def value(self, attr: str) -> str:
        """A fresh value of attr, unique in the case."""
        pool = {"port": self.ports, "release": self.releases, "cluster": self.clusters}[attr]
        return str(pool.pop())

    def owner(self) -> str:
        """A person who may own services (not one of the surname pairs)."""
        return self.rng.choice(self.people)

    def store(self) -> str:
        """A datastore with a version."""
        kind, ver = self.rng.choice(STORES)
        return f"{kind} {ver(self.rng)}"

    def dress(self, text: str) -> str:
        """A statement with an opener and a tail drawn with the same odds for every turn."""
        r = self.rng
        body, end = (text[:-1], text[-1]) if text[-1] in ".?!" else (text, ".")
        tail = r.choice(P.TAILS) if end == "." else ""
        opener = r.choice(P.OPENERS)
        out = cap(f"{opener}{body}{tail}{end}", set(self.services))
        for _ in range(r.choice(ASIDE_COUNTS)):
            out += " " + r.choice(P.ASIDES).format(p=r.choice(self.people), n=r.randint(3, 40))
        return out

    def say(self, session: int, *texts: str) -> list:
        """Consecutive turns in a session; returns their tags."""
        tags = []
        for _ in texts:
            self._tag += 1
            tags.append(f"f{self._tag}")
        self.units.append(Unit(session, [self.dress(t) for t in texts], tags))
        return tags

    def sessions(self, n: int, hi: int | None = None) -> list:
        """n distinct sessions in ascending order, ending by hi (default: the one before last)."""
        hi = self.last() - 1 if hi is None else hi
        return sorted(self.rng.sample(range(0, hi + 1), n))

    def anywhere(self) -> int:
        """A random session."""
        return self.rng.randint(0, self.last())

    def add(self, kind: str, qtype: str, text: str, gold: str, evidence: list, answer: list | None = None,
            keywords: list | None = None, **meta) -> None:
        """A candidate question of a kind; one per kind is asked."""
        self.cands[kind].append(Q(kind, qtype, text, gold, evidence, evidence if answer is None else answer,
                                  [gold] if keywords is None else keywords, meta))

    # -- single facts, nicknames, "that one" ---------------------------------------------------

    def plain(self) -> None:
        """Plain statements of owners, ports, builds, clusters and datastores; paraphrase questions
        ask about them in other words, half by the service's nickname (defined in another turn)."""
        r = self.rng
        for attr in ("owner", "port", "release", "cluster", "store"):
            for _ in range(COUNTS["plain"]):
                svc = self.take(attr)
                v = {"owner": self.owner, "store": self.store}.get(attr, lambda: self.value(attr))()
                (tag,) = self.say(self.anywhere(), r.choice(P.SAY[attr]).format(svc=svc, p=v, v=v))
                ask = r.choice(P.PARA_ASK.get(attr, ("",)))
                ref = self.alias.get(svc, (svc,))[0]
                if not ask or content(ask.format(ref=ref), ref) & content(self.units[-1].texts[0], ref):
                    continue  # a paraphrase shares no content word with its answer but the name
                if svc in self.alias:
                    alias, atag = self.alias[svc]
                    self.add("paraphrase", "single_hop", cap(ask.format(ref=alias), set()), v, [atag, tag], [tag],
                             ref=alias)
                else:
                    self.add("paraphrase", "single_hop", ask.format(ref=svc), v, [tag], ref=svc)

    def aliases(self) -> None:
        """Nicknames: "the payments DB" is tallow-api."""
        r = self.rng
        funcs = r.sample(P.ALIAS_FUNCS, COUNTS["alias"])
        for svc, func in zip(r.sample(self.services, COUNTS["alias"]), funcs):
            alias = f"the {func} {r.choice(P.ALIAS_NOUNS)}"
            (tag,) = self.say(self.anywhere(), r.choice(P.ALIAS_SAY).format(svc=svc, alias=alias))
            self.alias[svc] = (alias, tag)

    def corefs(self) -> None:
        """A service named, then its value said of "that one" in the next turn."""
        r = self.rng
        firsts = r.sample([p.split()[0] for p in self.people], COUNTS["coref"])
        for first in firsts:
            attr = r.choice(tuple(P.COREF_SAY))
            svc, v = self.take(attr), self.value(attr)
            intro, verb = r.choice(P.COREF_INTRO)
            t1, t2 = self.say(self.anywhere(), intro.format(first=first, svc=svc),
                              r.choice(P.COREF_SAY[attr]).format(v=v))
            ref = r.choice((svc, f"the service {first} {verb}"))
            self.add("coreference", "multi_hop", P.COREF_ASK[attr].format(ref=ref), v, [t1, t2], [t2],
                     antecedent=svc)

    # -- split facts ---------------------------------------------------------------------------

    def splits(self) -> None:
        """Two sessions each hold a part: vCPUs per region (sum), squad and lead (join of a bridge
        and a value), engine and version (join), a freeze's start and length (its last day)."""
        r = self.rng
        for _ in range(COUNTS["vcpu"]):
            svc = self.take("region")
            (s1, s2), (r1, r2), (a, b) = self.sessions(2, self.last()), r.sample(REGIONS, 2), r.sample(range(4, 25), 2)
            (t1,) = self.say(s1, r.choice(P.VCPU_SAY).format(n=a, svc=svc, r=r1))
            (t2,) = self.say(s2, r.choice(P.VCPU_SAY).format(n=b, svc=svc, r=r2))
            self.add("split", "multi_hop", r.choice(P.VCPU_ASK).format(svc=svc), str(a + b), [t1, t2],
                     keywords=[svc], derivation={"op": "sum", "values": [a, b]})
        for squad in r.sample(P.SQUADS, COUNTS["squad"]):
            svc, lead = self.take("owner"), self.owner()
            s1, s2 = self.sessions(2, self.last())
            if r.random() < 0.5:
                s1, s2 = s2, s1
            (t1,) = self.say(s1, r.choice(P.SQUAD_SAY).format(svc=svc, squad=squad))
            (t2,) = self.say(s2, r.choice(P.LEAD_SAY).format(p=lead, squad=squad))
            self.add("split", "multi_hop", r.choice(P.ASK["owner"]).format(svc=svc), lead, [t1, t2], [t2])
        for _ in range(COUNTS["join"]):
            svc = self.take("store")
            kind, ver = r.choice(STORES)
            ver = ver(r)
            s1, s2 = self.sessions(2, self.last())
            (t1,) = self.say(s1, r.choice(P.ENGINE_SAY).format(svc=svc, kind=kind))
            (t2,) = self.say(s2, r.choice(P.VERSION_SAY).format(svc=svc, ver=ver))
            self.add("split", "multi_hop", r.choice(P.JOIN_ASK).format(svc=svc), f"{kind} {ver}", [t1, t2],
                     keywords=[svc], derivation={"op": "join", "parts": [kind, ver]})
        for _ in range(COUNTS["freeze"]):
            svc = self.take("event")
            s1, s2 = self.sessions(2, self.last())
            begin = self.day(s1) + timedelta(days=r.randint(3, 20))
            n = r.choice((5, 7, 10, 12, 14, 21))
            (t1,) = self.say(s1, r.choice(P.FREEZE_START).format(svc=svc, d=say_date(r, begin)))
            (t2,) = self.say(s2, r.choice(P.FREEZE_LEN).format(svc=svc, dur=say_days(r, n)))
            end = begin + timedelta(days=n - 1)  # the last frozen day: a freeze of n days from its start
            self.add("split", "multi_hop", r.choice(P.FREEZE_ASK).format(svc=svc), month_day(end), [t1, t2],
                     keywords=[svc], derivation={"op": "date_plus", "start": begin.isoformat(), "days": n - 1,
                                                 "length_days": n})

    # -- aggregation and time ------------------------------------------------------------------

    def aggregations(self) -> None:
        """Night pages counted per service; services moving onto a new platform, in order."""
        r = self.rng
        for _ in range(COUNTS["pages"]):
            svc, n = self.take("page"), r.choice((1, 2, 3, 3, 4))
            tags = [self.say(s, r.choice(P.PAGE_SAY).format(svc=svc, h=r.randint(1, 5), m=r.choice(("05", "20", "40"))))[0]
                    for s in self.sessions(n)]
            if n >= 3:
                self.add("aggregation", "multi_hop", r.choice(P.PAGE_ASK).format(svc=svc), str(n), tags,
                         keywords=[svc], derivation={"op": "count", "n": n, "event": ["page", "woke"]})
        for thing in r.sample(P.ROLLOUTS, COUNTS["rollouts"]):
            movers = [self.take("rollout") for _ in range(r.choice((3, 3, 4)))]
            tags = [self.say(s, r.choice(P.ROLLOUT_SAY).format(svc=m, thing=thing, h=r.randint(2, 9),
                                                                m=r.choice(("10", "30", "50"))))[0]
                    for s, m in zip(self.sessions(len(movers)), movers)]
            pick = r.choice(("first", "last", "after"))
            at = {"first": 0, "last": len(movers) - 1}.get(pick, r.randint(1, len(movers) - 1))
            text = P.ROLLOUT_ASK[pick].format(thing=thing, prev=movers[at - 1])
            self.add("aggregation", "multi_hop", text, movers[at], tags,
                     derivation={"op": "order", "sequence": movers, "pick": pick, "thing": thing})

    def times_(self) -> None:
        """Work done or booked on a date said relative to the session's own; work that ran from
        one session to another (days between)."""
        r = self.rng
        for _ in range(COUNTS["relative"]):
            svc, e = self.take("time"), r.choice(P.TIME_WORK)
            s = self.anywhere()
            future = r.random() < 0.3
            phrase = r.choice(P.RELATIVE_FUTURE if future else P.RELATIVE_PAST)
            bank = P.TIME_FUTURE if future else P.TIME_PAST
            first = self.owner().split()[0]
            (tag,) = self.say(s, r.choice(bank).format(svc=svc, e=e, rel=phrase, first=first))
            ask = r.choice(P.TIME_ASK_FUTURE if future else P.TIME_ASK).format(svc=svc, e=e)
            gold = month_day(relative_date(phrase, self.day(s)))
            self.add("time", "temporal", cap(ask, set()), gold, [tag], keywords=[svc],
                     derivation={"op": "relative_date", "phrase": phrase, "session_date": self.day(s).isoformat()})
        for _ in range(COUNTS["duration"]):
            svc, e = self.take("time"), r.choice(P.TIME_WORK)
            s1, s2 = self.sessions(2, self.last())
            (t1,) = self.say(s1, r.choice(P.DURATION_START).format(svc=svc, e=e))
            (t2,) = self.say(s2, r.choice(P.DURATION_END).format(svc=svc, e=e))
            n = (self.day(s2) - self.day(s1)).days
            self.add("time", "temporal", r.choice(P.DURATION_ASK).format(svc=svc, e=e), f"{n} days",
                     [t1, t2], keywords=[svc], derivation={"op": "days_between"})

    # -- update chains, near-duplicates, near misses, forgetting -------------------------------

    def chains(self) -> None:
        """A value changed two or three times after it was first said (owners, clusters, builds),
        and a person's preference that drifted, sometimes back to where it began."""
        r = self.rng
        for _ in range(COUNTS["chains"]):
            attr = r.choice(("owner", "cluster", "release"))
            svc, depth = self.take(attr), r.choice((3, 4))
            if attr == "owner":
                values = r.sample(self.people, depth)
            else:
                values = [self.value(attr) for _ in range(depth)]
            sess = self.sessions(depth)
            tags = self.say(sess[0], r.choice(P.SAY[attr]).format(svc=svc, p=values[0], v=values[0]))
            for s, old, new in zip(sess[1:], values, values[1:]):
                tags += self.say(s, r.choice(P.CHANGE[attr]).format(svc=svc, old=old, new=new))
            self.add("update_chain", "knowledge_update", r.choice(P.ASK_NOW[attr]).format(svc=svc), values[-1],
                     [tags[-1]], superseded_evidence=tags[:-1], outdated_answers=values[:-1], depth=depth)
        for topic in r.sample(tuple(P.PREFS), COUNTS["prefs"]):
            p, depth = self.owner(), r.choice((2, 3, 3))
            values = r.sample(P.PREFS[topic], depth)
            if depth == 3 and r.random() < 0.3:
                values[-1] = values[0]  # drifted back to where it began
            tags = [self.say(s, r.choice(P.PREF_SAY).format(p=p, topic=topic, v=v))[0]
                    for s, v in zip(self.sessions(depth), values)]
            old = [v for v in values[:-1] if v != values[-1]]
            self.add("update_chain", "preference", r.choice(P.PREF_ASK).format(p=p, topic=topic), values[-1],
                     [tags[-1]], superseded_evidence=[t for t, v in zip(tags, values) if v in old],
                     outdated_answers=list(dict.fromkeys(old)), depth=depth)

    def twins(self) -> None:
        """One service in two regions with two values; two people with one surname owning a
        service each. Near misses ask about a third region, a mixed-up name, a service whose
        name resembles one said, or an event never booked."""
        r = self.rng
        for _ in range(COUNTS["twins"]):
            attr, svc = r.choice(tuple(P.TWIN_SAY)), self.take("region")
            (r1, r2, r3), (v1, v2) = r.sample(REGIONS, 3), (self.value(attr), self.value(attr))
            (t1,) = self.say(self.anywhere(), r.choice(P.TWIN_SAY[attr]).format(svc=svc, r=r1, v=v1))
            self.say(self.anywhere(), r.choice(P.TWIN_SAY[attr]).format(svc=svc, r=r2, v=v2))
            self.add("near_duplicate", "single_hop", cap(P.TWIN_ASK[attr].format(svc=svc, r=r1), set()), v1, [t1],
                     distractor_answers=[v2], twin=r2)
            self.add("near_miss", "abstention", cap(P.TWIN_ASK[attr].format(svc=svc, r=r3), set()), IDK, [],
                     keywords=[], near_miss=[svc, r1], never_said=[svc, r3])
        owned = {}
        for pair in self.pairs:
            for p in pair:
                owned[p] = self.take("owner")
                self.say(self.anywhere(), r.choice(P.SAY["owner"]).format(svc=owned[p], p=p))
        for i, pair in enumerate(self.pairs):
            a, b = r.sample(pair, 2)
            tag = next(u.tags[0] for u in self.units if owned[a] in u.texts[0] and a in u.texts[0])
            self.add("near_duplicate", "single_hop", cap(r.choice(P.OWNS_ASK).format(p=a), set()), owned[a], [tag],
                     distractor_answers=[owned[b]], twin=b)
            mixed = f"{a.split()[0]} {self.pairs[1 - i][0].split()[1]}"  # the other pair's surname
            self.add("near_miss", "abstention", cap(r.choice(P.OWNS_ASK).format(p=mixed), set()), IDK, [],
                     keywords=[], near_miss=[a], never_said=[mixed])
        for _ in range(COUNTS["events"]):
            svc, (e, e2) = self.take("event"), r.sample(P.EVENTS, 2)
            d = self.day(self.anywhere()) + timedelta(days=r.randint(2, 30))
            self.say(self.anywhere(), r.choice(P.EVENT_SAY).format(svc=svc, e=e, d=say_date(r, d)))
            self.add("near_miss", "abstention", cap(r.choice(P.EVENT_ASK).format(svc=svc, e=e2), set()), IDK, [],
                     keywords=[], near_miss=[svc, e], never_said=[svc, e2])

    def near_names(self) -> None:
        """Near misses on a service name: lantern-418 asked about where lantern-417's port was said."""
        for u in list(self.units):
            m = re.search(r"\b([a-z]+)-(\d+) (?:listens on port|binds port|serves on) (\d+)", u.texts[0])
            if m is None or f"{m.group(1)}-{m.group(2)}" not in self.services:
                continue
            said, near = f"{m.group(1)}-{m.group(2)}", f"{m.group(1)}-{int(m.group(2)) + 1}"
            if near not in self.services:
                self.add("near_miss", "abstention", cap(self.rng.choice(P.ASK["port"]).format(svc=near), set()), IDK,
                         [], keywords=[], near_miss=[said], never_said=[near])

    def forgetting(self) -> None:
        """Retractions (an offsite, a private appointment, a wrong port) and owner corrections;
        the retracted or corrected turn stays in the history."""
        r = self.rng

        def retract(said: str, undo: str, ask: str, outdated: str) -> None:
            s1, s2 = self.sessions(2)
            (t1,), (t2,) = self.say(s1, said), self.say(s2, undo)
            self.turn_meta[t1] = {"retracted_by": t2}
            self.add("forgetting", "abstention", cap(ask, set()), IDK, [], keywords=[], retraction=t2,
                     superseded_evidence=[t1], outdated_answers=[outdated])

        for team, city in zip(r.sample(P.TEAMS, COUNTS["offsite"]), r.sample(P.CITIES, COUNTS["offsite"])):
            d = say_date(r, self.day(self.anywhere()) + timedelta(days=r.randint(10, 40)))
            retract(r.choice(P.OFFSITE_SAY).format(team=team, city=city, d=d),
                    r.choice(P.OFFSITE_RETRACT).format(team=team, city=city),
                    r.choice(P.OFFSITE_ASK).format(team=team), city)
        for thing in r.sample(P.PRIVATE, COUNTS["private"]):
            p, d = self.owner(), self.day(self.anywhere()) + timedelta(days=r.randint(3, 30))
            retract(r.choice(P.PRIVATE_SAY).format(p=p, thing=thing, d=say_date(r, d)),
                    r.choice(P.PRIVATE_RETRACT).format(p=p, thing=thing),
                    r.choice(P.PRIVATE_ASK).format(p=p, thing=thing), month_day(d))
        for _ in range(COUNTS["port_retract"]):
            svc, v = self.take("port"), self.value("port")
            retract(r.choice(P.SAY["port"]).format(svc=svc, v=v), r.choice(P.PORT_RETRACT).format(svc=svc),
                    r.choice(P.ASK["port"]).format(svc=svc), v)
        for _ in range(COUNTS["owner_fix"]):
            svc, (old, new) = self.take("owner"), r.sample(self.people, 2)
            s1, s2 = self.sessions(2)
            (t1,) = self.say(s1, r.choice(P.SAY["owner"]).format(svc=svc, p=old))
            (t2,) = self.say(s2, r.choice(P.OWNER_FIX).format(svc=svc, old=old, new=new))
            self.turn_meta[t1] = {"retracted_by": t2}
            self.add("forgetting", "knowledge_update", cap(r.choice(P.ASK["owner"]).format(svc=svc), set()), new,
                     [t2], retraction=t2, superseded_evidence=[t1], outdated_answers=[old])

    # -- small talk, layout, the case ----------------------------------------------------------

    def chatter(self) -> None:
        """Small talk, one turn at a time, in random sessions: as many as CHATTER_SHARE of the facts."""
        r = self.rng
        for _ in range(COUNTS["service_talk"]):
            line = r.choice(P.SERVICE_TALK).format(svc=r.choice(self.services), p=r.choice(self.people),
                                                    n=r.randint(2, 90))
            self.say(self.anywhere(), line)
        facts = sum(len(u.texts) for u in self.units)
        for _ in range(int(facts * CHATTER_SHARE)):
            line = r.choice(P.CHATTER).format(svc=r.choice(self.services), p=r.choice(self.people))
            self.say(self.anywhere(), line)

    def layout(self) -> tuple[list, dict]:
        """Sessions with their units in random order; the speakers take turns. Returns the
        session records and each tag's turn id."""
        r = self.rng
        by_session: dict = {}
        for u in self.units:
            by_session.setdefault(u.session, []).append(u)
        out, ids, marked = [], {}, []
        for i, t in enumerate(self.times):
            units = by_session.get(i, [])
            r.shuffle(units)
            texts = [(r.choice(P.SESSION_OPENERS), [])] + [(x, [tg]) for u in units for x, tg in zip(u.texts, u.tags)]
            turns = []
            for j, (text, tags) in enumerate(texts, 1):
                tid = f"{self.case_id}-s{i + 1}t{j}"
                turn = {"turn_id": tid, "role": "user" if j % 2 else "assistant", "text": text}
                for tg in tags:
                    ids[tg] = tid
                    if tg in self.turn_meta:
                        marked.append((turn, self.turn_meta[tg]["retracted_by"]))
                turns.append(turn)
            out.append({"session_id": f"s{i + 1}", "timestamp": t.strftime("%Y-%m-%dT%H:%M:%SZ"), "turns": turns})
        for turn, by in marked:  # turn meta is never given to a system: run.py stores role and text
            turn["meta"] = {"retracted_by": ids[by]}
        return out, ids

    def build(self) -> dict:
        """Every structure, small talk, one question of each kind picked at random, the case."""
        self.aliases()
        self.plain()
        self.corefs()
        self.splits()
        self.aggregations()
        self.times_()
        self.chains()
        self.twins()
        self.near_names()
        self.forgetting()
        self.chatter()
        picked = self.pick()
        sessions, ids = self.layout()
        questions = [self.record(q, k, ids) for k, q in enumerate(picked, 1)]
        return {"case_id": self.case_id, "sessions": sessions, "questions": questions,
                "meta": {"size": "long", "generator": self.generator}}

    def pick(self) -> list:
        """One question of each kind, drawn from its candidates."""
        return [self.rng.choice(self.cands[k]) for k in KINDS]

    def ask(self, text: str) -> str:
        """A question as people type it in chat: sometimes with a lead or an ending."""
        lead, end = self.rng.choice(P.ASK_LEADS), self.rng.choice(P.ASK_ENDS)
        body = text[:-1] if text.endswith("?") else text
        if lead or re.search(r"\b(was|did|now|these days|first|last|after|planned|will)\b", body):
            end = ""  # one aside per question; "right now" fits a question about the present only
        if lead:
            body = body[0].lower() + body[1:] if not any(body.startswith(n) for n in self.reserved) else body
        return cap(f"{lead}{body}{end}?", set(self.services))

    def record(self, q: Q, k: int, ids: dict) -> dict:
        """A question as the dataset writes it: tags become turn ids."""
        meta = {"kind": q.kind, "keywords": q.keywords}
        if q.evidence:
            meta["answer_evidence"] = list(dict.fromkeys(ids[t] for t in q.answer))
        for key, v in q.meta.items():
            if key in ("superseded_evidence",):
                meta[key] = [ids[t] for t in v]
            elif key == "retraction":
                meta[key] = ids[v]
            else:
                meta[key] = v
        return {"qid": f"{self.case_id}q{k}", "type": q.qtype, "asked_at": self.asked.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "question": self.ask(q.text), "gold_answer": q.gold, "evidence": list(dict.fromkeys(ids[t] for t in q.evidence)), "meta": meta}


def make_split_v3(n_cases: int, seed: int, dev: bool, factory: type = Case3,
                  prefixes: tuple = ("md", "mdev")) -> list[dict]:
    """Generate one version 3 split (or, with a Case3 subclass as factory, a later version's built on
    it): every case has one question of each kind."""
    rng = random.Random(seed)
    pools = {"first": pool_split(FIRST, dev), "last": pool_split(LAST, dev),
             "service_words": pool_split(SERVICE_WORDS, dev),
             "cluster_words": sorted({c.split("-")[0] for c in CLUSTERS}),
             "cluster_numbers": list(range(50, 100) if dev else range(1, 50))}
    cases = []
    for i in range(1, n_cases + 1):
        case_id = f"{prefixes[dev]}{i:03d}"
        case = factory(random.Random(rng.random()), case_id, pools).build()
        # Raised, not asserted: `python -O` drops asserts, and --check must run these checks.
        problems = check_case_v3(case)
        if problems:
            raise RuntimeError(f"{case_id}: the generator made a case its own checks refuse: " + "; ".join(problems))
        cases.append(case)
    too_high = {t: round(v, 3) for t, v in guess_rate(cases).items() if v > NONE_MAX.get(t, NONE_MAX["default"])}
    if too_high:
        raise RuntimeError(f"plausible guesses get these types right too often: {too_high}")
    return cases


# ---------------------------------------------------------------------------------------------
# What --check verifies on every version 3 question, besides the files matching the generator
# ---------------------------------------------------------------------------------------------

def names(text: str, name: str) -> bool:
    """Whether the text names a service (a hyphenated name, punctuation around it allowed)."""
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) is not None


def states(text: str, value: str) -> bool:
    """Whether the text states the value: as the grader finds a value in an answer (dates and
    numbers normalized), or written between non-word characters (":9685/healthz")."""
    from rules import states_value
    return states_value(text, value) or re.search(rf"(?<!\w){re.escape(value)}(?!\w)", text, re.I) is not None


def sentences(text: str) -> list:
    """The sentences of a turn: a turn may say two things, and a near miss or a counted event is
    one sentence's."""
    return re.split(r"(?<=[.?!])\s+", text)


def derived_problem(q: dict, texts: list, dates: list) -> str | None:
    """Why a computed gold does not follow from its answer-bearing turns as meta.derivation says."""
    d, gold = q["meta"]["derivation"], q["gold_answer"]
    op = d["op"]
    if op == "join":
        ok = " ".join(d["parts"]) == gold and all(any(states(t, p) for t in texts) for p in d["parts"])
    elif op == "sum":
        a, b = d["values"]
        ok = str(a + b) == gold and states(texts[0], str(a)) and states(texts[1], str(b))
    elif op == "count":
        ok = len(texts) == d["n"] and str(d["n"]) == gold
    elif op == "order":
        seq = d["sequence"]
        # The mover of each turn: the one named in the sentence that names the platform.
        said = [next(s for s in seq for x in sentences(t) if names(x, s) and d["thing"] in x) for t in texts]
        order = [s for _, s in sorted(zip(dates, said))]
        if d["pick"] not in ("first", "last", "after"):
            raise ValueError(f"{q['qid']}: unknown order pick {d['pick']!r}; expected first, last or after")
        pick = {"first": order[0], "last": order[-1]}.get(d["pick"])
        if d["pick"] == "after":
            prev = next(s for s in seq if names(q["question"], s))
            pick = order[order.index(prev) + 1]
        ok = order == seq and pick == gold
    elif op == "date_plus":
        start = date.fromisoformat(d["start"])
        ok = (month_day(start + timedelta(days=d["days"])) == gold and d["days"] == d["length_days"] - 1
              and any(states(t, month_day(start)) for t in texts)
              and any(re.search(rf"\b({d['length_days']}|{NUMBER_WORDS.get(d['length_days'], '-')}) days\b|"
                                rf"\b{NUMBER_WORDS.get(d['length_days'] // 7, 'one')} weeks?\b", t) for t in texts))
    elif op == "days_between":
        ok = f"{(dates[1] - dates[0]).days} days" == gold
    elif op == "relative_date":
        ok = (d["phrase"] in texts[0] and dates[0].isoformat() == d["session_date"]
              and month_day(relative_date(d["phrase"], dates[0])) == gold)
    else:
        return f"unknown derivation {op!r}"
    return None if ok else f"the gold does not follow from its evidence by {op}"


def question_problems(q: dict, turns: dict, dates: dict) -> list:
    """The problems of one version 3 question."""
    from normalization import verdict_normalize
    meta, gold, out = q["meta"], q["gold_answer"], []
    missing = [e for e in q["evidence"] + meta.get("superseded_evidence", []) if e not in turns]
    if missing:
        return [f"evidence {missing} is not in the case"]
    answer = meta.get("answer_evidence", [])
    if q["type"] != "abstention":
        if not answer or not set(answer) <= set(q["evidence"]):
            out.append("answer_evidence is not a non-empty subset of the evidence")
        if states(q["question"], gold):
            out.append("the gold is in the question")
    texts = [turns[e]["text"] for e in answer]
    for o in meta.get("outdated_answers", []) + meta.get("distractor_answers", []):
        if verdict_normalize(o) == verdict_normalize(gold):
            out.append(f"a distractor or outdated value {o!r} is the gold")
        elif not any(states(t["text"], o) for tid, t in turns.items() if tid not in q["evidence"]):
            out.append(f"the distractor or outdated value {o!r} is never stated outside the evidence")
    if meta["keywords"] and not any(all(k.lower() in t.lower() for k in meta["keywords"]) for t in texts):
        out.append("the keywords do not co-occur in an answer-bearing turn")
    if q["type"] == "abstention":
        said = [x for t in turns.values() for x in sentences(t["text"])]
        if "never_said" in meta and any(all(states(x, w) for w in meta["never_said"]) for x in said):
            out.append(f"{meta['never_said']} is said in the history, so this is no near miss")
        if "near_miss" in meta and not any(all(states(x, w) for w in meta["near_miss"]) for x in said):
            out.append(f"the near miss {meta['near_miss']} is never said")
    elif "derivation" in meta:
        problem = derived_problem(q, texts, [dates[e] for e in answer])
        out += [problem] if problem else []
        if meta["derivation"]["op"] == "count":
            # No other turn reports the counted event about the counted service.
            svc, words = meta["keywords"][0], meta["derivation"]["event"]
            extra = [tid for tid, t in turns.items() if tid not in q["evidence"] and any(
                names(x, svc) and any(w in x.lower() for w in words) for x in sentences(t["text"]))]
            out += [f"turns {extra} report the counted event outside the evidence"] if extra else []
    elif not any(states(t, gold) for t in texts):
        out.append("the gold is not stated by its answer-bearing evidence")
    for e in meta.get("superseded_evidence", []) if q["meta"]["kind"] == "forgetting" else []:
        if turns[e].get("meta", {}).get("retracted_by") != meta["retraction"]:
            out.append(f"the retracted turn {e} is not marked retracted_by {meta['retraction']}")
    return out


def check_case_v3(case: dict) -> list[str]:
    """The problems of one version 3 case: evidence resolves, answer_evidence is part of it, the
    gold is stated by the answer-bearing turns (or computed from them as meta.derivation says)
    and not in its question, distractors and outdated values differ from the gold, near misses
    were never said, retracted turns are marked, and no filler turn adds to a count."""
    turns = {t["turn_id"]: t for s in case["sessions"] for t in s["turns"]}
    dates = {t["turn_id"]: date.fromisoformat(s["timestamp"][:10]) for s in case["sessions"] for t in s["turns"]}
    problems = []
    for q in case["questions"]:
        if q["meta"]["kind"] not in KINDS:
            problems.append(f"{q['qid']}: unknown kind {q['meta']['kind']!r}")
            continue
        problems += [f"{q['qid']} ({q['meta']['kind']}): {p}" for p in question_problems(q, turns, dates)]
    return problems


def plausible_guesses(q: dict) -> list[str]:
    """The answers a capable model without memory would plausibly give to a question."""
    asked = date.fromisoformat(q["asked_at"][:10])
    text = q["question"].lower()
    for topic, options in P.PREFS.items():
        if topic in text:
            return list(options)
    if ("how many" in text or "how long" in text) and "days" in text:
        return ["7 days", "14 days", "30 days", "3 days"]
    if "how many" in text or "how often" in text:
        return ["2", "3", "4", "5"]
    if "date" in text or "day" in text or text.startswith("when"):
        return [month_day(asked + timedelta(days=n)) for n in (-7, -1, 0, 1, 7)]
    if "port" in text or "dial" in text or "socket" in text:
        return ["8080", "443", "3000", "5432"]
    if "version" in text or "build" in text:
        return ["1.0.0", "2.0", "Postgres 15", "latest"]
    return [IDK]


def guess_rate(cases: list[dict]) -> dict:
    """Per contract type, the expected share of answerable questions a plausible guess gets
    right under the strict rules (the `none` control's ceiling for a capable model)."""
    from grading import decide
    per: dict = {}
    for case in cases:
        for q in case["questions"]:
            if q["type"] != "abstention":
                guesses = plausible_guesses(q)
                hits = sum(decide({**q, "answer": g}, with_judge=False)[0] == "correct" for g in guesses)
                per.setdefault(q["type"], []).append(hits / len(guesses))
    return {t: sum(v) / len(v) for t, v in per.items()}
