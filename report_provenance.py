"""The report's sections on where its numbers come from and how far to trust them: the judge's
calibration and the human audit, the instrument's checks, the run's facts and the commands that
reproduce the report. Each is a list of document blocks (report_document.py).
"""
from __future__ import annotations

import os

from cli import InputError
from fileio import read_jsonl
from formats import BUDGET_FIELD, read_audit_key, record_key
from report_sections import retrieval_only, served_models
from stats import RESAMPLES, SEED
from wording import error_rate_text, rate
from report_document import Bullets, Code, Heading, Para, Pre, Strong, Table, segs

# The calibration the report asks for when it has none: both labelled sets, the held-out one never
# tuned on.
CALIBRATE_COMMAND = ("python judge.py --config {config} --calibrate data/calibration.jsonl --heldout "
                     "data/heldout.jsonl --out {out}")


# ---------------------------------------------------------------------------------------------
# The judge and the human audit, the checks, the run's facts and the commands
# ---------------------------------------------------------------------------------------------

def judge_section(scores: dict, verdicts: dict | None, calibration: dict | None, audit: dict | None,
                  paths: dict, config: str) -> list:
    """The judge's calibration rates and the human agreement, or how to get them."""
    blocks: list = [Heading(2, "The judge: calibration and human audit", "judge")]
    if retrieval_only(scores):
        return blocks + [Para(segs("Nothing was graded (a retrieval-only run)."))]
    calibrate = CALIBRATE_COMMAND.format(config=config,
                                         out=os.path.join(os.path.dirname(paths["scores"]), "calibration.json"))
    if calibration is None:
        blocks.append(Para(segs("No judge calibration yet: run ", Code(calibrate), " and pass --calibration to "
                                "score.py. A judge model is trusted only after its calibration.")))
    else:  # score.py refuses a calibration of another grader than the one of these verdicts
        blocks += calibration_blocks(calibration, calibrate)
    if audit is None:
        results = os.path.dirname(paths["scores"])
        sheet, key = os.path.join(results, "audit-sheet.csv"), os.path.join(results, "audit-key.jsonl")
        blocks.append(Para(segs("No human audit yet: run ", Code(
            f"python audit.py sample --verdicts {paths['verdicts']} --n 100 --seed 11 --out-sheet {sheet} "
            f"--out-key {key}"), ", label the sheet blind, then ",
            Code(f"python audit.py join {sheet} {key} --out {os.path.join(results, 'audit.json')}"),
            " and pass --audit to score.py.")))
        return blocks
    stale = audit_mismatch(audit, verdicts)
    if stale:
        blocks.append(Para(segs(f"{paths['audit']} {stale}: its agreement does not apply to these verdicts. Draw a new "
                                "sample (audit.py sample) and label it.")))
        return blocks
    o = audit["overall"]
    text = (f"Human audit: {audit['labelled']} of {audit['sampled']} sampled answers labelled; the grader agrees with "
            f"the person on {o['agree']} of {o['n']} ({rate(o['agreement'])}, Cohen's kappa {rate(o['kappa'])}); "
            f"grader correct where the person said incorrect: {o['judge_correct_human_incorrect']}, the reverse: "
            f"{o['judge_incorrect_human_correct']}.")
    if not audit["complete"]:
        text += " The audit is incomplete: some sampled answers have no readable label."
    blocks.append(Para(segs(text)))
    rows = [[segs(name), str(s["n"]), rate(s["agreement"]), rate(s["kappa"])] for name, s in audit["by_system"].items()]
    if rows:
        blocks.append(Table(["system", "labelled", "agreement", "kappa"], rows, [""] * len(rows),
                            [False, True, True, True]))
    for f in audit["flagged"]:
        blocks.append(Para(segs(Strong("The judge is not neutral here:"), " ", Code(f["system"]),
                                f" agreement {rate(f['agreement'])} against {rate(f['others_agreement'])} for the "
                                f"others (one-sided Fisher p={f['p_value']:.2g}); tighten the rubric before reading "
                                f"the scores.")))
    return blocks


