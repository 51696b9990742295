"""report.py: the report people read, from the files the stages write. A realistic comparison
(the real stages on tests/data/report_cases.jsonl against the fake endpoint) and hand-built
records (tests/records.py) for each deviation, each null metric and each optional input."""
from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

import check
import report
import score
import wording
from cli import run_cli
from fileio import sha256_file
from formats import AUDIT_KEY_FORMAT, MANIFEST_FORMAT
from wording import calibration_text
from records import read_records, run_record, write_comparison, write_jsonl
from report_pipeline import make_report, pipeline, score_again

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "report")


def table_after(md: str, heading: str) -> list[list[str]]:
    """The cells of the first markdown table under a heading."""
    rows: list[str] = []
    for line in md.split(f"## {heading}", 1)[1].splitlines():
        if line.startswith("|"):
            rows.append(line)
        elif rows:
            break
    cells = [[c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]] for line in rows]
    return [cells[0]] + cells[2:]  # the header, then the rows (no separator)


def blob(html_text: str) -> dict:
    """The explorer's JSON, as the browser parses it."""
    raw = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html_text, re.S).group(1)
    return json.loads(raw)


# ---------------------------------------------------------------------------------------------
# The realistic comparison
# ---------------------------------------------------------------------------------------------

def test_controls_come_first_and_the_baseline_is_marked(real):
    rows = table_after(real["md_text"], "All metrics")
    assert [r[0] for r in rows[1:]] == ["none (control)", "oracle (control)", "full_context (control)",
                                        "**keyword** (baseline)", "hash"]
    header = rows[0]
    diff = header.index("Δ accuracy vs baseline [95% CI]")
    assert [r[diff] for r in rows[1:4]] == ["control: not compared"] * 3
    assert rows[4][diff] == "baseline" and re.match(r"[+-]?\d", rows[5][diff])
    assert "noise floor" in header and "search p95 ms" in header


def test_the_controls_are_not_in_the_paired_table(real):
    rows = table_after(real["md_text"], "Paired comparison")
    assert [r[0] for r in rows[1:]] == ["hash"]
    assert "Δ accuracy [95% CI]" in rows[0]


def test_numbers_are_rounded_for_reading(real):
    scores = json.load(open(real["scores"]))
    s = {x["label"]: x for x in scores["systems"]}
    rows = {r[0]: r for r in table_after(real["md_text"], "All metrics")[1:]}
    header = table_after(real["md_text"], "All metrics")[0]
    tokens = header.index("ctx tokens")
    # Whole tokens, half up: the mean of the JSON is kept exact there.
    for label, row in (("keyword", rows["**keyword** (baseline)"]), ("hash", rows["hash"])):
        exact = s[label]["mean_context_tokens"]
        assert row[tokens] == str(int(exact + 0.5)) and exact != int(exact)
    f1 = header.index("F1")
    assert rows["**keyword** (baseline)"][f1] == f"{s['keyword']['token_f1']:#.3g}"  # 3 significant digits, zeros kept
    for number in re.findall(r"\d[\d,]*\.\d+", table_text(real["md_text"])):
        whole_part, decimals = number.replace(",", "").split(".")
        digits = (whole_part + decimals).lstrip("0")
        assert len(digits) <= 3 or len(whole_part) > 3, number  # 3 significant digits, never 112.500


def table_text(md: str) -> str:
    return "\n".join(line for line in md.splitlines() if line.startswith("|"))


@pytest.mark.parametrize("value, text", [(0.4, "0.400"), (1 / 3, "0.333"), (1.0, "1.00"), (0.0, "0.00"),
                                         (0.0905, "0.0905"), (0.03333, "0.0333"), (0.99964, "1.00"),
                                         (12.345, "12.3"), (1234.5, "1234"), (0.0006, "0.000600")])
def test_rates_have_three_significant_digits(value, text):
    assert wording.rate(value) == text


@pytest.mark.parametrize("value, text", [(112.5, "113"), (105.4999, "105"), (0.0, "0"), (12345.6, "12,346"),
                                         (None, "n/a")])
def test_tokens_are_whole(value, text):
    assert wording.whole(value) == text


def test_a_null_metric_is_na_with_its_reason_as_a_footnote(real):
    rows = table_after(real["md_text"], "All metrics")
    header = rows[0]
    kw = header.index("kw recall@k")
    marks = {r[kw] for r in rows[1:]}
    assert len(marks) == 1 and re.fullmatch(r"n/a \[\d+\]", marks.pop())
    number = rows[1][kw].split("[")[1].rstrip("]")
    assert f"- [{number}] keyword recall: no question has keywords (meta.keywords)" in real["md_text"]
    # A control searched nothing: its latency is n/a with that reason, not 0.
    p95 = header.index("search p95 ms")
    assert rows[1][p95].startswith("n/a [") and "a control searches nothing" in real["md_text"]


def test_absent_optional_inputs_are_said_plainly(real):
    md = real["md_text"]
    assert "No instrument checks yet: run `python check.py" in md
    assert "No judge calibration yet: run `python judge.py --config" in md
    assert "--calibrate data/calibration.jsonl --heldout data/heldout.jsonl --out" in md
    assert "No human audit yet: run `python audit.py sample" in md


