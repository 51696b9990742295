"""The deterministic rule layers of grading: the word tables, the rules that decide an answer
beyond doubt before any judge (deterministic), and the rule set's identity (RULES_SHA256). Nothing
here calls a model."""
from __future__ import annotations

import inspect
import json
import os
import re
from typing import NamedTuple

import contract
import normalization
import rubrics
from contract import is_answerable
from fileio import sha256_text
# The rules call the normalization's word functions by their own names: a rule's source text is
# part of the rule set's identity, so it keeps the names it was written with.
from normalization import PART_BREAKS, Word, _dated, _folded, _words, porter_stem
from rubrics import rubric_for

# ---------------------------------------------------------------------------------------------
# The rule tables. Every entry is part of the rule set's identity (RULES_SHA256 below).
# ---------------------------------------------------------------------------------------------

# Words that make an answer containing the gold doubtful: options, doubt, negation, bounds
# that turn the gold into another value ("more than 16 days", "at least Kafka 3.7"), and
# approximations, which state a value near the gold rather than the gold ("about 16 days").
HEDGES = frozenset("or nor either neither maybe perhaps possibly probably likely unlikely might may could "
                   "if guess think believe seems unsure unclear not no never isn t wasn t none nothing nobody "
                   "nowhere without cannot "
                   "than least nearly almost about around roughly approximately approx circa some "
                   "или либо возможно наверное наверно вероятно кажется думаю если может не нет ли "
                   "примерно около почти приблизительно порядка".split())
# The words of HEDGES that negate ("isn't" is "isn t"; Russian "не", "нет").
NEGATIONS = frozenset("not no never isn wasn aren weren doesn don didn t none nothing nobody nowhere cannot "
                      "не нет".split())
# Auxiliaries that put a question or an answer in the present or in the past.
PRESENT = frozenset("is are am does do has have".split())
PAST = frozenset("was were did had".split())
# Words that bring in a second value beside the gold: an earlier one, a later one, a correction
# ("Tariq Mbeki took over from Mira Okafor", "pike-6, then clough-3", "Go, but ..."), or a
# change away from the gold or towards it ("they stopped using", "moved off", "plan to move
# to", "used to run", "no longer").
SHIFTS = frozenset("later earlier previously formerly originally initially before after then instead rather "
                   "but however although though except from replaced replacing "
                   "stopped stop stops stopping quit dropped moved move moves moving migrated migrate migrating "
                   "switched switch switching plan plans planned planning used longer anymore former old legacy "
                   "deprecated retired "
                   "потом затем позже раньше ранее прежде сначала вместо но однако хотя кроме после "
                   "перешли перешел перешла переехали перестали перестал планируют планирует собираются бывший".split())
# Words that list the gold beside another value ("Rust and Go", "Cassandra and Postgres 16",
# "they also use Postgres 16"): the answer gives more than one, or implies another.
CONJUNCTIONS = frozenset("and plus also too both besides alongside along together "
                         "и также тоже плюс".split())
# Words that offer a choice in a question ("tabs or spaces", "Kafka vs Pulsar"): the words
# beside them are candidate answers, never words an answer may repeat around the gold.
CHOICES = frozenset("or nor either vs versus или либо".split())
# Words an answer put as a question starts with ("Is it Kafka 3.7", "Could it be ...").
QUESTION_STARTS = frozenset("is are was were do does did could would can will should shall has have had might "
                            "may must isn aren wasn weren doesn didn don what which who whom whose when where "
                            "why how whether разве неужели".split())
# Openings that state no value ("it runs", "they prefer", "going by what was said"): with
# filler and the question's own words, the only words that may come before the gold, and with
# filler the only ones that may come right before it. Phrases, matched whole, so that "going
# by" opens an answer and "going to" does not.
OPENERS = ("going by", "runs", "run", "running", "uses", "use", "using", "scheduled", "deployed", "hosted", "hosts",
           "lives", "persists", "set to", "owned", "owner", "owns", "falls", "ends", "took", "lasts", "lasted",
           "prefer", "prefers", "preferred", "likes", "want", "wants", "version", "cluster",
           "сервис", "работает", "кластере", "там", "причина", "предпочтение", "владелец", "ответ", "используется",
           "живет")
