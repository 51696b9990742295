"""The files the stages write, one reader each: the format version every record carries, the
readers of the summary files (manifest, calibration, audit), and the run and verdict files with
the fairness contract they hold constant and the identity of a verdict."""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cli import InputError
from fileio import read_json, read_jsonl, sha256_text

if TYPE_CHECKING:  # the run readers take a Dataset; dataset.py reads manifests through this module
    from dataset import Dataset

# ---------------------------------------------------------------------------------------------
# Format versions: every record says which format it is
# ---------------------------------------------------------------------------------------------

# The format of each kind of record, in its `format` field. A reader accepts its own version
# only and names the fix for any other: a file of another format is written again by the stage
# that wrote it, not read through branches for the fields another writer lacked.
RUN_FORMAT = "run/4"
VERDICT_FORMAT = "verdict/2"
SCORES_FORMAT = "scores/4"
CHECKS_FORMAT = "checks/2"
MANIFEST_FORMAT = "manifest/2"
CALIBRATION_FORMAT = "calibration/1"
AUDIT_FORMAT = "audit/1"
AUDIT_KEY_FORMAT = "audit_key/1"


def read_checks(path: str, runs_sha256: list[str], verdicts_sha256: list[str]) -> dict:
    """check.py's checks.json, of CHECKS_FORMAT, refused unless it checked exactly these run files
    and these verdicts (by sha256; none on both sides for a model-free comparison): the one reader
    of the file, for score.py and report.py alike, so that neither shows a verdict on the
    instrument about other runs, or about verdicts graded again since check.py ran."""
    checks = read_versioned(path, "checks.json of check.py", CHECKS_FORMAT, "rerun check.py",
                            ("status", "counts", "checks", "inputs", "reader"))
    if sorted(checks["inputs"]["runs"].values()) != sorted(runs_sha256):
        raise InputError(f"{path}: checked other run files than --runs (their sha256 differ); rerun check.py "
                         f"on these runs")
    if sorted(checks["inputs"]["verdicts"].values()) != sorted(verdicts_sha256):
        checked = ", ".join(checks["inputs"]["verdicts"]) or "none"
        raise InputError(f"{path}: checked other verdicts than these ({checked}; a verdicts file graded again since "
                         f"is another, by its sha256): rerun check.py with these --runs and --verdicts")
    return checks


def check_format(obj: dict, expected: str, where: str, fix: str) -> None:
    """Refuse a record of another format than `expected` (InputError naming where, the format
    found and the fix)."""
    kind = expected.split("/")[0]
    if "format" not in obj:
        raise InputError(f"{where}: no field 'format' (every {kind} record of format {expected!r} has one): {fix}")
    found = obj["format"]
    if found == expected:
        return
    if isinstance(found, str) and found.split("/")[0] != kind:
        raise InputError(f"{where}: a {found.split('/')[0]} record (format {found!r}), not a {kind} record")
    raise InputError(f"{where}: a {kind} record of format {found!r}; this code reads format {expected!r} only: {fix}")


def read_versioned(path: str, what: str, expected: str, fix: str, fields: tuple = ()) -> dict:
    """A JSON summary of a versioned format: its format first (another version is refused with
    `fix`, before any field it may lack is named), then the fields the reader needs."""
    obj = read_json(path, what)
    check_format(obj, expected, path, fix)
    missing = [f for f in fields if f not in obj]
    if missing:
        raise InputError(f"{path}: not the {what} of format {expected!r} (no field '{missing[0]}'): {fix}")
    return obj


def read_manifest(path: str, fields: tuple = ("dataset", "dataset_sha256")) -> dict:
    """manifest.py's manifest, of MANIFEST_FORMAT, with the fields the reader needs."""
    return read_versioned(path, "manifest of manifest.py", MANIFEST_FORMAT, "rerun manifest.py with the runs' config "
                          "(it records the dataset and the code, and changes no run)", fields)


