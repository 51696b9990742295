"""The grading rules, shared by judge.py (which grades) and score.py (which measures answers
with the same normalization): the judge's rubrics and prompt, the strict parser of the judge's
JSON verdict, answer normalization, the deterministic rule layers and their identity, shared
answer metrics, and the measures of how often a grader is wrong (labelled answers, judge
calibration, Cohen's kappa). Nothing here calls a model.
"""
from __future__ import annotations

import functools
import inspect
import json
import math
import os
import re
import unicodedata
from collections import Counter

from interface import QUESTION_TYPES, InputError, read_jsonl, sha256_text

# ---------------------------------------------------------------------------------------------
# Rubrics. The default is the seed guide's; the others restate, in our own words, the rules of
# the official graders of the benchmarks the importers bring in, so imported questions are
# graded the way their authors grade them (LongMemEval's per-type rules; LoCoMo category 5).
# ---------------------------------------------------------------------------------------------

JUDGE_HEADER = """You grade one answer against a reference answer.

Question: {question}
Reference answer: {gold}
Candidate answer: {answer}

Rules:
"""
JUDGE_FOOTER = """
Return only JSON: {{"verdict": "correct"}} or {{"verdict": "incorrect"}}"""

RUBRICS = {
    "default": """- "correct" if the candidate states the same fact as the reference; harmless extra detail is fine.
- "incorrect" if it states a different or outdated fact, or hedges between several options.
- If the reference is "I don't know", the candidate is correct only if it declines to answer.""",
    "lme_default": """- "correct" if the candidate contains the reference answer or states something equivalent to it.
- "incorrect" if it gives only part of the information the reference requires, or a different fact.""",
    "lme_temporal": """- "correct" if the candidate contains the reference answer or an equivalent one.
- Counts of days, weeks or months that differ from the reference by exactly one are still "correct"
  (the question may count the first or last day either way).
- "incorrect" if it gives only part of the required information, or a different fact.""",
    "lme_knowledge_update": """- The reference is the most recent value of something that changed over time.
- "correct" if the candidate gives the updated value, even if it also mentions the older one.
- "incorrect" if it gives only an older value, or a different fact.""",
    "lme_preference": """- The reference is a rubric describing what a personalised answer for this user looks like.
- "correct" if the candidate recalls and uses the user's personal information in the way the rubric
  describes; it need not cover every point of the rubric.
- "incorrect" if it ignores the user's information or contradicts it.""",
    "unanswerable": """- The question cannot be answered from the conversation: the information was never given.
- "correct" only if the candidate says that the information is not available, not mentioned or
  unknown (declining to answer counts).
- "incorrect" if the candidate gives any specific answer.""",
}
JUDGE_SCHEMA = {"type": "object", "properties": {"verdict": {"type": "string", "enum": ["correct", "incorrect"]}},
                "required": ["verdict"], "additionalProperties": False}
# Tried in order: OpenAI-style json_schema, the json_object-with-schema form some local servers
# (llama-cpp-python) accept, then no constraint at all. The first the server accepts is kept.
RESPONSE_FORMATS = (
    {"type": "json_schema", "json_schema": {"name": "verdict", "strict": True, "schema": JUDGE_SCHEMA}},
    {"type": "json_object", "schema": JUDGE_SCHEMA},
    None,
)


def rubric_for(record: dict) -> str:
    """The rubric name for a question, from its source benchmark and type (meta is optional)."""
    meta = record.get("meta") or {}
    if meta.get("abstention") or record["type"] in ("abstention", "adversarial"):
        return "unanswerable"
    if meta.get("source") == "longmemeval":
        return {"temporal-reasoning": "lme_temporal", "knowledge-update": "lme_knowledge_update",
                "single-session-preference": "lme_preference"}.get(meta.get("source_type"), "lme_default")
    return "default"


def rubric_template(rubric: str) -> str:
    """The full judge prompt template of a rubric, before the question is filled in."""
    return JUDGE_HEADER + RUBRICS[rubric] + JUDGE_FOOTER


