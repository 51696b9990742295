"""The benchmarks' own answer prompts, which config.yaml selects by name (`answer_prompt:
longmemeval`, `longmemeval_cot` or `locomo`) instead of writing a prompt out.

Each is the upstream text verbatim, with where it was read: the repository, the file, the commit
and the code that fills it. Upstream fills positional `{}` fields; `fields` names ours in the
order upstream fills them (context: the context lines run.py builds; asked_at: the question's
date; question: the question), and `lead` is what upstream's code puts before the text when it
assembles the prompt. The template run.py sends is lead + the text with each `{}` named: the
words are upstream's, byte for byte, and the config's prompt_sha256 (every run record's, the
manifest's) is that template's, so a comparison holds one named prompt for every system as it
holds a written one. What differs from upstream around the text (the context's lines, the date's
form, the per-category variants LoCoMo's code uses) is in docs/configuration.md.
"""
from __future__ import annotations

from dataclasses import dataclass

from fileio import sha256_text

LONGMEMEVAL_REPO = "xiaowu0162/LongMemEval"
LONGMEMEVAL_COMMIT = "9e0b455f4ef0e2ab8f2e582289761153549043fc"
LOCOMO_REPO = "snap-research/locomo"
# The branch `code` of LoCoMo's repository: its default branch holds the web page only.
LOCOMO_COMMIT = "92286325a40764bee61f77824ddb95233b11c4d6"
FIELDS = ("asked_at", "context", "question")


@dataclass(frozen=True)
class NamedPrompt:
    """One benchmark's answer prompt: its upstream text and where it was read."""
    name: str
    text: str                 # verbatim upstream, with its positional {} fields
    fields: tuple[str, ...]   # ours, in the order upstream fills its {}
    lead: str                 # what upstream's code puts before the text, as a template ("" for none)
    repository: str
    file: str
    commit: str
    code: str                 # the code that holds and fills the text, at that commit

    @property
    def template(self) -> str:
        """The template run.py formats: lead + the text with its {} fields named."""
        pieces = self.text.split("{}")
        named = pieces[0] + "".join(f"{{{f}}}{p}" for f, p in zip(self.fields, pieces[1:]))
        return self.lead + named

    def source(self) -> dict:
        """What the manifest records of it: its name, where it was read, the sha256 of the
        upstream text and of the template sent."""
        return {"name": self.name, "repository": self.repository, "file": self.file, "commit": self.commit,
                "code": self.code, "upstream_sha256": sha256_text(self.text),
                "template_sha256": sha256_text(self.template)}


_LME_FILE = "src/generation/run_generation.py"
NAMED_PROMPTS: dict[str, NamedPrompt] = {p.name: p for p in (
    # The reader's prompt with retrieval and without chain of thought (--cot false, the
    # `direct` reading method of run_generation.sh), no key expansion merged in.
    NamedPrompt(
        "longmemeval",
        "I will give you several history chats between you and a user. Please answer the question based on the "
        "relevant chat history.\n\n\nHistory Chats:\n\n{}\n\nCurrent Date: {}\nQuestion: {}\nAnswer:",
        ("context", "asked_at", "question"), "", LONGMEMEVAL_REPO, _LME_FILE, LONGMEMEVAL_COMMIT,
        "prepare_prompt: answer_prompt_template, retrieval, cot false, merge_key_expansion_into_value none; "
        "filled by answer_prompt_template.format(history_string, question_date_string, question_string)"),
    # The same with chain of thought (--cot true: the `con` reading method, run_generation.sh's
    # default): it asks for steps, so it needs a larger answer_max_tokens (upstream gives 800).
    NamedPrompt(
        "longmemeval_cot",
        "I will give you several history chats between you and a user. Please answer the question based on the "
        "relevant chat history. Answer the question step by step: first extract all the relevant information, and "
        "then reason over the information to get the answer.\n\n\nHistory Chats:\n\n{}\n\nCurrent Date: {}\n"
        "Question: {}\nAnswer (step by step):",
        ("context", "asked_at", "question"), "", LONGMEMEVAL_REPO, _LME_FILE, LONGMEMEVAL_COMMIT,
        "prepare_prompt: answer_prompt_template, retrieval, cot true, merge_key_expansion_into_value none; "
        "filled by answer_prompt_template.format(history_string, question_date_string, question_string)"),
    # QA_PROMPT as get_gpt_answers sends it with retrieval (--use-rag, batch size 1): the
    # retrieved context, two newlines, then the text. It asks no date.
    NamedPrompt(
        "locomo",
        "\nBased on the above context, write an answer in the form of a short phrase for the following question. "
        "Answer with exact words from the context whenever possible.\n\nQuestion: {} Short answer:\n",
        ("question",), "{context}\n\n", LOCOMO_REPO, "task_eval/evaluate_gpts.py", LOCOMO_COMMIT,
        "QA_PROMPT; get_gpt_answers: query = query_conv + '\\n\\n' + QA_PROMPT.format(questions[0])"),
)}


def resolve(value: str) -> str:
    """config.yaml's answer_prompt as run.py sends it: a named prompt's template, else the
    text as written."""
    return NAMED_PROMPTS[value].template if value in NAMED_PROMPTS else value


def looks_like_a_name(value: str) -> bool:
    """Whether an answer_prompt is meant as a name (one word of letters, digits and '_'), so that
    a misspelt name is refused instead of sent to the model as the prompt."""
    return bool(value) and value.replace("_", "").isalnum() and value.isascii()
