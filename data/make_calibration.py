"""Generate data/calibration.jsonl: the judge calibration set, on which the grader's false
accepts and false rejects are counted. Real questions and golds from data/dev.jsonl and
data/cases.jsonl, each with answers of known kinds, labelled by construction:

  known right: verbose, paraphrase, number_form (number words, other units), date_format,
               other_script (Cyrillic transliteration of a name, or a Russian sentence),
               restated_question (the question turned into a statement around the gold),
               exact_form (the gold as it is, or after "It's"), abstain_unanswerable (a plain
               decline on an abstention question)
  known wrong: other_value (another specific value, including the gold extended into a longer
               one: "Postgres 17.3.1"), outdated (meta.outdated_answers), vague (on topic, no
               value), hedge (between the gold and another value), beside_other (the gold named beside
               another value, or as the value left behind), confident_unanswerable and
               guess_unanswerable (a value, or a decline followed by a guess, on an abstention
               question), abstain_answerable (a decline on an answerable question),
               near_miss_symbol (the gold with a sign that makes it a bound: "79+ days"),
               wrong_year (a date gold with a year two years off), extra_candidate (the gold
               listed with another value), question_form (the gold asked back as a question),
               negation (the gold denied), partial_list (a datastore without its version)

This is the tuning set: the rules were tuned on it. The held-out set (data/heldout.jsonl) was
written by hand by someone who never read the rules; this script never writes it.

Every answer comes from a fixed template filled with the question's gold, meta or another
question's gold; nothing is random, so the file is the same bytes on every run.

Usage:
  python data/make_calibration.py           # writes data/calibration.jsonl
  python data/make_calibration.py --check   # regenerate in memory, exit 2 if the file differs
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from datetime import date

# Run as `python data/make_calibration.py` from anywhere: the repo root holds the shared modules.
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from cli import EXIT_OK  # noqa: E402
from dataset import parse_time  # noqa: E402
from fileio import check_generated, dumps, read_jsonl, write_atomic  # noqa: E402
from grading import WRONG_KINDS  # noqa: E402

SOURCES = ("dev.jsonl", "cases.jsonl")
OUT = "calibration.jsonl"
# Questions taken per type: enough for 150+ items, spread over the question families.
PER_TYPE = {"single_hop": 5, "multi_hop": 4, "temporal": 8, "knowledge_update": 5, "preference": 4,
            "abstention": 8}
# What a preference is about, so that another value comes from the same closed set ("Excalidraw"
# for a diagram tool, never "100 words").
TOPICS = ("markup", "diagram", "language", "benchmarking", "config", "commit", "merge", "day", "status",
          "summaries", "time zone", "slack")
MONTHS = ("January February March April May June July August September October November "
          "December").split()
MONTHS_RU = ("января февраля марта апреля мая июня июля августа сентября октября ноября "
             "декабря").split()
NUMBER_WORDS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
                "fifteen sixteen seventeen eighteen nineteen").split()
TENS = {2: "twenty", 3: "thirty", 4: "forty", 5: "fifty", 6: "sixty", 7: "seventy", 8: "eighty", 9: "ninety"}
# Latin to Cyrillic, digraphs first: how a Russian speaker would write these invented names.
TRANSLIT = (("sh", "ш"), ("ch", "ч"), ("zh", "ж"), ("kh", "х"), ("ts", "ц"), ("ya", "я"), ("yu", "ю"),
            ("a", "а"), ("b", "б"), ("c", "к"), ("d", "д"), ("e", "е"), ("f", "ф"), ("g", "г"), ("h", "х"),
            ("i", "и"), ("j", "дж"), ("k", "к"), ("l", "л"), ("m", "м"), ("n", "н"), ("o", "о"), ("p", "п"),
            ("q", "к"), ("r", "р"), ("s", "с"), ("t", "т"), ("u", "у"), ("v", "в"), ("w", "в"), ("x", "кс"),
            ("y", "и"), ("z", "з"))

# ---------------------------------------------------------------------------------------------
# What a gold is: the shape decides which templates fit.
# ---------------------------------------------------------------------------------------------


def family(question: str) -> str:
    """Questions asked with the same first four words ask for the same kind of value."""
    return " ".join(question.split()[:4])


def topic(question: str) -> str:
    """What the question asks about: a TOPICS word in it, else its family."""
    lowered = question.lower()
    return next((t for t in TOPICS if t in lowered), family(question))


def shape(question: str, gold: str) -> str:
    """person, date, count, version, ticket, port, cluster, component or preference."""
    if re.fullmatch(rf"(?:{'|'.join(MONTHS)}) \d{{1,2}}", gold):
        return "date"
    if re.fullmatch(r"\d+ days", gold):
        return "count"
    if re.search(r"\b(Who|Whose|engineer)\b", question):
        return "person"
    if re.fullmatch(r"[A-Z]+-\d+", gold):
        return "ticket"
    if re.fullmatch(r"\d+", gold):
        return "port"
    if re.search(r"\d+\.\d+", gold):
        return "version"
    if re.fullmatch(r"[a-z]+-\d+[a-z]?", gold):
        return "cluster"
    if re.fullmatch(r"[a-z]+(?:-[a-z]+)+", gold):
        return "component"
    return "preference"


def asked_shape(question: str) -> str:
    """The shape of the value an abstention question asks for (its gold is "I don't know")."""
    for pattern, name in ((r"\bport\b", "port"), (r"\bversion\b", "version"), (r"\bticket\b", "ticket"),
                          (r"\b(Who|Whose|engineer)\b", "person"), (r"\b(When|date)\b", "date")):
        if re.search(pattern, question):
            return name
    return "preference"


def pick(options: list[str], key: str, avoid: set[str]) -> str:
    """A fixed choice among options, by a stable function of key, never one of avoid."""
    usable = sorted(o for o in options if o not in avoid)
    return usable[sum(map(ord, key)) % len(usable)]


def variant(templates: tuple[str, ...], key: str) -> str:
    return templates[sum(map(ord, key)) % len(templates)]

# ---------------------------------------------------------------------------------------------
# Other forms of the same value
# ---------------------------------------------------------------------------------------------


def number_words(n: int) -> str:
    if n < 20:
        return NUMBER_WORDS[n]
    tens, unit = divmod(n, 10)
    return TENS[tens] + ("-" + NUMBER_WORDS[unit] if unit else "")


def ordinal(n: int) -> str:
    return f"{n}{'th' if 4 <= n % 100 <= 20 or n % 10 > 3 or n % 10 == 0 else ('st', 'nd', 'rd')[n % 10 - 1]}"


def days_ru(n: int) -> str:
    if n % 10 == 1 and n % 100 != 11:
        return f"{n} день"
    if n % 10 in (2, 3, 4) and n % 100 not in (12, 13, 14):
        return f"{n} дня"
    return f"{n} дней"


def cyrillic(name: str) -> str:
    out = []
    for word in name.split():
        w, i, ru = word.lower(), 0, ""
        while i < len(w):
            for latin, cyr in TRANSLIT:
                if w.startswith(latin, i):
                    ru += cyr
                    i += len(latin)
                    break
        out.append(ru[0].upper() + ru[1:])
    return " ".join(out)


def year_of(gold: str, near: date) -> int:
    """The year that puts a `Month D` gold nearest the date its evidence was said."""
    month, day = MONTHS.index(gold.split()[0]) + 1, int(gold.split()[1])
    return min((near.year - 1, near.year, near.year + 1), key=lambda y: abs((date(y, month, day) - near).days))


def other_value(q: dict, pools: dict, i: int) -> str:
    """Another specific value of the same kind: a changed number, the gold extended into a
    longer value, or another question's gold of the same family or shape."""
    gold, kind = q["gold_answer"], q["shape"]
    avoid = {gold, *q["meta"].get("outdated_answers", [])}  # optional in the dataset's meta
    if kind == "version":
        if i % 2:
            return gold + ".1"  # longer version: another release, the rules' old blind spot
        head, last = re.fullmatch(r"(.*?)(\d+)", gold).groups()
        bumped = f"{head}{int(last) + 1}"
        return bumped if bumped not in avoid else f"{head}{int(last) + 2}"
    if kind == "cluster":
        head, num = re.fullmatch(r"([a-z]+-)(\d+)[a-z]?", gold).groups()
        return gold + "b" if i % 2 else f"{head}{int(num) + 1}"
    if kind in ("ticket", "port"):
        head, num = re.fullmatch(r"(.*?)(\d+)", gold).groups()
        return f"{head}{int(num) + 7}"
    if kind == "date":
        month, day = gold.split()
        return f"{month} {int(day) + 3 if int(day) <= 25 else int(day) - 3}"
    if kind == "count":
        return f"{int(gold.split()[0]) + 3} days"
    options = pools["topic"].get(q["topic"], []) if kind == "preference" else []
    if not [o for o in options if o not in avoid]:
        options = pools["shape"][kind]
    return pick(options, q["qid"], avoid)

