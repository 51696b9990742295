"""The two normalizations of answers, each named for its use: the verdict normalization the
rules compare with (words, numbers, dates by the day they name, the Porter stemmer), and the
metric normalization of the official SQuAD and LoCoMo evaluations behind EM and F1."""
from __future__ import annotations

import datetime
import functools
import re
import string
import unicodedata
from collections import Counter
from typing import NamedTuple

# ---------------------------------------------------------------------------------------------
# The verdict normalization: what the rules compare. One way to write numbers, dates and
# Unicode, and nothing dropped that changes what an answer says: currency and unit symbols,
# signs, "#" and "+" ("C#" is not "C++", "A-" is not "A+"), a question mark, every number and
# year, and the case of acronyms and units ("IT" is not "It", "MB/s" is not "Mb/s"). Words
# written in lower case or with one capital fold to lower case ("Postgres" is "postgres").
# ---------------------------------------------------------------------------------------------

MONTHS = {
    **{m: i for i, m in enumerate(["january", "february", "march", "april", "may", "june", "july", "august",
                                   "september", "october", "november", "december"], 1)},
    **{m: i for i, m in enumerate(["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct",
                                   "nov", "dec"], 1)},
    "sept": 9,
    # Russian, nominative and genitive ("22 июня"), after ё -> е.
    **{m: i for i, m in enumerate(["январь", "февраль", "март", "апрель", "май", "июнь", "июль", "август",
                                   "сентябрь", "октябрь", "ноябрь", "декабрь"], 1)},
    **{m: i for i, m in enumerate(["января", "февраля", "марта", "апреля", "мая", "июня", "июля", "августа",
                                   "сентября", "октября", "ноября", "декабря"], 1)},
}
_MONTH = "(?:" + "|".join(sorted(MONTHS, key=len, reverse=True)) + ")"
_ORD = r"(?:st|nd|rd|th)?"
DATE_PATTERNS = (
    re.compile(r"\b(?P<y>\d{4})-(?P<mo>\d{1,2})-(?P<d>\d{1,2})\b"),
    re.compile(rf"\b(?P<m>{_MONTH})\.?\s+(?P<d>\d{{1,2}}){_ORD}\b(?:,?\s+(?P<y>\d{{4}})\b)?", re.I),
    re.compile(rf"\b(?P<d>\d{{1,2}}){_ORD}\s+(?:of\s+)?(?P<m>{_MONTH})\b\.?(?:,?\s+(?P<y>\d{{4}})\b)?", re.I),
    re.compile(rf"\b(?P<m>{_MONTH})\.?,?\s+(?P<y>\d{{4}})\b", re.I),
)
NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty".split())}
NUMBER_WORDS.update({"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70",
                     "eighty": "80", "ninety": "90", "hundred": "100"})
TENS_WORDS = frozenset("twenty thirty forty fifty sixty seventy eighty ninety".split())
UNIT_WORDS = frozenset("one two three four five six seven eight nine".split())
# Symbols that carry meaning, each kept as a word of its own: currency signs (Unicode's
# currency block and the older ones), "#", "+", "&", "@", degree, primes (feet and inches),
# per mille, times, bounds and approximation away from a number, plus-minus, "=", and the
# question mark (an answer put as a question states nothing).
SYMBOLS = "#+&@°′″‰×÷<>≤≥≈~±=?$¢£¤¥\u20a0-\u20bf"
# A number with what makes it another number: a leading sign ("-5" is not "5"), a point or
# comma between digits ("1.5" is neither "1/5" nor "15"; "3.7.1" is one version), a percent
# sign, and a sign of approximation or bound ("~16", "<16", "16+" are not "16"). A sign or digit
# glued to a letter or digit before it is not a sign ("pike-6", "3-5 days", "v2"), and a number
# glued to letters after it stays one word ("16gb"). Then a word; the minus of a letter grade
# ("A-": a hyphen after a letter that joins nothing); a kept symbol.
VERDICT_TOKEN = re.compile(r"(?<![^\W_])(?:[~≈<>≤≥]\s?)?(?:[-+](?=\d))?\d+(?:[.,]\d+)*(?:\s?%)?(?:\+(?!\d))?"
                           r"(?![^\W_])|[^\W_]+|(?<=[^\W\d_])[-–](?![^\W_])|[" + SYMBOLS + "]")
# Punctuation between two words that starts another part of the answer: a list ("Redis,
# Valkey"), an aside ("(previously pike-4)"), another sentence.
PART_BREAKS = ",;:/()[]{}|—–.!…"