def calibration_blocks(calibration: dict, calibrate: str) -> list:
    """The grader's error rates on the tuning set (the rules were tuned on it) beside the held-out
    set (never tuned on): overall with Wilson intervals and kappa, then per kind of answer."""
    sets = [("tuning", calibration)] + ([("held out", calibration["heldout"])] if calibration["heldout"] else [])
    rows = [[segs(name, " (", Code(c["calibration_set"]), ")"), "yes" if name == "tuning" else "no",
             str(c["overall"]["n"]),
             error_rate_text(c["overall"]["false_accepts"], c["overall"]["known_wrong"],
                             c["overall"]["false_accept_rate"], c["overall"]["false_accept_ci95"]),
             error_rate_text(c["overall"]["false_rejects"], c["overall"]["known_right"],
                             c["overall"]["false_reject_rate"], c["overall"]["false_reject_ci95"]), rate(c["kappa"])]
            for name, c in sets]
    held = ("The held-out set was never tuned on: its rates are the ones to quote." if calibration["heldout"] else
            "No held-out set was graded: its rates, out of sample, are the ones to quote; run "
            + calibrate + ".")
    blocks: list = [Para(segs(f"Calibration of this grader ({calibration['grading']}) on labelled answers, with 95% "
                              f"Wilson intervals. The rules were tuned on the tuning set. {held} A false accept "
                              f"inflates every accuracy; a false reject deflates it.")),
                    Table(["set", "tuned on", "answers", "false accepts (of known-wrong)",
                           "false rejects (of known-right)", "Cohen's kappa"], rows, [""] * len(rows),
                          [False, False, True, True, True, True], "text")]
    kinds = [[segs(kind), name, str(r["n"]),
              error_rate_text(r["false_accepts"], r["known_wrong"], r["false_accept_rate"], r["false_accept_ci95"]),
              error_rate_text(r["false_rejects"], r["known_right"], r["false_reject_rate"], r["false_reject_ci95"])]
             for name, c in sets for kind, r in c["by_kind"].items()]
    blocks.append(Table(["kind of answer", "set", "n", "false accepts", "false rejects"], kinds, [""] * len(kinds),
                        [False, False, True, True, True], "text"))
    return blocks


def audit_mismatch(audit: dict, verdicts: dict | None) -> str | None:
    """Why an audit does not belong to these verdicts, or None when it does: every answer its
    key sampled must still be graded the same, from the same inputs, by the same grader."""
    key_path = audit["key"]
    if not os.path.exists(key_path):
        return f"names its key {key_path}, which is not here, so nothing shows that it audited these verdicts"
    sampled, other = 0, 0
    for lineno, k in read_audit_key(key_path):
        for f in ("backend", "repeat", BUDGET_FIELD, "qid", "verdict", "inputs_sha256", "rules_sha256", "judge_model"):
            if f not in k:
                raise InputError(f"{key_path}:{lineno}: not an audit key line of audit.py (no field '{f}')")
        sampled += 1
        v = (verdicts or {}).get(record_key(k))  # an answer no longer graded is counted, not defaulted
        if v is None or any(v[f] != k[f] for f in ("verdict", "inputs_sha256", "rules_sha256", "judge_model")):
            other += 1
    if other:
        return f"audited other verdicts ({other} of its {sampled} sampled answers are not graded so now)"
    return None


