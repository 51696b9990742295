"""The grading rules, shared by judge.py (which grades) and score.py (which measures answers
with the same normalization): the judge's rubrics and prompt, answer normalization, the
deterministic rule layers, and the strict parser of the judge's JSON verdict. Nothing here
calls a model.
"""
from __future__ import annotations

import json
import re
import unicodedata

from interface import sha256_text

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
# Bump when a deterministic rule changes: verdicts of an older grader are then not reused.
DETERMINISTIC_VERSION = "det-1"


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


GRADER_SHA = sha256_text(DETERMINISTIC_VERSION + "".join(rubric_template(r) for r in RUBRICS))
RULES_SHA256 = GRADER_SHA  # placeholder until the rule tables are hashed themselves

# ---------------------------------------------------------------------------------------------
# Normalization and the deterministic layers
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
# Words that make an answer containing the gold ambiguous: options, doubt, negation.
HEDGES = frozenset("or either maybe perhaps possibly probably might not no never isn t wasn t "
                   "или либо возможно наверное может не нет".split())
DECLINES = tuple(re.compile(p) for p in (
    r"\bi (?:do not|don t|dont|did not|didn t) (?:know|have|recall|remember)\b",
    r"\b(?:not|never) (?:mentioned|specified|stated|provided|available|known|discussed|given|said|recorded|shared)\b",
    r"\bno (?:information|info|mention|record|records|details|data|memory|memories)\b",
    r"\b(?:cannot|can t|cant|unable to|could not|couldn t) (?:tell|say|determine|answer|find|know|recall)\b",
    r"\b(?:does not|doesn t|do not|don t|did not|didn t) (?:say|mention|specify|state|include|contain)\b",
    r"\bunknown\b", r"\bnot enough information\b", r"\bno answer\b",
    r"\bне знаю\b", r"\bне (?:упоминается|упоминалось|указано|указан|сказано|известно)\b",
    r"\bнет (?:информации|данных|сведений)\b",
))


def _date_token(m: re.Match) -> str:
    groups = m.groupdict()
    month = int(groups["mo"]) if groups.get("mo") else MONTHS[groups["m"]]
    parts = [groups["y"]] if groups.get("y") else []
    parts.append(f"m{month:02d}")
    if groups.get("d"):
        parts.append(f"d{int(groups['d']):02d}")
    return " " + " ".join(parts) + " "


def normalize(text: str) -> str:
    """NFKC, case-folded, ё as е, dates as `YYYY mMM dDD`, number words and ordinals as
    digits, thousands separators dropped, punctuation as spaces, whitespace collapsed."""
    s = unicodedata.normalize("NFKC", text).casefold().replace("ё", "е")
    s = re.sub(r"(?<=\d),(?=\d{3}\b)", "", s)
    for pattern in DATE_PATTERNS:
        s = pattern.sub(_date_token, s)
    s = re.sub(r"\b(\d+)(?:st|nd|rd|th)\b", r"\1", s)
    s = re.sub(r"[^\w\s]|_", " ", s)
    out: list[str] = []
    previous = ""
    for word in s.split():
        t = NUMBER_WORDS.get(word, word)
        # "twenty one" / "twenty-one" -> 21; digits as written ("20 1") stay apart.
        if previous in TENS_WORDS and word in UNIT_WORDS:
            out[-1] = str(int(out[-1]) + int(t))
        else:
            out.append(t)
        previous = word
    return " ".join(out)


def declines(text: str) -> bool:
    """True when the text declines to answer (English and Russian phrasings)."""
    n = normalize(text)
    return any(p.search(n) for p in DECLINES)


def _contains(haystack: list[str], needle: list[str]) -> bool:
    n = len(needle)
    return n > 0 and any(haystack[i:i + n] == needle for i in range(len(haystack) - n + 1))


def is_unanswerable(record: dict) -> bool:
    """The gold says the asked fact is not in the conversation."""
    return rubric_for(record) == "unanswerable" or declines(record["gold_answer"])


def deterministic(record: dict, with_judge: bool = False) -> tuple[str, str] | None:
    """(verdict, layer) when a rule decides the answer, or None to leave it to the judge."""
    gold, answer = record["gold_answer"], record["answer"]
    g, a = normalize(gold), normalize(answer)
    unanswerable = is_unanswerable(record)
    if rubric_for(record) == "lme_preference":
        return None  # the gold is a rubric, not a string to match
    if g and g == a:
        return "correct", "exact"
    if unanswerable:
        return ("correct", "abstention") if declines(answer) else None
    if declines(answer):
        return "incorrect", "declined"
    tokens = a.split()
    if _contains(tokens, g.split()):
        outdated = (record.get("meta") or {}).get("outdated_answers", [])
        hedged = any(t in HEDGES for t in tokens) and not any(t in HEDGES for t in g.split())
        stale = any(o != g and _contains(tokens, o.split()) for o in map(normalize, outdated))
        if not hedged and not stale:
            return "correct", "contains"
    return None


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
