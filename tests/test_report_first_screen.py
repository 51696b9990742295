"""report.md and report.html open on the answer: one compact table (accuracy with its interval,
the paired difference to the baseline with its interval and whether it separates them, gap
closed, recall in context, tokens per question; for the model-free report, recall and its
paired difference), then one line each for the controls' verdict and every deviation. And the
question list: the prompt each model read, the judge's reason, counts that link to their rows."""
from __future__ import annotations

import json
import os
import re

import pytest
import yaml

import report_explorer
import report_sections
import score
import wording
from cli import run_cli
from fileio import sha256_file
from context import answer_prompt
from records import read_records, run_record, verdict_for, write_jsonl
from report_pipeline import make_report, pipeline
from test_report import DATA, blob, build, recs, table_after


def first_screen(md: str) -> str:
    """What report.md says before its full metric table."""
    return md.split("## All metrics", 1)[0]


def test_the_first_table_is_the_answer(real):
    scores = json.load(open(real["scores"]))
    s = {x["label"]: x for x in scores["systems"]}
    d = scores["differences"][0]
    rows = table_after(real["md_text"], "Results")
    assert rows[0] == ["system", "accuracy [95% CI]", "Δ vs baseline [95% CI]", "interval", "gap closed [95% CI]",
                       "recall in ctx", "tokens / question"]
    by = {r[0]: r for r in rows[1:]}
    assert list(by) == ["none (control)", "oracle (control)", "full_context (control)", "**keyword** (baseline)", "hash"]
    hash_row = by["hash"]
    assert hash_row[1] == wording.estimate_text(s["hash"]["accuracy"], s["hash"]["accuracy_ci"])
    assert hash_row[2] == f"[{wording.interval_text(d)}](report.html#questions?a=hash&b=keyword&v=differ)"
    assert hash_row[3] == wording.separated_text(d) and hash_row[3] in ("separated", "not separated")
    assert hash_row[4] == wording.estimate_text(s["hash"]["gap_closed"], s["hash"]["gap_closed_ci"])
    assert hash_row[5] == wording.rate(s["hash"]["recall_all_in_context"])
    assert hash_row[6] == f"{wording.whole(s['hash']['mean_prompt_tokens'])} + " \
                          f"{wording.whole(s['hash']['mean_completion_tokens'])}"
    assert by["**keyword** (baseline)"][2] == "baseline" and by["none (control)"][2] == "control"
    screen = first_screen(real["md_text"])
    r = next(x for x in scores["retrieval_differences"] if x["metric"] == "recall_all_in_context")
    assert (f"- **Recall in context vs baseline** ([details](#paired-comparison-in-retrieval)): hash "
            f"{wording.interval_text(r)} {wording.separated_text(r)}.") in screen
    assert "**Controls**" in screen and "No deviation from the contract was recorded." in screen


def test_the_model_free_first_table_compares_recall(tmp_path, monkeypatch):
    paths = pipeline(tmp_path, run_args=("--retrieval-only",), monkeypatch=monkeypatch)
    md = open(paths["md"], encoding="utf-8").read()
    scores = json.load(open(paths["scores"]))
    d = next(x for x in scores["retrieval_differences"] if x["metric"] == "recall_all_in_context")
    rows = table_after(md, "Results")
    assert rows[0] == ["system", "recall in ctx", "Δ recall in ctx vs baseline [95% CI]", "interval",
                       "answer recall in ctx", "recall_all@10", "NDCG@10", "R@10", "ctx tokens", "search p95 ms"]
    hash_row = next(r for r in rows if r[0] == "hash")
    assert hash_row[4] == wording.rate(next(s for s in scores["systems"] if s["label"] == "hash")
                                       ["answer_recall_in_context"])
    assert hash_row[2] == f"[{wording.interval_text(d)}](report.html#questions?a=hash&b=keyword&v=differ)"
    assert d["ci_low"] is not None and hash_row[3] == wording.separated_text(d)
    paired = table_after(md, "Paired comparison in retrieval")
    assert [r[1] for r in paired[1:]] == ["recall@k", "recall in ctx", "recall_all@k", "NDCG@k"]