# ---------------------------------------------------------------------------------------------
# Templates. Each returns (kind, answer) pairs for one question.
# ---------------------------------------------------------------------------------------------

PARAPHRASE = {
    "person": "{v} is the one in charge of it.",
    "version": "It's on {v}.",
    "cluster": "It's scheduled on the {v} cluster.",
    "ticket": "The outage was filed as {v}.",
    "port": "It listens on port {v}.",
    "component": "The {v} job was the cause.",
    "date": "That falls on {v}.",
    "preference": "They prefer {v}.",
}
RUSSIAN = {
    "version": "Там сейчас {v}.",
    "cluster": "Сервис работает на кластере {v}.",
    "ticket": "Инцидент заведён под номером {v}.",
    "port": "Порт {v}.",
    "component": "Причина — {v}.",
    "preference": "Предпочтение — {v}.",
}
VAGUE = {
    "person": "Someone on the platform team.",
    "version": "A fairly recent release.",
    "cluster": "One of the production clusters.",
    "ticket": "There is a ticket for it in the tracker.",
    "port": "One of the usual service ports.",
    "component": "One of the background jobs.",
    "count": "A few weeks.",
    "preference": "They did mention a preference for that once.",
}
DECLINE_WRONG = ("I don't know.", "The conversations don't say.", "Не знаю.")
DECLINE_RIGHT = {
    "verbose": ("I went through our conversations and that was never mentioned, so I can't say.",
                "The memories never mention that, so I don't know."),
    "paraphrase": ("That information was never shared.", "Our conversations don't mention it.",
                   "I have no record of that."),
    "other_script": ("Не знаю.", "Об этом ничего не говорилось.", "Нет информации об этом."),
}
GUESS = ("I don't know. Probably {v}.", "Not sure, maybe {v}.", "I don't have that, but it might be {v}.")
ABSTAIN = ("I don't know.", "Not mentioned in the conversation.", "That was never mentioned.")
EXACT = ("{g}", "{g}.", "It's {g}.")
EXTRA = ("{g}, {o}.", "{g} / {o}", "{g} (and {o} as well).")
ASKED_BACK = ("Is it {g}?", "{g}?", "Could it be {g}")
DENIED = ("It's not {g}.", "Not {g}.", "Definitely not {g}.")
# Questions of the bundled data turned into statements around the gold ({g}); {1} is what the
# question's pattern captured. A question no pattern fits gets no restated answer.
RESTATED = (
    (r"What cluster hosts (.+)\?", "The {g} cluster hosts {1}."),
    (r"Which cluster does (.+) run on\?", "{1} runs on {g}."),
    (r"What (?:datastore|database) and version does (.+) (?:persist to|use)\?", "{1} uses {g}."),
    (r"What database does (.+) use, including the version\?", "{1} uses {g}."),
    (r"Which job or component was behind the (.+) incident\?", "{g} was behind the {1} incident."),
    (r"Which cluster hosts (.+)\?", "{g} hosts {1}."),
    (r"Whose service went down in (.+)\?", "{g}'s service went down in {1}."),
    (r"Who owns (.+)\?", "{g} owns {1}."),
    (r"How many days ago was (.+) done\?", "{1} was done {g} ago."),
    (r"How long ago did we finish (.+)\?", "We finished {1} {g} ago."),
    (r"When does (.+) end\?", "{1} ends on {g}."),
    (r"What date is (.+) scheduled for\?", "{1} is scheduled for {g}."),
    (r"On what date can we deploy (.+) again after the freeze\?", "We can deploy {1} again after the freeze on {g}."),
    (r"When is (.+) lifted\?", "{1} is lifted on {g}."),
    (r"On which date will (.+) happen\?", "{1} will happen on {g}."),
    (r"How many days are left until (.+)\?", "There are {g} left until {1}."),
    (r"Which version of (.+) is live in production\?", "Version {g} of {1} is live in production."),
    (r"Which (.+) does the user (prefer|want)\?", "The user {2}s {g} as the {1}."),
    (r"Which programming language does the user want code examples in\?", "The user wants code examples in {g}."),
)