def checks_section(checks: dict | None, paths: dict) -> list:
    """check.py's results: one line per check, or how to run it."""
    blocks: list = [Heading(2, "Instrument checks", "checks")]
    results = os.path.dirname(paths["scores"])
    run_it = Code(f"python check.py --runs {' '.join(paths['runs'])}"
                  + (f" --verdicts {paths['verdicts']}" if paths["verdicts"] else "")
                  + f" --manifest {paths['manifest']} --out {os.path.join(results, 'checks.json')}")
    if checks is None:
        return blocks + [Para(segs("No instrument checks yet: run ", run_it, " and pass "
                                   "--checks to report.py."))]
    rows = [[c["status"], segs(Code(c["id"])), segs(c["summary"])] for c in checks["checks"]]
    counts = ", ".join(f"{n} {s}" for s, n in checks["counts"].items() if n)
    return blocks + [Para(segs(f"Overall: {checks['status']} ({counts}). FAIL and WARN are listed among the "
                               f"deviations above.")),
                     Table(["status", "check", "result"], rows, [c["status"].lower() for c in checks["checks"]],
                           [False, False, False], "text"),
                     Para(segs(Strong("The reader"), " (a verdict on the answer model, not one of the checks: it never "
                               f"sets their status): {checks['reader']['text']}."))]


def facts_section(scores: dict, manifest: dict, order: list[dict]) -> list:
    """Counts, model ids, top_k and budget, the systems and their versions."""
    counts = manifest["dataset_counts"]
    types = ", ".join(f"{t} {n}" for t, n in counts["questions_by_type"].items())
    served = served_models(scores)
    repeats = max(s["repeats"] for s in order)
    first = scores["contract"]
    items = [
        segs("Run ", Code(manifest["run_id"]), f", manifest written {manifest['created_utc']}, ",
             *(("not from a git checkout",) if manifest["git_commit"] is None else
               ("git ", Code(manifest["git_commit"][:12]), " (uncommitted changes)" if manifest["git_dirty"] else ""))),
        segs(f"{counts['cases']} cases, {counts['sessions']:,} sessions, {counts['turns']:,} turns, "
             f"{counts['questions']} questions ({types}); scored: {scores['questions_scored']:,} question records per "
             f"system over {len(scores['budgets'])} budget(s), {repeats} repeat(s)"),
        segs("Answer model ", Code(first["answer_model"]),
             *((", served as ", Code(", ".join(served))) if served else ()),
             "; judge model ", Code(manifest["judge_model"]) if manifest["judge_model"] else "none (rules only)",
             f"; endpoint: {manifest['endpoint']}"),
        segs(f"top_k {first['top_k']}" + (f" (the manifest's {manifest['top_k']}, scaled for the largest budget)"
                                          if first["top_k"] != manifest["top_k"] else ""),
             f", context budget {', '.join(f'{b:,}' for b in scores['budgets'])} tokens ({first['tokenizer']})"),
    ]
    info = manifest["served_model_info"]
    if info:
        items.append(segs(f"Served locally by {info['server']} {info['server_version']} as ", Code(info["served_model"]),
                          " from ", Code(info["model_file"]), f" (sha256 {info['model_sha256'][:16]}…)",
                          *((", converted to ", Code(info["served_file"]), f" (sha256 {info['served_sha256'][:16]}…)")
                            if info["served_file"] else ())))
    versions = {s["backend"]: s["backend_version"] for s in order}
    items.append(segs("Systems: ", "; ".join(f"{b} ({v})" for b, v in versions.items())))
    return [Heading(2, "Run", "run"), Bullets(items)]