class Word(NamedTuple):
    """One word of a text under the verdict normalization."""
    form: str      # compared with the gold: case kept where it tells words apart ("IT", "MB")
    fold: str      # case-folded, looked up in the word tables
    capital: bool  # written with a capital first letter ("Kafka", "IT")
    glued: bool    # joined to the word before by punctuation without a space ("3.7.1", "pike-6")
    sep: str       # the punctuation between the word before and this one ("," in "Redis, Valkey")


def _date_token(m: re.Match) -> str:
    groups = m.groupdict()
    month = int(groups["mo"]) if groups.get("mo") else MONTHS[groups["m"].casefold().replace("ё", "е")]
    parts = [groups["y"]] if groups.get("y") else []
    parts.append(f"m{month:02d}")
    if groups.get("d"):
        parts.append(f"d{int(groups['d']):02d}")
    return " " + " ".join(parts) + " "


def _cased(token: str) -> tuple[str, str]:
    """(form, fold) of one token: an acronym, a unit or a word in mixed case ("IT", "MB",
    "kB", "iOS") and a single capital letter ("A", "B") keep their case; other words fold."""
    fold = token.casefold().replace("ё", "е")
    keep = any(c.isupper() for c in token[1:]) or (len(token) == 1 and token.isupper())
    return (token.replace("Ё", "Е").replace("ё", "е") if keep else fold), fold


# Pure, and called for the same golds, answers and questions again and again: cached.
@functools.lru_cache(maxsize=1 << 16)
def _words(text: str) -> tuple[Word, ...]:
    """The words of a text under the verdict normalization: NFKC, dates as `YYYY mMM dDD`,
    number words and ordinals as digits, thousands separators dropped, other punctuation
    between words recorded (Word.sep), not kept."""
    s = unicodedata.normalize("NFKC", text).replace("\u2212", "-")
    s = re.sub(r"(?<=\d),(?=\d{3}\b)", "", s)
    for pattern in DATE_PATTERNS:
        s = pattern.sub(_date_token, s)
    s = re.sub(r"\b(\d+)(?:st|nd|rd|th)\b", r"\1", s, flags=re.I)
    out: list[Word] = []
    previous, end = "", None
    for m in VERDICT_TOKEN.finditer(s):
        token = "".join(m.group().split())  # "16 %" is the one word "16%"
        between = s[end:m.start()] if end is not None else ""
        glued = end is not None and not any(c.isspace() for c in between)
        sep = "".join(between.split())
        end = m.end()
        form, fold = _cased(token.replace("–", "-"))
        if fold in NUMBER_WORDS:
            form = fold = NUMBER_WORDS[fold]
        # Punctuation between two glued numbers is part of the value: "2/3", "2-3", "10:30" and
        # "10/30" are four values, so the second number keeps what joins it to the first.
        if glued and sep and out and out[-1].fold[-1:].isdigit() and token[:1].isdigit():
            form, fold = sep + form, sep + fold
        # "twenty one" / "twenty-one" -> 21; digits as written ("20 1") stay apart.
        if previous in TENS_WORDS and m.group().casefold() in UNIT_WORDS:
            total = str(int(out[-1].fold) + int(fold))
            out[-1] = out[-1]._replace(form=total, fold=total)
        else:
            out.append(Word(form, fold, token[:1].isupper(), glued, sep))
        previous = m.group().casefold()
    return tuple(out)


def verdict_normalize(text: str) -> str:
    """The text as the rules compare it (the verdict normalization, above): its words' forms,
    joined by single spaces."""
    return " ".join(w.form for w in _words(text))


def _folded(text: str) -> str:
    """The words of a text case-folded, joined by single spaces: what the phrase tables match."""
    return " ".join(w.fold for w in _words(text))


# ---------------------------------------------------------------------------------------------
# Dates by the day they name. Before any rule compares, every date that names a day (a month
# and a day of it, with or without a year and a weekday) in the question, the gold, the answer
# and the known outdated values is rewritten as that day in ISO form, so "Friday, February 20",
# "20 Feb 2026", "2026-02-20" and "2/20/2026" are one value, and the rules then compare values
# as they compare any other. A date without a year takes the year that puts it nearest to the
# question's asked_at (asked on 2026-01-31, "November 25" is 2025-11-25, not the day ten months
# ahead); without an asked_at (a labelled answer that has none) it is left as written. A weekday
# that is not the weekday of its date makes the date another value ("Thursday, February 20"
# when February 20 is a Friday states something false about the day). A date of numbers alone
# is read only with a four-digit year and only when one reading is a date: "2/20/2026" and
# "20.02.2026" are February 20, "3/4/2026" is March 4 or April 3 and stays as written, for no
# rule to accept; a numeric date without a year ("2/20") is left alone too (a fraction, a score).
# ---------------------------------------------------------------------------------------------

