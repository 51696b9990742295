"""The price table and the one function that prices a model call: USD per million tokens for
each model id, read from a dated YAML file (data/prices.yaml unless the config's price_table
names another), each model's prices with their source beside them.

A call is priced from the usage the endpoint reported and the record kept: its prompt tokens at
the model's input price and its completion tokens at its output price. The records carry no
count of the prompt tokens a provider served from its own prompt cache, so every prompt token
is priced as input, an upper bound where that cache served some; cached_input stands in the
table for the day they do. A model the table does not price, or a call that reported no usage,
has no cost (None, with the reason), never 0. A call the harness's response cache answered is
priced as when it was made: the cost of the calls as recorded, so that a warm rerun and a cold
one report one cost.

Usage (the table, checked, and what a number of tokens costs):
  python prices.py data/prices.yaml
  python prices.py data/prices.yaml --model gpt-4o-mini --prompt-tokens 1000000 --completion-tokens 1000
"""
from __future__ import annotations

import argparse
import datetime
import math
import os
import sys
from dataclasses import dataclass

import yaml

from cli import EXIT_OK, InputError, run_cli
from fileio import sha256_file

ROOT = os.path.dirname(os.path.abspath(__file__))
DEFAULT_TABLE = os.path.join(ROOT, "data", "prices.yaml")
PRICE_FIELDS = ("input", "cached_input", "output")
MODEL_FIELDS = PRICE_FIELDS + ("source",)
TABLE_FIELDS = ("date", "currency", "unit", "models")
PER_TOKENS = 1_000_000


@dataclass(frozen=True)
class PriceTable:
    """A dated price table: its file, date, sha256 and each model's prices and source."""
    path: str
    date: str
    sha256: str
    models: dict

    def describe(self) -> dict:
        """What scores.json and the manifest record of the table that priced a run."""
        return {"file": os.path.relpath(self.path, ROOT) if self.path.startswith(ROOT + os.sep) else self.path,
                "date": self.date, "sha256": self.sha256}

    def unpriced(self, model: str | None) -> str | None:
        """Why a model's calls have no cost (it is not in this table), or None when it is priced."""
        if model in self.models:
            return None
        return f"model {model} is not in the price table dated {self.date}"


def load_prices(path: str) -> PriceTable:
    """Read and check a price table: every key known, a date, and per model the three prices
    (numbers of at least 0) and a non-empty source; an InputError names the file and the key."""
    try:
        with open(path, encoding="utf-8") as fh:
            raw = yaml.safe_load(fh)
    except OSError as e:
        raise InputError(f"{path}: cannot open the price table: {e.strerror} (config key price_table)") from None
    except yaml.YAMLError as e:
        raise InputError(f"{path}: invalid YAML in the price table: {e}") from None
    if not isinstance(raw, dict) or sorted(raw) != sorted(TABLE_FIELDS):
        got = ", ".join(map(str, raw)) if isinstance(raw, dict) else type(raw).__name__
        raise InputError(f"{path}: a price table has exactly the keys {', '.join(TABLE_FIELDS)}; got {got}")
    date = raw["date"]
    if isinstance(date, str):
        try:
            date = datetime.date.fromisoformat(date)
        except ValueError:
            pass
    if not isinstance(date, datetime.date):
        raise InputError(f"{path}: key 'date' must be the day the prices were read, YYYY-MM-DD; got {raw['date']!r}")
    if raw["currency"] != "USD" or raw["unit"] != "per million tokens":
        raise InputError(f"{path}: prices must be in USD per million tokens (currency: USD, unit: per million tokens)")
    if not isinstance(raw["models"], dict):
        raise InputError(f"{path}: key 'models' must map a model id to its prices")
    models = {}
    for model, entry in raw["models"].items():
        where = f"{path}: model {model!r}"
        if not isinstance(entry, dict) or sorted(entry) != sorted(MODEL_FIELDS):
            raise InputError(f"{where}: must have exactly the keys {', '.join(MODEL_FIELDS)}")
        for field in PRICE_FIELDS:
            v = entry[field]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise InputError(f"{where}: key '{field}' must be a price of at least 0 (USD per million tokens), "
                                 f"got {v!r}")
        if not isinstance(entry["source"], str) or not entry["source"].strip():
            raise InputError(f"{where}: key 'source' must say where the prices were read")
        models[str(model)] = {**{f: float(entry[f]) for f in PRICE_FIELDS}, "source": entry["source"]}
    return PriceTable(os.path.abspath(path), date.isoformat(), sha256_file(path), models)