# The only openings an exact match may put before the gold ("It's Postgres 16."): they state
# no value and no time (not "it was": the value may have changed since).
EXACT_OPENERS = ("it's", "it is", "that's", "that is", "this is", "the answer is", "answer:", "they are", "they're",
                 "these are", "это", "ответ:")
# Phrases that say where an answer comes from, and nothing about the world: with filler and
# openings, all that a part of an answer apart from the gold may hold ("IT, per the onboarding
# notes.", "8.3.6, according to the deploy history.", "Rust, that's what they asked for."). No
# unit or span of time among them: "€120,000, per month" states another value.
ATTRIBUTIONS = ("according to", "per", "as of today", "as of now", "as of this week", "latest update", "wiki", "docs",
                "documentation", "runbook", "service catalog", "deploy history", "onboarding notes", "build config",
                "settled on", "agreed on", "asked for", "confirmed")
# Words that state no value: function words, "now", and the vocabulary of declining. They may
# follow the gold ("Postgres 16 now") or surround a refusal ("Sorry, the memories don't say").
FILLER = frozenset(
    "a an the this that these those it its i m s ve ll re me my we our us you your they them their "
    "there here is are was were be been being am do does did done has have had "
    "to of in on at for from with about as by and so also just only now currently current still "
    "what which who whom whose when where how why whether any anything some something yet ever anywhere "
    "sorry unfortunately afraid please information info detail details data memories memory "
    "conversation conversations history context notes note record records mention mentions mentioned "
    "say says said state stated specify specified provide provided give given share shared discuss "
    "discussed recorded available find found know known exact exactly specific specifically precise "
    "sure certain answer question "
    "я мне мы нам вы вам это этом этого эти об о про в во на по и а у к с со же сожалению информации "
    "информация данных сведений памяти воспоминаниях разговоре разговорах истории контексте заметках "
    "записях точно точной конкретно сейчас теперь только года году".split())
# Words of a gold that can make a declining answer right ("She was not sure yet", "It was
# never decided", "Unknown Pleasures"): with one of them in the gold, a decline is not for a
# rule to call wrong.
DOUBT_WORDS = frozenset("not no never t none nothing nobody unsure unclear undecided uncertain undetermined "
                        "unknown decided decide sure know known idea tbd yet "
                        "не нет неизвестно никто ничего".split())
# Words a decline may use to say how the memories were searched, beside what FILLER allows
# ("I went through our conversations and that was never mentioned"; "how status updates
# should be formatted"): no value among them.
SEARCHED = frozenset("went through checked looked searched anywhere should".split())
# Phrasings that decline to answer, matched on folded text (so "don't" is "don t"). A pattern
# with a `gap` group ("No ticket for a ferrule-ci outage was ever mentioned") declines only what
# the gap names: pure_abstention puts the gap back and checks its words like the rest's.
_RECORD = r"(?:conversations?|memories|memory|notes|records|history|context|chats?|threads?)"
_REPORTED = (r"(?:mentioned|specified|stated|provided|available|known|discussed|given|said|recorded|shared|found|"
             r"named|noted|covered|(?:came|come|brought) up)")