def read_calibration_json(path: str, fields: tuple = ()) -> dict:
    """judge.py --calibrate's calibration.json, of CALIBRATION_FORMAT."""
    return read_versioned(path, "calibration.json of judge.py --calibrate", CALIBRATION_FORMAT,
                          "rerun judge.py --calibrate", fields)


def read_audit_json(path: str, fields: tuple = ()) -> dict:
    """audit.py join's audit.json, of AUDIT_FORMAT."""
    return read_versioned(path, "audit.json of audit.py join", AUDIT_FORMAT,
                          "rerun audit.py join on the labelled sheet and its key", fields)


def read_audit_key(path: str) -> list[tuple[int, dict]]:
    """The lines of audit.py sample's key, each of AUDIT_KEY_FORMAT, with their line numbers."""
    lines = list(read_jsonl(path))
    for lineno, k in lines:
        check_format(k, AUDIT_KEY_FORMAT, f"{path}:{lineno}", "draw a new sample with audit.py sample and label "
                     "its sheet")
    return lines


MANIFEST_BACKEND_FIELDS = ("name", "id", "version", "code_sha256")


def check_manifest_describes(manifest: str, records: list[dict]) -> None:
    """Refuse a manifest that does not describe these run records (InputError naming the
    difference): a system it does not list, or one whose code (backend_code_sha256) or version
    differs from what it recorded, or runs of another sample (run.py --sample) than it recorded.
    A manifest may list more systems than the runs hold (the model-free pass runs more)."""
    m = read_manifest(manifest, ("backends", "sample"))
    for b in m["backends"]:
        missing = [f for f in MANIFEST_BACKEND_FIELDS if f not in b]
        if missing:
            raise InputError(f"{manifest}: its backend entry {b.get('name')!r} has no field '{missing[0]}' "
                             f"(written by an older manifest.py); write it again: python manifest.py CONFIG "
                             f"--backends ...")
    listed = {b["name"]: b for b in m["backends"]}
    runs: dict = {}  # backend -> its first record
    for r in records:
        runs.setdefault(r["backend"], r)
    problems = [f"{name!r} ran " + (f"on a sample of {r['sample']} question(s) of each kind" if r["sample"] is not None
                                    else "on every question") + ", the manifest recorded "
                + (f"a sample of {m['sample']}" if m["sample"] is not None else "every question")
                for name, r in runs.items() if r["sample"] != m["sample"]]
    for name, r in runs.items():
        if name not in listed:
            problems.append(f"the runs hold {name!r} (--backend {r['backend_id']}), which it does not list (it lists "
                            f"{', '.join(repr(n) for n in listed)})")
        elif listed[name]["code_sha256"] != r["backend_code_sha256"]:
            problems.append(f"{name!r} ran code {str(r['backend_code_sha256'])[:12]}, the manifest recorded "
                            f"{str(listed[name]['code_sha256'])[:12]} (its code changed between the two)")
        elif listed[name]["version"] != r["backend_version"]:
            problems.append(f"{name!r} ran version {r['backend_version']!r}, the manifest recorded "
                            f"{listed[name]['version']!r}")
    if problems:
        ids = " ".join(dict.fromkeys(r["backend_id"] for r in runs.values()))
        first = next(iter(runs.values()))
        raise InputError(f"{manifest}: does not describe these runs: " + "; ".join(problems)
                         + f". Write the manifest for what ran, with the code that ran it: python manifest.py CONFIG "
                           f"--backends {ids}" + (f" --sample {first['sample']}" if first["sample"] is not None else "")
                         + " (and rerun a system whose code changed, run.py --fresh)")


# ---------------------------------------------------------------------------------------------
# Run files (written by run.py, read by judge.py, check.py, score.py and report.py)
# ---------------------------------------------------------------------------------------------

