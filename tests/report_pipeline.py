"""The real stages, run into a folder against the fake endpoint, for the report tests: manifest,
run (controls and systems), judge, score, then report.py; the inputs a researcher would have."""
from __future__ import annotations

import os

import judge
import manifest
import report
import run
import score
from cli import run_cli
from conftest import ROOT, write_config
from fake_llm import FakeLLM

# tiny.jsonl's two cases and one whose question and turns hold markup (an injection attempt).
CASES = os.path.join(ROOT, "tests", "data", "report_cases.jsonl")
SYSTEMS = ("none", "oracle", "full_context", "keyword", "hash")


def pipeline(folder, systems=SYSTEMS, run_args: tuple = (), budget: int = 60, baseline: str = "keyword",
             report_args: tuple = (), monkeypatch=None) -> dict:
    """Run every stage into `folder` (runs/, results/) with a context budget small enough that the
    budget cuts keyword's and full_context's hits; returns the paths report.py was given and wrote.
    A retrieval-only run (run_args with --retrieval-only) is neither judged nor needs the endpoint."""
    folder.mkdir(parents=True, exist_ok=True)
    # top_k pinned: the report tests read it in the report's headers and reproduce line, whatever
    # the default dataset's typical turn makes config.yaml's k
    cfg = write_config(folder, dataset=CASES, context_token_budget=budget, workers=2, top_k=10)
    runs = [str(folder / "runs" / f"{name}.jsonl") for name in systems]
    results = folder / "results"
    answered = "--retrieval-only" not in run_args
    server = FakeLLM().start() if answered else None
    try:
        if server:
            monkeypatch.setenv("LLM_BASE_URL", server.url)
            monkeypatch.setenv("LLM_API_KEY", "sk-test-not-a-secret")
        assert run_cli(manifest.main, [cfg, "--backends", *systems, "--out-dir", str(results)]) == 0
        for name, out in zip(systems, runs):
            assert run_cli(run.main, ["--config", cfg, "--backend", name, "--out", out, *run_args]) == 0
        verdicts = str(results / "verdicts.jsonl") if answered else None
        if answered:
            assert run_cli(judge.main, ["--config", cfg, "--runs", *runs, "--out", verdicts]) == 0
    finally:
        if server:
            server.stop()
    paths = {"scores": str(results / "scores.json"), "manifest": str(next(results.glob("manifest-*.json"))),
             "runs": runs, "verdicts": verdicts, "md": str(results / "report.md"), "html": str(results / "report.html"),
             "results": results, "config": cfg}
    assert run_cli(score.main, ["--runs", *runs, *(["--verdicts", verdicts] if verdicts else []), "--baseline", baseline,
                                "--json", paths["scores"], "--manifest", paths["manifest"], "--resamples", "200"]) == 0
    assert make_report(paths, *report_args) == 0
    return paths


def score_again(paths: dict, *extra: str, resamples: str = "50") -> None:
    """score.py once more on a comparison's files into its scores.json, with `extra` (--checks,
    --calibration, --audit: the report shows what score.py read of them)."""
    verdicts = ["--verdicts", paths["verdicts"]] if paths["verdicts"] else []
    assert run_cli(score.main, ["--runs", *paths["runs"], *verdicts, "--baseline", "keyword", "--json", paths["scores"],
                                "--manifest", paths["manifest"], "--resamples", resamples, *extra]) == 0


def make_report(paths: dict, *extra: str) -> int:
    """report.py on a pipeline's files; its exit code."""
    verdicts = ["--verdicts", paths["verdicts"]] if paths["verdicts"] else []
    return run_cli(report.main, ["--scores", paths["scores"], "--manifest", paths["manifest"], "--runs", *paths["runs"],
                                 *verdicts, "--out", paths["md"], *extra])