def judge_prompt(rubric: str, question: str, gold: str, answer: str) -> str:
    """The judge's whole input: question, gold and answer, and nothing about the system."""
    return rubric_template(rubric).format(question=question, gold=gold, answer=answer)


def parse_verdict(raw: str) -> str:
    """'correct' or 'incorrect' from the judge's JSON, else 'unparseable'."""
    text = raw.strip()
    fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", text, re.S)
    if fenced:
        text = fenced.group(1)
    try:
        obj = json.loads(text)
    except json.JSONDecodeError:
        return "unparseable"
    if isinstance(obj, dict) and obj.get("verdict") in ("correct", "incorrect"):
        return obj["verdict"]
    return "unparseable"

# ---------------------------------------------------------------------------------------------
# Normalization: one way to write numbers, dates, Unicode and case, so that the rules and the
# answer metrics compare words rather than spellings.
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
    re.compile(rf"\b(?P<m>{_MONTH})\.?\s+(?P<d>\d{{1,2}}){_ORD}\b(?:,?\s+(?P<y>\d{{4}})\b)?"),
    re.compile(rf"\b(?P<d>\d{{1,2}}){_ORD}\s+(?:of\s+)?(?P<m>{_MONTH})\b\.?(?:,?\s+(?P<y>\d{{4}})\b)?"),
    re.compile(rf"\b(?P<m>{_MONTH})\.?,?\s+(?P<y>\d{{4}})\b"),
)
NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty".split())}
NUMBER_WORDS.update({"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70",
                     "eighty": "80", "ninety": "90", "hundred": "100"})
TENS_WORDS = frozenset("twenty thirty forty fifty sixty seventy eighty ninety".split())
UNIT_WORDS = frozenset("one two three four five six seven eight nine".split())


# A word, or a number with what makes it another number: a leading minus ("-5" is not "5"), a
# point or comma between digits ("1.5" is neither "1/5" nor "15"; "3.7.1" is one version), a
# percent sign ("16%" is not "16"), and a sign of approximation or bound ("~16", "<16", "16+"
# are not "16"). A minus or digit glued to a letter or digit before it is not a sign ("pike-6",
# "3-5 days", "v2"), and a number glued to letters after it stays one word as before ("16gb").
NUMBER_OR_WORD = re.compile(r"(?<![^\W_])(?:[~≈<>≤≥]\s?)?(?:-(?=\d))?\d+(?:[.,]\d+)*(?:\s?%)?(?:\+(?!\d))?"
                            r"(?![^\W_])|[^\W_]+")


def _date_token(m: re.Match) -> str:
    groups = m.groupdict()
    month = int(groups["mo"]) if groups.get("mo") else MONTHS[groups["m"]]
    parts = [groups["y"]] if groups.get("y") else []
    parts.append(f"m{month:02d}")
    if groups.get("d"):
        parts.append(f"d{int(groups['d']):02d}")
    return " " + " ".join(parts) + " "


def _words(text: str) -> list[tuple[str, bool]]:
    """The normalized words of a text, each with `glued`: True when punctuation without a space
    joined it to the previous word, as in "3.7.1", "pike-6b" or "v2", so that a rule can tell
    the gold "3.7" standing alone from the gold extended into another value."""
    s = unicodedata.normalize("NFKC", text).casefold().replace("ё", "е").replace("\u2212", "-")
    s = re.sub(r"(?<=\d),(?=\d{3}\b)", "", s)
    for pattern in DATE_PATTERNS:
        s = pattern.sub(_date_token, s)
    s = re.sub(r"\b(\d+)(?:st|nd|rd|th)\b", r"\1", s)
    out: list[tuple[str, bool]] = []
    previous, end = "", None
    for m in NUMBER_OR_WORD.finditer(s):
        word = "".join(m.group().split())  # "16 %" is the one word "16%"
        glued = end is not None and not any(c.isspace() for c in s[end:m.start()])
        end = m.end()
        t = NUMBER_WORDS.get(word, word)
        # "twenty one" / "twenty-one" -> 21; digits as written ("20 1") stay apart.
        if previous in TENS_WORDS and word in UNIT_WORDS:
            out[-1] = (str(int(out[-1][0]) + int(t)), out[-1][1])
        else:
            out.append((t, glued))
        previous = word
    return out