WEEKDAYS = {**{d: i for i, d in enumerate(["monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
                                           "sunday"])},
            **{d: i for i, d in enumerate(["mon", "tue", "wed", "thu", "fri", "sat", "sun"])},
            "tues": 1, "thur": 3, "thurs": 3}
_WEEKDAY = "(?:" + "|".join(sorted(WEEKDAYS, key=len, reverse=True)) + ")"
# A weekday before the date ("Friday, February 20", "Fri 20 Feb", "Friday the 20th of
# February") or after it ("February 20 (a Friday)", "Nov 25, a Tuesday"); the date as ISO
# (dashes or slashes), as numbers with a four-digit year last, or with the month's name.
DAY_PATTERN = re.compile(
    rf"(?:\b(?P<wd>{_WEEKDAY})\b\.?,?\s+(?:the\s+)?)?(?:"
    r"\b(?P<iy>\d{4})(?P<isep>[-/])(?P<im>\d{1,2})(?P=isep)(?P<id>\d{1,2})\b"
    r"|\b(?P<na>\d{1,2})(?P<nsep>[/.])(?P<nb>\d{1,2})(?P=nsep)(?P<ny>\d{4})\b"
    rf"|\b(?P<mm>{_MONTH})\.?\s+(?P<md>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(?P<my>\d{{4}})\b)?"
    rf"|\b(?P<dd>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<dm>{_MONTH})\b\.?(?:,?\s+(?P<dy>\d{{4}})\b)?"
    rf")(?:\s*(?:,\s*|\(\s*)(?:a\s+)?(?P<wd2>{_WEEKDAY})\b\.?\)?)?",
    re.I)


def _named_day(m: re.Match, asked: datetime.date | None) -> str:
    """One date match as its day in ISO form (followed by `wdN` when the weekday given is not
    the day's), or the match as written when it names no one day."""
    g = m.groupdict()
    if g["iy"]:
        readings, year = [(int(g["im"]), int(g["id"]))], int(g["iy"])
    elif g["ny"]:
        a, b = int(g["na"]), int(g["nb"])
        readings, year = sorted({(a, b), (b, a)}), int(g["ny"])
        readings = [(mo, d) for mo, d in readings if mo <= 12]
    else:
        month = MONTHS[(g["mm"] or g["dm"]).casefold().replace("ё", "е")]
        readings = [(month, int(g["md"] or g["dd"]))]
        year = int(g["my"] or g["dy"]) if (g["my"] or g["dy"]) else None
    if len(readings) != 1 or (year is None and asked is None):
        return m.group()
    month, day = readings[0]
    years = [year] if year is not None else [asked.year - 1, asked.year, asked.year + 1]
    days = []
    for y in years:
        try:
            days.append(datetime.date(y, month, day))
        except ValueError:  # February 30, or February 29 of a common year
            continue
    if not days:
        return m.group()
    named = min(days, key=lambda d: abs((d - asked).days)) if year is None else days[0]
    weekday = g["wd"] or g["wd2"]
    stated = WEEKDAYS[weekday.casefold()] if weekday else named.weekday()
    return named.isoformat() + (f" wd{stated + 1}" if stated != named.weekday() else "")


@functools.lru_cache(maxsize=1 << 16)
def name_days(text: str, asked_at: str | None) -> str:
    """The text with every date that names a day written as that day, YYYY-MM-DD (above); a
    yearless date takes its year from asked_at (an ISO timestamp), or stays as written without."""
    asked = datetime.date.fromisoformat(asked_at[:10]) if asked_at else None
    return DAY_PATTERN.sub(lambda m: _named_day(m, asked), unicodedata.normalize("NFKC", text))


def _dated(record: dict) -> dict:
    """The record with its question, gold, answer and outdated values as name_days writes them."""
    # asked_at is in every run record; a labelled answer may have none (its dates then stay as written).
    asked = record.get("asked_at")
    meta = record.get("meta") or {}  # optional
    out = {**record, **{f: name_days(record[f], asked) for f in ("question", "gold_answer", "answer")}}
    if meta.get("outdated_answers"):
        out["meta"] = {**meta, "outdated_answers": [name_days(o, asked) for o in meta["outdated_answers"]]}
    return out