DECLINES = tuple(re.compile(p) for p in (
    r"\bi (?:do not|don t|dont|did not|didn t) (?:know|have|recall|remember)\b",
    r"\b(?:not|never|(?:isn|wasn|aren|weren|hasn|haven|hadn) t)(?: been)?(?: ever)? " + _REPORTED + r"\b",
    r"\b(?:not|never|(?:isn|wasn|aren|weren|hasn|haven|hadn) t) in (?:(?:the|our|my|your|any|of|these|this) ){0,4}"
    + _RECORD + r"\b",
    # "No incident ticket for a ferrule-ci outage was ever mentioned", "Nothing about cinder-logs
    # running CockroachDB was mentioned", "No fathom-index freeze appears in the conversation":
    # a nobody, nothing or no of what the question asks, then that it was never given.
    r"\b(?:no|nothing|nobody|none)\b(?P<gap>(?: \S+){0,10}?)(?: (?:was|is|were|are|has been|have been))?(?: ever)? "
    r"(?:" + _REPORTED + r"|appears|appeared)\b",
    r"\b(?:no|nothing|nobody|none)\b(?P<gap>(?: \S+){0,10}?) (?:in|from) "
    r"(?:(?:the|our|my|your|any|of|these|this) ){0,4}" + _RECORD + r"\b",
    r"\bnot something (?:that )?(?:the |our |my )?" + _RECORD + r" (?:covers|covered|mentions|mentioned|says|said)\b",
    r"\bnever (?:mention|mentions|say|says|state|states|specify|specifies|give|gives|came up|come up|comes up)\b",
    r"\bno (?:information|info|mention|record|records|details|data|memory|memories|idea|clue)\b",
    r"\bnot (?:sure|certain)\b",
    r"\bnot in (?:the |my |our |your )?(?:memories|memory|conversation|conversations|history|context|notes|records)\b",
    r"\b(?:cannot|can t|cant|unable to|could not|couldn t) (?:tell|say|determine|answer|find|know|recall)\b",
    r"\b(?:cannot|can t|cant|could not|couldn t) be (?:determined|found|answered|known)\b",
    r"\b(?:does not|doesn t|do not|don t|did not|didn t) (?:say|mention|specify|state|include|contain)\b",
    r"\bnothing (?:was )?(?:said|mentioned|recorded|noted|stated)\b",
    r"\bunknown\b", r"\bnot enough information\b", r"\bno answer\b",
    r"\bне знаю\b", r"\bпонятия не имею\b", r"\bне уверен[аы]?\b",
    r"\b(?:ничего )?не (?:упоминается|упоминалось|указано|указан|сказано|известно|говорилось|обсуждалось)\b",
    r"\bнет (?:информации|данных|сведений)\b",
))

# ---------------------------------------------------------------------------------------------
# The rule layers: a deterministic match first, no model involved, then the judge; the rules decide
# only what is beyond doubt, so that their errors stay few out of sample. With a judge, a rule may
# call an answer correct only when it equals the gold, and incorrect only when it only declines a
# question the dataset marks answerable; the judge decides the rest. Without one, `contains` may
# also accept an answer that states the gold and no other candidate, and anything undecided is
# `no_match` (incorrect), so that rules-only grading stays a strict lower bound.
# ---------------------------------------------------------------------------------------------

def declines(text: str) -> bool:
    """True when the text declines to answer (English and Russian phrasings)."""
    n = _folded(text)
    return any(p.search(n) for p in DECLINES)


def _same_word(a: str, b: str) -> bool:
    """The same word up to an ending ("owns"/"owner", "prefer"/"preferred", "supplies"/
    "supplied": one Porter stem); numbers, and words whose case is kept ("US"), only equal."""
    if a == b:
        return True
    if not (a.isalpha() and b.isalpha()) or a != a.lower() or b != b.lower():  # "US" is not "us"
        return False
    n = len(os.path.commonprefix([a, b]))
    return n >= 3 and n >= min(len(a), len(b)) - 1 or porter_stem(a) == porter_stem(b)


def _says_nothing_new(folds: list[str], question: list[str]) -> bool:
    """Every (folded) word is filler or repeats the question: no value is stated."""
    return all(w in FILLER or any(_same_word(w, q) for q in question) for w in folds)


def _gap(m: re.Match) -> str:
    """What a decline leaves of its match: the words of its `gap` group, else nothing."""
    return " " + ((m.group("gap") or "") if "gap" in m.re.groupindex else "") + " "


def pure_abstention(answer: str, question: str) -> bool:
    """The answer declines and does not go on to give a value: once the declining phrases are
    taken out, only filler, openings, words that tell how the memories were searched, and the
    question's own words are left ("I don't know. Probably Redis 7." is not pure; "The memories
    never mention who owns ledger-sync." is; so is "The user hasn't mentioned a preferred
    language for code examples.")."""
    if not declines(answer):
        return False
    rest = _folded(answer)
    for p in DECLINES:
        rest = p.sub(_gap, rest)
    words = rest.split()
    openers = _opener_positions(words)
    left = [w for i, w in enumerate(words) if i not in openers and w not in SEARCHED]
    return _says_nothing_new(left, _folded(question).split())