def count_phrase(q: dict, value: str) -> str:
    if "ago" in q["question"]:
        return f"That was {value} ago."
    if re.search(r"\b(left|remain)\b", q["question"]):
        return f"There are {value} left."
    return f"It took {value}."


def plain(q: dict, value: str) -> str:
    """The value said the way a paraphrase of the gold says it, so only the value differs."""
    return count_phrase(q, value) if q["shape"] == "count" else PARAPHRASE[q["shape"]].format(v=value)


def restated(q: dict) -> str | None:
    """The question turned into a statement around the gold, when a RESTATED pattern fits."""
    for pattern, template in RESTATED:
        m = re.fullmatch(pattern, q["question"])
        if m:
            text = template.replace("{g}", q["gold_answer"])
            for i, part in enumerate(m.groups(), 1):
                text = text.replace(f"{{{i}}}", re.sub(r"^The ", "the ", part))
            return text[0].upper() + text[1:]
    return None


def answerable_items(q: dict, pools: dict) -> list[tuple[str, str]]:
    gold, kind, key = q["gold_answer"], q["shape"], q["qid"]
    out = [("verbose", variant(("Going by what was said in our conversations, the answer is {v}.",
                                "{v} — that is what our conversations settled on."), key).format(v=gold)),
           ("paraphrase", plain(q, gold)),
           ("exact_form", variant(EXACT, key).format(g=gold))]
    statement = restated(q)
    if statement:
        out.append(("restated_question", statement))
    if kind == "count":
        n = int(gold.split()[0])
        out.append(("number_form", f"{number_words(n).capitalize()} days."))
        if n >= 7:
            weeks, days = divmod(n, 7)
            unit = f"{weeks} week{'s' if weeks > 1 else ''}"
            out.append(("number_form", f"{unit} and {days} day{'s' if days > 1 else ''}." if days else f"{unit}."))
        out.append(("other_script", f"{days_ru(n).capitalize()}."))
    elif kind == "date":
        month, day = gold.split()
        m, d = MONTHS.index(month) + 1, int(day)
        out += [("date_format", f"{month[:3]} {d}"), ("date_format", f"The {ordinal(d)} of {month}."),
                ("date_format", date(year_of(gold, q["near"]), m, d).isoformat()),
                ("other_script", f"{d} {MONTHS_RU[m - 1]}.")]
    elif kind == "person":
        out.append(("other_script", f"Это {cyrillic(gold)}."))
    else:
        out.append(("other_script", RUSSIAN[kind].format(v=gold)))
    if re.fullmatch(r"(?:three|four|five) sentences", gold):
        out.append(("number_form", f"{NUMBER_WORDS.index(gold.split()[0])} sentences."))
    other = other_value(q, pools, q["index"])
    out.append(("other_value", plain(q, other)))
    for old in q["meta"].get("outdated_answers", []):
        out += [("outdated", plain(q, old)), ("outdated", f"Going by our conversations, the answer is {old}.")]
    vague = f"Sometime in {gold.split()[0]}." if kind == "date" else VAGUE[kind]
    out.append(("vague", vague))
    out.append(("hedge", variant(("Either {g} or {o}.", "{o}, or possibly {g}."), key).format(g=gold, o=other)))
    out.append(("beside_other", variant(("{o} and {g}.", "They moved off {g} to {o}."), key).format(g=gold, o=other)))
    out.append(("abstain_answerable", variant(DECLINE_WRONG, key)))
    out.append(("extra_candidate", variant(EXTRA, key).format(g=gold, o=other)))
    out.append(("question_form", variant(ASKED_BACK, key).format(g=gold)))
    out.append(("negation", variant(DENIED, key).format(g=gold)))
    if kind == "version":
        out.append(("near_miss_symbol", f"{gold}+"))  # "at least", not the version
        if " " in gold:
            out.append(("partial_list", gold.split()[0] + "."))  # the datastore without its version
    elif kind == "count":
        out.append(("near_miss_symbol", f"{gold.split()[0]}+ days."))
    elif kind == "date":
        month, day = gold.split()
        out.append(("wrong_year", f"{month} {day}, {year_of(gold, q['near']) - 2}."))
    return out