def test_the_report_says_how_to_reproduce_it(real):
    md = real["md_text"]
    commands = md.split("## How to reproduce", 1)[1]
    for step in ("python manifest.py", "python run.py", "--backend hash", "python judge.py", "python score.py",
                 "--baseline keyword", "python report.py"):
        assert step in commands
    assert "7 questions" in md and "top_k 10" in md and "60 tokens" in md


def test_the_budget_cut_and_the_evidence_are_in_the_explorer_data(real):
    data = blob(real["html_text"])
    systems = [s["label"] for s in data["systems"]]
    q = next(q for q in data["questions"] if q["qid"] == "c001q1")
    kw = q["r"][systems.index("keyword")][0]
    assert kw["n_ctx"] < kw["n_ret"] and kw["c"] == "budget_miss"  # the evidence was retrieved, then cut
    assert "c001-s2t1" in kw["cut"] and "c001-s2t1" not in [line[0] for line in kw["lines"]]
    assert data["texts"][data["turns"]["c001"]["c001-s2t1"]] == ("(2026-05-11T09:30:00Z) user: We finished migrating "
                                                                 "billing to Postgres 16 this weekend.")
    none = q["r"][systems.index("none")][0]
    assert none["n_ret"] == 0 and none["miss"] == ["c001-s2t1"]
    assert [[tid, rank, data["texts"][n]] for tid, rank, n in none["lines"]] == [[None, None, "(no memories)"]]


def test_the_html_escapes_a_question_holding_a_script_tag(real):
    text = real["html_text"]
    assert "alert('question')" in text or "alert(\\u0027question" in text or "alert('question" in text
    assert "<script>alert" not in text and "<img src=x" not in text and "</script> PD-7731" not in text
    assert text.count("<script") == 2  # the data blob and the explorer: nothing else
    question = next(q for q in blob(text)["questions"] if q["qid"] == "c003q1")
    assert question["q"].startswith("Which pager does <script>alert('question')</script>")  # intact as data


def test_the_html_needs_no_network(real):
    text = real["html_text"]
    assert "default-src 'none'" in text  # the page may not fetch anything, even if asked to
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", text)


def test_plots_exist_when_the_extra_is_installed(real):
    pytest.importorskip("matplotlib", reason="the plotting extra is not installed (pip install -r requirements-plots.txt)")
    folder = real["results"]
    for name in ("accuracy", "failures", "frontier"):  # frontier: the systems' search p95 beside accuracy
        png = folder / f"report-{name}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"](report-{name}.png)" in real["md_text"]
    assert not (folder / "report-budget.png").exists()  # one budget: no curve
    assert real["html_text"].count('src="data:image/png;base64,') == 3