def tokens_cost(table: PriceTable, model: str | None, prompt_tokens: float, completion_tokens: float,
                cached_prompt_tokens: float = 0) -> float | None:
    """USD for these tokens of one model (prompt tokens at its input price, those of them the
    provider served from its prompt cache at its cached-input price), or None when the table does
    not price it."""
    p = table.models.get(model)  # an unpriced model has no cost: unpriced() says why
    if p is None:
        return None
    fresh = prompt_tokens - cached_prompt_tokens
    return (fresh * p["input"] + cached_prompt_tokens * p["cached_input"] + completion_tokens * p["output"]) / PER_TOKENS


def call_cost(table: PriceTable, model: str | None, usage: dict | None) -> float | None:
    """USD of one call from its recorded usage; None when the model is not priced or the call
    reported no token count (a failed call, an endpoint that sends no usage)."""
    if usage is None or usage["prompt_tokens"] is None or usage["completion_tokens"] is None:
        return None
    return tokens_cost(table, model, usage["prompt_tokens"], usage["completion_tokens"],
                       usage.get("cached_prompt_tokens") or 0)  # absent: recorded before it was kept


def write_cost(table: PriceTable, rec: dict) -> float | None:
    """USD of a system's own model calls while writing one case (a run record's internal_usage,
    the same on every record of the case and repeat, at its internal_model); 0 for a system that
    counted no call of its own, None when the model is not priced or a call gave no count."""
    u = rec["internal_usage"]
    if u is None or u["calls"] == 0:
        return 0.0
    if u["prompt_tokens_missing"] or u["completion_tokens_missing"]:
        return None
    return tokens_cost(table, rec["internal_model"], u["prompt_tokens"], u["completion_tokens"],
                       u.get("cached_prompt_tokens", 0))


def run_cost(table: PriceTable, records: list[dict]) -> float:
    """USD of a run file's calls as recorded: each record's answer call and each case's write
    calls (once per case and repeat), both from the cache or not; a call without a cost adds
    nothing (run.py refuses a cap when its models are not priced)."""
    answers = sum(call_cost(table, r["answer_model"], r["usage"]) or 0.0 for r in records)
    cases = {(r["case_id"], r["repeat"]): r for r in records if r["internal_usage"] is not None}
    return answers + sum(write_cost(table, r) or 0.0 for r in cases.values())


class Cap:
    """The config's max_cost over one output file's calls as recorded: what it held when the
    stage started and each call written since. Cached calls count as when they were made, so a
    stage stops at the same line whether the response cache is warm or cold, and a rerun under
    the same cap stops at once instead of spending it again."""

    def __init__(self, table: PriceTable, limit: float, spent: float, what: str) -> None:
        self.table, self.limit, self.spent, self.what = table, limit, spent, what

    def charge(self, amount: float | None) -> None:
        """Count one call's cost; a call without one (no usage reported) adds nothing."""
        self.spent += amount or 0.0

    def reached(self) -> bool:
        """Whether the file's calls cost max_cost or more."""
        return self.spent >= self.limit

    def text(self) -> str:
        """What the stop message says of the cap."""
        return (f"max_cost {usd(self.limit)} reached: {self.what} cost {usd(self.spent)} as recorded "
                f"(price table dated {self.table.date})")


def refuse_unpriced(table: PriceTable, models: list[tuple[str, str | None]], config_path: str) -> None:
    """With a cap, every model the stage calls must be priced: an unpriced call would pass the cap
    unseen, so that is an InputError (exit 2) before any call."""
    for what, model in models:
        why = table.unpriced(model)
        if why:
            raise InputError(f"{config_path}: key 'max_cost' is set, but {what}: {why} ({table.path}); "
                             f"add its prices there (price_table), or set max_cost: null")


COST_BASIS = ("the cost of the calls as recorded: each call priced from the usage the endpoint reported when it was "
              "made, a call served since from the response cache included, at the price table's prices")


