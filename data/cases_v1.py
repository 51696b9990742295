"""Version 1 of the bundled dataset (data/cases.jsonl, data/dev.jsonl): a synthetic engineering
assistant over months. Each case is one team, told across 3 to 12 timestamped sessions padded
with unrelated work; every asked fact has same-topic distractors. The test set and the dev set
draw from disjoint name pools. The output stays as it was, byte for byte.

Usage: through make_cases.py (`python data/make_cases.py --version 1`, `--check`).
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone

from phrases_v1 import (ACKS, ACKS_AFTER_EXPLAIN, ARTIFACTS, ASSISTANT_SAY, CAUSES, CAUSE_ASK, CLUSTER_ASK,
                        CLUSTER_MOVE, CLUSTER_SAY, DEADLINE_ASK, DEADLINE_SAY, DEADLINE_TASKS, DONE_ASK, DONE_SAY, ECHO,
                        EVENTS, EVENT_ASK, EVENT_SAY, EXPLAIN_ITEMS, FIX_SAY, FREEZE_ASK, FREEZE_SAY, FREEZE_SPLIT,
                        FREEZE_VAGUE, IDK, INCIDENT_SAY, INCIDENT_VAGUE, MH_ARTIFACT_CLUSTER, MH_CLUSTER_OWNER,
                        MH_FREEZE_OWNER, MH_INCIDENT_OWNER, MH_OWNER_CLUSTER, MH_OWNER_STORE, NOISE_QA,
                        NOISE_STATEMENTS, OPENERS, OWNER_ASK, OWNER_HANDOVER, OWNER_SAY, PORT_ASK, PORT_SAY, PORT_VAGUE,
                        PREFS, PREF_CHANGE, PREF_TOPICS, RELEASE_ASK, RELEASE_BUMP, RELEASE_SAY, SESSION_OPENERS,
                        SHORT_REPLIES, STORE_ASK, STORE_SAY, STORE_UPGRADE, STORE_VAGUE, TICKET_ASK, TICKET_PREFIXES)
from vocabulary import CLUSTERS, FIRST, LAST, MONTHS, NUMBER_WORDS, SERVICES, STORES, WEEKDAYS, month_day, pool_split

TYPES = ("single_hop", "multi_hop", "temporal", "knowledge_update", "abstention", "preference")


# ---------------------------------------------------------------------------------------------
# Case building
# ---------------------------------------------------------------------------------------------

@dataclass
class Chunk:
    """Contiguous turns placed in one session; tags mark turns that questions cite."""
    session: int
    turns: list  # (role, text, tag or None)


@dataclass
class Question:
    qtype: str
    text: str
    gold: str
    evidence: list  # tags
    keywords: list
    superseded: list = field(default_factory=list)
    outdated: list = field(default_factory=list)
    echo: tuple = ()  # (ECHO kind, fill values, earliest session) for same-topic distractors


def say_date(rng: random.Random, d: date) -> str:
    """A date as people write it, in one of several styles."""
    style = rng.randrange(5)
    suffix = {1: "st", 2: "nd", 3: "rd", 21: "st", 22: "nd", 23: "rd", 31: "st"}.get(d.day, "th")
    if style == 0:
        return month_day(d)
    if style == 1:
        return f"{d.day} {MONTHS[d.month - 1]}"
    if style == 2:
        return f"{WEEKDAYS[d.weekday()]}, {month_day(d)}"
    if style == 3:
        return f"the {d.day}{suffix} of {MONTHS[d.month - 1]}"
    return d.isoformat()


def say_days(rng: random.Random, n: int) -> str:
    """A duration in days, in words or digits, or in weeks when it divides."""
    if n % 7 == 0 and rng.random() < 0.7:
        w = n // 7
        return "one week" if w == 1 else f"{NUMBER_WORDS.get(w, w)} weeks"
    if n in NUMBER_WORDS and rng.random() < 0.5:
        return f"{NUMBER_WORDS[n]} days"
    return f"{n} days"


def cap(text: str) -> str:
    """The text with its first character upper-cased."""
    return text[0].upper() + text[1:] if text else text


class Sessions:
    """What both generators' case builders share: session times (`self.times`) and a counter of
    chunk-local tags (`self._tag`), which each builder sets up in its __init__, and the numbering
    of a session's turns."""

    case_id: str
    times: list
    tag_to_id: dict
    _tag: int

    def tag(self) -> str:
        """A fresh chunk-local tag; turn ids are assigned at layout time."""
        self._tag += 1
        return f"f{self._tag}"

    def day(self, s: int) -> date:
        """The calendar date of session s."""
        return self.times[s].date()

    def session_record(self, i: int, t: datetime, turns: list[tuple]) -> dict:
        """Session i at time t as the dataset writes it: its (role, text, tag) turns numbered,
        and each tagged turn's id noted in `self.tag_to_id`."""
        out = []
        for j, (role, text, tg) in enumerate(turns, 1):
            tid = f"{self.case_id}-s{i + 1}t{j}"
            if tg:
                self.tag_to_id[tg] = tid
            out.append({"turn_id": tid, "role": role, "text": text})
        return {"session_id": f"s{i + 1}", "timestamp": t.strftime("%Y-%m-%dT%H:%M:%SZ"), "turns": out}