# What the fairness contract holds constant across every file of one comparison (a difference in any
# of them, not the memory, could explain a difference in score): run.py records each in every
# record, its resume check refuses a file that differs in one, and judge.py and score.py refuse a
# set of files that differ. The budget is held constant within a comparison; a budget sweep (run.py
# --budgets) is one comparison per budget.
CONTRACT_FIELDS = ("dataset_sha256", "answer_model", "prompt_sha256", "top_k", "tokenizer",
                   "answer_max_tokens", "answer_sampling", "seed", "retrieval_only", "limit", "sample")
BUDGET_FIELD = "context_token_budget"
# What makes one run file one run: its format, the system's identity and the contract. run.py's
# resume check and merge.py's shard check both use it (run.py adds the shard it makes).
RUN_IDENTITY_FIELDS = ("format", "run_id", "backend", "backend_id", "backend_version", "backend_code_sha256",
                       "time_aware",
                       "extra_wait_s") + CONTRACT_FIELDS
# Every field of a run record of RUN_FORMAT: the readers index them without a default.
RUN_FIELDS = RUN_IDENTITY_FIELDS + (
    "shard", BUDGET_FIELD, "repeat", "internal_model", "flush_note", "deterministic", "case_id", "cluster", "qid",
    "type", "question", "asked_at", "gold_answer", "evidence", "meta", "retrieved_ids", "context_ids",
    "context_text", "context_tokens", "keyword_ranks", "hits_returned", "hits_kept", "hits_cut", "k_limited", "answer",
    "served_model", "usage", "finish_reason", "retries", "ingest_s", "flush_s", "added_items", "added_sha256",
    "internal_usage", "search_ms", "search_calls_in_flight", "cached", "error")


def system_key(rec: dict) -> tuple:
    """One system's run within a comparison: its name, repeat index and budget."""
    return rec["backend"], rec["repeat"], rec[BUDGET_FIELD]


def served_model_counts(records) -> dict:
    """How many answers each served model gave, {budget: {backend: Counter(served_model)}}, over
    the records that name one (repeats together). The contract holds the answer model constant
    within a budget: score.py warns and check.py WARNs when more than one model answered."""
    out: dict = {}
    for r in records:
        if r["served_model"] is not None:
            out.setdefault(r[BUDGET_FIELD], {}).setdefault(r["backend"], Counter())[r["served_model"]] += 1
    return out


def run_key(rec: dict) -> tuple:
    """One record of one run file: a question at a budget in a repeat (.get: a foreign file may
    lack a field, and its key then matches nothing). The order of the key is that of the tuples
    run.py and merge.py build from a question, a budget and a repeat."""
    return rec.get("qid"), rec.get(BUDGET_FIELD), rec.get("repeat")


def record_key(rec: dict) -> tuple:
    """One answer: this system, this repeat, this budget, this question. A verdict belongs to
    exactly one record key."""
    return (*system_key(rec), rec["qid"])


def read_run_files(paths: list[str], dataset: Dataset) -> list[tuple[str, int, dict]]:
    """(path, line, record) of every line of these run files, in one pass: each a run record of
    this format, made from the dataset as it is now and holding one of its questions, each
    answer in one file only. An empty file is refused: its system would leave the comparison
    without a word."""
    rows: list = []
    where: dict = {}  # record key -> "path:line"
    known = set(dataset.qids())
    for path in paths:
        before = len(rows)
        for lineno, rec in read_jsonl(path):
            at = f"{path}:{lineno}"
            check_format(rec, RUN_FORMAT, at, "rerun run.py with --fresh")
            missing = [f for f in RUN_FIELDS if f not in rec]
            if missing:
                raise InputError(f"{at}: not a run record of format {RUN_FORMAT!r}: no field '{missing[0]}'; --runs "
                                 f"takes the files run.py writes under runs/")
            if rec["dataset_sha256"] != dataset.sha256:
                raise InputError(f"{at}: made from the dataset with sha256 {rec['dataset_sha256'][:12]}; "
                                 f"{dataset.path} hashes to {dataset.sha256[:12]} now: the dataset changed since this "
                                 f"run (or this is another dataset's run): rerun it with --fresh")
            if rec["qid"] not in known:
                raise InputError(f"{at}: question {rec['qid']!r} is not in the dataset {dataset.path}")
            key = record_key(rec)
            if key in where:
                raise InputError(f"{at}: backend {rec['backend']!r} question {rec['qid']!r} (repeat {rec['repeat']}, "
                                 f"budget {rec[BUDGET_FIELD]}) is also in {where[key]}; each system's run belongs in "
                                 f"one file")
            where[key] = at
            rows.append((path, lineno, rec))
        if len(rows) == before:
            raise InputError(f"{path}: holds no records, so its system would be missing from the comparison; rerun "
                             f"run.py for it, or leave the file out of --runs")
    return rows