def dollar_cost_metrics(pairs: list[tuple[dict, dict | None]], correct: int, table: PriceTable) -> dict:
    """One system's dollar cost (prices.py) over all its repeats: its answer calls, the judge
    calls that graded them, its own calls while writing (ingestion); cost per question (answer
    and judge calls over the records), cost of ingestion (the total) and cost per correct answer
    (everything over the correct answers). None with the reason for what cannot be priced (a
    model the table lacks, calls that reported no usage), never 0."""
    recs = [r for r, _ in pairs]
    notes: list[str] = []

    def priced(calls: list[tuple[str | None, dict | None]], what: str) -> float | None:
        """The sum over calls that reported usage; None when a model is unpriced or none did."""
        for model in dict.fromkeys(m for m, _ in calls):
            why = table.unpriced(model)
            if why:
                notes.append(f"{what}: {why}")
                return None
        costs = [call_cost(table, m, u) for m, u in calls]
        known = [c for c in costs if c is not None]
        if calls and not known:
            notes.append(f"{what}: none of the {len(calls)} calls reported token usage")
            return None
        if len(known) < len(costs):
            notes.append(f"{what}: {len(costs) - len(known)} of {len(costs)} calls reported no token usage and are "
                         f"not counted")
        return sum(known)

    asked = [(r, v) for r, v in pairs if not r["retrieval_only"]]
    answer = priced([(r["answer_model"], r["usage"]) for r, _ in asked], "answer calls") if asked else None
    judged = [(v["judge_model"], v["usage"]) for _, v in asked if v is not None and v["by"] == "llm"]
    judge = priced(judged, "judge calls") if judged else 0.0
    cases = {(r["case_id"], r["repeat"]): r for r in recs}
    if any(r["internal_model"] for r in cases.values()) and not any(r["internal_usage"] for r in cases.values()):
        ingestion = None
        notes.append("ingestion: the system's own model calls were not counted (no llm_client to count them through)")
    else:
        unpriced = next((table.unpriced(r["internal_model"]) for r in cases.values()
                         if r["internal_usage"] and r["internal_usage"]["calls"]
                         and table.unpriced(r["internal_model"])), None)
        costs = [write_cost(table, r) for r in cases.values()]
        if unpriced:
            notes.append(f"ingestion: {unpriced}")
            ingestion = None
        elif None in costs:
            notes.append("ingestion: some of the system's own calls reported no token usage")
            ingestion = None
        else:
            ingestion = sum(costs)
    if not asked:
        notes.append("no answer model was asked (retrieval-only run)")
    per_question = None if answer is None or judge is None else (answer + judge) / len(asked)
    total = None if None in (answer, judge, ingestion) else answer + judge + ingestion
    return {"cost_answer_usd": answer, "cost_judge_usd": judge, "cost_ingestion_usd": ingestion,
            "cost_total_usd": total, "cost_per_question_usd": per_question,
            "cost_per_correct_usd": total / correct if total is not None and correct else None,
            "cost_note": "; ".join(notes + ([] if total is None or correct else ["no correct answer"])) or None}


def frontier(systems: list[dict], controls: frozenset | set, cost: str) -> dict:
    """Per system row label, whether it is on its budget's frontier of accuracy against `cost` (a
    row's field where less is better: cost_per_question_usd, search_ms_p95): no other system of
    that budget is at least as accurate for at most its cost, and better in one of the two. None
    for a control (it is given its context, it does not compete) and for a row without both
    figures."""
    def point(s: dict) -> tuple | None:
        if s["backend"] in controls or s["accuracy"] is None or s[cost] is None:
            return None
        return s["accuracy"], s[cost]
    out = {}
    for s in systems:
        p = point(s)
        if p is None:
            out[s["label"]] = None
            continue
        rivals = [point(o) for o in systems if o is not s and o["budget"] == s["budget"]]
        out[s["label"]] = not any(q is not None and q[0] >= p[0] and q[1] <= p[1] and q != p for q in rivals)
    return out


def usd(value: float | None) -> str:
    """A dollar amount as the outputs write it: 4 significant digits, n/a for None."""
    if value is None:
        return "n/a"
    if value == 0:
        return "$0"
    return f"${value:.4g}" if value < 1000 else f"${value:,.2f}"


def main(argv: list[str] | None = None) -> int:
    """Check a price table and print it, or what some tokens of one model cost."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("table", nargs="?", default=DEFAULT_TABLE)
    ap.add_argument("--model")
    ap.add_argument("--prompt-tokens", type=int, default=0)
    ap.add_argument("--completion-tokens", type=int, default=0)
    a = ap.parse_args(argv)
    table = load_prices(a.table)
    if a.model:
        why = table.unpriced(a.model)
        if why:
            raise InputError(why)
        print(usd(tokens_cost(table, a.model, a.prompt_tokens, a.completion_tokens)))
        return EXIT_OK
    print(f"{a.table}: {len(table.models)} models, prices read {table.date}, sha256 {table.sha256[:12]}")
    for model, p in table.models.items():
        print(f"{model}: input ${p['input']:g}, cached input ${p['cached_input']:g}, output ${p['output']:g} "
              f"per million tokens ({p['source']})")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(run_cli(main))