def _phrases(table: tuple[str, ...]) -> list[list[str]]:
    """The phrases of a table as folded words, the longest first."""
    return sorted((_folded(o).split() for o in table), key=len, reverse=True)


def verdict_equal(gold: str, answer: str) -> bool:
    """The answer is the (non-empty) gold under the verdict normalization, alone or after one
    opening that states nothing (EXACT_OPENERS: "It's Postgres 16."); whitespace and a final
    period make no difference."""
    g = [w.form for w in _words(gold)]
    a = _words(answer)
    forms, folds = [w.form for w in a], [w.fold for w in a]
    return bool(g) and (forms == g or any(folds[:len(o)] == o and forms[len(o):] == g
                                          for o in _phrases(EXACT_OPENERS)))


def _spans(words: tuple[Word, ...], value: list[str]) -> list[int]:
    """Where `value` (forms) occurs in `words` on word boundaries and glued to neither
    neighbour: "3.7" is in "Kafka 3.7." but not in "Kafka 3.7.1"; "pike-6" is not in "pike-6b"."""
    n = len(value)
    forms = [w.form for w in words]
    return [i for i in range(len(words) - n + 1)
            if n and forms[i:i + n] == value and not words[i].glued and not (i + n < len(words) and words[i + n].glued)]


def states_value(answer: str, value: str) -> bool:
    """The answer states this value on word boundaries, not as part of a longer one (used to
    count answers that state a value the history had replaced, meta.outdated_answers)."""
    return bool(_spans(_words(answer), [w.form for w in _words(value)]))


def _contains(haystack: list[str], needle: list[str]) -> bool:
    n = len(needle)
    return n > 0 and any(haystack[i:i + n] == needle for i in range(len(haystack) - n + 1))


def _opener_positions(folds: list[str]) -> set[int]:
    """The positions of words that belong to a whole opening phrase (OPENERS)."""
    return _phrase_positions(folds, OPENERS)


def _phrase_positions(folds: list[str], table: tuple[str, ...]) -> set[int]:
    """The positions of words that belong to a whole phrase of the table, longest first."""
    phrases, out, i = _phrases(table), set(), 0
    while i < len(folds):
        match = next((p for p in phrases if folds[i:i + len(p)] == p), None)
        out.update(range(i, i + len(match) if match else i))
        i += len(match) if match else 1
    return out


def _choice_words(question: tuple[Word, ...]) -> set[str]:
    """The folded words a question offers as options: beside a choice word ("tabs or spaces";
    after "either" only), and before it in a comma list ("tabs, spaces or both")."""
    folds = [w.fold for w in question]
    out: set[str] = set()
    for i, f in enumerate(folds):
        if f not in CHOICES:
            continue
        after = next((j for j in range(i + 1, len(folds)) if folds[j] not in FILLER), None)
        if after is not None:
            out.add(folds[after])
        j = i - 1
        while f != "either" and j >= 0:
            if folds[j] not in FILLER:
                out.add(folds[j])
                if "," not in question[j].sep:
                    break
            j -= 1
    return out


def _names(words: tuple[Word, ...], skip_first: bool) -> set[str]:
    """The folded words written as names: an acronym or unit kept in its case, or a capital
    first letter (the first word of a question aside, which is capitalized anyway)."""
    return {w.fold for i, w in enumerate(words)
            if w.fold not in FILLER and (w.form != w.fold or w.capital and not (skip_first and i == 0))}


def _shape(word: Word) -> str:
    """What kind of value a word could be: a number (digits, a date part), a name (a capital
    letter, an acronym), a symbol ("$", "#"), or a plain word."""
    if any(c.isdigit() for c in word.fold):
        return "number"
    if not word.fold.isalnum():
        return "symbol"
    return "name" if word.capital or word.form != word.fold else "word"


def _plain(word: Word) -> bool:
    """A word that states no value: not filler, not a number or a name, not a hedge, list,
    change or choice word."""
    return (word.form not in FILLER and _shape(word) == "word"
            and word.fold not in HEDGES | CONJUNCTIONS | SHIFTS | CHOICES)


