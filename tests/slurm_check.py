"""`make slurm-check`: the Slurm recipe of docs/scale.md, run as written on a one-node Slurm
cluster started here, against the test endpoint (tests/fake_llm.py), its merged files compared
with the same comparison made on one machine.

The cluster (munged, slurmctld and slurmd, with this machine's cores and memory as `slurmd -C`
reports them) lives in .cache/slurm/: its config, key, state and logs, and two copies of the
repository, one where the recipe runs and one for the single-machine comparison. The recipe is
the block of docs/scale.md fenced as ```sh slurm, read from the page and run by bash as it
stands, with CONFIG and N set in its environment (a small dataset, four shards).

It runs three times:
  1. as written: every job must complete; the merged run files, verdicts and scores must equal
     those of the same commands run on one machine, timing fields aside;
  2. again from nothing, with two faults: the node is drained while the block is pasted, so that
     one task of the model-free array is cancelled before it starts (a shard that never ran:
     merge.py must refuse it, naming that shard's cases), and one task of the answered array is
     cancelled with scancel once it has written some answers (killed mid-run);
  3. the same block once more, as docs/scale.md says to: every job must complete, the cut task
     must keep the answers it had written, and the merged files must again equal one machine's.
Every daemon it started is stopped when it ends, passed or failed, and it fails if one of them,
or a job step of its cluster, is still running.

Usage:
  make slurm-check                  # installs Slurm and munge from Debian first when missing
  python tests/slurm_check.py       # with Slurm installed (sbatch, slurmctld, slurmd, munged)
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # as a script, this folder (fake_llm) is on the path, the repository not

import yaml  # noqa: E402

from cli import InputError, run_cli  # noqa: E402
from dataset import dataset_index, shard_of  # noqa: E402
from fake_llm import FakeLLM  # noqa: E402  (this folder)
from processes import free_port, stop  # noqa: E402

PAGE = os.path.join("docs", "scale.md")
RECIPE = re.compile(r"^```sh slurm\n(.*?)^```[ \t]*$", re.M | re.S)
MANIFEST = re.compile(r"^```yaml\n(.*?)^```[ \t]*$", re.M | re.S)
WORK = os.path.join(ROOT, ".cache", "slurm")
NODE = "mbnode"
PARTITION = "bench"
# Twelve cases, 64 questions: each of four shares holds one to five cases.
DATASET = os.path.join("data", "dev.jsonl")
SHARDS = 4
RUN_ID = "slurm-check"
CONFIG = "slurm-check.yaml"
# The systems the recipe runs, as `make bench` runs them: every default system model-free, the
# default comparison answered.
SYSTEMS = "none oracle full_context keyword bm25 hash"
ANSWERED = "none oracle full_context keyword bm25"
BASELINE = "keyword"
# Fields that differ between two runs of the same thing by design: when and how fast, from where
# (what the shard tests strip too); in scores.json the numbers made of them, and its inputs (the
# paths and hashes of the run files, which hold those fields: the files are compared themselves).
# How many answers came from the cache and how many requests were sent are among them: a call
# that returned before its task was killed is cached, so the resumed task reads it instead of
# asking again, and how many did depends on when the kill landed.
TIMING = ("ingest_s", "flush_s", "search_ms", "search_calls_in_flight", "cached", "retries")
SCORE_APART = ("inputs", "ingest_s", "flush_s", "search_ms_p50", "search_ms_p95", "search_ms_max",
               "search_contended_share", "answer_calls_cached", "answer_requests", "cached")
# The answered pass of the faulted run goes this slowly per call, so that a task is still running
# when it has written its first answers and can be killed mid-run.
FAULT_DELAY_S = 0.1
WAIT_S = 900  # the longest wait for a queue to drain, a node to come up, a task to start


class CheckFailed(Exception):
    """What the check found wrong; printed, exit 1."""


# ---------------------------------------------------------------------------------------------
# The doc
# ---------------------------------------------------------------------------------------------

def recipe(text: str) -> str:
    """The one Slurm block of a page (fenced ```sh slurm); InputError unless there is exactly one."""
    blocks = RECIPE.findall(text)
    if len(blocks) != 1:
        raise InputError(f"{PAGE}: {len(blocks)} blocks fenced as ```sh slurm, expected exactly one (the recipe "
                         f"this check runs)")
    return blocks[0]


def manifest(text: str) -> dict:
    """The Kubernetes Job of a page (its one ```yaml block), parsed."""
    blocks = MANIFEST.findall(text)
    if len(blocks) != 1:
        raise InputError(f"{PAGE}: {len(blocks)} ```yaml blocks, expected exactly one (the Kubernetes Job)")
    return yaml.safe_load(blocks[0])


def validate_manifest(job: dict) -> str:
    """One line saying the Job is valid against the Kubernetes API schema that the package
    kubernetes-validate ships (strict: an unknown field fails too); CheckFailed otherwise."""
    import importlib.metadata
    import kubernetes_validate
    from kubernetes_validate.utils import latest_version
    version = latest_version()
    try:
        kubernetes_validate.validate(job, version, strict=True)
    except kubernetes_validate.ValidationError as e:
        raise CheckFailed(f"{PAGE}: the Kubernetes Job is not valid for Kubernetes {version}: {e.message} "
                          f"(at {'.'.join(str(p) for p in e.path)})") from None
    # The same Job with one field misspelled must fail, or the validator is not checking fields.
    misspelled = {**job, "spec": {("backofLimit" if k == "backoffLimit" else k): v for k, v in job["spec"].items()}}
    try:
        kubernetes_validate.validate(misspelled, version, strict=True)
    except kubernetes_validate.ValidationError:
        pass
    else:
        raise CheckFailed(f"kubernetes-validate accepted the Job of {PAGE} with backoffLimit misspelled: it is not "
                          f"checking fields")
    return (f"Kubernetes: the Job of {PAGE} is valid for Kubernetes {version} (strict schema of "
            f"kubernetes-validate {importlib.metadata.version('kubernetes-validate')}, shipped in the package); "
            f"it is not run: there is no Kubernetes cluster here")


# ---------------------------------------------------------------------------------------------
# The cluster
# ---------------------------------------------------------------------------------------------

def node_line(probe: str, name: str) -> str:
    """slurm.conf's NodeName line for this machine from what `slurmd -C` printed (its CPUs,
    sockets, cores, threads and memory), under `name`."""
    first = probe.splitlines()[0].split()
    if not first or not first[0].startswith("NodeName="):
        raise CheckFailed(f"slurmd -C printed {probe!r}, not a NodeName line")
    return " ".join([f"NodeName={name}", *first[1:]])


def slurm_conf(folder: str, node: str, host: str, ports: tuple[int, int]) -> str:
    """A slurm.conf for one node that is also the controller, everything under `folder`: jobs
    run as their user on CPUs (no cgroups: a container has none to give), a job whose
    dependency can never be met is cancelled, and finished jobs stay visible to `scontrol`."""
    return "\n".join([
        "ClusterName=memorybench",
        f"SlurmctldHost={host}(127.0.0.1)",
        f"SlurmctldPort={ports[0]}",
        f"SlurmdPort={ports[1]}",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        f"AuthInfo=socket={folder}/run/munge.socket",
        "SlurmUser=root",
        f"StateSaveLocation={folder}/state",
        f"SlurmdSpoolDir={folder}/spool",
        f"SlurmctldPidFile={folder}/run/slurmctld.pid",
        f"SlurmdPidFile={folder}/run/slurmd.pid",
        f"SlurmctldLogFile={folder}/log/slurmctld.log",
        f"SlurmdLogFile={folder}/log/slurmd.log",
        "MailProg=/bin/true",
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "SwitchType=switch/none",
        "MpiDefault=none",
        "SchedulerType=sched/backfill",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_CPU",
        "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none",
        "DependencyParameters=kill_invalid_depend",
        "KillWait=5",
        "MinJobAge=3600",
        "ReturnToService=2",
        f"{node} NodeHostname={host} NodeAddr=127.0.0.1 State=UNKNOWN",
        f"PartitionName={PARTITION} Nodes={NODE} Default=YES MaxTime=INFINITE State=UP",
        "",
    ])


def command(args: list[str], env: dict, check: bool = True) -> str:
    """A Slurm command's stdout; CheckFailed with its stderr when it fails and `check`."""
    p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    if check and p.returncode != 0:
        raise CheckFailed(f"{' '.join(args)} exited {p.returncode}: {p.stderr.strip()}")
    return p.stdout


def wait_for(what: str, done, env: dict, timeout_s: float = WAIT_S) -> None:
    """Poll `done()` until true; CheckFailed naming `what` and the queue when time runs out."""
    deadline = time.monotonic() + timeout_s
    while not done():
        if time.monotonic() > deadline:
            queue = command(["squeue"], env, check=False)
            raise CheckFailed(f"waited {timeout_s:.0f} s for {what}; the queue:\n{queue}")
        time.sleep(0.2)


def two_ports() -> tuple[int, int]:
    """Two different free loopback ports: slurmctld's and slurmd's."""
    first = free_port()
    second = free_port()
    while second == first:
        second = free_port()
    return first, second


def left_running(folder: str) -> list[str]:
    """The daemons of an earlier check in `folder` that are still running, by their pid files
    (a check killed with -9 cannot stop them)."""
    found = []
    for name in ("slurmd", "slurmctld", "munged"):
        with contextlib.suppress(OSError, ValueError):
            with open(os.path.join(folder, "run", f"{name}.pid"), encoding="utf-8") as fh:
                pid = int(fh.read().strip())
            with open(f"/proc/{pid}/comm", encoding="utf-8") as fh:
                if fh.read().strip() == name:
                    found.append(f"{name} (pid {pid})")
    return found


def step_pids() -> set[int]:
    """The processes named slurmstepd on this machine (a job step's keeper)."""
    found = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            with open(f"/proc/{pid}/comm", encoding="utf-8") as fh:
                if fh.read().strip() == "slurmstepd":
                    found.add(int(pid))
    return found


def daemon(folder: str, name: str, args: list[str], env: dict) -> subprocess.Popen:
    """A daemon started in the foreground in its own session, its output in folder/log/NAME.out."""
    with open(os.path.join(folder, "log", f"{name}.out"), "w", encoding="utf-8") as log:
        return subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)