def with_checks(tmp_path, paths: dict, statuses: dict) -> str:
    """The sample checks.json made from these runs, with the given statuses; its path."""
    checks = json.load(open(os.path.join(DATA, "checks.json"), encoding="utf-8"))
    checks["inputs"]["runs"] = {p: sha256_file(p) for p in paths["runs"]}
    checks["inputs"]["verdicts"] = {paths["verdicts"]: sha256_file(paths["verdicts"])}
    for c in checks["checks"]:
        c["status"] = statuses.get(c["id"], "PASS")
    found = [c["status"] for c in checks["checks"]]
    checks["counts"] = {st: found.count(st) for st in ("PASS", "WARN", "FAIL", "SKIP")}
    checks["status"] = next((st for st in ("FAIL", "WARN", "PASS") if st in found), "SKIP")
    path = tmp_path / "checks.json"
    path.write_text(json.dumps(checks), encoding="utf-8")
    return str(path)


def test_the_controls_verdict_is_one_line_from_check_py_or_their_numbers(tmp_path):
    code, md, paths = build(tmp_path, {"none": recs("none"), "oracle": recs("oracle"), "keyword": recs("keyword")})
    line = next(x for x in first_screen(md).splitlines() if x.startswith("- **Controls"))
    assert line == ("- **Controls** ([details](#what-the-controls-say)): none answers 0.500; oracle answers 0.500; no "
                    "verdict without check.py's --checks.")
    controls = [c["id"] for c in json.load(open(os.path.join(DATA, "checks.json")))["checks"] if c["check"] == "controls"]
    assert make_report(paths, "--checks", with_checks(tmp_path, paths, {controls[0]: "FAIL"})) == 0
    md = open(paths["md"], encoding="utf-8").read()
    line = next(x for x in first_screen(md).splitlines() if x.startswith("- **Instrument checks"))
    assert line.startswith("- **Instrument checks: FAIL** ([details](#instrument-checks)): check.py on these runs, ")
    assert controls[0] in line


def test_each_deviation_is_one_line_and_the_rest_a_link_away(tmp_path):
    failing = {name: recs(name, error="timeout", answer=None) for name in ("keyword", "a", "b", "c", "d", "e")}
    code, md, _ = build(tmp_path, failing)
    screen = [x for x in first_screen(md).splitlines() if x.startswith("- ")]
    deviations = [x for x in screen if x.startswith("- **Deviation** ([details](#the-fairness-contract)): ")]
    assert len(deviations) == report_sections.DEVIATION_LINES and all("question records failed" in x for x in deviations)
    assert screen[-1] == "- … and 2 more deviations: [all of them](#the-fairness-contract)"


def test_the_embedded_report_says_what_its_reader_can_show_with_the_oracle_figure(tmp_path):
    code, md, paths = build(tmp_path, {"oracle": recs("oracle"), "keyword": recs("keyword")})
    assert "Embedded reader" not in md  # an endpoint's model: the line names it a reader
    manifest = json.load(open(paths["manifest"]))
    manifest["served_model_info"] = {"server": "llama-cpp-python", "server_version": "0.3.36",
                                     "served_model": "SmolLM2-135M-Instruct.Q4_1-f16", "model_file": "m.gguf",
                                     "model_sha256": "a" * 64, "served_file": None, "served_sha256": None}
    open(paths["manifest"], "w").write(json.dumps(manifest))
    assert make_report(paths) == 0
    md = open(paths["md"], encoding="utf-8").read()
    line = next(x for x in first_screen(md).splitlines() if "Embedded reader" in x)
    assert line == ("- **Embedded reader** `SmolLM2-135M-Instruct.Q4_1-f16`: 0.500 right given exactly the evidence "
                    "(the oracle control).")


def systems_over(cases: int, answers: dict, retrieved: dict) -> dict:
    """Each system's records over `cases` cases of two questions (evidence t1): answers[name] is
    "all", "none" or "half" right (yes is right), retrieved[name] what it put in context."""
    said = {"all": lambda i: "yes", "none": lambda i: "no", "half": lambda i: "yes" if i % 2 == 0 else "no"}
    return {name: [run_record(name, f"q{i}", f"c{i // 2}", said[answers[name]](i), ["t1"], retrieved[name])
                   for i in range(2 * cases)] for name in answers}


def reader_line_of(tmp_path, systems: dict) -> str:
    code, md, _ = build(tmp_path, systems)
    assert code == 0
    return next(x for x in first_screen(md).splitlines() if x.startswith("- **Reader**"))