def _value_runs(question: tuple[Word, ...]) -> dict[int, range]:
    """For each question word that could be a value (a number, a name, a symbol, a part of an
    identifier such as "mica-3" or "ledger-sync"; the first word aside, which is capitalized
    anyway), the run of such words it belongs to ("Mira Okafor", "Kafka 3.6", "SOC 2",
    "March 3", "mica-3")."""
    def joined(i: int) -> bool:  # to a neighbour by punctuation without a space, not by "'s"
        return 0 < i < len(question) and question[i].glued and question[i].sep not in ("'", "’")
    value = [i > 0 and w.form not in FILLER | {"?"} and (_shape(w) != "word" or joined(i) or joined(i + 1))
             for i, w in enumerate(question)]
    out: dict[int, range] = {}
    i = 0
    while i < len(question):
        j = i
        while j < len(question) and value[j]:
            j += 1
        out.update({k: range(i, j) for k in range(i, j)})
        i = max(j, i + 1)
    return out


def _restated(words: tuple[Word, ...], question: tuple[Word, ...], gold: set[int]) -> set[int]:
    """The positions of answer words that restate the question: runs of two or more words
    outside the gold that repeat consecutive words of the question, inflections included, and
    hold a plain word ("Priya Lachance prefers", "freeze starts on March 3", "the SOC 2
    evidence"). A value of the question (_value_runs) is restated only whole and with the
    question's words on either side of it, unless that side is filler or the question's end:
    "Kafka 3.6" alone may be another candidate, and in "Tariq Mbeki was replaced by Mira
    Okafor" Mira Okafor is not what "Who replaced Mira Okafor?" names her as."""
    runs = _value_runs(question)
    out: set[int] = set()
    for i in range(len(words)):
        for k in range(len(question)):
            n = 0
            while (i + n < len(words) and k + n < len(question) and i + n not in gold
                   and _same_word(words[i + n].form, question[k + n].form)):
                n += 1
            if n < 2 or not any(_plain(words[j]) for j in range(i, i + n)):
                continue
            for j in range(i, i + n):
                run = runs.get(k + j - i)
                if run is not None:
                    left, right = run.start - 1, run.stop  # the question's words either side
                    if not (k <= run.start and run.stop <= k + n
                            and (left < 0 or question[left].form in FILLER or k <= left)
                            and (right >= len(question) or question[right].form in FILLER | {"?"}
                                 or right < k + n)):
                        continue
                out.add(j)
    return out


def _gold_positions(words: tuple[Word, ...], gold: list[str], whose: bool) -> list[range]:
    """Where the gold occurs (_spans); for a question that asks whose, also with a possessive
    "'s" glued to it ("Priya Lachance's service went down" for "Whose service went down?").
    Asked anything else, "Mira Okafor's manager" names someone else."""
    out = [range(s, s + len(gold)) for s in _spans(words, gold)]
    n, forms = len(gold), [w.form for w in words]
    for i in range(len(words) - n if whose else 0):
        possessive = words[i + n]
        if (n and forms[i:i + n] == gold and gold[-1].isalpha() and not words[i].glued and possessive.fold == "s"
                and possessive.glued and possessive.sep in ("'", "’")
                and not (i + n + 1 < len(words) and words[i + n + 1].glued)):
            out.append(range(i, i + n + 1))
    return sorted(out, key=lambda r: r.start)


def _asked(question: tuple[Word, ...]) -> tuple[Word, ...]:
    """The clause of a question that asks: from the last question word that opens a sentence or
    follows a colon to the last question mark ("Who should I go to as the owner of pintail-geo?"
    in "Remind me, because it is not in my notes: Who should I go to as the owner of
    pintail-geo?"); from the start when no such word opens a part before it, and the whole
    question when it has no question mark. The frame around the clause says why it is asked,
    not what: its negation ("I don't want to guess"), tense ("Wren is asking me") and other
    words are not the question's."""
    ends = [i for i, w in enumerate(question) if w.form == "?"]
    if not ends:
        return question
    for i in range(ends[-1] - 1, 0, -1):
        w = question[i]
        opens = question[i - 1].form == "?" or not w.glued and any(c in ".:!;…" for c in w.sep)
        if opens and w.fold in QUESTION_STARTS:
            return question[i:ends[-1] + 1]
    return question[:ends[-1] + 1]