def abstention_items(q: dict, pools: dict) -> list[tuple[str, str]]:
    key = q["qid"]
    asked = asked_shape(q["question"])
    options = pools["topic"].get(q["topic"], []) or pools["shape"][asked]
    if asked == "version":  # a version of the datastore the question names, when there is one
        options = [v for v in options if v.split()[0] in q["question"]] or options
    value = pick(options, key, set())
    confident = PARAPHRASE[asked].format(v=value)
    vague = f"Sometime in {value.split()[0]}." if asked == "date" else VAGUE[asked]
    return [("verbose", variant(DECLINE_RIGHT["verbose"], key)),
            ("paraphrase", variant(DECLINE_RIGHT["paraphrase"], key)),
            ("other_script", variant(DECLINE_RIGHT["other_script"], key)),
            ("abstain_unanswerable", variant(ABSTAIN, key)),
            ("confident_unanswerable", confident),
            ("guess_unanswerable", variant(GUESS, key).format(v=value)),
            ("vague", vague)]

# ---------------------------------------------------------------------------------------------
# Reading the dataset, choosing questions, writing the file
# ---------------------------------------------------------------------------------------------


def load_questions() -> list[dict]:
    """Every question of both files, in file order, with the date its evidence was said."""
    questions = []
    for name in SOURCES:
        for _, case in read_jsonl(os.path.join(HERE, name)):
            said = {t["turn_id"]: parse_time(s["timestamp"]).date() for s in case["sessions"] for t in s["turns"]}
            for q in case["questions"]:
                near = max((said[e] for e in q["evidence"]), default=parse_time(q["asked_at"]).date())
                questions.append({**q, "source": name, "near": near, "family": family(q["question"]),
                                  "topic": topic(q["question"]), "shape": shape(q["question"], q["gold_answer"])})
    return questions


