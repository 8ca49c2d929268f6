# Two commands do all the set-up: `make demo` (the main job, on the embedded model) and `make test`.
# Both create .venv, install the project, and reuse a llama-cpp-python wheel built once in $(WHEELHOUSE).
PYTHON ?= python3
VENV ?= .venv
WHEELHOUSE ?= $(HOME)/.cache/benchcard-wheels
LLAMA ?= llama-cpp-python==0.3.36
BIN := $(VENV)/bin
DEMO ?= demo-answer-cue

.PHONY: demo test install wheel chromium lint

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# llama-cpp-python builds from source (about 15 CPU-minutes): build it once, keep the wheel.
wheel: $(BIN)/python
	mkdir -p $(WHEELHOUSE)
	$(BIN)/pip wheel -q --no-deps --find-links $(WHEELHOUSE) -w $(WHEELHOUSE) "$(LLAMA)"

install: wheel
	$(BIN)/pip install -q --find-links $(WHEELHOUSE) -e '.[local,server,dev]'

chromium:
	@command -v chromium >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }

demo: install
	$(BIN)/benchcard check $(DEMO)
	$(BIN)/benchcard run $(DEMO) --provider local
	$(BIN)/benchcard verdict $(DEMO)
	$(BIN)/benchcard ledger

test: install chromium
	$(BIN)/pytest -q

lint: install
	$(BIN)/ruff check .
	$(BIN)/mypy