class _Reading(NamedTuple):
    """An answer read against its question and gold, word by word, for the containment rule."""
    words: tuple  # the answer's words
    folds: list  # folded, for the tables of words
    forms: list  # as written, which keep the case of acronyms, for filler and the question's words
    gold_words: tuple
    gold: list  # the gold's forms
    gold_folds: set
    q_words: tuple  # the clause of the question that asks
    question: list  # its folds
    q_forms: list
    spans: list  # where the gold stands in the answer
    inside: set  # the positions of those spans
    parts: list  # the part of the answer each word is in: a list, an aside, another sentence
    gold_parts: set
    restated: set  # positions that restate the question
    openers: set  # positions of openings ("Sure,", "It's")
    attributions: set  # positions of where-from parts ("per the onboarding notes")
    named: set  # positions of an identifier the question names
    of_date: set  # a year a date gold may restate from the question


def _read(record: dict) -> _Reading | None:
    """The answer read against its question and gold, or None when the gold does not occur."""
    words = _words(record["answer"])
    folds, forms = [w.fold for w in words], [w.form for w in words]
    gold_words = _words(record["gold_answer"])
    gold = [w.form for w in gold_words]
    q_words = _asked(_words(record["question"]))
    question = [w.fold for w in q_words]
    spans = _gold_positions(words, gold, "whose" in question)
    if not spans:
        return None
    inside = {i for s in spans for i in s}
    parts = [sum(any(c in PART_BREAKS for c in w.sep) for w in words[1:i + 1]) for i in range(len(words))]
    # An identifier the question names ("mica-3", "INC-7395") is what the question is about, not
    # a candidate, unless the gold is an identifier too ("pike-6").
    identifiers = set() if any(w.glued for w in gold_words[1:]) else \
        {(q_words[k - 1].fold, q_words[k].fold) for k in range(1, len(q_words)) if q_words[k].glued}
    named = {j for i in range(1, len(words)) if words[i].glued and (folds[i - 1], folds[i]) in identifiers
             for j in (i - 1, i)}
    # The year of a date gold may be restated from a question that gives it ("22 June 2026" for
    # "When is the Berlin offsite scheduled in 2026?"); any other year is another claim.
    years = {f for k, f in enumerate(question[1:], 1) if question[k - 1] == "in" and re.fullmatch(r"\d{4}", f)} \
        if any(re.fullmatch(r"m\d\d", g) for g in gold) else set()
    edges = {s.start - 1 for s in spans} | {s.stop for s in spans}
    return _Reading(words, folds, forms, gold_words, gold, {w.fold for w in gold_words}, q_words, question,
                    [w.form for w in q_words], spans, inside, parts, {parts[i] for i in inside},
                    _restated(words, q_words, inside), _opener_positions(folds),
                    _phrase_positions(folds, ATTRIBUTIONS), named,
                    {i for i in edges if 0 <= i < len(words) and folds[i] in years})


def _contains_gold(record: dict) -> bool:
    """The containment rule (rules-only grading): the answer states the gold, with its case
    where case tells words apart, and nothing that could make a reader doubt that the gold is
    its answer; the question's own words may surround it, inflections and word order included
    ("The ingestion cluster runs Kafka 3.7." for "Which Kafka version does the ingestion
    cluster run?"; "Priya Lachance prefers Excalidraw."), and a part of its own may say where
    the answer comes from ("IT, per the onboarding notes.")."""
    r = _read(record)
    return (r is not None and not _put_otherwise(r) and not _more_around_gold(r, record)
            and not _another_candidate(r))