# Pure, and called for the same golds and answers again and again (each system, each layer,
# EM and F1 in score.py): cached.
@functools.lru_cache(maxsize=1 << 16)
def normalize(text: str) -> str:
    """NFKC, case-folded, ё as е, dates as `YYYY mMM dDD`, number words and ordinals as
    digits, thousands separators dropped, punctuation as spaces, whitespace collapsed."""
    return " ".join(w for w, _ in _words(text))

# ---------------------------------------------------------------------------------------------
# The rule tables. Every entry is part of the rule set's identity (RULES_SHA256 below).
# ---------------------------------------------------------------------------------------------

# Words that make an answer containing the gold doubtful: options, doubt, negation, bounds
# that turn the gold into another value ("more than 16 days", "at least Kafka 3.7"), and
# approximations, which state a value near the gold rather than the gold ("about 16 days").
HEDGES = frozenset("or nor either neither maybe perhaps possibly probably likely unlikely might may could "
                   "if guess think believe seems unsure unclear not no never isn t wasn t "
                   "than least nearly almost about around roughly approximately approx circa some "
                   "или либо возможно наверное наверно вероятно кажется думаю если может не нет "
                   "примерно около почти приблизительно порядка".split())
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
# Openings that state no value ("it runs", "they prefer", "going by what was said"): with
# filler and the question's own words, the only words that may come before the gold, and with
# filler the only ones that may come right before it. Phrases, matched whole, so that "going
# by" opens an answer and "going to" does not.
OPENERS = ("going by", "runs", "run", "running", "uses", "use", "using", "scheduled", "deployed", "hosted", "hosts",
           "lives", "persists", "set to", "owned", "owner", "owns", "falls", "ends", "took", "lasts", "lasted",
           "prefer", "prefers", "preferred", "likes", "wants", "version", "cluster",
           "сервис", "работает", "кластере", "там", "причина", "предпочтение", "владелец", "ответ", "используется",
           "живет")
# Words that state no value: function words, "now", and the vocabulary of declining. They may
# follow the gold ("Postgres 16 now") or surround a refusal ("Sorry, the memories don't say").
FILLER = frozenset(
    "a an the this that these those it its i m s ve ll re me my we our us you your they them their "
    "there here is are was were be been being am do does did done has have had "
    "to of in on at for from with about as by and so also just only now currently current still right today "
    "what which who whom whose when where how why whether any anything some something yet ever anywhere "
    "sorry unfortunately afraid please information info detail details data memories memory "
    "conversation conversations history context notes note record records mention mentions mentioned "
    "say says said state stated specify specified provide provided give given share shared discuss "
    "discussed recorded available find found know known exact exactly specific specifically precise "
    "sure certain answer question "
    "я мне мы нам вы вам это этом этого эти об о про в во на по и а у к с со же сожалению информации "
    "информация данных сведений памяти воспоминаниях разговоре разговорах истории контексте заметках "
    "записях точно точной конкретно сейчас теперь только года году".split())