def value_pools(questions: list[dict]) -> dict:
    """Golds (and outdated values) of answerable questions by topic and by shape: where other
    specific values come from."""
    by_topic: dict[str, set] = {}
    by_shape: dict[str, set] = {}
    for q in questions:
        if q["type"] == "abstention":
            continue
        values = {q["gold_answer"], *q["meta"].get("outdated_answers", [])}
        by_topic.setdefault(q["topic"], set()).update(values)
        by_shape.setdefault(q["shape"], set()).update({q["gold_answer"]})
    return {"topic": {k: sorted(v) for k, v in by_topic.items()},
            "shape": {k: sorted(v) for k, v in by_shape.items()}}


def choose(questions: list[dict]) -> list[dict]:
    """Per type, the dev and test questions taken in turns, then the first question of each
    family, round after round, until the type has its count: as many kinds of question as the
    data offers, from both files."""
    chosen = []
    for qtype, count in PER_TYPE.items():
        by_file = [[q for q in questions if q["type"] == qtype and q["source"] == name] for name in SOURCES]
        pool = [q for i in range(max(map(len, by_file))) for qs in by_file for q in qs[i:i + 1]]
        count = min(count, len(pool))
        picked: list[dict] = []
        while len(picked) < count:
            taken, seen = {q["qid"] for q in picked}, set()
            for q in pool:
                if q["qid"] not in taken and q["family"] not in seen and len(picked) < count:
                    seen.add(q["family"])
                    picked.append(q)
        for i, q in enumerate(picked):
            chosen.append({**q, "index": i})
    return chosen


def render(questions: list[dict]) -> str:
    pools = value_pools(questions)
    lines = []
    for q in choose(questions):
        pairs = abstention_items(q, pools) if q["type"] == "abstention" else answerable_items(q, pools)
        for kind, answer in pairs:
            lines.append(dumps({
                "id": f"cal{len(lines) + 1:03d}", "qid": q["qid"], "type": q["type"], "question": q["question"],
                "gold_answer": q["gold_answer"], "meta": q["meta"], "answer": answer,
                "label": "incorrect" if kind in WRONG_KINDS else "correct", "kind": kind}))
    return "".join(line + "\n" for line in lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="regenerate in memory and exit 2 if the file differs")
    a = ap.parse_args(argv)
    path = os.path.join(HERE, OUT)
    text = render(load_questions())
    if a.check:
        return check_generated(path, text, "python data/make_calibration.py")
    write_atomic(path, text)
    print(f"wrote {path}: {text.count(chr(10))} items")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
