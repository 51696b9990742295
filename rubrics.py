"""The judge's side of grading: the rubrics (this project's own, and restatements of the
official graders' rules of the benchmarks the importers bring in), which rubric a question is
graded by, the judge's prompt and structured-output schema, and the parser of its JSON reply."""
from __future__ import annotations

import re

from contract import is_answerable
from fileio import loads

# ---------------------------------------------------------------------------------------------
# Rubrics. The default is this project's own; the others restate, in our own words, the rules of
# the official graders of the benchmarks the importers bring in, so imported questions are
# graded the way their authors grade them (LongMemEval's per-type rules; LoCoMo category 5).
# ---------------------------------------------------------------------------------------------

JUDGE_HEADER = """You grade one answer against a reference answer.

Question: {question}
Reference answer: {gold}
Candidate answer: {answer}

Rules:
"""
# The reason is asked for and optional: a reader of the report sees why the judge decided, and
# a judge that gives none (null, or no field from a server that ignores the schema) still counts.
JUDGE_FOOTER = """
Return only JSON: {{"verdict": "correct", "reason": "..."}} or {{"verdict": "incorrect", "reason": "..."}},
where the reason is one short sentence saying why, or null."""

# The two verdicts a grader gives and a labelled answer carries.
LABELS = ("correct", "incorrect")
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
# Strict structured output needs every property listed as required; the reason may be null.
JUDGE_SCHEMA = {"type": "object", "properties": {"verdict": {"type": "string", "enum": ["correct", "incorrect"]},
                                                 "reason": {"type": ["string", "null"]}},
                "required": ["verdict", "reason"], "additionalProperties": False}
# Tried in order: OpenAI-style json_schema, the json_object-with-schema form some local servers
# (llama-cpp-python) accept, then no constraint at all. The first the server accepts is kept.
RESPONSE_FORMATS = (
    {"type": "json_schema", "json_schema": {"name": "verdict", "strict": True, "schema": JUDGE_SCHEMA}},
    {"type": "json_object", "schema": JUDGE_SCHEMA},
    None,
)


def rubric_for(record: dict) -> str:
    """The rubric name for a question, from its answerability (interface.is_answerable), source
    benchmark and type (meta is optional)."""
    if not is_answerable(record):
        return "unanswerable"
    meta = record.get("meta") or {}
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


def parse_judge_reply(raw: str) -> tuple[str, str | None]:
    """(verdict, reason) from the judge's JSON: the verdict 'correct' or 'incorrect', else
    'unparseable'; the reason its one sentence when it gave one as a non-empty string, else None."""
    text = raw.strip()
    fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", text, re.S)
    if fenced:
        text = fenced.group(1)
    try:
        obj = loads(text)  # strict: a verdict given twice in one reply is no verdict
    except ValueError:
        return "unparseable", None
    if not (isinstance(obj, dict) and "verdict" in obj and obj["verdict"] in LABELS):
        return "unparseable", None
    reason = obj["reason"] if "reason" in obj else None  # optional: the judge may give none
    return obj["verdict"], reason.strip() if isinstance(reason, str) and reason.strip() else None
