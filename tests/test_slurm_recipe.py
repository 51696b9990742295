"""The pieces of `make slurm-check` that need no Slurm: the recipe read from docs/scale.md and
what it submits (to an sbatch that only records), the one-node slurm.conf, and the comparison of
merged files with one machine's. The recipe itself runs under Slurm in `make slurm-check`."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import slurm_check
from conftest import ROOT, write_config

# An sbatch that runs nothing: it keeps each call's arguments (NUL-separated, one file per call)
# and answers as sbatch does.
FAKE_SBATCH = """#!/bin/bash
n=$(ls "$SBATCH_LOG" | wc -l)
printf '%s\\0' "$@" > "$SBATCH_LOG/$n"
echo "Submitted batch job $((100 + n))"
"""


def page() -> str:
    with open(os.path.join(ROOT, slurm_check.PAGE), encoding="utf-8") as fh:
        return fh.read()


def submitted(tmp_path, env: dict) -> tuple[subprocess.CompletedProcess, list[dict]]:
    """The recipe run by bash in tmp_path with the recording sbatch; what it printed, and each
    sbatch call as {option: value} with its script under "script"."""
    bin_dir, log = tmp_path / "bin", tmp_path / "sbatch-calls"
    bin_dir.mkdir()
    log.mkdir()
    (bin_dir / "sbatch").write_text(FAKE_SBATCH, encoding="utf-8")
    (bin_dir / "sbatch").chmod(0o755)
    (bin_dir / "python").symlink_to(sys.executable)
    env = {**os.environ, **env, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "SBATCH_LOG": str(log)}
    p = subprocess.run(["bash", "-e", "-c", slurm_check.recipe(page())], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=60)
    calls = []
    for n in range(len(os.listdir(log))):
        args = (log / str(n)).read_text(encoding="utf-8").split("\0")[:-1]
        call = {}
        for i, arg in enumerate(args):
            if arg.startswith("--"):
                key, _, value = arg.partition("=")
                call[key] = value if _ else args[i + 1]
            elif i == len(args) - 1 and args[i - 1] != "--wrap":
                call["script"] = arg
        calls.append(call)
    return p, calls


def test_the_recipe_is_one_block_of_the_page_and_its_kubernetes_job_another():
    assert "sbatch" in slurm_check.recipe(page())
    job = slurm_check.manifest(page())
    assert job["kind"] == "Job" and job["spec"]["completionMode"] == "Indexed"
    try:
        slurm_check.recipe(page() + "\n```sh slurm\necho a second one\n```\n")
    except slurm_check.InputError as e:
        assert "2 blocks fenced as ```sh slurm" in str(e)
    else:
        raise AssertionError("a page with two recipes was accepted")


def test_the_recipe_submits_the_arrays_each_step_after_the_one_it_reads(tmp_path):
    config = write_config(tmp_path, run_id="rid")
    systems, answered = "none keyword bm25", "none keyword"
    p, calls = submitted(tmp_path, {"CONFIG": config, "N": "5", "SYSTEMS": systems, "ANSWERED": answered})
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [f"Submitted batch job {100 + n}" for n in range(len(calls))]
    jobs = {c["--job-name"]: (100 + n, c) for n, c in enumerate(calls)}
    assert len(jobs) == len(calls) == 7
    ids = {name: jid for name, (jid, _) in jobs.items()}
    after = {name: sorted(int(x) for x in c.get("--dependency", "afterok:").split(":")[1:] if x)
             for name, (_, c) in jobs.items()}
    assert after == {"model-free": [], "merge-model-free": [ids["model-free"]], "answers": [],
                     "merge-answers": [ids["answers"]], "judge": [ids["merge-answers"]],
                     "merge-verdicts": [ids["judge"]], "score": sorted([ids["merge-verdicts"], ids["merge-model-free"]])}
    assert all(c["--dependency"].startswith("afterok:") for _, c in jobs.values() if "--dependency" in c)
    for name in ("model-free", "answers", "judge"):
        assert jobs[name][1]["--array"] == "0-4"  # N shards
    model_free, answers = jobs["model-free"][1], jobs["answers"][1]
    assert model_free["script"] == answers["script"] == "slurm/run.sh"
    assert f"PASS={systems}" in model_free["--export"] and "FLAGS=--retrieval-only" in model_free["--export"]
    assert f"PASS={answered}" in answers["--export"] and "DIR=runs/rid," in answers["--export"]
    assert "runs/rid/none.jsonl runs/rid/keyword.jsonl" in jobs["judge"][1]["--export"]
    assert "--verdicts" in jobs["merge-verdicts"][1]["--wrap"]
    assert jobs["score"][1]["--wrap"].count("python score.py --config") == 2
    for script in ("run.sh", "merge.sh", "judge.sh"):
        assert subprocess.run(["sh", "-n", str(tmp_path / "slurm" / script)]).returncode == 0


def test_the_recipe_defaults_to_eight_shards_of_the_default_systems(tmp_path):
    write_config(tmp_path)  # config.yaml, the recipe's default CONFIG
    # Empty is unset for bash's ${X:-default}: the page's defaults, whatever this environment holds.
    p, calls = submitted(tmp_path, {name: "" for name in ("CONFIG", "N", "SYSTEMS", "ANSWERED", "BASELINE")})
    assert p.returncode == 0, p.stderr
    assert calls[0]["--array"] == "0-7"
    # make slurm-check runs the page's own systems, and compares one machine's run of the same
    assert f"PASS={slurm_check.SYSTEMS}," in calls[0]["--export"]
    assert f"PASS={slurm_check.ANSWERED}," in calls[2]["--export"]


def test_the_node_is_this_machine_as_slurmd_reports_it():
    probe = ("NodeName=vm CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=24105\n"
             "UpTime=0-00:06:57\n")
    line = slurm_check.node_line(probe, "mbnode")
    assert line == ("NodeName=mbnode CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 "
                    "RealMemory=24105")
    conf = slurm_check.slurm_conf("/x/slurm", line, "vm", (7001, 7002)).splitlines()
    assert f"{line} NodeHostname=vm NodeAddr=127.0.0.1 State=UNKNOWN" in conf
    assert {"SlurmctldPort=7001", "SlurmdPort=7002", "AuthInfo=socket=/x/slurm/run/munge.socket",
            "DependencyParameters=kill_invalid_depend", "StateSaveLocation=/x/slurm/state"} <= set(conf)
    try:
        slurm_check.node_line("slurmd: error: something\n", "mbnode")
    except slurm_check.CheckFailed as e:
        assert "not a NodeName line" in str(e)
    else:
        raise AssertionError("a probe without a node line was accepted")


def test_the_comparison_sets_timing_apart_and_names_a_file_that_differs(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for rel, kind in slurm_check.compared_files():
        # b as a resumed task leaves it: two answers read from the cache, so two requests fewer.
        for root, search_ms, cached in ((a, 1.5, 0), (b, 9.0, 2)):
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if kind == "scores":
                path.write_text(json.dumps({"inputs": {"dataset": str(root)}, "systems": [
                    {"accuracy": 0.5, "search_ms_p95": search_ms, "answer_calls": 145,
                     "answer_calls_cached": cached, "answer_requests": 145 - cached}]}), encoding="utf-8")
            else:
                path.write_text("".join(json.dumps({"qid": f"q{i}", "answer": "x", "search_ms": search_ms}) + "\n"
                                        for i in range(3)), encoding="utf-8")
    assert slurm_check.differences(str(a), str(b)) == ([], 3 * (len(slurm_check.compared_files()) - 2))
    changed = b / "runs" / slurm_check.RUN_ID / "keyword.jsonl"
    changed.write_text(changed.read_text(encoding="utf-8").replace('"answer": "x"', '"answer": "y"', 1),
                       encoding="utf-8")
    scores = b / "results" / slurm_check.RUN_ID / "scores.json"
    scores.write_text(scores.read_text(encoding="utf-8").replace("0.5", "0.6"), encoding="utf-8")
    differ, _ = slurm_check.differences(str(a), str(b))
    assert differ == [f"runs/{slurm_check.RUN_ID}/keyword.jsonl",
                      f"results/{slurm_check.RUN_ID}/scores.json (systems[0].accuracy: 0.5 != 0.6)"]