def alive(daemons: list[tuple[str, subprocess.Popen]], folder: str) -> bool:
    """True while every daemon runs; CheckFailed with the end of its output when one has exited."""
    for name, p in daemons:
        if p.poll() is not None:
            with open(os.path.join(folder, "log", f"{name}.out"), encoding="utf-8", errors="replace") as fh:
                tail = fh.read()[-2000:]
            raise CheckFailed(f"{name} exited {p.returncode} at start:\n{tail}")
    return True


@contextlib.contextmanager
def cluster(folder: str, base_env: dict) -> Iterator[dict]:
    """munged, slurmctld and slurmd started for a one-node cluster in `folder`, the node idle;
    yields the environment Slurm's commands need. On the way out, passed or failed: every job
    cancelled, the daemons stopped, and CheckFailed if one of them or a job step lingers."""
    for name in ("key", "run", "state", "spool", "log"):
        os.makedirs(os.path.join(folder, name), exist_ok=True)
    os.chmod(os.path.join(folder, "key"), 0o700)  # munged refuses a key others can reach
    os.chmod(os.path.join(folder, "run"), 0o755)  # and a socket folder they cannot
    key = os.path.join(folder, "key", "munge.key")
    with open(os.open(key, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as fh:
        fh.write(os.urandom(1024))
    socket_path = os.path.join(folder, "run", "munge.socket")
    if len(socket_path) >= 108:  # sun_path
        raise CheckFailed(f"{socket_path}: too long for a Unix socket; run the check from a shorter path")
    host = socket.gethostname().split(".")[0]
    probe = subprocess.run(["slurmd", "-C"], capture_output=True, text=True, check=True).stdout
    conf = os.path.join(folder, "slurm.conf")
    with open(conf, "w", encoding="utf-8") as fh:
        fh.write(slurm_conf(folder, node_line(probe, NODE), host, two_ports()))
    env = {**base_env, "SLURM_CONF": conf}
    steps_before = step_pids()
    daemons: list[tuple[str, subprocess.Popen]] = []
    try:
        daemons.append(("munged", daemon(folder, "munged", [
            "munged", "--foreground", f"--key-file={key}", f"--socket={socket_path}",
            f"--pid-file={folder}/run/munged.pid", f"--log-file={folder}/log/munged.log",
            f"--seed-file={folder}/run/munged.seed"], env)))
        wait_for("munged's socket", lambda: alive(daemons, folder) and os.path.exists(socket_path), env, 30)
        daemons.append(("slurmctld", daemon(folder, "slurmctld", ["slurmctld", "-D", "-i", "-f", conf], env)))
        daemons.append(("slurmd", daemon(folder, "slurmd", ["slurmd", "-D", "-N", NODE, "-f", conf], env)))
        wait_for(f"node {NODE} to be idle", lambda: alive(daemons, folder) and command(
            ["sinfo", "-h", "-N", "-o", "%T"], env, check=False).strip() == "idle", env, 60)
        yield env
    finally:
        left = []
        if any(name == "slurmctld" and p.poll() is None for name, p in daemons):
            command(["scancel", f"--partition={PARTITION}"], env, check=False)
            with contextlib.suppress(CheckFailed):
                wait_for("the cancelled jobs to end", lambda: not command(["squeue", "-h"], env, check=False).strip(),
                         env, 60)
        with contextlib.suppress(CheckFailed):
            wait_for("the job steps to end", lambda: not step_pids() - steps_before, env, 30)
        for name, p in reversed(daemons):
            stop(p)
            if p.poll() is None:
                left.append(f"{name} (pid {p.pid})")
        left += [f"slurmstepd (pid {pid})" for pid in sorted(step_pids() - steps_before)]
        print(f"slurm: stopped {', '.join(name for name, _ in reversed(daemons)) or 'nothing'}", flush=True)
        if left:
            raise CheckFailed(f"still running after the cluster was stopped: {', '.join(left)}")


# ---------------------------------------------------------------------------------------------
# Jobs
# ---------------------------------------------------------------------------------------------

def submit_recipe(block: str, repo: str, env: dict) -> list[str]:
    """Run the recipe in `repo` with bash -e, as pasted; print what it printed; the job ids of
    sbatch's "Submitted batch job" lines."""
    p = subprocess.run(["bash", "-e", "-c", block], cwd=repo, env=env, capture_output=True, text=True, timeout=300)
    sys.stdout.write(p.stdout)
    sys.stdout.flush()
    if p.returncode != 0:
        raise CheckFailed(f"the recipe of {PAGE} exited {p.returncode}:\n{p.stderr}")
    ids = re.findall(r"^Submitted batch job (\d+)$", p.stdout, re.M)
    if not ids:
        raise CheckFailed(f"the recipe of {PAGE} printed no 'Submitted batch job' line")
    return ids


def jobs(ids: list[str], env: dict) -> list[dict]:
    """Every job and array task of these job ids, as `scontrol show job -o` describes them."""
    found = []
    for jid in ids:
        for line in command(["scontrol", "show", "job", "-o", jid], env).splitlines():
            fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
            found.append(fields)
    return found


def drained(env: dict) -> bool:
    """No job of the cluster is pending or running."""
    return not command(["squeue", "-h"], env, check=False).strip()


def by_name(found: list[dict]) -> dict[str, list[dict]]:
    """The jobs grouped by job name, in submission order."""
    groups: dict[str, list[dict]] = {}
    for job in found:
        groups.setdefault(job["JobName"], []).append(job)
    return groups


def states(found: list[dict]) -> str:
    """Each step's name and its tasks' states, on one line."""
    parts = []
    for name, group in by_name(found).items():
        counts: dict[str, int] = {}
        for job in group:
            counts[job["JobState"]] = counts.get(job["JobState"], 0) + 1
        parts.append(f"{name} " + "+".join(f"{n} {s}" for s, n in counts.items()))
    return "; ".join(parts)


def seconds(stamp: str) -> float:
    """Seconds since the epoch of one of scontrol's times (2026-12-01T21:10:28, local time)."""
    return time.mktime(time.strptime(stamp, "%Y-%m-%dT%H:%M:%S"))


def step_times(found: list[dict]) -> str:
    """Each step's wall time, from its first task's start to its last task's end, and the
    longest task's run time."""
    parts = []
    for name, group in by_name(found).items():
        span = max(seconds(j["EndTime"]) for j in group) - min(seconds(j["StartTime"]) for j in group)
        longest = max(sum(int(x) * m for x, m in zip(reversed(j["RunTime"].split(":")), (1, 60, 3600)))
                      for j in group)
        parts.append(f"{name} {span:.0f} s" + (f" ({len(group)} tasks, longest {longest} s)" if len(group) > 1 else ""))
    return ", ".join(parts)


# ---------------------------------------------------------------------------------------------
# Runs and their comparison
# ---------------------------------------------------------------------------------------------

IGNORED = shutil.ignore_patterns(".git", ".venv", ".venv-*", ".cache", "__pycache__", ".pytest_cache", "imported",
                                 "slurm")


def copy_repo(dest: str) -> None:
    """A copy of the repository at `dest`, with no runs, results or caches, and the check's
    config: the config.yaml of the repository with the small dataset, its own run id, and a judge
    model (the test endpoint grades), so the judge's shards make calls too."""
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(ROOT, dest, ignore=IGNORED, symlinks=True)
    for folder in ("runs", "results"):
        for entry in os.listdir(os.path.join(dest, folder)):
            if entry != ".gitkeep":
                path = os.path.join(dest, folder, entry)
                shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path) else os.remove(path)
    with open(os.path.join(ROOT, "config.yaml"), encoding="utf-8") as fh:
        cfg = yaml.safe_load(fh)
    cfg.update({"run_id": RUN_ID, "dataset": DATASET, "judge_model": "fake-judge", "workers": 2,
                "retry_backoff_s": 0.05})
    with open(os.path.join(dest, CONFIG), "w", encoding="utf-8") as fh:
        yaml.safe_dump(cfg, fh, sort_keys=False, allow_unicode=True)


def clear_outputs(repo: str) -> None:
    """The runs, results and answer cache of a copy removed: the next pass starts from nothing."""
    for folder in (os.path.join("runs", RUN_ID), os.path.join("results", RUN_ID), ".cache"):
        shutil.rmtree(os.path.join(repo, folder), ignore_errors=True)


def one_machine(repo: str, env: dict) -> None:
    """The same comparison without shards or a scheduler: run.py for every system, judge.py,
    score.py, one after another, as `make bench` makes them."""
    free, runs, results = f"runs/{RUN_ID}/model-free", f"runs/{RUN_ID}", f"results/{RUN_ID}"
    answered = [f"{runs}/{b}.jsonl" for b in ANSWERED.split()]
    steps = [["run.py", "--config", CONFIG, "--backend", b, "--retrieval-only", "--out", f"{free}/{b}.jsonl"]
             for b in SYSTEMS.split()]
    steps += [["run.py", "--config", CONFIG, "--backend", b, "--out", f"{runs}/{b}.jsonl"] for b in ANSWERED.split()]
    steps += [["judge.py", "--config", CONFIG, "--runs", *answered, "--out", f"{results}/verdicts.jsonl"],
              ["score.py", "--config", CONFIG, "--runs", *[f"{free}/{b}.jsonl" for b in sorted(SYSTEMS.split())],
               "--baseline", BASELINE, "--json", f"{results}/model-free/scores.json"],  # the recipe's glob order
              ["score.py", "--config", CONFIG, "--runs", *answered, "--verdicts", f"{results}/verdicts.jsonl",
               "--baseline", BASELINE, "--json", f"{results}/scores.json"]]
    for step in steps:
        p = subprocess.run([sys.executable, *step], cwd=repo, env=env, capture_output=True, text=True, timeout=600)
        if p.returncode != 0:
            raise CheckFailed(f"one machine: {' '.join(step)} exited {p.returncode}:\n{p.stderr[-3000:]}")


def read_records(path: str) -> list[dict]:
    """The records of a JSONL file."""
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def without(value, fields: tuple):
    """`value` with every key in `fields` removed, at any depth."""
    if isinstance(value, dict):
        return {k: without(v, fields) for k, v in value.items() if k not in fields}
    if isinstance(value, list):
        return [without(v, fields) for v in value]
    return value


def changed(a, b, at: str = "") -> list[str]:
    """Where two JSON values differ, as `path: a != b`, every leaf that does."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b), key=str)
                for d in changed(a.get(k), b.get(k), f"{at}.{k}" if at else str(k))]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in changed(x, y, f"{at}[{i}]")]
    return [] if a == b else [f"{at}: {json.dumps(a)} != {json.dumps(b)}"]


def compared_files() -> list[tuple[str, str]]:
    """(relative path, kind) of every file the comparison writes: run files, verdicts, scores."""
    files = [(f"runs/{RUN_ID}/model-free/{b}.jsonl", "run") for b in SYSTEMS.split()]
    files += [(f"runs/{RUN_ID}/{b}.jsonl", "run") for b in ANSWERED.split()]
    files += [(f"results/{RUN_ID}/verdicts.jsonl", "verdicts"), (f"results/{RUN_ID}/model-free/scores.json", "scores"),
              (f"results/{RUN_ID}/scores.json", "scores")]
    return files


def differences(a: str, b: str) -> tuple[list[str], int]:
    """The files of the comparison in which two copies differ (timing fields aside), and the
    number of records compared."""
    differ, count = [], 0
    for rel, kind in compared_files():
        pa, pb = os.path.join(a, rel), os.path.join(b, rel)
        if not (os.path.exists(pa) and os.path.exists(pb)):
            differ.append(f"{rel} (missing from {a if not os.path.exists(pa) else b})")
            continue
        if kind == "scores":
            with open(pa, encoding="utf-8") as fa, open(pb, encoding="utf-8") as fb:
                where = changed(without(json.load(fa), SCORE_APART), without(json.load(fb), SCORE_APART))
            if where:
                differ.append(f"{rel} ({', '.join(where[:3])}{', ...' if len(where) > 3 else ''})")
            continue
        else:
            ra, rb = read_records(pa), read_records(pb)
            if kind == "verdicts":  # judge.py writes in the order answers came back
                ra, rb = (sorted(r, key=lambda v: json.dumps(without(v, TIMING), sort_keys=True)) for r in (ra, rb))
            same = without(ra, TIMING) == without(rb, TIMING)
            count += len(ra)
        if not same:
            differ.append(rel)
    return differ, count


def identical_line(cluster_repo: str, one_repo: str, label: str) -> str:
    """The one line saying the merged files equal one machine's; CheckFailed naming the files
    that differ."""
    differ, count = differences(cluster_repo, one_repo)
    if differ:
        raise CheckFailed(f"{label}: merged under Slurm and made on one machine, these differ: {', '.join(differ)}")
    runs = len(SYSTEMS.split()) + len(ANSWERED.split())
    return (f"{label}: identical to one machine: {runs} merged run files, the verdicts and both scores.json "
            f"({count} records; timing fields aside)")


# ---------------------------------------------------------------------------------------------
# The passes
# ---------------------------------------------------------------------------------------------

def shard_lines(repo: str, task: int) -> dict[str, list[str]]:
    """The answered pass's shard files of one task: {path: its complete lines}."""
    folder = os.path.join(repo, "runs", RUN_ID, "shards")
    found = {}
    for b in ANSWERED.split():
        path = os.path.join(folder, f"{b}.{task}.jsonl")
        if os.path.exists(path):
            with open(path, encoding="utf-8") as fh:
                found[path] = [line for line in fh if line.endswith("\n")]
    return found


def clean_pass(block: str, repo: str, env: dict) -> list[dict]:
    """The recipe as written; every job must complete. Its jobs."""
    ids = submit_recipe(block, repo, env)
    wait_for("the recipe's jobs", lambda: drained(env), env)
    found = jobs(ids, env)
    failed = [j for j in found if j["JobState"] != "COMPLETED"]
    if failed:
        raise CheckFailed(f"jobs that did not complete: {states(failed)}; logs in {repo}/slurm/")
    return found


def faulted_pass(block: str, repo: str, env: dict, fake: FakeLLM, cases: list[dict]) -> tuple[int, dict]:
    """The recipe with one model-free task cancelled before it starts and one answered task
    cancelled mid-run; prints what Slurm and merge.py made of it. The cut task and its lines."""
    per_shard = {i: [c for c in cases if shard_of(c, SHARDS) == i] for i in range(SHARDS)}
    never = min(per_shard, key=lambda i: len(per_shard[i]))   # any share with a case would do
    cut = max(per_shard, key=lambda i: sum(len(c["questions"]) for c in per_shard[i]))
    command(["scontrol", "update", f"NodeName={NODE}", "State=DRAIN", "Reason=slurm-check"], env)
    ids = submit_recipe(block, repo, env)
    array = {jobs([jid], env)[0]["JobName"]: jid for jid in ids}
    command(["scancel", f"{array['model-free']}_{never}"], env)
    print(f"fault: model-free task {array['model-free']}_{never} cancelled before it started (the node drained "
          f"meanwhile), so it has no record in scontrol")
    fake.delay_all_s = FAULT_DELAY_S
    command(["scontrol", "update", f"NodeName={NODE}", "State=RESUME"], env)
    task = f"{array['answers']}_{cut}"

    def started() -> bool:
        state = jobs([task], env)[0]["JobState"]
        if state not in ("PENDING", "RUNNING"):
            raise CheckFailed(f"answers task {task} ended ({state}) before it could be killed mid-run")
        return state == "RUNNING" and sum(map(len, shard_lines(repo, cut).values())) > 0

    wait_for(f"answers task {task} to write its first answers", started, env)
    command(["scancel", task], env)
    wait_for("the faulted recipe's jobs", lambda: drained(env), env)
    fake.delay_all_s = 0.0
    found = jobs(ids, env)
    print(f"slurm: {states(found)}")
    lines = shard_lines(repo, cut)
    expected = sum(len(c["questions"]) for c in per_shard[cut]) * len(ANSWERED.split())
    written = sum(map(len, lines.values()))
    if not 0 < written < expected:
        raise CheckFailed(f"answers task {task} was to be cut mid-run, but it wrote {written} of {expected} answers")
    print(f"fault: answers task {task} cancelled by scancel mid-run, after {written} of its {expected} answers")
    missing_shard(repo, env, per_shard[never], never)
    return cut, lines


def missing_shard(repo: str, env: dict, cases: list[dict], never: int) -> None:
    """merge.py on the model-free shards with one that never ran must refuse, naming its cases."""
    free = os.path.join("runs", RUN_ID, "model-free")
    shards = sorted(os.path.join(free, "shards", f) for f in os.listdir(os.path.join(repo, free, "shards"))
                    if f.startswith(f"{BASELINE}."))
    p = subprocess.run([sys.executable, "merge.py", "--config", CONFIG, "--out", os.path.join(free, f"{BASELINE}.jsonl"),
                        *shards], cwd=repo, env=env, capture_output=True, text=True, timeout=120)
    named = set(re.findall(r"'([^']+)' \(shard \d+/\d+\)", p.stderr))
    if p.returncode != 2 or named != {c["case_id"] for c in cases}:
        raise CheckFailed(f"merge.py on {len(shards)} of {SHARDS} shards exited {p.returncode}, naming {sorted(named)}, "
                          f"where shard {never}'s cases are {sorted(c['case_id'] for c in cases)}:\n{p.stderr}")
    print(f"fault: merge.py refuses the model-free shards without shard {never} (exit 2): {p.stderr.strip()}")


def resumed(repo: str, cut: int, before: dict) -> str:
    """CheckFailed unless the cut task's shard files still hold, byte for byte, every line they
    held when it was cut (a record answered again would differ in its timing fields; a finished
    file is sorted into dataset order, so the lines may have moved); one line saying how many
    were kept."""
    after = shard_lines(repo, cut)
    for path, lines in before.items():
        lost = set(lines) - set(after.get(path, []))
        if lost:
            raise CheckFailed(f"{path}: the rerun did not keep {len(lost)} of the {len(lines)} records the cut task "
                              f"had written")
    kept = sum(map(len, before.values()))
    return (f"answers task {cut} resumed its shard: its {kept} answers written before the cut were kept, "
            f"{sum(map(len, after.values())) - kept} added")


def main(argv: list[str] | None = None) -> int:
    """Validate the Kubernetes Job, then run the Slurm recipe three times and compare."""
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args(argv)
    missing = [c for c in ("sbatch", "slurmctld", "slurmd", "munged") if shutil.which(c) is None]
    if missing:
        raise InputError(f"{', '.join(missing)}: not installed; `make slurm-check` installs Slurm and munge "
                         f"(Debian: apt-get install slurm-wlm munge)")
    with open(os.path.join(ROOT, PAGE), encoding="utf-8") as fh:
        text = fh.read()
    block = recipe(text)
    print(validate_manifest(manifest(text)), flush=True)
    cases = dataset_index(os.path.join(ROOT, DATASET))
    stale = left_running(WORK)
    if stale:
        raise InputError(f"an earlier check's daemons are still running: {', '.join(stale)}; stop them (kill PID) "
                         f"and run it again")
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    cluster_repo, one_repo = os.path.join(WORK, "cluster"), os.path.join(WORK, "one")
    copy_repo(cluster_repo)
    copy_repo(one_repo)
    bin_dir = os.path.join(WORK, "bin")
    os.makedirs(bin_dir)
    os.symlink(sys.executable, os.path.join(bin_dir, "python"))  # `python` as the recipe writes it
    fake = FakeLLM().start()
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "LLM_BASE_URL": fake.url,
           "LLM_API_KEY": "sk-test-not-a-secret", "CONFIG": CONFIG, "N": str(SHARDS), "SYSTEMS": SYSTEMS,
           "ANSWERED": ANSWERED, "BASELINE": BASELINE}
    for name in ("LLM_SERVER_INFO", "LLM_ENDPOINT_ID", "SLURM_CONF"):
        env.pop(name, None)
    try:
        with cluster(WORK, env) as slurm_env:
            version = command(["sinfo", "--version"], slurm_env).strip()
            print(f"slurm: {version}, node {NODE}: {node_line(command(['slurmd', '-C'], slurm_env), NODE)}", flush=True)
            print(f"\n== 1. the recipe of {PAGE}, {SHARDS} shards of {DATASET}", flush=True)
            started = time.monotonic()
            found = clean_pass(block, cluster_repo, slurm_env)
            load = os.getloadavg()[0]
            print(f"slurm: {states(found)}")
            print(f"timing: {step_times(found)}; the whole recipe {time.monotonic() - started:.0f} s from the first "
                  f"sbatch to the last job's end, load average {load:.2f}")
            one_machine(one_repo, env)
            print(identical_line(cluster_repo, one_repo, "pass 1"), flush=True)
            print("\n== 2. the same from nothing, with faults", flush=True)
            clear_outputs(cluster_repo)
            cut, before = faulted_pass(block, cluster_repo, slurm_env, fake, cases)
            print("\n== 3. the same block again, as the page says to after a failed task", flush=True)
            clean_pass(block, cluster_repo, slurm_env)
            print(resumed(cluster_repo, cut, before))
            print(identical_line(cluster_repo, one_repo, "pass 3, after the faults"), flush=True)
    except CheckFailed as e:
        print(f"slurm-check FAILED: {e}", file=sys.stderr)
        return 1
    finally:
        fake.stop()
    print(f"\nslurm-check passed: the recipe of {PAGE} ran under {version} and its merged results are identical "
          f"to one machine's, with and without faults")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