def contract_problems(rows: list[tuple[str, int, dict]]) -> list[str]:
    """Where these run records break the fairness contract: a contract field, or the set of
    budgets, differing between files (each named with its value)."""
    values: dict = {}   # contract field -> {value -> [paths]}
    budgets: dict = {}  # path -> set of budgets
    for path, _, rec in rows:
        for f in CONTRACT_FIELDS:
            values.setdefault(f, {}).setdefault(_hashable(rec[f]), set()).add(path)
        budgets.setdefault(path, set()).add(rec[BUDGET_FIELD])
    problems = [f"field '{f}' differs: " + "; ".join(f"{v!r} in {', '.join(sorted(ps))}" for v, ps in seen.items())
                for f, seen in values.items() if len(seen) > 1]
    if len({frozenset(b) for b in budgets.values()}) > 1:
        problems.append(f"field '{BUDGET_FIELD}' differs: "
                        + "; ".join(f"{sorted(b)} in {p}" for p, b in budgets.items()))
    return problems


def _hashable(value: Any) -> Any:
    return json.dumps(value, sort_keys=True) if isinstance(value, (list, dict)) else value


@dataclass(frozen=True)
class Comparison:
    """The run records one comparison is scored on, what --allow-partial left out, and how much
    of the dataset they cover."""
    records: list
    left_out: list   # one entry per system (and repeat, budget) lacking questions: file, backend, count, qids
    questions: int   # question records every system holds, over the budgets (the ones scored)
    coverage: dict   # dataset_questions, planned_questions, scored_questions, limit, shards, sample, partial


def load_comparison(paths: list[str], dataset: Dataset, allow_partial: bool = False) -> Comparison:
    """Read run files (read_run_files) and check that together they are one comparison of the
    dataset's questions: the contract fields equal across files, and every system holding every
    question its run planned (the whole dataset, or what its --limit, --shard and --sample chose). A
    system that lacks questions is refused unless allow_partial, which keeps the questions every
    system holds and says what was left out."""
    rows = read_run_files(paths, dataset)
    problems = contract_problems(rows)
    if problems:
        raise InputError("these run files are not one comparison (the fairness contract holds these "
                         "constant; rerun the odd files with one config): " + " | ".join(problems))
    return coverage(rows, dataset, allow_partial)