# The Porter stemmer (M. F. Porter, "An algorithm for suffix stripping", Program 14(3), 1980):
# the rules read inflections with it ("supplies" is "supplied"), and LoCoMo's F1 runs it. It
# keeps the departures of NLTK's default mode, which LoCoMo's evaluation uses: a few irregular forms,
# words of one or two letters left alone, "ies"/"ied" of four-letter words kept as "ie",
# "y" -> "i" only after a consonant that is not the first letter, "bli" -> "ble", "alli" ->
# "al" tried first, "fulli" -> "ful", "logi" -> "log", and a two-letter vowel-consonant word
# counted as ending consonant-vowel-consonant.
PORTER_IRREGULAR = {"sky": "sky", "skies": "sky", "dying": "die", "lying": "lie", "tying": "tie", "news": "news",
                    "innings": "inning", "inning": "inning", "outings": "outing", "outing": "outing",
                    "cannings": "canning", "canning": "canning", "howe": "howe", "proceed": "proceed",
                    "exceed": "exceed", "succeed": "succeed"}


def _consonant(w: str, i: int) -> bool:
    if w[i] in "aeiou":
        return False
    if w[i] == "y":
        return i == 0 or not _consonant(w, i - 1)
    return True


def _measure(stem: str) -> int:
    """Porter's m: the number of vowel-consonant sequences in the stem."""
    m, vowel_before = 0, False
    for i in range(len(stem)):
        vowel = not _consonant(stem, i)
        m += vowel_before and not vowel
        vowel_before = vowel
    return m


def _has_vowel(stem: str) -> bool:
    return any(not _consonant(stem, i) for i in range(len(stem)))


def _cvc(w: str) -> bool:
    """Porter's *o: ends consonant-vowel-consonant, the last not w, x or y (or is a
    vowel-consonant word of two letters)."""
    if len(w) >= 3:
        return (_consonant(w, len(w) - 3) and not _consonant(w, len(w) - 2) and _consonant(w, len(w) - 1)
                and w[-1] not in "wxy")
    return len(w) == 2 and not _consonant(w, 0) and _consonant(w, 1)


def _suffix_rule(word: str, rules: tuple, min_measure: int) -> str:
    """The first rule whose suffix the word ends with decides: replaced when the stem's m is
    above min_measure, else the word is left as it is."""
    for suffix, replacement in rules:
        if word.endswith(suffix):
            stem = word[:len(word) - len(suffix)]
            return stem + replacement if _measure(stem) > min_measure else word
    return word


def _step1(w: str) -> str:
    if w.endswith("ies") and len(w) == 4:
        w = w[:-1]
    elif w.endswith("sses") or w.endswith("ies"):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    if w.endswith("ied"):
        return w[:-1] if len(w) == 4 else w[:-2]
    if w.endswith("eed"):
        return w[:-1] if _measure(w[:-3]) > 0 else w
    stem = next((w[:-len(s)] for s in ("ed", "ing") if w.endswith(s) and _has_vowel(w[:-len(s)])), None)
    if stem is None:
        return w
    if stem.endswith(("at", "bl", "iz")):
        return stem + "e"
    if len(stem) >= 2 and stem[-1] == stem[-2] and _consonant(stem, len(stem) - 1):
        return stem if stem[-1] in "lsz" else stem[:-1]
    return stem + "e" if _measure(stem) == 1 and _cvc(stem) else stem