class CaseBuilder(Sessions):
    """Builds one case: a world of facts, chunks placed in sessions, and questions."""

    def __init__(self, rng: random.Random, case_id: str, size: str, pools: dict) -> None:
        self.rng, self.case_id, self.size = rng, case_id, size
        r = rng
        n_sessions = {"short": r.randint(3, 5), "medium": r.randint(5, 8), "long": r.randint(8, 12)}[size]
        n_services = {"short": 5, "medium": 6, "long": 7}[size]
        firsts = r.sample(pools["first"], 9)
        self.people = [f"{f} {r.choice(pools['last'])}" for f in firsts]
        self.services = r.sample(pools["services"], n_services)
        self.clusters = r.sample(pools["clusters"], n_services + 4)
        self.artifacts = r.sample(pools["artifacts"], n_services)
        self.ticket_prefix = r.choice(TICKET_PREFIXES)
        # The world: one true, current value per service and attribute.
        kinds = r.sample(STORES, len(STORES))
        self.world = {}
        for i, svc in enumerate(self.services):
            kind, ver = kinds[i % len(kinds)]
            self.world[svc] = {
                "owner": self.people[i], "cluster": self.clusters[i],
                "store": f"{kind} {ver(r)}", "store_kind": kind,
                "release": f"{r.randint(1, 9)}.{r.randint(0, 30)}.{r.randint(0, 20)}",
                "port": str(r.choice([p for p in range(7001, 9990) if p % 1000 and p not in (8080, 8443, 9090)])),
            }
        self.spare_people = self.people[n_services:]
        self.spare_clusters = self.clusters[n_services:]
        # Session dates: a start between Sep 2025 and Jun 2026, gaps of 2 to 21 days.
        start = datetime(2025, 9, 1, tzinfo=timezone.utc) + timedelta(days=r.randint(0, 280))
        self.times = []
        t = start
        for _ in range(n_sessions):
            t = t.replace(hour=r.randint(8, 17), minute=r.choice((0, 5, 15, 30, 40, 45)))
            self.times.append(t)
            t = t + timedelta(days=r.randint(2, 21))
        self.asked = (self.times[-1] + timedelta(days=r.randint(1, 6))).replace(hour=9, minute=0)
        self.chunks: list[Chunk] = []
        self.questions: list[Question] = []
        self.stated: dict = {}       # (svc, attr) -> tag of the statement
        self.blocked: set = set()    # (svc, attr) never to be stated (abstention targets, KU)
        self.locked: set = set()     # services whose attributes a KU or multi-hop depends on
        self.used_subject: set = set()
        self.prefs_used: set = set()
        self.incidents: dict = {}    # svc -> dict
        self.events_used: set = set()
        self.freezes: dict = {}
        self._tag = 0
        self.decks: dict = {}

    # -- helpers --------------------------------------------------------------------------

    def pick_session(self, lo: int = 0, hi: int | None = None) -> int:
        """A random session index in [lo, hi] (hi defaults to the last session)."""
        hi = len(self.times) - 1 if hi is None else hi
        return self.rng.randint(lo, max(lo, hi))

    def open(self, text: str) -> str:
        """A user statement with an optional opener; service names keep their lower case."""
        opener = self.rng.choice(OPENERS)
        if opener:
            return opener + text
        return text if re.split(r"[\s']", text, maxsplit=1)[0] in self.services else cap(text)

    def add_fact(self, session: int, text: str, role: str = "user", ack: bool = True) -> str:
        """Add one statement turn (plus an assistant acknowledgement); return its tag."""
        tg = self.tag()
        turns = [(role, self.open(text) if role == "user" else cap(text), tg)]
        if ack and role == "user" and self.rng.random() < 0.8:
            turns.append(("assistant", self.rng.choice(ACKS), None))
        self.chunks.append(Chunk(session, turns))
        return tg

    def free_services(self, *attrs: str) -> list[str]:
        """Services not yet used as a question subject whose attrs are stateable."""
        return [s for s in self.services if s not in self.used_subject
                and all((s, a) not in self.blocked for a in attrs)]

    def state(self, svc: str, attr: str, session: int | None = None) -> str:
        """Make sure svc's current attr value is stated somewhere; return the statement tag."""
        key = (svc, attr)
        if key in self.stated:
            return self.stated[key]
        if key in self.blocked:  # a generator bug: a value no turn may state (raised, so python -O keeps it)
            raise RuntimeError(f"{self.case_id}: {svc}'s {attr} is blocked and must not be stated")
        s = self.pick_session() if session is None else session
        v = self.world[svc][attr]
        bank = {"owner": OWNER_SAY, "cluster": CLUSTER_SAY, "store": STORE_SAY,
                "release": RELEASE_SAY, "port": PORT_SAY}[attr]
        text = self.rng.choice(bank).format(svc=svc, p=v, v=v)
        role = "user"
        if attr in ASSISTANT_SAY and self.rng.random() < 0.25:
            # Sometimes the assistant is the one who looked it up.
            role, text = "assistant", self.rng.choice(ASSISTANT_SAY[attr]).format(svc=svc, v=v)
        self.stated[key] = self.add_fact(s, text, role)
        return self.stated[key]

    def distract(self, attr: str, exclude: str, n: int = 2) -> None:
        """State the same attribute for other services, as same-topic distractors."""
        others = [s for s in self.services if s != exclude and (s, attr) not in self.blocked]
        for s in self.rng.sample(others, min(n, len(others))):
            self.state(s, attr)

    def incident(self, svc: str, vague: bool = False, session: int | None = None) -> dict:
        """State an outage of svc (with a ticket and a cause unless vague)."""
        if svc in self.incidents:
            return self.incidents[svc]
        r = self.rng
        s = self.pick_session(0, len(self.times) - 2) if session is None else session
        inc = {"session": s, "ticket": f"{self.ticket_prefix}-{r.randint(1000, 9899)}",
               "artifact": self.artifacts[self.services.index(svc)], "vague": vague}
        if vague:
            inc["tag"] = self.add_fact(s, r.choice(INCIDENT_VAGUE).format(svc=svc))
        else:
            cause = r.choice(CAUSES).format(a=inc["artifact"])
            text = r.choice(INCIDENT_SAY).format(svc=svc, t=inc["ticket"], m=r.randint(12, 95), c=cause)
            inc["tag"] = self.add_fact(s, text)
        self.incidents[svc] = inc
        return inc

    def freeze(self, svc: str, session: int | None = None) -> dict:
        """Announce a change freeze on svc: a start date after the session and a length."""
        if svc in self.freezes:
            return self.freezes[svc]
        r = self.rng
        s = self.pick_session() if session is None else session
        taken = {f["start"] for f in self.freezes.values() if "start" in f}
        start = self.day(s) + timedelta(days=r.randint(3, 25))
        while start in taken:
            start += timedelta(days=1)
        n = r.choice((7, 9, 10, 12, 14, 14, 21, 5, 8, 11))
        said = say_date(r, start)
        fz = {"start": start, "days": n, "end": start + timedelta(days=n), "said": said}
        if r.random() < 0.3:
            a, b = r.choice(FREEZE_SPLIT)
            t1 = self.tag()
            t2 = self.tag()
            self.chunks.append(Chunk(s, [
                ("user", self.open(a.format(svc=svc, d=said)), t1),
                ("assistant", r.choice(("How long does it run?", "Okay. For how long?",
                                        "Noted. Do you know the length yet?")), None),
                ("user", cap(b.format(dur=say_days(r, n))), t2)]))
            fz["tags"] = [t1, t2]
        else:
            text = r.choice(FREEZE_SAY).format(svc=svc, d=said, dur=say_days(r, n))
            fz["tags"] = [self.add_fact(s, text)]
        self.freezes[svc] = fz
        return fz

    # -- question makers: each returns True if it added a question -------------------------

    def q_single_hop(self) -> bool:
        r = self.rng
        kind = r.choice(("owner", "cluster", "store", "release", "port", "ticket", "cause"))
        if kind in ("ticket", "cause"):
            cands = [s for s in self.free_services() if s not in self.incidents]
            if not cands:
                return False
            svc = r.choice(cands)
            inc = self.incident(svc)
            others = [s for s in self.services if s != svc and s not in self.incidents]
            if others:
                self.incident(r.choice(others), vague=r.random() < 0.4)
            gold = inc["ticket"] if kind == "ticket" else inc["artifact"]
            q = r.choice(TICKET_ASK if kind == "ticket" else CAUSE_ASK).format(svc=svc)
            self.questions.append(Question("single_hop", q, gold, [inc["tag"]], [svc, gold],
                                           echo=("incident", {"svc": svc}, inc["session"])))
        else:
            cands = self.free_services(kind)
            if not cands:
                return False
            svc = r.choice(cands)
            tg = self.state(svc, kind)
            self.distract(kind, svc, 2)
            gold = self.world[svc][kind]
            ask = {"owner": OWNER_ASK, "cluster": CLUSTER_ASK, "store": STORE_ASK,
                   "release": RELEASE_ASK, "port": PORT_ASK}[kind]
            self.questions.append(Question("single_hop", r.choice(ask).format(svc=svc), gold,
                                           [tg], [svc, gold], echo=(kind, {"svc": svc}, 0)))
        self.used_subject.add(svc)
        return True

    def q_multi_hop(self) -> bool:
        r = self.rng
        kind = r.choice(("owner_cluster", "owner_store", "incident_owner", "cluster_owner",
                         "artifact_cluster", "freeze_owner"))
        need = {"owner_cluster": ("owner", "cluster"), "owner_store": ("owner", "store"),
                "incident_owner": ("owner",), "cluster_owner": ("cluster", "owner"),
                "artifact_cluster": ("cluster",), "freeze_owner": ("owner",)}[kind]
        cands = [s for s in self.free_services(*need)
                 if not (kind in ("incident_owner", "artifact_cluster") and s in self.incidents)
                 and not (kind == "freeze_owner" and s in self.freezes)]
        if not cands:
            return False
        svc = r.choice(cands)
        w = self.world[svc]
        # Put the two hops in different sessions when there is room.
        s1 = self.pick_session()
        s2 = r.choice([i for i in range(len(self.times)) if i != s1] or [s1])
        if kind in ("incident_owner", "artifact_cluster"):
            inc = self.incident(svc, session=min(s1, len(self.times) - 2))
            second = "owner" if kind == "incident_owner" else "cluster"
            t2 = self.state(svc, second, s2)
            self.distract(second, svc, 2)
            other = [s for s in self.services if s != svc and s not in self.incidents]
            if other:
                self.incident(r.choice(other))
            if kind == "incident_owner":
                q = r.choice(MH_INCIDENT_OWNER).format(t=inc["ticket"])
                gold, kw = w["owner"], [svc, w["owner"]]
            else:
                q = r.choice(MH_ARTIFACT_CLUSTER).format(a=inc["artifact"])
                gold, kw = w["cluster"], [svc, w["cluster"]]
            ev = [inc["tag"], t2]
        elif kind == "freeze_owner":
            fz = self.freeze(svc, s1)
            t2 = self.state(svc, "owner", s2)
            self.distract("owner", svc, 2)
            others = [s for s in self.services if s != svc and s not in self.freezes]
            if others:
                self.freeze(r.choice(others))
            q = r.choice(MH_FREEZE_OWNER).format(d=month_day(fz["start"]))
            gold, kw, ev = w["owner"], [svc, w["owner"]], fz["tags"] + [t2]
        else:
            a, b = need
            t1, t2 = self.state(svc, a, s1), self.state(svc, b, s2)
            self.distract(a, svc, 2)
            self.distract(b, svc, 2)
            if kind == "owner_cluster":
                q, gold = r.choice(MH_OWNER_CLUSTER).format(p=w["owner"]), w["cluster"]
            elif kind == "owner_store":
                q, gold = r.choice(MH_OWNER_STORE).format(p=w["owner"]), w["store"]
            else:
                q, gold = r.choice(MH_CLUSTER_OWNER).format(v=w["cluster"]), w["owner"]
            kw = [svc, gold]
            ev = [t1, t2]
        self.used_subject.add(svc)
        self.locked.add(svc)
        echo = {"owner_cluster": ("person", {"full": w["owner"]}, 0),
                "owner_store": ("person", {"full": w["owner"]}, 0),
                "cluster_owner": ("cluster", {"svc": svc}, 0),
                "freeze_owner": ("freeze", {"svc": svc}, 0)}.get(kind)
        if echo is None:
            echo = ("incident", {"svc": svc}, self.incidents[svc]["session"])
        self.questions.append(Question("multi_hop", q, gold, ev, kw, echo=echo))
        return True

    def _deadline_question(self, svc: str) -> tuple[str, str, list, list, tuple]:
        """A temporal question on the days left until a deadline of svc's, with its distractors:
        (question, gold, evidence, keywords, echo)."""
        r = self.rng
        template, other_template = r.sample(DEADLINE_TASKS, 2)
        task = template.format(svc=svc)
        s = self.pick_session()
        due = self.asked.date() + timedelta(days=r.randint(4, 30))
        said = say_date(r, due)
        tg = self.add_fact(s, r.choice(DEADLINE_SAY).format(task=task, d=said))
        # Distractors: the same work on another service, other work on the same service.
        other_svc = r.choice([x for x in self.services if x != svc])
        for dtask in (template.format(svc=other_svc), other_template.format(svc=svc)):
            shift = timedelta(days=r.choice((-3, 5, 9, 12)))
            self.add_fact(self.pick_session(), r.choice(DEADLINE_SAY).format(
                task=dtask, d=say_date(r, due + shift)))
        q = r.choice(DEADLINE_ASK).format(task=task)
        n = (due - self.asked.date()).days
        return q, f"{n} days", [tg], [svc, said], ("deadline", {"task": task}, 0)

    def q_temporal(self) -> bool:
        r = self.rng
        kind = r.choice(("freeze", "event", "between", "deadline", "ago"))
        cands = self.free_services()
        if not cands:
            return False
        svc = r.choice(cands)
        last = len(self.times) - 1
        if kind == "freeze":
            if svc in self.freezes:
                return False
            fz = self.freeze(svc)
            others = [s for s in self.services if s != svc and s not in self.freezes]
            if others:
                self.freeze(r.choice(others))
            q = r.choice(FREEZE_ASK).format(svc=svc)
            gold, ev, kw = month_day(fz["end"]), fz["tags"], [svc, fz["said"]]
            echo = ("freeze", {"svc": svc}, 0)
        elif kind == "event":
            s = self.pick_session()
            ev_name = r.choice([e for e in EVENTS if e not in self.events_used])
            self.events_used.add(ev_name)
            n, rel = self._relative(r, self.day(s))
            text = r.choice(EVENT_SAY).format(e=ev_name, svc=svc, rel=rel, p=r.choice(self.people))
            tg = self.add_fact(s, text)
            # Distractor: the same event for another service on another day.
            other = r.choice([x for x in self.services if x != svc])
            s2 = self.pick_session()
            _, rel2 = self._relative(r, self.day(s2))
            self.add_fact(s2, r.choice(EVENT_SAY).format(e=ev_name, svc=other, rel=rel2,
                                                           p=r.choice(self.people)))
            q = r.choice(EVENT_ASK).format(e=ev_name, svc=svc)
            gold, ev, kw = month_day(self.day(s) + timedelta(days=n)), [tg], [svc, ev_name]
            echo = ("event", {"svc": svc, "e": ev_name}, 0)
        elif kind == "between":
            if svc in self.incidents or last < 1:
                return False
            s1 = self.pick_session(0, last - 1)
            s2 = self.pick_session(s1 + 1, last)
            inc = self.incident(svc, session=s1)
            t2 = self.add_fact(s2, r.choice(FIX_SAY).format(svc=svc))
            other = [s for s in self.services if s != svc and s not in self.incidents]
            if other:
                self.incident(r.choice(other))
            q = r.choice(("How many days passed between the {svc} outage and its fix shipping?",
                          "How many days after the {svc} outage did the permanent fix ship?",
                          "How long, in days, did it take to ship the fix for the {svc} outage?")
                         ).format(svc=svc)
            n = (self.day(s2) - self.day(s1)).days
            gold, ev, kw = f"{n} days", [inc["tag"], t2], [svc, inc["ticket"]]
            echo = ("incident", {"svc": svc}, s1)
        elif kind == "deadline":
            q, gold, ev, kw, echo = self._deadline_question(svc)
        else:  # ago
            s = self.pick_session()
            ev_name = r.choice([e for e in EVENTS if e not in self.events_used])
            self.events_used.add(ev_name)
            tg = self.add_fact(s, r.choice(DONE_SAY).format(e=ev_name, svc=svc))
            other = r.choice([x for x in self.services if x != svc])
            self.add_fact(self.pick_session(), r.choice(DONE_SAY).format(e=ev_name, svc=other))
            q = r.choice(DONE_ASK).format(e=ev_name, svc=svc)
            n = (self.asked.date() - self.day(s)).days
            gold, ev, kw = f"{n} days", [tg], [svc, ev_name]
            echo = ("event", {"svc": svc, "e": ev_name}, 0)
        self.used_subject.add(svc)
        self.questions.append(Question("temporal", q, gold, ev, kw, echo=echo))
        return True

    @staticmethod
    def _relative(r: random.Random, d: date) -> tuple[int, str]:
        """An unambiguous relative date phrase and its offset in days."""
        choices = [(1, "tomorrow"), (2, "the day after tomorrow"), (7, "a week from today"),
                   (14, "two weeks from today")]
        n = r.randint(3, 12)
        choices.append((n, f"in {n} days"))
        if d.weekday() < 4:
            choices.append((4 - d.weekday(), "this Friday"))
        return r.choice(choices)

    def q_knowledge_update(self) -> bool:
        r = self.rng
        kind = r.choice(("owner", "cluster", "store", "release", "pref"))
        if len(self.times) < 2:
            return False
        last = len(self.times) - 1
        s_old = self.pick_session(0, max(0, last // 2))
        s_new = self.pick_session(s_old + 1, last)
        if kind == "pref":
            return self._pref_update(s_old, s_new)
        cands = [s for s in self.free_services(kind) if s not in self.locked
                 and (s, kind) not in self.stated]
        if not cands:
            return False
        svc = r.choice(cands)
        w = self.world[svc]
        new = w[kind]
        if kind == "owner":
            if not self.spare_people:
                return False
            old = self.spare_people.pop()
            old_text = r.choice(OWNER_SAY).format(svc=svc, p=old)
            new_text = r.choice(OWNER_HANDOVER).format(svc=svc, old=old, new=new)
        elif kind == "cluster":
            old = self.spare_clusters.pop()
            old_text = r.choice(CLUSTER_SAY).format(svc=svc, v=old)
            new_text = r.choice(CLUSTER_MOVE).format(svc=svc, old=old, new=new)
        elif kind == "store":
            k, ver = w["store"].split(" ", 1)
            parts = ver.split(".")
            if int(parts[-1]) >= 2:
                parts[-1] = str(r.randint(1, int(parts[-1]) - 1))
            else:
                parts[0] = str(int(parts[0]) - 1)
            old = f"{k} {'.'.join(parts)}"
            old_text = r.choice(STORE_SAY).format(svc=svc, v=old)
            new_text = r.choice(STORE_UPGRADE).format(svc=svc, old=old, new=new)
        else:
            maj, mi, pa = (int(x) for x in new.split("."))
            old = f"{maj}.{mi - 1}.{r.randint(0, 9)}" if mi > 0 else f"{maj - 1}.{r.randint(5, 20)}.{pa}"
            if maj == 1 and mi == 0:
                old = f"0.{r.randint(8, 30)}.{r.randint(0, 9)}"
            old_text = r.choice(RELEASE_SAY).format(svc=svc, v=old)
            new_text = r.choice(RELEASE_BUMP).format(svc=svc, old=old, new=new)
        sup = [self.add_fact(s_old, old_text)]
        if s_new - s_old >= 2 and r.random() < 0.4:
            # The stale value repeated in between, as people do before they learn of the change.
            mid = r.randint(s_old + 1, s_new - 1)
            sup.append(self.add_fact(mid, f"as far as I know {svc} is still on {old}, right?"
                                     if kind != "owner" else f"I'll ask {old} about {svc}, it's their service.",
                                     ack=False))
        tg = self.add_fact(s_new, new_text)
        self.stated[(svc, kind)] = tg
        self.distract(kind, svc, 2)
        ask = {"owner": OWNER_ASK, "cluster": CLUSTER_ASK, "store": STORE_ASK,
               "release": RELEASE_ASK}[kind]
        self.used_subject.add(svc)
        self.locked.add(svc)
        self.questions.append(Question("knowledge_update", r.choice(ask).format(svc=svc), new,
                                       [tg], [svc, new], sup, [old], echo=(kind, {"svc": svc}, 0)))
        return True

    def _pref_update(self, s_old: int, s_new: int) -> bool:
        r = self.rng
        free = [p for p in PREFS if p[0] not in self.prefs_used]
        if not free:
            return False
        key, options, user_say, col_say, q_user, _ = r.choice(free)
        self.prefs_used.add(key)
        (old_p, old_g), (new_p, new_g) = r.sample(self._options(options), 2)
        sup = [self.add_fact(s_old, r.choice(user_say).format(v=old_p))]
        # A colleague who keeps the old choice is a second distractor.
        self.add_fact(self.pick_session(), r.choice(col_say).format(p=r.choice(self.people), v=old_p))
        tg = self.add_fact(s_new, r.choice(PREF_CHANGE).format(
            topic=PREF_TOPICS[key], old=old_p, new=new_p))
        self.questions.append(Question("knowledge_update", q_user, new_g, [tg], [new_g],
                                       sup, [old_g], echo=("pref", {"topic": PREF_TOPICS[key]}, 0)))
        return True

    def _options(self, options: tuple) -> list[tuple[str, str]]:
        """Pref options as (phrase, gold); channel names are made per case."""
        out = []
        for phrase, gold in options:
            if gold is None:
                c = self.services[0].split("-")[0]
                phrase = phrase.format(c=c)
                gold = phrase
            out.append((phrase, gold))
        return out

    def q_abstention(self) -> bool:
        r = self.rng
        kind = r.choice(("store", "owner", "port", "ticket", "freeze", "pref"))
        if kind == "pref":
            free = [p for p in PREFS if p[0] not in self.prefs_used]
            key, options, _, col_say, q_user, _ = r.choice(free)
            self.prefs_used.add(key)
            # Only a colleague's preference is stated; the user's never is.
            phrase, _ = r.choice(self._options(options))
            p = r.choice(self.people)
            self.add_fact(self.pick_session(), r.choice(col_say).format(p=p, v=phrase))
            self.questions.append(Question("abstention", q_user, IDK, [], [],
                                           echo=("pref", {"topic": PREF_TOPICS[key]}, 0)))
            return True
        attr = {"store": "store", "owner": "owner", "port": "port", "ticket": None, "freeze": None}[kind]
        cands = [s for s in self.free_services(*(attr,) if attr else ()) if s not in self.locked
                 and (attr is None or (s, attr) not in self.stated)
                 and not (kind == "ticket" and s in self.incidents)
                 and not (kind == "freeze" and s in self.freezes)]
        if not cands:
            return False
        svc = r.choice(cands)
        s = self.pick_session()
        if kind == "store":
            self.blocked.add((svc, "store"))
            kd = self.world[svc]["store_kind"]
            self.add_fact(s, r.choice(STORE_VAGUE).format(svc=svc, kind=kd))
            self.distract("store", svc, 3)
            q = r.choice(("Which {k} version does {svc} run?", "What version of {k} is {svc} on?")
                         ).format(k=kd, svc=svc)
        elif kind == "owner":
            self.blocked.add((svc, "owner"))
            self.add_fact(s, r.choice((
                "{svc}'s owner is out this week, so questions about it will have to wait.",
                "nobody in this room knows much about {svc}; we should find out who owns it.",
                "the {svc} entry in the service catalog has an empty owner field. Classic.")).format(svc=svc))
            self.distract("owner", svc, 3)
            q = r.choice(OWNER_ASK).format(svc=svc)
        elif kind == "port":
            self.blocked.add((svc, "port"))
            self.add_fact(s, r.choice(PORT_VAGUE).format(svc=svc))
            self.distract("port", svc, 3)
            q = r.choice(PORT_ASK).format(svc=svc)
        elif kind == "ticket":
            self.incident(svc, vague=True, session=min(s, len(self.times) - 1))
            others = [x for x in self.services if x != svc and x not in self.incidents]
            if others:
                self.incident(r.choice(others))
            q = r.choice(TICKET_ASK).format(svc=svc)
        else:
            self.add_fact(s, r.choice(FREEZE_VAGUE).format(svc=svc))
            self.freezes[svc] = {"vague": True}
            others = [x for x in self.services if x != svc and x not in self.freezes]
            self.freeze(r.choice(others))
            q = r.choice(FREEZE_ASK).format(svc=svc)
        self.used_subject.add(svc)
        echo_kind = {"ticket": "incident"}.get(kind, kind)
        lo = self.incidents[svc]["session"] if kind == "ticket" else 0
        self.questions.append(Question("abstention", q, IDK, [], [], echo=(echo_kind, {"svc": svc}, lo)))
        return True

    def q_preference(self) -> bool:
        r = self.rng
        free = [p for p in PREFS if p[0] not in self.prefs_used]
        if not free:
            return False
        key, options, user_say, col_say, q_user, q_col = r.choice(free)
        self.prefs_used.add(key)
        opts = r.sample(self._options(options), 3 if len(options) >= 3 else 2)
        about_user = r.random() < 0.6
        col = r.choice(self.people)
        other_col = r.choice([p for p in self.people if p != col])
        s1 = self.pick_session()
        if about_user:
            tg = self.add_fact(s1, r.choice(user_say).format(v=opts[0][0]))
            # A colleague's different preference on the same thing is the distractor.
            self.add_fact(self.pick_session(), r.choice(col_say).format(p=col, v=opts[1][0]))
            q = q_user
            kw = [opts[0][1]]
        else:
            tg = self.add_fact(s1, r.choice(col_say).format(p=col, v=opts[0][0]))
            self.add_fact(self.pick_session(), r.choice(user_say).format(v=opts[1][0]))
            if len(opts) > 2:
                self.add_fact(self.pick_session(), r.choice(col_say).format(p=other_col, v=opts[2][0]))
            q = q_col.format(p=col)
            kw = [col, opts[0][1]]
        self.questions.append(Question("preference", q, opts[0][1], [tg], kw,
                                       echo=("pref", {"topic": PREF_TOPICS[key]}, 0)))
        return True

    # -- noise and layout -------------------------------------------------------------------

    def noise_chunk(self, s: int, long_form: bool) -> Chunk:
        """A noise exchange: chit-chat, standup, review chatter or a longer explanation.
        Drawn from per-case decks, so the same line does not repeat within a case."""
        r = self.rng
        # Conversation gravitates to the services things happen to, as it does at work.
        focus = sorted(self.used_subject) if self.used_subject and r.random() < 0.6 else self.services
        person = r.choice(self.people)
        fill = {"svc": r.choice(focus), "p": person.split()[0], "full": person}
        roll = r.random()
        # Questions and explanations are not asked twice in a case; chit-chat may recur.
        explain = self.draw("explain", EXPLAIN_ITEMS, refill=False) if long_form and roll < 0.4 else None
        qa = self.draw("qa", NOISE_QA, refill=False) if explain is None and roll < 0.65 else None
        if explain:
            prompt, pool = explain
            sents = r.sample(pool, r.randint(3, len(pool)))
            turns = [("user", prompt.format(**fill), None),
                     ("assistant", " ".join(x.format(**fill) for x in sents), None)]
            if r.random() < 0.5:
                turns.append(("user", r.choice(ACKS_AFTER_EXPLAIN), None))
        elif qa:
            question, answer = qa
            turns = [("user", question.format(**fill), None), ("assistant", answer, None)]
        else:
            turns = [("user", self.draw("stmt", NOISE_STATEMENTS).format(**fill), None)]
            if r.random() < 0.5:
                turns.append(("assistant", r.choice(SHORT_REPLIES), None))
        return Chunk(s, turns)

    def draw(self, deck: str, pool: tuple, refill: bool = True):
        """Next item of a shuffled per-case deck over pool; when it runs out, reshuffle
        (refill) or return None."""
        if deck not in self.decks or (refill and not self.decks[deck]):
            self.decks[deck] = self.rng.sample(list(pool), len(pool))
        return self.decks[deck].pop() if self.decks[deck] else None

    def layout(self) -> list[dict]:
        """Pad sessions with noise, order chunks, assign turn ids; return the sessions."""
        r = self.rng
        per = {"short": (1, 3), "medium": (2, 5), "long": (5, 9)}[self.size]
        by_session = {i: [] for i in range(len(self.times))}
        for ch in self.chunks:
            by_session[ch.session].append(ch)
        sessions, self.tag_to_id = [], {}
        for i, t in enumerate(self.times):
            chunks = by_session[i] + [self.noise_chunk(i, self.size != "short")
                                      for _ in range(r.randint(*per))]
            r.shuffle(chunks)
            turns = []
            if r.random() < 0.5:
                turns.append(("user", r.choice(SESSION_OPENERS), None))
            for ch in chunks:
                turns.extend(ch.turns)
            sessions.append(self.session_record(i, t, turns))
        return sessions

    def build(self, types: list[str]) -> dict:
        """Make the questions for the given types, lay out sessions, return the case."""
        makers = {"single_hop": self.q_single_hop, "multi_hop": self.q_multi_hop,
                  "temporal": self.q_temporal, "knowledge_update": self.q_knowledge_update,
                  "abstention": self.q_abstention, "preference": self.q_preference}
        for qt in types:
            for _ in range(20):
                if makers[qt]():
                    break
            else:
                raise RuntimeError(f"{self.case_id}: could not make a {qt} question")
        for q in self.questions:
            kind, values, lo = q.echo
            person = self.rng.choice(self.people)
            values = {"full": person, **values}
            texts = self.rng.sample(ECHO[kind], self.rng.randint(1, 2))
            for text in texts:
                self.chunks.append(Chunk(self.pick_session(lo), [("user", text.format(**values), None)]))
        # Every asked-about service is also mentioned in passing somewhere, never only in
        # its evidence: the service name alone must not find the answer.
        with_svc = [t for t in NOISE_STATEMENTS if "{svc}" in t]
        for svc in sorted(self.used_subject):
            person = self.rng.choice(self.people)
            text = self.draw("subject", with_svc).format(svc=svc, p=person.split()[0], full=person)
            self.chunks.append(Chunk(self.pick_session(), [("user", text, None)]))
        sessions = self.layout()
        asked = self.asked.strftime("%Y-%m-%dT%H:%M:%SZ")
        qs = []
        for k, q in enumerate(self.questions, 1):
            rec = {"qid": f"{self.case_id}q{k}", "type": q.qtype, "asked_at": asked,
                   "question": q.text, "gold_answer": q.gold,
                   "evidence": [self.tag_to_id[t] for t in q.evidence]}
            meta = {"keywords": q.keywords}
            if q.qtype == "knowledge_update":
                meta["superseded_evidence"] = [self.tag_to_id[t] for t in q.superseded]
                meta["outdated_answers"] = q.outdated
            rec["meta"] = meta
            qs.append(rec)
        return {"case_id": self.case_id, "sessions": sessions, "questions": qs,
                "meta": {"size": self.size, "generator": "data/make_cases.py"}}


# ---------------------------------------------------------------------------------------------
# Checks the generator enforces on its own output
# ---------------------------------------------------------------------------------------------

WORD = re.compile(r"\w+")
STOP = set("a an the of to in on at for is are was were be by with and or what which who whose "
           "when where how many much does do did it its this that as from after before until "
           "into about there their them they we our us i me my you your his her than".split())


def check_case(case: dict) -> list[str]:
    """Every way a version 1 case breaks an authoring convention, one line each naming the
    question (empty when it keeps them all)."""
    problems = []
    texts = {t["turn_id"]: t["text"] for s in case["sessions"] for t in s["turns"]}
    for q in case["questions"]:
        qtext = q["question"].lower()
        if q["type"] != "abstention":
            if re.search(rf"(?<!\w){re.escape(q['gold_answer'].lower())}(?!\w)", qtext):
                problems.append(f"{q['qid']}: the gold {q['gold_answer']!r} is in the question")
            # All keywords co-occur in at least one evidence turn (the answer-bearing one).
            if not any(all(kw.lower() in texts[e].lower() for kw in q["meta"]["keywords"]) for e in q["evidence"]):
                problems.append(f"{q['qid']}: no evidence turn holds all its keywords {q['meta']['keywords']}")
        # Distractor: some other turn shares a content word with the question (crudely
        # stemmed to five letters, so "benchmarks" and "benchmarking" count as shared).
        qwords = {w[:5] for w in WORD.findall(qtext) if w not in STOP}
        others = [t for tid, t in texts.items() if tid not in q["evidence"]]
        if not any(qwords & {w[:5] for w in WORD.findall(t.lower())} for t in others):
            problems.append(f"{q['qid']}: no turn outside the evidence shares a word with the question")
    return problems


def make_split(n_cases: int, seed: int, dev: bool) -> list[dict]:
    """Generate one split; sizes and question types are spread evenly over the cases."""
    rng = random.Random(seed)
    pools = {"first": pool_split(FIRST, dev), "last": pool_split(LAST, dev),
             "services": pool_split(SERVICES, dev), "clusters": pool_split(CLUSTERS, dev),
             "artifacts": pool_split(ARTIFACTS, dev)}
    n_long = max(1, round(n_cases * 0.3))
    n_short = (n_cases - n_long) // 2
    sizes = ["long"] * n_long + ["short"] * n_short + ["medium"] * (n_cases - n_long - n_short)
    rng.shuffle(sizes)
    n_questions = {"short": 4, "medium": 5, "long": 7}
    cycle: list[str] = []
    cases = []
    for i, size in enumerate(sizes, 1):
        types = []
        while len(types) < n_questions[size]:
            if not cycle:
                cycle = list(TYPES)
                rng.shuffle(cycle)
            # A case takes distinct types where it can, so a short case covers four kinds.
            pick = next((t for t in cycle if t not in types), cycle[0])
            cycle.remove(pick)
            types.append(pick)
        case_id = f"{'dev' if dev else 'mb'}{i:03d}"
        case = CaseBuilder(random.Random(rng.random()), case_id, size, pools).build(types)
        # Raised, not asserted: `python -O` drops asserts, and --check must run these checks.
        problems = check_case(case)
        if problems:
            raise RuntimeError(f"{case_id}: the generator made a case its own checks refuse: " + "; ".join(problems))
        cases.append(case)
    return cases