def coverage(rows: list[tuple[str, int, dict]], dataset: Dataset, allow_partial: bool) -> Comparison:
    """Every system (and repeat) must hold the questions its run planned, budget by budget: the
    dataset's, or those of the --limit, --shard and --sample its records say. Refused unless allow_partial
    (InputError naming the file, the system and the first question missing)."""
    systems: dict = {}  # system key -> {"file", "runs": {(limit, shard, sample, seed)}, "qids"}
    for path, _, rec in rows:
        s = systems.setdefault(system_key(rec), {"file": path, "runs": set(), "qids": set()})
        s["runs"].add((rec["limit"], rec["shard"], rec["sample"], rec["seed"]))
        s["qids"].add(rec["qid"])
    order = dataset.qids()
    planned = {run: set(dataset.qids(*run)) for s in systems.values() for run in s["runs"]}
    left_out, common, expected_n = [], {}, 0
    for budget in sorted({key[2] for key in systems}):
        group = {key: s for key, s in systems.items() if key[2] == budget}
        expected = set().union(*(planned[run] for s in group.values() for run in s["runs"]))
        expected_n = max(expected_n, len(expected))
        common[budget] = set.intersection(*(s["qids"] for s in group.values()))
        for key, s in group.items():
            lacking = [q for q in order if q in expected and q not in s["qids"]]
            if lacking:
                left_out.append({"file": s["file"], "backend": key[0], "repeat": key[1], "budget": budget,
                                 "missing": len(lacking), "planned": len(expected), "qids": lacking})
    if left_out and not allow_partial:
        first = left_out[0]
        whose = "the dataset's" if first["planned"] == len(order) else "this run's planned (--limit, --shard, --sample)"
        raise InputError(f"{first['file']}: backend {first['backend']!r} (repeat {first['repeat']}, budget "
                         f"{first['budget']}) holds {first['planned'] - first['missing']} of {whose} "
                         f"{first['planned']} questions; {first['missing']} missing (first: {first['qids'][0]!r})"
                         + (f", and {len(left_out) - 1} more run(s) are partial" if len(left_out) > 1 else "")
                         + "; finish that run (rerun the same run.py command), or pass --allow-partial to score "
                           "every system on the questions all of them hold")
    kept = [rec for _, _, rec in rows if rec["qid"] in common[rec[BUDGET_FIELD]]]
    runs = {run for s in systems.values() for run in s["runs"]}
    return Comparison(records=kept, left_out=left_out, questions=sum(len(q) for q in common.values()),
                      coverage={"dataset_questions": len(order), "planned_questions": expected_n,
                                "scored_questions": min(len(q) for q in common.values()),
                                "limit": sorted({run[0] for run in runs if run[0] is not None}),
                                "shards": sorted({run[1] for run in runs if run[1] is not None}),
                                "sample": sorted({run[2] for run in runs if run[2] is not None}),
                                "partial": bool(left_out)})


def verdict_inputs_sha256(rec: dict) -> str:
    """sha256 of everything of a run record a grade depends on: the question, its gold, type
    and annotations (the rules read meta: outdated answers, the source benchmark's rubric),
    and the answer (or, for a failed question, its error). Change any of them and the verdict
    is graded again."""
    return sha256_text(json.dumps({"question": rec["question"], "gold_answer": rec["gold_answer"],
                                   "type": rec["type"], "meta": rec["meta"], "answer": rec["answer"],
                                   "error": rec["error"] if rec["answer"] is None else None},
                                  sort_keys=True, ensure_ascii=False))


# A verdict's identity: what it graded (verdict_inputs_sha256) and who graded it: the rule set's
# hash and, for the LLM layer, the judge model and its prompts. judge.py reuses a verdict only
# when all four match; score.py refuses one that does not match its run record.
VERDICT_IDENTITY_FIELDS = ("inputs_sha256", "rules_sha256", "judge_model", "judge_prompt_sha256")


# Fields every verdicts line of VERDICT_FORMAT has (judge.py copies more through, for jq).
VERDICT_FIELDS = ("format", "backend", "repeat", BUDGET_FIELD, "case_id", "qid", "type", "question", "gold_answer",
                  "answer", "verdict", "by", "rules_only_verdict", "judge_reason", "judge_error",
                  "usage") + VERDICT_IDENTITY_FIELDS


def check_verdict(v: dict, where: str) -> dict:
    """One line of a verdicts file (where: "path:line"), refused unless it is of VERDICT_FORMAT and
    has every field of VERDICT_FIELDS: the one test every stage that reads verdicts applies
    (judge.py resuming, score.py, check.py, audit.py, report.py), with one message and one fix."""
    check_format(v, VERDICT_FORMAT, where, "rerun judge.py with --fresh")
    missing = [f for f in VERDICT_FIELDS if f not in v]
    if missing:
        raise InputError(f"{where}: not a verdict of format {VERDICT_FORMAT!r} (no field '{missing[0]}'); rerun "
                         f"judge.py with --fresh")
    return v