def reproduce_section(scores: dict, manifest: dict, paths: dict, checks: dict | None) -> list:
    """The commands that made these files, in the order the stages run, built from what ran:
    the systems of the run files (not the manifest's list), and judge.py --calibrate and
    check.py with the inputs their files record, when the report shows them."""
    config = manifest["config"]
    files: dict = {}  # backend_id -> run file, in the order given
    for path in paths["runs"]:
        for _, rec in read_jsonl(path):
            files.setdefault(rec["backend_id"], path)
            break
    first = scores["contract"]
    budgets = scores["budgets"]
    repeats = max(s["repeats"] for s in scores["systems"])
    extra = ""
    if len(budgets) > 1 or budgets[0] != manifest["context_token_budget"]:
        extra += f" --budgets {','.join(map(str, budgets))}"
    if repeats > 1:
        extra += f" --repeat {repeats}"
    if first["retrieval_only"]:
        extra += " --retrieval-only"
    if first["limit"] is not None:
        extra += f" --limit {first['limit']}"
    sample = f" --sample {first['sample']}" if first["sample"] is not None else ""
    run_files = " ".join(paths["runs"])
    if manifest["git_commit"] is None:
        lines = [f"# not made from a git checkout: no commit to check out; the manifest holds each code file's sha256 "
                 f"(config {config} sha256 {manifest['config_sha256'][:16]})"]
    else:
        dirty = ", with uncommitted changes: the commit alone does not reproduce it" if manifest["git_dirty"] else ""
        lines = [f"git checkout {manifest['git_commit']}   # config {config} sha256 "
                 f"{manifest['config_sha256'][:16]}{dirty}"]
    if not first["retrieval_only"]:
        lines.append("# run.py asks the model: export LLM_BASE_URL (and LLM_API_KEY) first, or run each run.py line "
                     "inside python serve.py -- COMMAND (the embedded model)")
    lines.append(f"python manifest.py {config} --backends {' '.join(files)}{sample} --out-dir "
                 f"{os.path.dirname(paths['manifest']) or '.'}")
    lines += [f"python run.py --config {config} --backend {b} --out {p}{extra}{sample}" for b, p in files.items()]
    score_flags = ""
    if scores["resamples"] != RESAMPLES:
        score_flags += f" --resamples {scores['resamples']}"
    if scores["seed"] != SEED:
        score_flags += f" --seed {scores['seed']}"
    if scores["left_out"]:
        score_flags += " --allow-partial"
    verdicts = f" --verdicts {paths['verdicts']}" if paths["verdicts"] else ""
    if paths["verdicts"]:
        lines.append(f"python judge.py --config {config} --runs {run_files} --out {paths['verdicts']}")
    cal = scores["calibration"]
    if cal is not None:
        heldout = f" --heldout {cal['heldout']['calibration_set']}" if cal["heldout"] else ""
        lines.append(f"python judge.py --config {config} --calibrate {cal['calibration_set']}{heldout} "
                     f"--out {paths['calibration']}")
    if checks is not None:
        c = checks["inputs"]
        given = [f"--{k} {' '.join(c[k])}" for k in ("rerun", "lag") if c[k]]
        given += [f"--{k} {c[k]}" for k in ("manifest", "config") if c[k]]
        lines.append(f"python check.py --runs {' '.join(c['runs'])}" + "".join(f" --verdicts {v}" for v in c["verdicts"])
                     + "".join(f" {g}" for g in given) + f" --out {paths['checks']} || [ $? -eq 4 ]   # 4: a check "
                     f"FAILed, which the report shows")
    score_flags += "".join(f" --{k} {paths[k]}" for k in ("checks", "calibration", "audit") if paths[k])
    lines.append(f"python score.py --runs {run_files}{verdicts} --baseline {scores['baseline']}{score_flags} "
                 f"--json {paths['scores']} --manifest {paths['manifest']}")
    optional = "".join(f" --{k.replace('_', '-')} {paths[k]}" for k in ("checks", "artifacts", "model_free")
                       if paths[k])
    lines.append(f"python report.py --scores {paths['scores']} --manifest {paths['manifest']} --runs {run_files}"
                 f"{verdicts}{optional} --out {paths['out']}")
    return [Heading(2, "How to reproduce", "reproduce"),
            Para(segs("With the same dataset, config and code (the manifest holds their sha256), in this order, from "
                      "the folder report.py ran in; each step resumes, and answers come from the response cache when "
                      "nothing changed:")),
            Pre("\n".join(lines))]


def plots_note(plots: dict | None) -> list:
    """How to get the plots when the optional extra is missing."""
    if plots is not None:
        return []
    return [Para(segs("Plots are not drawn: the optional plotting extra is not installed. ",
                      Code("pip install -r requirements-plots.txt"), " (matplotlib), then rerun report.py."))]
