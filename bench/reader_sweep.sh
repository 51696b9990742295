#!/usr/bin/env bash
# The reader sweep of bench/README.md ("Two readers, one comparison"): the same comparison on the
# dev split answered by the two embedded readers, SmolLM2-135M and Qwen2.5-Coder-0.5B, each under
# its own run id with the rest of the contract equal, then sweep.py over their scores.json. The
# model-free pass and the response cache are shared, so a rerun answers nothing again.
# Usage: bash bench/reader_sweep.sh        (from the repository root; SYSTEMS to change the set)
set -euo pipefail
cd "$(dirname "$0")/.."
SYSTEMS=${SYSTEMS:-"none oracle keyword bm25"}
CFG=.cache/sweep-dev.yaml
mkdir -p .cache
# config.yaml with the dev split and a run id of its own; relative paths kept pointing where they did.
.venv/bin/python - "$CFG" <<'PY'
import os, sys, yaml
c = yaml.safe_load(open("config.yaml"))
c["dataset"], c["run_id"] = "data/dev-v6.jsonl", "sweep-dev"
c.update({k: os.path.relpath(c[k], ".cache") for k in ("dataset", "cache_dir") if not os.path.isabs(c[k])})
yaml.safe_dump(c, open(sys.argv[1], "w"), sort_keys=False, allow_unicode=True)
PY
make bench CONFIG="$CFG" SAMPLE=all SYSTEMS="$SYSTEMS"
make bench CONFIG="$CFG" SAMPLE=all SYSTEMS="$SYSTEMS" MODEL=qwen2.5-coder-0.5b
.venv/bin/python sweep.py --scores results/sweep-dev/scores.json results/sweep-dev-qwen2.5-coder-0.5b/scores.json \
    --json results/sweep-dev/sweep.json