def test_without_the_plotting_extra_the_report_says_how_to_get_it(real, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
    out = tmp_path / "report.md"
    assert make_report({**real, "md": str(out)}) == 0
    md = out.read_text(encoding="utf-8")
    assert "pip install -r requirements-plots.txt" in md and ".png)" not in md
    assert not list(tmp_path.glob("*.png"))


# ---------------------------------------------------------------------------------------------
# The model-free report and the budget curve
# ---------------------------------------------------------------------------------------------

def test_a_retrieval_only_report_marks_accuracy_as_not_measured(tmp_path, monkeypatch):
    paths = pipeline(tmp_path, run_args=("--retrieval-only",), monkeypatch=monkeypatch)
    md = open(paths["md"], encoding="utf-8").read()
    assert "model-free report" in md and "**Accuracy: not measured.**" in md
    rows = table_after(md, "All metrics")
    header = rows[0]
    assert {"recall@k", "recall in ctx", "kw recall@k", "staleness", "ctx tokens", "search p95 ms"} <= set(header)
    assert "EM" not in header and "contradiction" not in header
    assert {r[header.index("accuracy")] for r in rows[1:]} == {"not measured"}
    assert "## Paired comparison\n" not in md and "## Paired comparison in retrieval" in md and "Nothing was graded" in md
    assert blob(open(paths["html"], encoding="utf-8").read())["model_free"] is True


def test_the_budget_curve_appears_with_several_budgets(tmp_path, monkeypatch):
    paths = pipeline(tmp_path, systems=("none", "oracle", "keyword"), run_args=("--budgets", "30,2000"),
                     monkeypatch=monkeypatch)
    md = open(paths["md"], encoding="utf-8").read()
    rows = table_after(md, "Budget curve")
    assert rows[0] == ["system", "30", "2,000"] and [r[0] for r in rows[1:]] == ["none", "oracle", "keyword"]
    results = [r[0] for r in table_after(md, "All metrics")[1:]]
    assert results[:3] == ["none@30 (control)", "oracle@30 (control)", "**keyword@30** (baseline)"]
    if report_plots_installed():
        assert (tmp_path / "results" / "report-budget.png").exists()


def report_plots_installed() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


# ---------------------------------------------------------------------------------------------
# Hand-built comparisons: each deviation appears when present, and only then
# ---------------------------------------------------------------------------------------------

def build(tmp_path, systems: dict, score_args: tuple = (), report_args: tuple = ()) -> tuple[int, str, dict]:
    """A dataset holding the records' cases, the run files, verdicts (answer "yes" is correct),
    a manifest and scores; then report.py. Returns (exit code, report.md text, paths)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    runs, verdicts, _ = write_comparison(tmp_path, systems, by="no_match")
    dataset = str(tmp_path / "cases.jsonl")
    first = next(iter(systems.values()))[0]
    manifest = {"format": MANIFEST_FORMAT, "run_id": "r", "created_utc": "2026-06-01T00:00:00Z", "git_commit": "c" * 40,
                "git_dirty": False, "dataset": dataset, "dataset_sha256": sha256_file(dataset),
                "dataset_counts": {"cases": len({r["case_id"] for recs in systems.values() for r in recs}),
                                   "sessions": 1, "turns": 0,
                                   "questions": len({r["qid"] for recs in systems.values() for r in recs}),
                                   "questions_by_type": {"single_hop": 1}},
                "config": "config.yaml", "config_sha256": "f" * 64, "answer_model": first["answer_model"],
                "judge_model": None, "sample": None, "top_k": first["top_k"], "context_token_budget": first["context_token_budget"],
                "tokenizer": first["tokenizer"], "endpoint": "LLM_BASE_URL", "served_model_info": None,
                "backends": [{"name": n, "id": rs[0]["backend_id"], "version": rs[0]["backend_version"],
                              "code_sha256": rs[0]["backend_code_sha256"]} for n, rs in systems.items()]}
    manifest_path = tmp_path / "manifest-r.json"
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    scores = str(tmp_path / "scores.json")
    assert run_cli(score.main, ["--runs", *runs, "--verdicts", verdicts, "--baseline", "keyword", "--json", scores,
                                "--manifest", str(manifest_path), "--resamples", "50", *score_args]) == 0
    out = tmp_path / "out" / "report.md"
    paths = {"scores": scores, "manifest": str(manifest_path), "runs": runs, "verdicts": verdicts, "md": str(out)}
    code = make_report(paths, *report_args)
    return code, (out.read_text(encoding="utf-8") if out.exists() else ""), paths


def recs(backend: str, **fields) -> list[dict]:
    """Four questions over two cases, answered yes, no, yes, no; evidence t1, retrieved t1 t2."""
    return [{**run_record(backend, f"q{i}", f"c{i // 2}", "yes" if i % 2 == 0 else "no", ["t1"], ["t1", "t2"]),
             **fields} for i in range(4)]


def test_a_failed_judge_call_is_the_same_wrong_answer_in_the_tables_and_the_explorer(tmp_path):
    # keyword's q0 (answered "yes", which the rules grade correct) goes to the judge, whose call
    # fails: no verdict, a judge_error. The tables count it wrong with cause error; the explorer
    # shows the row as metrics.py computed it, so the error count's link (system keyword, "A
    # wrong", cause error) lists it.
    _, _, paths = build(tmp_path, {"none": recs("none"), "keyword": recs("keyword")})
    verdicts = read_records(paths["verdicts"])
    failed = next(v for v in verdicts if v["backend"] == "keyword" and v["qid"] == "q0")
    failed.update(verdict=None, by="llm", judge_error="timeout")
    write_jsonl(Path(paths["verdicts"]), verdicts)
    assert run_cli(score.main, ["--runs", *paths["runs"], "--verdicts", paths["verdicts"], "--baseline", "keyword",
                                "--json", paths["scores"], "--manifest", paths["manifest"], "--resamples", "50"]) == 0
    assert make_report(paths) == 0
    keyword = next(s for s in json.load(open(paths["scores"], encoding="utf-8"))["systems"] if s["label"] == "keyword")
    assert keyword["failure_causes"]["error"] == 1 and keyword["correct"] == 1
    rows = table_after(open(paths["md"], encoding="utf-8").read(), "Where the wrong answers came from")
    row = next(r for r in rows if "keyword" in r[0])
    assert row[rows[0].index("error")] == "[1](report.html#questions?a=keyword&v=a_wrong&cause=error)"
    data = blob(open(paths["md"][:-2] + "html", encoding="utf-8").read())
    at = [s["label"] for s in data["systems"]].index("keyword")
    entries = {q["qid"]: q["r"][at][0] for q in data["questions"]}
    assert (entries["q0"]["v"], entries["q0"]["ok"], entries["q0"]["c"]) == ("error", False, "error")
    # Every answer the tables count wrong is wrong in the explorer, and only those.
    wrong = {x["qid"] for x in json.load(open(paths["scores"], encoding="utf-8"))["questions"]
             if x["system"] == "keyword" and x["correct"] is False}
    assert {qid for qid, e in entries.items() if e["ok"] is False} == wrong and len(wrong) == 3
    assert {e["v"] for e in entries.values()} == {"error", "correct", "incorrect"}
    # The page's script holds no judgement of its own: it reads v and ok.
    script = open(os.path.join(os.path.dirname(report.__file__), "report.js"), encoding="utf-8").read()
    assert "a.ok" in script and not re.search(r"verdictOf|function (good|bad)\b|\.ev\[2\] ===", script)


def deviation_lines(md: str) -> list[str]:
    if "**Deviations from the contract**" not in md:
        return []
    block = md.split("**Deviations from the contract**", 1)[1].split("\n## ", 1)[0]
    return [line for line in block.splitlines() if line.startswith("- ")]


def test_a_clean_comparison_lists_no_deviation(tmp_path):
    code, md, _ = build(tmp_path, {"none": recs("none"), "keyword": recs("keyword"), "other": recs("other")})
    assert code == 0
    assert "No deviation from the contract was recorded." in md and deviation_lines(md) == []


@pytest.mark.parametrize("fields, score_args, words", [
    ({"retrieved_ids": None, "context_ids": None}, (), "returned hits without provenance (source ids) on 4 of 4"),
    ({"flush_note": "flush waits a fixed 2 s: readiness is assumed, not verified"}, (), "a fixed 2 s"),
    ({"internal_model": "gpt-x-2026"}, (), "calls a model of its own during ingestion or search"),
    ({"time_aware": True}, (), "time-aware search"),
    ({"extra_wait_s": 30.0}, (), "waited 30 s more after flush"),
    ({"error": "timeout", "answer": None}, (), "4 of 4 question records failed"),
])
def test_a_deviation_of_one_system_appears_when_present(tmp_path, fields, score_args, words):
    code, md, _ = build(tmp_path, {"none": recs("none"), "keyword": recs("keyword"), "other": recs("other", **fields)},
                        score_args)
    assert code == 0
    lines = deviation_lines(md)
    assert len(lines) == 1 and words in lines[0] and "`other`" in lines[0]
    assert "No deviation from the contract was recorded." not in md


def test_a_limit_run_a_partial_run_and_a_served_model_change_are_deviations(tmp_path):
    limited = {name: recs(name, limit=2) for name in ("keyword", "other")}
    limited["other"][3] = {**limited["other"][3], "served_model": "m-v2"}
    limited["other"] = limited["other"][:3]  # one question missing: scored with --allow-partial
    code, md, _ = build(tmp_path, limited, ("--allow-partial",))
    assert code == 0
    text = "\n".join(deviation_lines(md))
    assert "scored on 3 of the dataset's 4 questions (--limit 2, --allow-partial)" in text
    # and on the first screen, before anything else
    assert ("**Partial comparison: 3 of the dataset's 4 questions** ([details](#the-fairness-contract)): --limit 2, "
            "--allow-partial left out the questions some system lacks.") in md.split("## All metrics")[0]
    served = {name: recs(name) for name in ("keyword", "other")}
    served["other"][1] = {**served["other"][1], "served_model": "m-v2"}
    code, md, _ = build(tmp_path / "served", served)
    assert "more than one served model" in "\n".join(deviation_lines(md))


def test_failed_and_warned_checks_are_deviations_and_passed_ones_are_not(tmp_path):
    code, md, paths = build(tmp_path, {"none": recs("none"), "keyword": recs("keyword")})
    checks = json.load(open(os.path.join(DATA, "checks.json"), encoding="utf-8"))
    checks["inputs"]["runs"] = {p: sha256_file(p) for p in paths["runs"]}  # made from these very runs
    checks["inputs"]["verdicts"] = {paths["verdicts"]: sha256_file(paths["verdicts"])}  # and verdicts
    path = tmp_path / "checks.json"
    path.write_text(json.dumps(checks), encoding="utf-8")
    assert make_report(paths, "--checks", str(path)) == 0
    md = open(paths["md"], encoding="utf-8").read()
    lines = deviation_lines(md)
    flagged = [c for c in checks["checks"] if c["status"] in ("FAIL", "WARN")]
    assert len(lines) == len(flagged) and all(f"`{c['id']}`" in "\n".join(lines) for c in flagged)
    assert all(f"`{c['id']}`" not in "\n".join(lines) for c in checks["checks"] if c["status"] == "PASS")
    rows = table_after(md, "Instrument checks")
    assert [r[0] for r in rows[1:]] == [c["status"] for c in checks["checks"]]


def test_checks_of_other_run_files_are_refused_as_score_refuses_them(tmp_path, capsys):
    # One reader of checks.json (formats.read_checks), one policy: the report never shows a
    # verdict on the instrument about other runs.
    code, md, paths = build(tmp_path, {"none": recs("none"), "keyword": recs("keyword")})
    capsys.readouterr()
    checks = os.path.join(DATA, "checks.json")
    assert make_report(paths, "--checks", checks) == 2
    assert (f"{checks}: checked other run files than --runs (their sha256 differ); rerun check.py on these runs"
            in capsys.readouterr().err)


def audit_of(tmp_path, paths: dict, change: dict | None = None) -> str:
    """The sample audit.json with a key that sampled these verdicts (one of them changed by
    `change`), as audit.py sample and join would write them; its path."""
    verdicts = [json.loads(line) for line in open(paths["verdicts"], encoding="utf-8")]
    fields = ("backend", "repeat", "context_token_budget", "case_id", "qid", "type", "verdict", "by", "inputs_sha256",
              "rules_sha256", "judge_model", "judge_prompt_sha256")
    keys = [{"format": AUDIT_KEY_FORMAT, "audit_id": f"t-{i:03d}", **{k: v[k] for k in fields}}
            for i, v in enumerate(verdicts)]
    keys[0].update(change or {})
    key = tmp_path / "audit-key.jsonl"
    key.write_text("".join(json.dumps(k) + "\n" for k in keys), encoding="utf-8")
    audit = json.load(open(os.path.join(DATA, "audit.json"), encoding="utf-8"))
    path = tmp_path / "audit.json"
    path.write_text(json.dumps({**audit, "key": str(key)}), encoding="utf-8")
    return str(path)


def test_calibration_of_this_grader_and_the_audit_are_shown(tmp_path, capsys):
    code, md, paths = build(tmp_path, {"none": recs("none"), "keyword": recs("keyword")})
    calibration = json.load(open(os.path.join(DATA, "calibration.json"), encoding="utf-8"))
    v = next(json.loads(line) for line in open(paths["verdicts"], encoding="utf-8"))
    calibration["grader"] = {k: v[k] for k in ("rules_sha256", "judge_model", "judge_prompt_sha256")}
    cal = tmp_path / "calibration.json"
    cal.write_text(json.dumps(calibration), encoding="utf-8")
    score_again(paths, "--calibration", str(cal), "--audit", audit_of(tmp_path, paths))
    os.unlink(cal)  # the report reads what score.py read into scores.json, never the file again
    assert make_report(paths) == 0
    md = open(paths["md"], encoding="utf-8").read()
    tuning, held = calibration["overall"], calibration["heldout"]["overall"]
    rows = table_after(md, "The judge: calibration and human audit")
    assert rows[0] == ["set", "tuned on", "answers", "false accepts (of known-wrong)", "false rejects (of known-right)",
                       "Cohen's kappa"]
    assert [r[:3] for r in rows[1:]] == [["tuning (`data/calibration.jsonl`)", "yes", str(tuning["n"])],
                                         ["held out (`data/heldout.jsonl`)", "no", str(held["n"])]]
    lo, hi = held["false_reject_ci95"]
    assert rows[2][4] == (f"{held['false_rejects']} of {held['known_right']} ({wording.rate(held['false_reject_rate'])}, "
                          f"{wording.rate(lo)}–{wording.rate(hi)})")
    assert "The rules were tuned on the tuning set" in md and "No judge calibration yet" not in md
    # The first screen quotes the held-out rates beside the tuning set's, naming the set the rules
    # were tuned on, in the words score.py prints.
    said = calibration_text(calibration)
    assert said.startswith("held-out set data/heldout.jsonl (never tuned on: the rates to quote): false accepts ")
    assert "; tuning set data/calibration.jsonl (the rules were tuned on it): " in said
    first_screen = md.split("## All metrics", 1)[0]
    link = "[details](#the-judge-calibration-and-human-audit)"
    assert f"**Grader** ({link}): rules only, 95% Wilson intervals: {said}." in first_screen
    cal.write_text(json.dumps(calibration), encoding="utf-8")
    assert run_cli(score.main, ["--runs", *paths["runs"], "--verdicts", paths["verdicts"], "--baseline", "keyword",
                                "--manifest", paths["manifest"], "--resamples", "20", "--calibration", str(cal)]) == 0
    assert f"(rules only; rules {calibration['grader']['rules_sha256'][:12]}, judge none), 95% Wilson intervals: " \
           f"{said}\n" in capsys.readouterr().out
    audit = json.load(open(os.path.join(DATA, "audit.json"), encoding="utf-8"))
    assert f"agrees with the person on {audit['overall']['agree']} of {audit['overall']['n']}" in md
    assert "No human audit yet" not in md
    assert "The judge is not neutral here" in md  # the sample audit flags one system


@pytest.mark.parametrize("change, words", [({"verdict": "flipped"}, "audited other verdicts (1 of its 8"),
                                           ({"qid": "q-gone"}, "audited other verdicts (1 of its 8")])
def test_an_audit_of_other_verdicts_is_not_shown_as_this_ones(tmp_path, change, words):
    code, md, paths = build(tmp_path, {"none": recs("none"), "keyword": recs("keyword")})
    score_again(paths, "--audit", audit_of(tmp_path, paths, change))
    assert make_report(paths) == 0
    md = open(paths["md"], encoding="utf-8").read()
    assert words in md and "agrees with the person" not in md


def test_the_report_takes_calibration_and_audit_from_scores_json_only(tmp_path, capsys):
    # One reader each: score.py reads and checks them (a calibration of another grader is
    # refused there, tests/test_score_inputs.py); report.py has no option that reads them again.
    code, md, paths = build(tmp_path, {"none": recs("none"), "keyword": recs("keyword")})
    for option in ("--calibration", "--audit"):
        with pytest.raises(SystemExit) as e:
            make_report(paths, option, os.path.join(DATA, "calibration.json"))
        assert e.value.code == 2 and f"unrecognized arguments: {option}" in capsys.readouterr().err


def test_markdown_cannot_be_broken_by_a_system_name(tmp_path):
    code, md, _ = build(tmp_path, {"keyword": recs("keyword"), "a|b <i>": recs("a|b <i>")})
    assert code == 0
    rows = table_after(md, "All metrics")
    assert [r[0] for r in rows[1:]] == ["**keyword** (baseline)", "a\\|b &lt;i>"]
    assert all(len(r) == len(rows[0]) for r in rows)


def test_the_locally_served_model_is_named_with_its_file_and_hashes(tmp_path):
    code, md, paths = build(tmp_path, {"none": recs("none"), "keyword": recs("keyword")})
    manifest = json.load(open(paths["manifest"]))
    manifest["served_model_info"] = {"server": "llama-cpp-python", "server_version": "0.3.36",
                                     "served_model": "SmolLM2-135M-Instruct.Q4_1-f16", "model_file": "smollm2.gguf",
                                     "model_sha256": "a" * 64, "served_file": "smollm2-f16.gguf", "served_sha256": "b" * 64}
    open(paths["manifest"], "w").write(json.dumps(manifest))
    assert make_report(paths) == 0
    md = open(paths["md"], encoding="utf-8").read()
    assert ("Served locally by llama-cpp-python 0.3.36 as `SmolLM2-135M-Instruct.Q4_1-f16` from `smollm2.gguf` "
            "(sha256 aaaaaaaaaaaaaaaa…), converted to `smollm2-f16.gguf` (sha256 bbbbbbbbbbbbbbbb…)") in md


# ---------------------------------------------------------------------------------------------
# Inputs that do not belong together are refused
# ---------------------------------------------------------------------------------------------

def test_scores_of_other_runs_are_refused(tmp_path, capsys):
    code, _, paths = build(tmp_path, {"none": recs("none"), "keyword": recs("keyword"), "other": recs("other")})
    assert make_report({**paths, "runs": paths["runs"][:2]}) == 2
    assert "scores other run files than --runs (their sha256 differ); rerun score.py" in capsys.readouterr().err


def test_scores_older_than_the_verdicts_are_refused(tmp_path, capsys):
    code, _, paths = build(tmp_path, {"none": recs("none"), "keyword": recs("keyword")})
    lines = open(paths["verdicts"], encoding="utf-8").read().splitlines()
    v = json.loads(lines[0])
    lines[0] = json.dumps({**v, "verdict": "correct" if v["verdict"] == "incorrect" else "incorrect"})
    open(paths["verdicts"], "w", encoding="utf-8").write("\n".join(lines) + "\n")
    assert make_report(paths) == 2
    assert "scored other verdicts than --verdicts" in capsys.readouterr().err


def test_a_dataset_changed_since_the_run_is_refused(tmp_path, capsys):
    code, _, paths = build(tmp_path, {"none": recs("none"), "keyword": recs("keyword")})
    manifest = json.load(open(paths["manifest"]))
    with open(manifest["dataset"], "a", encoding="utf-8") as fh:
        fh.write("\n")
    assert make_report(paths) == 2
    assert "the dataset changed since" in capsys.readouterr().err


def test_scores_of_another_format_are_refused_naming_it_and_the_fix(tmp_path, capsys):
    code, _, paths = build(tmp_path, {"none": recs("none"), "keyword": recs("keyword")})
    s = json.load(open(paths["scores"]))
    open(paths["scores"], "w").write(json.dumps({**s, "format": "scores/0"}))
    assert make_report(paths) == 2
    assert (f"{paths['scores']}: a scores record of format 'scores/0'; this code reads format 'scores/4' only: "
            f"rerun score.py") in capsys.readouterr().err
    del s["format"]
    open(paths["scores"], "w").write(json.dumps(s))
    assert make_report(paths) == 2
    assert "no field 'format' (every scores record of format 'scores/4' has one): rerun score.py" in \
        capsys.readouterr().err


# ---------------------------------------------------------------------------------------------
# Every number of scores.json has a table: cost and latency, repeats, per type
# ---------------------------------------------------------------------------------------------

def test_cost_and_latency_have_a_table_with_reasons_for_each_na(tmp_path):
    u = {"calls": 4, "cached": 1, "prompt_tokens": 2000, "completion_tokens": 30, "prompt_tokens_missing": 0,
         "completion_tokens_missing": 0}
    other = [{**r, "usage": {"prompt_tokens": 1000 + i, "completion_tokens": 5 if i else None}, "context_tokens": 100 + i,
              "internal_usage": u, "internal_model": "x-2026", "ingest_s": 1.0 + i // 2, "flush_s": 0.25,
              "added_items": 10 * (1 + i // 2), "search_ms": float(i + 1), "search_calls_in_flight": 0}
             for i, r in enumerate(recs("other"))]
    none = [{**r, "search_ms": None, "search_calls_in_flight": None, "ingest_s": None, "flush_s": None, "added_items": 0}
            for r in recs("none")]
    code, md, _ = build(tmp_path, {"none": none, "keyword": recs("keyword"), "other": other})
    rows = table_after(md, "Cost and latency")
    header, by = rows[0], {r[0]: dict(zip(rows[0], r)) for r in rows[1:]}
    assert header[:3] == ["system", "ctx tokens (mean)", "ctx tokens (total)"]
    o = by["other"]
    # contexts 100..103, prompts 1000..1003, completions 5, 5, 5 and one call without a count
    assert (o["ctx tokens (mean)"], o["ctx tokens (total)"]) == ("102", "406")
    assert o["prompt tokens"] == "4,006" and re.fullmatch(r"15 \[\d+\]", o["completion tokens"])
    assert o["per question: prompt / completion"] == "1,002 / 5"
    assert o["internal model calls"] == "8 (2 cached), 4,000 + 60 tokens"  # a case's usage, counted once per case
    assert o["ingest s per case"] == "1.50 (max 2.00)" and o["flush s per case"] == "0.250 (max 0.250)"
    assert o["search ms p50 / p95 / max"] == "2.00 / 4.00 / 4.00" and o["store items per namespace"] == "15 (max 20)"
    number = o["completion tokens"].split("[")[1].rstrip("]")
    assert (f"- [{number}] token usage: counted on the calls that reported usage: 0 of 4 answer calls gave no prompt "
            f"token count, 1 no completion token count (other)") in md
    n = by["none (control)"]
    assert n["search ms p50 / p95 / max"].startswith("n/a [") and "search latency: a control searches nothing" in md
    assert n["prompt tokens"].startswith("n/a [") and "the endpoint reported no token usage on any of the 4" in md
    assert "internal model: the system calls no model of its own (none, keyword)" in md


def test_repeats_and_the_noise_floor_have_a_table(tmp_path):
    again = [{**r, "repeat": 1, "answer": "yes"} for r in recs("other")]
    code, md, _ = build(tmp_path, {"keyword": recs("keyword"), "other": recs("other") + again})
    rows = {r[0]: r for r in table_after(md, "Repeats and noise floor")[1:]}
    # Repeat 0 answers q0 and q2, repeat 1 all four: 0.5 and 1; repeat 1 minus 0 is +0.5 in both
    # cases (each holds one right and one wrong answer in repeat 0), so the interval is [0.5, 0.5].
    assert rows["other"][1:] == ["2", "0.500, 1.00", "0.750", "0.354", "0.500 – 1.00", "+0.500 [+0.500, +0.500]"]
    single = rows["**keyword** (baseline)"]
    assert single[1] == "1" and re.fullmatch(r"n/a \[\d+\]", single[2])
    assert "repeats: a single repeat: run with --repeat 2 or more to measure the noise floor (keyword)" in md
    # other minus keyword is +0.25 in both cases (over other's two repeats): no sampling spread at
    # all, so no minimum detectable difference (0 would claim that any difference is detected).
    assert "Minimum detectable difference: n/a (the paired difference is the same in every bootstrap resample " \
           "(standard error 0)" in md


def test_paired_differences_and_memory_metrics_per_question_type(tmp_path):
    def mixed(name, right):
        return [{**r, "type": "temporal" if r["qid"] in ("q2", "q3") else "single_hop",
                 "answer": "yes" if r["qid"] in right else "no",
                 "retrieved_ids": ["t1"] if r["qid"] in ("q0", "q2") else ["t2"],
                 "context_ids": ["t1"] if r["qid"] in ("q0", "q2") else ["t2"]} for r in recs(name)]
    code, md, _ = build(tmp_path, {"none": mixed("none", set()), "keyword": mixed("keyword", {"q0"}),
                                   "other": mixed("other", {"q0", "q1", "q2"})})
    per_type = table_under(md, "### Paired difference per question type")
    # single_hop is q0 and q1 (case c0): other 2/2, keyword 1/2; temporal is q2 and q3 (case c1):
    # 1/2 against 0/2. One case each: no interval.
    assert per_type == [["system", "single_hop", "temporal"], ["other", "+0.500 (no interval)", "+0.500 (no interval)"]]
    rows = table_under(md, "Every memory metric per type")
    memory = {(r[0], r[1]): dict(zip(rows[0], r)) for r in rows[1:]}
    # evidence t1 retrieved for q0 and q2 only: recall 1/2 in each type
    assert memory[("other", "single_hop")]["recall@k"] == "0.500" and memory[("other", "temporal")]["accuracy"] == "0.500"
    assert memory[("none (control)", "temporal")]["recall in ctx"] == "0.500"
    assert re.fullmatch(r"n/a \[\d+\]", memory[("other", "temporal")]["staleness"])


def table_under(md: str, marker: str) -> list[list[str]]:
    """The cells of the first markdown table after a line of text."""
    return table_after("## X" + md.split(marker, 1)[1], "X")


def held_lines(md: str) -> list[str]:
    block = md.split("Held constant for every system:", 1)[1].split("\n\n", 2)[1]
    return [line for line in block.splitlines() if line.startswith("- ")]


def test_systems_answered_by_different_served_models_are_not_held_constant(tmp_path):
    systems = {"keyword": recs("keyword", served_model="model-A"), "other": recs("other", served_model="model-B")}
    code, md, _ = build(tmp_path, systems)
    assert code == 0
    assert not any("served as" in line for line in held_lines(md))
    assert any("2 served models answered" in line for line in held_lines(md))
    assert ("- The comparison was answered by more than one served model (model-A, model-B): `keyword` model-A (4 "
            "answers); `other` model-B (4 answers).") in "\n".join(deviation_lines(md))
    code, md, _ = build(tmp_path / "one", {name: recs(name) for name in ("keyword", "other")})
    assert any("(served as `m-served`)" in line for line in held_lines(md)) and deviation_lines(md) == []


def test_the_control_verdicts_are_check_pys_and_without_it_only_numbers(tmp_path):
    # none answers 1 of 2 answerable questions per case: 0.5, far above any threshold; the report
    # must not give a verdict of its own, only check.py's.
    code, md, paths = build(tmp_path, {"none": recs("none"), "oracle": recs("oracle"), "keyword": recs("keyword")})
    section = md.split("## What the controls say", 1)[1].split("\n## ", 1)[0]
    assert "answers 0.500 of answerable questions; per type: single_hop 0.500 (n=4)" in section
    assert "check.py's verdict" in section and "guessed" not in section and "reaches only" not in section
    checks = json.load(open(os.path.join(DATA, "checks.json"), encoding="utf-8"))
    checks["inputs"]["runs"] = {p: sha256_file(p) for p in paths["runs"]}
    checks["inputs"]["verdicts"] = {paths["verdicts"]: sha256_file(paths["verdicts"])}
    path = tmp_path / "checks.json"
    path.write_text(json.dumps(checks), encoding="utf-8")
    assert make_report(paths, "--checks", str(path)) == 0
    section = open(paths["md"], encoding="utf-8").read().split("## What the controls say", 1)[1].split("\n## ", 1)[0]
    quoted = [c for c in checks["checks"] if c["check"] == "controls"]
    assert all(f"- {c['status']} `{c['id']}`: " in section for c in quoted)
    assert "answers 0.500 of answerable questions" not in section


def test_the_budget_curve_shows_the_k_limited_share(tmp_path):
    def at(name, budget, k_limited, failed=()):
        return [{**r, "context_token_budget": budget, "k_limited": None if r["qid"] in failed else r["qid"] in k_limited}
                for r in recs(name)]
    systems = {"keyword": at("keyword", 500, set()) + at("keyword", 2000, {"q0"}),
               "other": at("other", 500, set(), failed={"q1", "q3"}) + at("other", 2000, set())}
    code, md, _ = build(tmp_path, systems)
    rows = table_after(md, "Budget curve")
    assert rows[0] == ["system", "500", "2,000"]
    assert rows[1] == ["keyword", "0.500 / 1.00 / 0.00", "0.500 / 1.00 / 0.250"]
    assert re.fullmatch(r"0\.500 / 1\.00 / 0\.00 \[\d+\]", rows[2][1])
    assert "k-limited share: measured on 2 of 4 records (the rest failed before a search) (other@500)" in md


def test_score_check_and_the_report_show_one_figure_for_a_control_that_differs_between_repeats(tmp_path, capsys):
    # `none` answers 0 of 8 answerable questions in repeat 0 and 3 of 8 in repeat 1: 3 of 16 over
    # both repeats, 0.188, in score.py's stdout, check.py's verdict and the report alike. keyword's
    # two repeats are graded alike (a deterministic endpoint): its noise floor is 0, while the
    # minimum detectable difference, a property of the sample of questions, is not.
    def system(name, right, repeat):
        return [run_record(name, f"q{i}", f"c{i}", "yes" if i in right else "no", ["t1"], ["t1"], repeat=repeat)
                for i in range(8)]
    systems = {"none": system("none", set(), 0) + system("none", {0, 1, 2}, 1),
               "keyword": system("keyword", {0, 2, 4, 6}, 0) + system("keyword", {0, 2, 4, 6}, 1),
               "other": system("other", {0, 1, 2, 3, 4}, 0) + system("other", {0, 1, 2, 3, 4}, 1)}
    code, md, paths = build(tmp_path, systems)
    assert code == 0
    out = capsys.readouterr().out
    assert "none (control) | 8 | 0.188 |" in out
    checks = str(tmp_path / "checks.json")
    assert run_cli(check.main, ["--runs", *paths["runs"], "--verdicts", paths["verdicts"], "--manifest",
                                paths["manifest"], "--config", str(tmp_path / "config.yaml"), "--out", checks]) == 4
    none = next(c for c in json.load(open(checks))["checks"] if c["id"] == "controls/none")
    assert none["status"] == "FAIL" and none["summary"].startswith("above its limit on single_hop 0.188 (n=8")
    rows = {r[0]: dict(zip(table_after(md, "All metrics")[0], r)) for r in table_after(md, "All metrics")[1:]}
    assert rows["none (control)"]["accuracy"] == "0.188"
    assert rows["**keyword** (baseline)"]["noise floor"] == "0.00 [0.00, 0.00]"
    scores = json.load(open(paths["scores"]))
    mdd = scores["minimum_detectable_difference"]["1200"]
    assert mdd["value"] > 0 and f"Minimum detectable difference: {wording.rate(mdd['value'])}, (1.960 + 0.842) x " \
                                 f"the bootstrap standard error" in md
    assert f"Noise floor: {scores['systems'][0]['noise_floor_formula']} (paired_bootstrap_interval)." in md
    html = open(paths["md"][:-3] + ".html", encoding="utf-8").read()
    assert "<td class=num>0.188</td>" in html