def test_the_reader_line_says_accuracy_separates_systems_when_its_intervals_do(tmp_path):
    systems = systems_over(20, {"none": "none", "oracle": "all", "keyword": "none", "bm25": "all"},
                           {"none": [], "oracle": ["t1"], "keyword": ["t2"], "bm25": ["t1"]})
    line = reader_line_of(tmp_path, systems)
    assert line == ("- **Reader** `m`: 1.00 right given exactly the evidence (the oracle control) and 0.00 with "
                    "none, a span of 1.00 for memory systems to differ in. Accuracy separates bm25 from keyword; "
                    "recall in context separates bm25.")
    assert "gap closed" not in line


def test_the_reader_line_says_when_only_recall_separates_systems(tmp_path):
    # The same answers, other retrieval: recall in context parts bm25 from keyword, accuracy cannot.
    systems = systems_over(20, {"none": "none", "oracle": "half", "keyword": "half", "bm25": "half"},
                           {"none": [], "oracle": ["t1"], "keyword": ["t2"], "bm25": ["t1"]})
    line = reader_line_of(tmp_path, systems)
    assert line == ("- **Reader** `m`: 0.500 right given exactly the evidence (the oracle control) and 0.00 with "
                    "none, a span of 0.500 for memory systems to differ in. Accuracy separates no system from "
                    "keyword; recall in context separates bm25, a difference in retrieval that accuracy does not "
                    "show for bm25.")
    assert "barely" not in line and "gap closed" not in line


def test_the_judges_reason_is_beside_decided_by_llm(tmp_path):
    code, md, paths = build(tmp_path, {"keyword": recs("keyword")})
    # one verdict as judge.py writes it when the judge gives its reason, scored again
    verdicts = read_records(paths["verdicts"])
    verdicts[0].update(by="llm", judge_reason="The answer names the right version.")
    write_jsonl(tmp_path / "verdicts.jsonl", verdicts)
    assert run_cli(score.main, ["--runs", *paths["runs"], "--verdicts", paths["verdicts"], "--baseline", "keyword",
                                "--json", paths["scores"], "--manifest", paths["manifest"], "--resamples", "50"]) == 0
    assert make_report(paths) == 0
    data = blob(open(paths["md"][:-3] + ".html", encoding="utf-8").read())
    answers = {q["qid"]: q["r"][0][0] for q in data["questions"]}
    assert answers[verdicts[0]["qid"]]["by"] == "llm"
    assert answers[verdicts[0]["qid"]]["why"] == "The answer names the right version."
    assert {a["why"] for qid, a in answers.items() if qid != verdicts[0]["qid"]} == {None}
    assert 'p.append(" — the judge: "' in report_explorer.HTML_JS  # written after "decided by llm"


def test_each_answer_carries_the_prompt_it_was_sent(real):
    data = blob(real["html_text"])
    template = yaml.safe_load(open(real["config"], encoding="utf-8"))["answer_prompt"]
    systems = [s["label"] for s in data["systems"]]
    questions = {q["qid"]: q for q in data["questions"]}
    checked = 0
    for path in real["runs"]:
        for r in read_records(path):
            q = questions[r["qid"]]
            entry = q["r"][systems.index(r["backend"])][0]
            context = "\n".join((f"[{rank}] " if rank is not None else "") + data["texts"][n]
                                for _, rank, n in entry["lines"])
            assert context == r["context_text"]
            fields = {"asked_at": q["asked"], "context": context, "question": q["q"]}
            assert report_explorer.fill_parts(data["prompt"], fields) == answer_prompt(template, r["asked_at"],
                                                                               r["context_text"], r["question"])
            checked += 1
    assert checked == 35 and data["prompt_note"] is None


def test_a_prompt_that_changed_since_the_runs_is_not_shown_as_theirs(real, tmp_path):
    cfg = yaml.safe_load(open(real["config"], encoding="utf-8"))
    changed = tmp_path / "config.yaml"
    changed.write_text(yaml.safe_dump({**cfg, "answer_prompt": cfg["answer_prompt"] + "\nBe brief."}), encoding="utf-8")
    manifest = json.load(open(real["manifest"]))
    parts, note = report_explorer.prompt_parts({**manifest, "config": str(changed)}, json.load(open(real["scores"]))["contract"])
    assert parts is None and "has changed since these runs" in note


