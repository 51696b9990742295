"""Write results/<run_id>/manifest-<run_id>.json: what is needed to reproduce a result.

It records the dataset, config and price table hashes, the git commit and whether the tree is dirty, the
Python version and a hash of the installed package list, the answer and judge models, top_k,
budget and tokenizer, and each backend's name, version, internal model and flush assumption.
When LLM_SERVER_INFO names a JSON file (the embedded server writes one), its facts about the
served model (file sha256, server version, served name) are recorded too. No secret is read.

Usage:
  python manifest.py config.yaml
  python manifest.py config.yaml --backends none oracle full_context keyword bm25
  python manifest.py config.yaml --backends none oracle keyword bm25 --sample 4
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import subprocess
import sys
from datetime import datetime, timezone

from answer_prompts import NAMED_PROMPTS
from backends import code_sha256, load_backend
from cli import EXIT_OK, InputError, run_cli
from config import load_config, results_dir
from context import make_counter
from contract import CONTROL_NAMES
from dataset import dataset_counts, load_dataset
from fileio import sha256_data, sha256_file, sha256_text, write_json_atomic
from formats import MANIFEST_FORMAT
from llm import server_info
from prices import load_prices

DEFAULT_BACKENDS = ("none", "oracle", "full_context", "keyword")
ROOT = os.path.dirname(os.path.abspath(__file__))


def code_files() -> list[str]:
    """Every file of code a result depends on: the stage scripts and shared modules at the root
    (serve.py included: it decides what model file is served), the report's style and script,
    and every backend module."""
    root = sorted(f for f in os.listdir(ROOT) if f.endswith((".py", ".css", ".js")))
    backends = sorted(os.path.join("backends", f) for f in os.listdir(os.path.join(ROOT, "backends"))
                      if f.endswith(".py"))
    return root + backends


def git(*args: str) -> str | None:
    """Output of a git command in the repository, or None when git or the repository is absent."""
    try:
        r = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return r.stdout.strip() if r.returncode == 0 else None


def installed_packages_sha256() -> str:
    """sha256 of the sorted `name==version` list of the installed distributions."""
    from importlib import metadata
    names = sorted({f"{d.metadata['Name']}=={d.version}" for d in metadata.distributions()
                    if d.metadata["Name"]}, key=str.lower)
    return hashlib.sha256("\n".join(names).encode()).hexdigest()


def backend_entry(name: str, cfg: dict) -> dict:
    """Name, version and disclosures of one system, read from the backend object itself."""
    if name in CONTROL_NAMES:
        return {"name": name, "id": name, "version": "control", "code_sha256": None, "internal_model": None,
                "flush_note": None, "time_aware": False}
    b = load_backend(name, cfg)
    # id and code_sha256 as run.py records them (backend_id, backend_code_sha256): score.py and
    # report.py refuse run files of systems, or of code, that this manifest does not describe.
    return {"name": b.name, "id": name, "version": b.version, "code_sha256": code_sha256(name, cfg),
            "internal_model": getattr(b, "internal_model", None),
            "flush_note": getattr(b, "flush_note", None),
            # as run.py decides it: the backend uses the date, and the config lets it
            "time_aware": bool(cfg["time_aware_search"] and getattr(b, "uses_time", False))}


def main(argv: list[str] | None = None) -> int:
    """Write the manifest and print it."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("config")
    ap.add_argument("--backends", nargs="+", default=list(DEFAULT_BACKENDS),
                    help=f"systems this run compares (default: {' '.join(DEFAULT_BACKENDS)})")
    ap.add_argument("--sample", type=int, metavar="N",
                    help="the runs answer a stratified sample of N questions of each kind (run.py --sample N)")
    ap.add_argument("--out-dir", help="where to write it (default results/RUN_ID, the config's run_id)")
    a = ap.parse_args(argv)

    if a.sample is not None and a.sample < 1:
        raise InputError("--sample must be at least 1")
    cfg = load_config(a.config)
    cases = load_dataset(cfg["dataset"])
    counter = make_counter(cfg["tokenizer"])
    backends = [backend_entry(n, cfg) for n in a.backends]
    prices = load_prices(cfg["price_table"])
    server = server_info()
    status = git("status", "--porcelain")
    manifest = {
        "format": MANIFEST_FORMAT,
        "run_id": cfg["run_id"],
        "created_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "git_commit": git("rev-parse", "HEAD"),
        "git_dirty": None if status is None else bool(status),
        "code_sha256": {f: sha256_file(os.path.join(ROOT, f)) for f in code_files()},
        "dataset": os.path.relpath(cfg["dataset"], ROOT),
        "dataset_sha256": sha256_data(cfg["dataset"]),
        "dataset_counts": dataset_counts(cases),
        "config": os.path.relpath(cfg["config_path"], ROOT),
        "config_sha256": sha256_file(cfg["config_path"]),
        # The dated price table that prices this run's calls (score.py's cost, run.py's cap).
        "price_table": prices.describe()["file"],
        "price_table_sha256": prices.sha256,
        "price_table_date": prices.date,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages_sha256": installed_packages_sha256(),
        "answer_model": cfg["answer_model"],
        "answer_max_tokens": cfg["answer_max_tokens"],
        "answer_sampling": cfg["answer_sampling"],
        "prompt_sha256": sha256_text(cfg["answer_prompt"]),
        # A benchmark's own prompt chosen by name (answer_prompts.py): its name, the repository,
        # file and commit it was read from, and the sha256 of its upstream text; null for a
        # prompt written out in the config.
        "answer_prompt": (NAMED_PROMPTS[cfg["answer_prompt_name"]].source() if cfg["answer_prompt_name"]
                          else None),
        "judge_model": cfg["judge_model"],
        "judge_sampling": cfg["judge_sampling"],
        "seed": cfg["seed"],
        # run.py --sample: the stratified sample of questions every system of the comparison ran
        # on (None: every question); score.py and report.py refuse runs of another.
        "sample": a.sample,
        "top_k": cfg["top_k"],
        "context_token_budget": cfg["context_token_budget"],
        "tokenizer": counter.name,
        # Whether a hosted or local endpoint served the models; the URL itself is not recorded
        # since it can carry account or host details.
        "endpoint": "local embedded server" if server else ("LLM_BASE_URL" if os.environ.get("LLM_BASE_URL")
                                                            else "OpenAI default"),
        "served_model_info": server,
        "backends": backends,
        "notes": [f"{b['name']}: internal model {b['internal_model']}" for b in backends if b["internal_model"]]
                 + [f"{b['name']}: {b['flush_note']}" for b in backends if b["flush_note"]]
                 + [f"{b['name']}: searches with the question's date as now (time-aware)"
                    for b in backends if b["time_aware"]],
    }
    path = os.path.join(a.out_dir or results_dir(cfg["run_id"]), f"manifest-{cfg['run_id']}.json")
    write_json_atomic(path, manifest)
    print(json.dumps(manifest, ensure_ascii=False, indent=2))
    print(f"wrote {path}", file=sys.stderr)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(run_cli(main))