# Phrasings that decline to answer, matched on normalized text (so "don't" is "don t").
DECLINES = tuple(re.compile(p) for p in (
    r"\bi (?:do not|don t|dont|did not|didn t) (?:know|have|recall|remember)\b",
    r"\b(?:not|never|(?:isn|wasn|aren|weren|hasn|haven|hadn) t)(?: been)? (?:mentioned|specified|stated|provided|"
    r"available|known|discussed|given|said|recorded|shared|found)\b",
    r"\bnever (?:mention|mentions|say|says|state|states|specify|specifies|give|gives)\b",
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
# The rule layers (seed guide, section 6; issue "One comparison you can trust": rules decide
# only what is beyond doubt). A rule may say "correct" only when no reader could disagree;
# anything else goes to the LLM judge, or without one is recorded as `no_match` (incorrect),
# so that rules-only grading stays a strict lower bound.
# ---------------------------------------------------------------------------------------------

def declines(text: str) -> bool:
    """True when the text declines to answer (English and Russian phrasings)."""
    n = normalize(text)
    return any(p.search(n) for p in DECLINES)


def _same_word(a: str, b: str) -> bool:
    """The same word up to an ending ("owns"/"owner", "prefer"/"preferred"); numbers only equal."""
    if a == b:
        return True
    if not (a.isalpha() and b.isalpha()):
        return False
    n = len(os.path.commonprefix([a, b]))
    return n >= 3 and n >= min(len(a), len(b)) - 1


def _says_nothing_new(words: list[str], question: list[str]) -> bool:
    """Every word is filler or repeats the question: no value is stated."""
    return all(w in FILLER or any(_same_word(w, q) for q in question) for w in words)


def pure_abstention(answer: str, question: str) -> bool:
    """The answer declines and does not go on to give a value: once the declining phrases are
    taken out, only filler and the question's own words are left ("I don't know. Probably
    Redis 7." is not pure; "The memories never mention who owns ledger-sync." is)."""
    if not declines(answer):
        return False
    rest = normalize(answer)
    for p in DECLINES:
        rest = p.sub(" ", rest)
    return _says_nothing_new(rest.split(), normalize(question).split())


def is_unanswerable(record: dict) -> bool:
    """The gold says the asked fact is not in the conversation."""
    return rubric_for(record) == "unanswerable" or declines(record["gold_answer"])


def exact_match(gold: str, answer: str) -> bool:
    """The normalized answer equals the normalized (non-empty) gold."""
    g = normalize(gold)
    return bool(g) and g == normalize(answer)


def _spans(words: list[tuple[str, bool]], value: list[str]) -> list[int]:
    """Where `value` occurs in `words` on word boundaries and glued to neither neighbour: "3.7"
    is in "Kafka 3.7." but not in "Kafka 3.7.1"; "pike-6" is not in "pike-6b"."""
    n = len(value)
    tokens = [w for w, _ in words]
    return [i for i in range(len(words) - n + 1)
            if n and tokens[i:i + n] == value and not words[i][1] and not (i + n < len(words) and words[i + n][1])]


def states_value(answer: str, value: str) -> bool:
    """The answer states this value on word boundaries, not as part of a longer one (used to
    count answers that state a value the history had replaced, meta.outdated_answers)."""
    return bool(_spans(_words(answer), normalize(value).split()))


def _contains(haystack: list[str], needle: list[str]) -> bool:
    n = len(needle)
    return n > 0 and any(haystack[i:i + n] == needle for i in range(len(haystack) - n + 1))


def _opener_words() -> list[list[str]]:
    """The opening phrases (OPENERS) as normalized words, the longest first."""
    return sorted((normalize(o).split() for o in OPENERS), key=len, reverse=True)


def _without_openers(words: list[str]) -> list[str]:
    """The words with every whole opening phrase (OPENERS) taken out."""
    phrases = _opener_words()
    out, i = [], 0
    while i < len(words):
        match = next((p for p in phrases if words[i:i + len(p)] == p), None)
        if match:
            i += len(match)
        else:
            out.append(words[i])
            i += 1
    return out


def _contains_gold(record: dict) -> bool:
    """The containment rule: the answer states the gold and nothing that could make a reader
    doubt that the gold is its answer."""
    words = _words(record["answer"])
    tokens = [w for w, _ in words]
    gold = normalize(record["gold_answer"]).split()
    starts = _spans(words, gold)
    if not starts:
        return False
    question = normalize(record["question"]).split()
    # A shift word the question itself uses ("How many days after the outage ...") frames the
    # question; a hedge or a conjunction never is exempt, since "blob-gc or report-fanout" and
    # "Rust and Go" must not pass.
    if any(t not in gold and (t in HEDGES or t in CONJUNCTIONS or t in SHIFTS and t not in question)
           for t in tokens):
        return False
    # Before the gold, only openings, filler and the question's words: in "Billing runs on
    # MySQL; reporting runs on Postgres 16" the gold is one of two values stated. The year
    # written with the gold's date ("2026-06-22" is `2026 m06 d22`) belongs to the gold.
    before = tokens[:starts[0]]
    if before and re.fullmatch(r"\d{4}", before[-1]) and re.fullmatch(r"m\d\d", tokens[starts[0]]):
        before = before[:-1]
    if not _says_nothing_new(_without_openers(before), question):
        return False
    # Right before the gold, filler or the end of an opening, not a word of the question: that
    # may be another value the question names ("Mira Okafor, Tariq Mbeki" for "Who took over
    # from Mira Okafor?"), listed beside the gold.
    if before and before[-1] not in FILLER and not any(before[-len(o):] == o for o in _opener_words()):
        return False
    outdated = (record.get("meta") or {}).get("outdated_answers", [])
    if any(o != gold and _contains(tokens, o) for o in (normalize(x).split() for x in outdated)):
        return False
    # The gold must be the last value stated: in "12 vegetarian and 4 vegan, so 16" the gold
    # "4" is a step on the way to another answer.
    if not _says_nothing_new(tokens[starts[-1] + len(gold):], question):
        return False
    # No number besides the gold's, the question's, and the year written with the gold's date.
    inside = {i for s in starts for i in range(s, s + len(gold))}
    for i, t in enumerate(tokens):
        if i in inside or t in question or not any(c.isdigit() for c in t):
            continue
        if re.fullmatch(r"\d{4}", t) and i + 1 in inside and re.fullmatch(r"m\d\d", tokens[i + 1]):
            continue
        return False
    return True


def deterministic(record: dict, with_judge: bool) -> tuple[str, str] | None:
    """(verdict, layer) when a rule decides the answer, or None to leave it to the judge (or,
    without one, to `no_match`). With a judge only `exact` and a pure `abstention` decide."""
    if rubric_for(record) == "lme_preference":
        return None  # the gold is a rubric, not a string to match
    if exact_match(record["gold_answer"], record["answer"]):
        return "correct", "exact"
    pure = pure_abstention(record["answer"], record["question"])
    if is_unanswerable(record):
        return ("correct", "abstention") if pure else None
    if with_judge:
        return None
    if pure:
        return "incorrect", "declined"
    # A decline that goes on to name a value ("I don't know the minor version, but it's
    # Postgres 16") is neither a refusal nor a plain answer: not for a rule to decide.
    if declines(record["answer"]):
        return None
    return ("correct", "contains") if _contains_gold(record) else None

# ---------------------------------------------------------------------------------------------
# The rule set's identity: a hash of what the rules are, not a version bumped by hand. The
# tables' contents and the rule functions' source text go in, so any edit to a rule changes it.
# ---------------------------------------------------------------------------------------------

RULE_TABLES = ("MONTHS", "DATE_PATTERNS", "NUMBER_OR_WORD", "NUMBER_WORDS", "TENS_WORDS", "UNIT_WORDS", "HEDGES",
               "SHIFTS", "CONJUNCTIONS", "FILLER", "OPENERS", "DECLINES")
RULE_FUNCTIONS = ("rubric_for", "_date_token", "_words", "normalize", "declines", "_same_word",
                  "_says_nothing_new", "pure_abstention", "is_unanswerable", "exact_match", "_spans",
                  "_contains", "_opener_words", "_without_openers", "_contains_gold", "deterministic")


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
    here = globals()  # looked up at call time, so a changed table is seen
    identity = {"tables": {name: _canonical(here[name]) for name in RULE_TABLES},
                "functions": {name: inspect.getsource(here[name]) for name in RULE_FUNCTIONS}}
    return sha256_text(json.dumps(identity, ensure_ascii=False, sort_keys=True))


RULES_SHA256 = rules_sha256()


# ---------------------------------------------------------------------------------------------
# Answer metrics for score.py, on the grader's normalization: exact_match and states_value
# (above) and token F1 (the Russian seed guide; SQuAD's definition).
# ---------------------------------------------------------------------------------------------

def token_f1(gold: str, answer: str) -> float:
    """SQuAD-style F1 over the normalized words that gold and answer share (as multisets)."""
    g, a = normalize(gold).split(), normalize(answer).split()
    if not g or not a:
        return float(g == a)
    common = sum((Counter(g) & Counter(a)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(a), common / len(g)
    return 2 * precision * recall / (precision + recall)

# ---------------------------------------------------------------------------------------------
# How often a grader is wrong: the rule layer on labelled answers, then any grader (rules, LLM
# judge, a person) on the judge calibration set.
# ---------------------------------------------------------------------------------------------

def rules_verdict(record: dict, with_judge: bool) -> str | None:
    """The verdict judge.py records from the rules alone: the rule's; else, with no judge,
    `no_match` (incorrect); else None, for the judge to decide."""
    decided = deterministic(record, with_judge)
    if decided is not None:
        return decided[0]
    return None if with_judge else "incorrect"


def rule_errors(items: list[dict], with_judge: bool) -> dict:
    """The rule layer's errors on labelled answers (records with `id` and `label`): false
    accepts (rules say correct, label incorrect), false rejects (label correct, verdict
    incorrect, `no_match` included when there is no judge), and how many went to the judge."""
    out = {"n": len(items), "with_judge": with_judge, "undecided": 0, "false_accepts": 0, "false_rejects": 0,
           "false_accept_ids": [], "false_reject_ids": []}
    for item in items:
        verdict = rules_verdict(item, with_judge)
        if verdict is None:
            out["undecided"] += 1
        elif verdict != item["label"]:
            kind = "false_accept" if verdict == "correct" else "false_reject"
            out[kind + "s"] += 1
            out[kind + "_ids"].append(item["id"])
    return out


# The judge calibration set (issue "The instrument checks itself", "Judge calibration"): real
# questions with answers of known kinds. Known-right kinds are what a too-strict grader rejects,
# known-wrong kinds what a too-lenient one accepts.
LABELS = ("correct", "incorrect")
RIGHT_KINDS = ("verbose", "paraphrase", "number_form", "date_format", "other_script")
WRONG_KINDS = ("other_value", "outdated", "vague", "hedge", "beside_other", "confident_unanswerable",
               "guess_unanswerable", "abstain_answerable")
CALIBRATION_FIELDS = {"id": str, "qid": str, "type": str, "question": str, "gold_answer": str, "meta": dict,
                      "answer": str, "label": str, "kind": str}


def load_calibration(path: str) -> list[dict]:
    """The items of a judge calibration file, every line checked: required fields and their
    types, no unknown field, known label, kind and question type, a kind that fits the label,
    unique ids. A bad line is an InputError naming `path:line` and the field."""
    items: list[dict] = []
    seen: dict[str, int] = {}
    for lineno, obj in read_jsonl(path):
        where = f"{path}:{lineno}"
        for key, kind in CALIBRATION_FIELDS.items():
            if key not in obj:
                raise InputError(f"{where}: missing required field '{key}'")
            if not isinstance(obj[key], kind):
                raise InputError(f"{where}: field '{key}' must be {'a string' if kind is str else 'an object'}, "
                                 f"got {type(obj[key]).__name__}")
            if kind is str and not obj[key].strip():
                raise InputError(f"{where}: field '{key}' must not be empty")
        unknown = sorted(set(obj) - set(CALIBRATION_FIELDS))
        if unknown:
            raise InputError(f"{where}: unknown field '{unknown[0]}'; expected only {', '.join(CALIBRATION_FIELDS)}")
        if obj["type"] not in QUESTION_TYPES:
            raise InputError(f"{where}: field 'type' is {obj['type']!r}; expected one of {', '.join(QUESTION_TYPES)}")
        if obj["label"] not in LABELS:
            raise InputError(f"{where}: field 'label' is {obj['label']!r}; expected 'correct' or 'incorrect'")
        if obj["kind"] not in RIGHT_KINDS + WRONG_KINDS:
            raise InputError(f"{where}: field 'kind' is {obj['kind']!r}; expected one of "
                             f"{', '.join(RIGHT_KINDS + WRONG_KINDS)}")
        expected = "correct" if obj["kind"] in RIGHT_KINDS else "incorrect"
        if obj["label"] != expected:
            raise InputError(f"{where}: field 'label' is {obj['label']!r}, but kind {obj['kind']!r} "
                             f"is labelled {expected!r}")
        if obj["kind"] == "outdated" and not obj["meta"].get("outdated_answers"):  # optional in meta
            raise InputError(f"{where}: field 'meta' needs outdated_answers for kind 'outdated'")
        if obj["id"] in seen:
            raise InputError(f"{where}: field 'id' {obj['id']!r} was already used on line {seen[obj['id']]}")
        seen[obj["id"]] = lineno
        items.append(obj)
    if not items:
        raise InputError(f"{path}: no calibration items")
    return items


def fisher_greater(a: int, n1: int, b: int, n2: int) -> float:
    """One-sided Fisher exact test: the probability, with a+b events spread at random over
    n1+n2 trials, that the first group gets a or more of them (its rate is higher by chance)."""
    total, events = n1 + n2, a + b
    return sum(math.comb(events, x) * math.comb(total - events, n1 - x)
               for x in range(a, min(events, n1) + 1)) / math.comb(total, n1)


def cohen_kappa(pairs: list[tuple[str, str]]) -> float | None:
    """Cohen's kappa of two raters, one (first, second) label pair per item; None when it is
    undefined: no items, or both raters gave everything the same one label."""
    n = len(pairs)
    if n == 0:
        return None
    observed = sum(a == b for a, b in pairs)
    first, second = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    chance = sum(first[c] * second[c] for c in first)  # expected agreements times n, in integers
    if chance == n * n:
        return None
    return (observed / n - chance / (n * n)) / (1 - chance / (n * n))


def _rates(pairs: list[tuple[str, str]]) -> dict:
    wrong = [verdict for label, verdict in pairs if label == "incorrect"]
    right = [verdict for label, verdict in pairs if label == "correct"]
    false_accepts = sum(v == "correct" for v in wrong)
    false_rejects = sum(v != "correct" for v in right)
    return {"n": len(pairs), "known_wrong": len(wrong), "known_right": len(right),
            "false_accepts": false_accepts, "false_rejects": false_rejects,
            "false_accept_rate": false_accepts / len(wrong) if wrong else None,
            "false_reject_rate": false_rejects / len(right) if right else None}


def calibration_rates(items: list[dict], verdicts: list[str]) -> dict:
    """A grader's false-accept and false-reject rates on labelled items, overall and per kind,
    and Cohen's kappa between labels and verdicts; `unparseable` counts as incorrect, as in
    the scores. A rate with nothing to count is None."""
    if len(verdicts) != len(items):
        raise ValueError(f"{len(verdicts)} verdicts for {len(items)} items")
    for v in verdicts:
        if v not in ("correct", "incorrect", "unparseable"):
            raise ValueError(f"a verdict must be correct, incorrect or unparseable, got {v!r}")
    pairs = [(item["label"], "correct" if v == "correct" else "incorrect") for item, v in zip(items, verdicts)]
    kinds = sorted({item["kind"] for item in items})
    return {"overall": _rates(pairs),
            "by_kind": {k: _rates([p for item, p in zip(items, pairs) if item["kind"] == k]) for k in kinds},
            "kappa": cohen_kappa(pairs)}