def read_verdicts(path: str) -> dict:
    """Verdicts keyed by record_key, with their line; two for one answer is an error."""
    out: dict = {}
    for lineno, v in read_jsonl(path):
        check_verdict(v, f"{path}:{lineno}")
        key = record_key(v)
        if key in out:
            raise InputError(f"{path}:{lineno}: a second verdict for {v['backend']!r} question {v['qid']!r} "
                             f"(the first is line {out[key][0]}); rerun judge.py, which keeps one per answer")
        out[key] = (lineno, v)
    return out


@dataclass(frozen=True)
class VerdictMatch:
    """Run records paired with their verdicts, and every way the verdicts fail to belong to them."""
    pairs: list        # (record, verdict) for every record that has one
    missing: list      # records with no verdict
    stale: list        # (line, record): the verdict graded another question, gold, annotation or answer
    graders: list      # the distinct graders (rules, judge model, judge prompts) of the pairs
    other_rules: list  # rules_sha256 prefixes other than the code's
    rules_sha256: str  # the code's

    def refuse(self, source: str | None, rerun: str) -> None:
        """Raise InputError for the first way the verdicts fail to belong: source names the
        verdicts file (None when each verdict's line is already "path:line"); rerun says what to
        run again."""
        def where(lineno) -> str:
            return f"{source}:{lineno}" if source else str(lineno)
        if self.missing:
            r = self.missing[0]
            raise InputError(f"{source or 'the verdicts'}: no verdict for {r['backend']!r} question {r['qid']!r} "
                             f"(and {len(self.missing) - 1} more); {rerun}")
        if self.stale:
            lineno, r, changed = self.stale[0]
            raise InputError(f"{where(lineno)}: the verdict of {r['backend']!r} question {r['qid']!r} graded another "
                             f"{changed} than its run record holds now (the dataset or the run changed since the "
                             f"verdicts); {rerun}")
        if self.other_rules:
            raise InputError(f"{source or 'the verdicts'}: graded by another rule set (rules_sha256 "
                             f"{', '.join(self.other_rules)}, this code's is {self.rules_sha256[:12]}); {rerun}")
        if len(self.graders) > 1:
            raise InputError(f"{source or 'the verdicts'}: the verdicts of these runs come from {len(self.graders)} "
                             f"different graders (rule sets or judge models: {self.graders}); grade them together: "
                             f"{rerun}")


def match_verdicts(records: list[dict], verdicts: dict, rules_sha256: str) -> VerdictMatch:
    """Pair each record with its verdict (read_verdicts) and find what score.py refuses: a missing
    verdict, one graded against something else than the record holds now (a gold edited in the
    dataset since, say), a mix of graders,
    and rules other than the code's (rules_sha256, passed in: rules.py builds on this module)."""
    pairs, missing, stale = [], [], []
    for r in records:
        found = verdicts.get(record_key(r))  # a missing verdict is reported, not defaulted
        if found is None:
            missing.append(r)
            continue
        lineno, v = found
        if v["inputs_sha256"] != verdict_inputs_sha256(r):
            # What changed, as far as the verdict's copies tell (it copies no annotations)
            changed = [f for f in ("question", "gold_answer", "type", "answer") if v[f] != r[f]]
            stale.append((lineno, r, " and ".join(changed) or "annotation (meta) or error"))
        pairs.append((r, v))
    graders = sorted({json.dumps({f: v[f] for f in VERDICT_IDENTITY_FIELDS[1:]}) for _, v in pairs})
    other = sorted({v["rules_sha256"][:12] for _, v in pairs if v["rules_sha256"] != rules_sha256})
    return VerdictMatch(pairs, missing, stale, graders, other, rules_sha256)


def verdict_identity(rec: dict, grader: dict) -> dict:
    """The identity a verdict of this run record must carry under this grader (a dict of
    rules_sha256, judge_model and judge_prompt_sha256)."""
    return {"inputs_sha256": verdict_inputs_sha256(rec), **{k: grader[k] for k in VERDICT_IDENTITY_FIELDS[1:]}}