def test_full_context_shows_its_lines_oldest_first_as_the_model_read_them(real):
    data = blob(real["html_text"])
    fc = [s["label"] for s in data["systems"]].index("full_context")
    for q in data["questions"]:
        ranks = [line[1] for line in q["r"][fc][0]["lines"]]
        assert ranks == sorted(ranks, reverse=True)  # the newest kept, shown oldest first


def test_every_failure_count_links_to_its_rows(real):
    rows = table_after(real["md_text"], "Where the wrong answers came from")
    header = rows[0]
    keyword = next(r for r in rows if r[0] == "**keyword** (baseline)")
    budget = keyword[header.index("budget_miss")]
    assert budget == "[1](report.html#questions?a=keyword&v=a_wrong&cause=budget_miss)"
    assert keyword[1].endswith("(report.html#questions?a=keyword&v=a_wrong)")
    assert all(c == "0" or c.startswith("[") for r in rows[1:] for c in r[1:])


def test_the_view_of_a_link_is_the_state_the_page_reads():
    href = report_sections.questions_href(a="mem0 (internal extractor: m)", b="keyword", v="a_only", cause=None)
    assert href == "#questions?a=mem0+%28internal+extractor%3A+m%29&b=keyword&v=a_only"


def test_judge_reason_is_read_from_the_verdicts_not_the_scores():
    # scores.json's question rows carry no reason: the report reads the verdict itself
    rec = run_record("keyword", "q1", "c1", "yes", ["t1"], ["t1"])
    v = {**verdict_for(rec, "correct", by="llm"), "judge_reason": "Same value."}
    row = {"verdict": "correct", "correct": True, "by": "llm", "cause": None, "judge_error": None,
           "rules_only_verdict": "incorrect", "evidence_n": 1, "evidence_retrieved": 1, "evidence_in_context": 1}
    texts = report_explorer.Texts()
    entry = report_explorer.answer_entry(rec, row, v, texts)
    assert entry["why"] == "Same value." and entry["lines"] == [["t1", 1, 0]]
    assert texts.table() == ["(2026-05-01T10:00:00Z) user: turn t1 of c1"]


def test_report_py_ends_by_printing_the_first_table_aligned(real, capsys):
    capsys.readouterr()
    assert make_report(real) == 0
    out = capsys.readouterr().out.splitlines()
    scores = json.load(open(real["scores"]))
    header, rule, rows = out[0], out[1], out[2:2 + len(scores["systems"])]
    assert header.split("  ")[0].strip() == "system" and set(rule) == {"-", " "}
    columns = [(m.start(), m.end()) for m in re.finditer(r"-+", rule)]
    assert len(columns) == 7
    for row in rows:
        for i in (1, 2, 4, 5, 6):  # numbers end at their column's right edge
            start, end = columns[i]
            assert row[end - 1] != " " and (end == len(row) or row[end] == " "), (row, i)
    assert [r[:columns[0][1]].strip() for r in rows] == ["none (control)", "oracle (control)",
                                                         "full_context (control)", "keyword (baseline)", "hash"]
    d = scores["differences"][0]
    assert wording.interval_text(d) in rows[-1] and wording.separated_text(d) in rows[-1]
    assert out[-1] == f"report: {real['html']} (open it from disk)"
    assert any(line.startswith("Controls: ") for line in out)


def test_the_reader_line_says_when_the_controls_span_is_below_what_the_comparison_detects(tmp_path):
    # An oracle right on 2 of 40 questions, and two systems right on different questions: the
    # difference between them is noisy, and wider than the whole span between the controls.
    systems = systems_over(20, {"none": "none", "keyword": "half", "bm25": "half"},
                           {"none": [], "keyword": ["t2"], "bm25": ["t1"]})
    systems["oracle"] = [run_record("oracle", f"q{i}", f"c{i // 2}", "yes" if i in (0, 1) else "no", ["t1"], ["t1"])
                         for i in range(40)]
    systems["bm25"] = [{**r, "answer": "no" if i % 2 == 0 else "yes"} if i % 4 == 0 else r
                       for i, r in enumerate(systems["bm25"])]
    line = reader_line_of(tmp_path, systems)
    assert "right given exactly the evidence (the oracle control) and 0.00 with none, a span of 0.050" in line
    assert "The span is smaller than the smallest difference this comparison detects with 80% power (MDD " in line
    assert "accuracy cannot be expected to separate memory systems here." in line