def _put_otherwise(r: _Reading) -> bool:
    """Whether the answer puts the gold as something other than the answer: as a question, as
    what was, hedged or listed, or as the old side of a change."""
    folds, question = r.folds, r.question
    # An answer put as a question states nothing ("Is it Kafka 3.7?"). A question put in the
    # negative ("Which service does not use Postgres?") is restated the wrong way round by an
    # answer that drops the negation ("Billing uses Postgres"): the judge's.
    if "?" in folds or folds[0] in QUESTION_STARTS or NEGATIONS & set(question):
        return True
    # A question about what is now, answered with what was ("Priya Raman was the release
    # manager" for "Who is the release manager?"): the value may have changed since.
    if (PRESENT & set(question) and not PAST & set(question)
            and any(f in PAST and r.parts[i] in r.gold_parts for i, f in enumerate(folds))):
        return True
    # No hedge or list word anywhere; a shift word the question itself uses ("How many days
    # after the outage ...") frames the question, and so does a list word the answer repeats
    # with the question around it ("between the outage and its fix"), but "blob-gc or
    # report-fanout" and "Rust and Go" must not pass.
    if any(t not in r.gold_folds and (t in HEDGES or t in CONJUNCTIONS and i not in r.restated
                                      or t in SHIFTS and t not in question)
           for i, t in enumerate(folds)):
        return True
    # A change the question asks about ("Who took over ledger-sync from Mira Okafor?", "Which
    # cache replaced memcached?") is restated only with the gold as the new value: before the
    # change word, and not in the passive ("The data team took over billing from the platform
    # team", "redis was replaced by memcached" turn the roles around). A number or a date is
    # not what the question's change is from ("We can deploy again after the freeze on
    # January 14").
    return _shape(r.gold_words[0]) in ("name", "word") and any(
        f in SHIFTS and i not in r.inside and (i < r.spans[0].start or folds[i + 1:i + 2] == ["by"])
        for i, f in enumerate(folds))


def _more_around_gold(r: _Reading, record: dict) -> bool:
    """Whether the words right around the gold say more than the gold: another value before it,
    one of its shape beside it, an outdated answer, or a step on the way to another answer."""
    forms = r.forms
    # Before the gold, only openings, filler and the question's words: in "Billing runs on
    # MySQL; reporting runs on Postgres 16" the gold is one of two values stated.
    before = [forms[i] for i in range(r.spans[0].start) if i not in r.openers]
    if not _says_nothing_new(before, r.q_forms):
        return True
    # Right before the gold, filler, the end of an opening, or a word of another shape than the
    # gold's first ("for ulmus-graph 51 days"): a value of the gold's shape there may be listed
    # beside it ("Mira Okafor, Tariq Mbeki").
    j = r.spans[0].start - 1
    if (j >= 0 and forms[j] not in FILLER and j not in r.openers | r.named | r.of_date
            and j not in r.restated and _shape(r.words[j]) == _shape(r.gold_words[0])):
        return True
    outdated = (record.get("meta") or {}).get("outdated_answers", [])  # optional in meta
    if any(o != r.gold and _contains(forms, o) for o in ([w.form for w in _words(x)] for x in outdated)):
        return True
    # After the gold, nothing new: in "12 vegetarian and 4 vegan, so 16" the gold "4" is a
    # step on the way to another answer. Openings and attributions state nothing.
    after = [forms[i] for i in range(r.spans[-1].stop, len(r.words)) if i not in r.openers | r.attributions]
    return not _says_nothing_new(after, r.q_forms)


def _another_candidate(r: _Reading) -> bool:
    """Whether the answer holds another candidate value anywhere: a number or a date part
    besides the gold's (a year added to a yearless date is another claim); a name from the
    question when the gold is a name ("Tariq Mbeki took over from Mira Okafor" for "Who took
    over from Mira Okafor?"); an option the question offers ("spaces, tabs"); a word of the
    gold repeated outside it ("the billing team, the platform team"), except where the answer
    restates the question around it; and in another part of the answer (after a comma, a
    bracket, another sentence) anything but filler, openings and attributions."""
    names = _names(r.q_words, skip_first=True) if _names(r.gold_words, skip_first=False) else set()
    options = _choice_words(r.q_words)
    shared = {f for f in r.gold_folds if f in r.question and f not in FILLER}
    for i, (w, f) in enumerate(zip(r.words, r.folds)):
        if i in r.inside:
            continue
        if any(c.isdigit() for c in f) and not (i in r.named or i in r.of_date or i in r.restated):
            return True
        if f in names and not (i in r.named or i in r.restated) or f in options or f in shared and i not in r.restated:
            return True
        if r.parts[i] not in r.gold_parts and w.form not in FILLER and i not in r.openers | r.attributions:
            return True
    return False