STEP2 = (("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"), ("izer", "ize"),
         ("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous"), ("ization", "ize"),
         ("ation", "ate"), ("ator", "ate"), ("alism", "al"), ("iveness", "ive"), ("fulness", "ful"),
         ("ousness", "ous"), ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"), ("fulli", "ful"))
STEP3 = (("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"), ("ful", ""), ("ness", ""))
STEP4 = ("al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "ou", "ism", "ate",
         "iti", "ous", "ive", "ize")


def _step2(w: str) -> str:
    if w.endswith("alli") and _measure(w[:-4]) > 0:
        return _step2(w[:-2])
    if w.endswith("logi") and not any(w.endswith(s) for s, _ in STEP2):
        return w[:-1] if _measure(w[:-3]) > 0 else w
    return _suffix_rule(w, STEP2, 0)


def _step4(w: str) -> str:
    for suffix in STEP4:
        if w.endswith(suffix):
            stem = w[:-len(suffix)]
            keep = _measure(stem) > 1 and (suffix != "ion" or stem[-1] in "st")
            return stem if keep else w
    return w


def _step5(w: str) -> str:
    if w.endswith("e"):
        m = _measure(w[:-1])
        if m > 1 or m == 1 and not _cvc(w[:-1]):
            w = w[:-1]
    return w[:-1] if w.endswith("ll") and _measure(w[:-1]) > 1 else w


@functools.lru_cache(maxsize=1 << 16)
def porter_stem(word: str) -> str:
    """The Porter stem of a word, as NLTK's PorterStemmer gives it by default (lower case)."""
    w = word.lower()
    if w in PORTER_IRREGULAR:
        return PORTER_IRREGULAR[w]
    if len(w) <= 2:
        return w
    w = _step1(w)
    if w.endswith("y") and len(w) > 2 and _consonant(w, len(w) - 2):
        w = w[:-1] + "i"
    return _step5(_step4(_suffix_rule(_step2(w), STEP3, 0)))

# ---------------------------------------------------------------------------------------------
# Answer metrics for score.py: exact match and token F1 under the metric normalization of the
# official evaluations, so that the figures can be set beside published ones. By default
# SQuAD's (Rajpurkar et al. 2016; its v2.0 evaluation script): lower case, ASCII punctuation
# removed, the articles a/an/the removed, whitespace collapsed; EM is equality, F1 the F1 of
# the shared tokens as multisets. For a question imported from LoCoMo, LoCoMo's own evaluation
# (task_eval/evaluation.py of snap-research/locomo, read at commit 9228632; Maharana et al.,
# ACL 2024), category by category: commas and "and" removed too, F1 over Porter stems, EM the
# equality of the token sets; category 1 (multi-hop) F1 averaged over the gold's
# comma-separated parts, each the best over the answer's parts; category 3 graded against the
# gold up to its first ';'; category 5 (adversarial) 1 when the answer says "no information
# available" or "not mentioned", else 0, for EM and F1 alike (LoCoMo scores it by that alone).
# ---------------------------------------------------------------------------------------------

PUNCTUATION = frozenset(string.punctuation)
SQUAD_ARTICLES = re.compile(r"\b(a|an|the)\b")
LOCOMO_ARTICLES = re.compile(r"\b(a|an|the|and)\b")
LOCOMO_NOT_ANSWERED = ("no information available", "not mentioned")


def metric_normalize(text: str, locomo: bool = False) -> str:
    """The answer as EM and F1 see it: SQuAD's normalization, or LoCoMo's (commas and "and"
    removed as well)."""
    s = text.replace(",", "") if locomo else text
    s = "".join(c for c in s.lower() if c not in PUNCTUATION)
    return " ".join((LOCOMO_ARTICLES if locomo else SQUAD_ARTICLES).sub(" ", s).split())


def locomo_category(record: dict) -> int | None:
    """The LoCoMo category (1-5) of a question imported from LoCoMo, else None (meta is
    optional; an imported question always carries its category)."""
    meta = record.get("meta") or {}
    return meta["category"] if meta.get("source") == "locomo" else None


def _f1(gold: list[str], answer: list[str]) -> float:
    common = sum((Counter(gold) & Counter(answer)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(answer), common / len(gold)
    return 2 * precision * recall / (precision + recall)


def _locomo_f1(gold: str, answer: str) -> float:
    return _f1([porter_stem(w) for w in metric_normalize(gold, True).split()],
               [porter_stem(w) for w in metric_normalize(answer, True).split()])


def _locomo_gold(gold: str, category: int) -> str:
    return gold.split(";")[0].strip() if category == 3 else gold


def exact_match(gold: str, answer: str, category: int | None = None) -> bool:
    """Exact match under the metric normalization: SQuAD's, or with a LoCoMo category
    (locomo_category) LoCoMo's own."""
    if category is None:
        return metric_normalize(gold) == metric_normalize(answer)
    if category == 5:
        return any(p in answer.lower() for p in LOCOMO_NOT_ANSWERED)
    return set(metric_normalize(_locomo_gold(gold, category), True).split()) == \
        set(metric_normalize(answer, True).split())


def token_f1(gold: str, answer: str, category: int | None = None) -> float:
    """Token F1 under the metric normalization: SQuAD's (`token_f1("The Beatles", "Beatles")`
    is 1.0; both empty agree), or with a LoCoMo category (locomo_category) LoCoMo's own."""
    if category is None:
        g, a = metric_normalize(gold).split(), metric_normalize(answer).split()
        return float(g == a) if not g or not a else _f1(g, a)
    if category == 5:
        return float(any(p in answer.lower() for p in LOCOMO_NOT_ANSWERED))
    if category == 1:
        parts = [p.strip() for p in answer.split(",")]
        golds = [g.strip() for g in gold.split(",")]
        return sum(max(_locomo_f1(g, p) for p in parts) for g in golds) / len(golds)
    return _locomo_f1(_locomo_gold(gold, category), answer)