def deterministic(record: dict, with_judge: bool) -> tuple[str, str] | None:
    """(verdict, layer) when a rule decides the answer, or None to leave it to the judge (or,
    without one, to `no_match`). With a judge only `exact` and `declined` decide."""
    if rubric_for(record) == "lme_preference":
        return None  # the gold is a rubric, not a string to match
    record = _dated(record)
    if verdict_equal(record["gold_answer"], record["answer"]):
        return "correct", "exact"
    answerable = is_answerable(record)
    pure = pure_abstention(record["answer"], record["question"])
    # A gold that itself says someone did not know ("She was not sure yet") can be restated
    # by a decline: not for a rule to call wrong.
    if answerable and pure and not DOUBT_WORDS & set(_folded(record["gold_answer"]).split()):
        return "incorrect", "declined"
    if with_judge:
        return None
    if not answerable:
        return ("correct", "abstention") if pure else None
    # A decline that goes on to name a value ("I don't know the minor version, but it's
    # Postgres 16") is neither a refusal nor a plain answer: not for a rule to decide.
    if declines(record["answer"]):
        return None
    return ("correct", "contains") if _contains_gold(record) else None

# ---------------------------------------------------------------------------------------------
# The rule set's identity: a hash of what the rules are, not a version bumped by hand. The
# tables' contents and the rule functions' source text go in, so any edit to a rule changes it.
# ---------------------------------------------------------------------------------------------

# contract.is_answerable and its table are the dataset's answer to "is this question
# answerable"; the rules depend on them, so they are part of the identity too.
RULE_TABLES = ("UNANSWERABLE_TYPES", "MONTHS", "DATE_PATTERNS", "WEEKDAYS", "DAY_PATTERN", "NUMBER_WORDS",
               "TENS_WORDS", "UNIT_WORDS", "SYMBOLS", "VERDICT_TOKEN", "PART_BREAKS", "HEDGES", "NEGATIONS",
               "PRESENT", "PAST", "SHIFTS", "CONJUNCTIONS", "CHOICES", "QUESTION_STARTS", "OPENERS", "EXACT_OPENERS",
               "ATTRIBUTIONS", "FILLER", "DOUBT_WORDS", "SEARCHED", "DECLINES", "PORTER_IRREGULAR", "STEP2", "STEP3",
               "STEP4")
RULE_FUNCTIONS = ("is_answerable", "rubric_for", "_date_token", "_named_day", "name_days", "_dated", "_cased",
                  "_words", "verdict_normalize", "_folded", "declines", "_same_word", "_says_nothing_new", "_gap",
                  "pure_abstention", "_phrases", "verdict_equal", "_spans", "_contains", "_opener_positions",
                  "_phrase_positions", "_choice_words", "_names", "_shape", "_plain", "_value_runs", "_restated",
                  "_gold_positions", "_asked", "_Reading", "_read", "_contains_gold", "_put_otherwise",
                  "_more_around_gold", "_another_candidate", "deterministic", "porter_stem", "_consonant",
                  "_measure", "_has_vowel", "_cvc", "_suffix_rule", "_step1", "_step2", "_step4", "_step5")


def _canonical(value: object) -> object:
    """A table as plain JSON in a fixed order (sets sorted, patterns as their source)."""
    if isinstance(value, re.Pattern):
        return [value.pattern, value.flags]
    if isinstance(value, dict):
        return sorted([k, _canonical(v)] for k, v in value.items())
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    return value


def rules_sha256() -> str:
    """sha256 of the rule tables' contents and the rule functions' source, as they are now."""
    # Looked up at call time, so a changed table is seen: the names of the modules the rules build
    # on (answerability, the rubric, the normalization), then this module's own.
    here = {**vars(contract), **vars(rubrics), **vars(normalization), **globals()}
    identity = {"tables": {name: _canonical(here[name]) for name in RULE_TABLES},
                "functions": {name: inspect.getsource(here[name]) for name in RULE_FUNCTIONS}}
    return sha256_text(json.dumps(identity, ensure_ascii=False, sort_keys=True))


RULES_SHA256 = rules_sha256()
