# Two commands do all the set-up: `make demo` (the main job, on the embedded model) and `make test`.
# Both create .venv, install the project, and reuse a llama-cpp-python wheel built once in $(WHEELHOUSE).
PYTHON ?= python3
VENV ?= .venv
LLAMA ?= llama-cpp-python==0.3.36
BIN := $(VENV)/bin
DEMO ?= demo-answer-cue
# The demo's own project folder (ignored by git): its runs and ledger never touch the repository's results/.
DEMO_DIR ?= demo
ARCH := $(shell uname -m)

# A portable build: never GGML_NATIVE (it compiles in whatever the build machine has, AMX included, and AMX
# dies with SIGILL where the kernel guards the tile state per thread). x86-64: the x86-64-v3 set, no AVX-512,
# no AMX. arm64: the generic armv8-a baseline. docs/performance.md says why not GGML_CPU_ALL_VARIANTS.
ifeq ($(ARCH),x86_64)
LLAMA_CMAKE ?= -DGGML_NATIVE=OFF -DGGML_SSE42=ON -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DGGML_BACKEND_DL=OFF -DGGML_CPU_ALL_VARIANTS=OFF
else ifeq ($(ARCH),aarch64)
LLAMA_CMAKE ?= -DGGML_NATIVE=OFF -DGGML_CPU_ARM_ARCH=armv8-a -DGGML_BACKEND_DL=OFF -DGGML_CPU_ALL_VARIANTS=OFF
else
LLAMA_CMAKE ?= -DGGML_NATIVE=OFF -DGGML_BACKEND_DL=OFF -DGGML_CPU_ALL_VARIANTS=OFF
endif
# The wheel cache is keyed by version, flags and architecture: a native or older wheel is never picked up.
BUILD_KEY := $(shell printf '%s|%s|%s' '$(LLAMA)' '$(LLAMA_CMAKE)' '$(ARCH)' | sha256sum | cut -c1-16)
# Under $XDG_CACHE_HOME when it is an absolute path (as the statistics' table cache, and pip, read it), else
# ~/.cache; neither set is one line where a recipe needs the folder. The folder may hold spaces: quoted below.
CACHE_HOME := $(shell case "$$XDG_CACHE_HOME" in (/*) printf '%s' "$$XDG_CACHE_HOME";; (*) [ -z "$$HOME" ] || printf '%s' "$$HOME/.cache";; esac)
WHEELHOUSE ?= $(if $(CACHE_HOME),$(CACHE_HOME),$(error neither XDG_CACHE_HOME nor HOME is set, so the llama-cpp-python wheel has no folder: make WHEELHOUSE=DIR))/benchcard-wheels/$(BUILD_KEY)

.PHONY: help demo demo-project demo-run test install install-run wheel chromium lint wheelhouse llama-flags locale-check arm64-check floors
# A bare `make` says what there is to make, instead of making the first file rule (.venv) and stopping there.
.DEFAULT_GOAL := help

help:
	@echo 'make demo        set-up + the main job: the sealed demo card on the embedded model, its verdict and ledger row, in $(DEMO_DIR)/'
	@echo 'make test        set-up + the whole test suite (what CI runs)'
	@echo 'make lint        ruff and mypy'
	@echo 'make floors      the tests again on the oldest release of each dependency pyproject.toml allows (by hand; not in make test)'
	@echo 'make wheel       build the portable llama-cpp-python wheel once (make wheelhouse: where it is kept)'
	@echo 'make arm64-check the arm64 build on this x86-64 machine: cross-built, run under qemu (about 20 min)'
	@echo 'then: . $(VENV)/bin/activate, and benchcard --help (README.md, "Using it")'

# A project under a path its locale cannot write (`/tmp/ä b` under LC_ALL=C) stops here, in one line: setuptools
# writes, and Python's site module reads, the editable install's .pth file (the path to src/) in the locale's
# encoding, so pip would fail with a traceback, and every Python of .venv would die at start. A Python older than
# the project's 3.11 (which has no locale.getencoding) is named first, in one line too.
locale-check:
	@$(PYTHON) -c 'import locale, os, sys; sys.version_info >= (3, 11) or sys.exit(f"make: benchcard needs Python 3.11 or newer, and {sys.executable} is {sys.version.split()[0]}: make PYTHON=python3.11 (or a newer one)"); \
	  here, enc = os.getcwd(), locale.getencoding(); \
	  sys.exit(None if here.encode(enc, "replace").decode(enc) == here else f"make: this project is in {here!a}, which the locale'"'"'s encoding ({enc}) cannot write: run make and .venv/bin/benchcard under a UTF-8 locale (LC_ALL=C.UTF-8), or move the project to a path in ASCII")'

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# llama-cpp-python builds from source (about 8 CPU-minutes): build it once per flag set, keep the wheel.
# --no-cache-dir: pip's own wheel cache is keyed by the source, not by CMAKE_ARGS, and could hand back a native build.
wheel: locale-check $(BIN)/python
	@mkdir -p "$(WHEELHOUSE)"
	@if ls "$(WHEELHOUSE)"/llama_cpp_python-*.whl >/dev/null 2>&1; then echo "llama-cpp-python: cached portable wheel $(WHEELHOUSE)"; else \
	  echo "llama-cpp-python: building a portable wheel once (about 8 CPU-minutes) into $(WHEELHOUSE)"; \
	  printf '%s\n' '$(LLAMA_CMAKE)' > "$(WHEELHOUSE)/BUILD_FLAGS"; \
	  CMAKE_ARGS='$(LLAMA_CMAKE)' FORCE_CMAKE=1 $(BIN)/pip wheel -q --no-cache-dir --no-deps --no-binary llama-cpp-python -w "$(WHEELHOUSE)" "$(LLAMA)"; fi

# The main job needs only the `local` extra; the tests need every extra (server, dev), installed in one pip call
# (one resolve, one editable build) rather than `local` first and the rest after.
# Everything is compiled once here, on every core (pip compiles what it installs on one, and not the editable
# src/): else every process that imports benchcard (each `benchcard` the tests start) compiles what it imports
# again where PYTHONDONTWRITEBYTECODE is set, as here. A file that does not compile is skipped, as pip skips it.
EXTRAS_install-run := local
EXTRAS_install := local,server,dev
install-run install: wheel
	$(BIN)/pip install -q --no-deps --no-index --find-links "$(WHEELHOUSE)" "$(LLAMA)"
	$(BIN)/pip install -q --no-compile --find-links "$(WHEELHOUSE)" -e '.[$(EXTRAS_$@)]'
	$(BIN)/python -m compileall -q -j 0 src "$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')" \
	  || echo "compileall: some files did not compile (skipped, as pip skips them)"

# What the wheel cache is keyed by (tests/run/providers/test_localworker.py checks that flags change the folder).
wheelhouse:
	@printf '%s\n' "$(WHEELHOUSE)"

llama-flags:
	@echo '$(LLAMA_CMAKE)'

# What the tests drive besides Python: Chromium (the pages), node (JavaScript's own regex semantics, the
# reference the rule engine is compared with), objdump (the portable-build check), openssl (the certificate of
# the TLS test server), the locales' sources (a Turkish locale built for the embedded model's test: libgomp reads
# its settings through the locale's case mapping). Installed when missing.
chromium:
	@command -v chromium >/dev/null && command -v node >/dev/null && command -v objdump >/dev/null \
	  && command -v openssl >/dev/null && [ -f /usr/share/i18n/locales/tr_TR ] || { \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium nodejs binutils openssl locales; }

demo: install-run demo-run

# The demo card, its fixtures and its keys (seals included) copied afresh into $(DEMO_DIR)/, a project of its own:
# the run goes to $(DEMO_DIR)/results/, the ledger row to $(DEMO_DIR)/results/ledger.jsonl (kept between demos).
# A file is copied only when it is missing or its bytes differ, so a second `make demo` rewrites nothing it holds.
demo-project:
	@mkdir -p "$(DEMO_DIR)/cards" "$(DEMO_DIR)/fixtures/$(DEMO)" "$(DEMO_DIR)/keys/$(DEMO)"
	@for f in cards/$(DEMO).yaml fixtures/$(DEMO)/* keys/$(DEMO)/*; do \
	  [ ! -f "$$f" ] || cmp -s "$$f" "$(DEMO_DIR)/$$f" || cp "$$f" "$(DEMO_DIR)/$$f" || exit 1; done

demo-run: locale-check demo-project
	$(BIN)/benchcard -C $(DEMO_DIR) check $(DEMO)
	$(BIN)/benchcard -C $(DEMO_DIR) run $(DEMO) --provider local
	$(BIN)/benchcard -C $(DEMO_DIR) verdict $(DEMO)
	$(BIN)/benchcard -C $(DEMO_DIR) ledger

# --dist worksteal: an idle worker takes tests queued on the busy one, so no long file holds the run at its end
# (module-scoped fixtures are set up at most once per worker); docs/performance.md has the figures.
test: install chromium
	$(BIN)/pytest -q -n auto --dist worksteal

# The arm64 portable build checked on an x86-64 machine (no arm64 one needed; not part of `make test`): llama.cpp
# cross-built with `make llama-flags ARCH=aarch64`, the model run under qemu as a Cortex-A53 and as `-cpu max`,
# and libggml-cpu read through the arm64 ceiling. The cross compilers and qemu are installed when missing.
ARM64_WORK ?= /tmp/benchcard-arm64
arm64-check: install
	@command -v aarch64-linux-gnu-g++ >/dev/null && command -v aarch64-linux-gnu-objdump >/dev/null \
	  && command -v qemu-aarch64 >/dev/null && command -v cmake >/dev/null && command -v ninja >/dev/null || { \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc-aarch64-linux-gnu \
	  g++-aarch64-linux-gnu binutils-aarch64-linux-gnu qemu-user cmake ninja-build; }
	$(BIN)/python benchmarks/arm64_build.py --work "$(ARM64_WORK)"
	BENCHCARD_ARM64_BUILD="$(ARM64_WORK)" $(BIN)/pytest -q -n 0 tests/run/providers/arm64_build_check.py

lint: install
	$(BIN)/ruff check .
	$(BIN)/mypy

# The lower bounds (README, "The lower bounds, checked"): each dependency installed at the floor pyproject.toml
# states, read there with >= taken as ==, in a venv of its own, and the tests of what they serve run against it. By
# hand, like the benchmarks: never in `make test`. inspect-ai (the tests' compare logs) takes no rich before 13.3.3,
# so it and tests/compare are left out; pyarrow<26 and pyparsing<3.3 are what a numpy 1.26 and a matplotlib 3.8 of
# their time had (pyarrow 26 imports under numpy 2 only; pyparsing 3.3 warns at matplotlib 3.8's import).
FLOORS_VENV ?= .venv-floors
FLOORS_TESTS ?= tests/_cli tests/_util tests/card tests/publish tests/records tests/run tests/scoring tests/stats tests/testing tests/verdict
FLOORS_PINS = $(shell $(PYTHON) -c 'import shlex, tomllib; p = tomllib.load(open("pyproject.toml", "rb"))["project"]; print(*map(shlex.quote, [d.replace(">=", "==") for d in p["dependencies"]] + [d for d in p["optional-dependencies"]["dev"] if d.startswith(("pytest", "playwright", "zstandard"))]))')
floors: wheel chromium
	rm -rf $(FLOORS_VENV)
	$(PYTHON) -m venv $(FLOORS_VENV)
	$(FLOORS_VENV)/bin/pip install -q --upgrade pip
	$(FLOORS_VENV)/bin/pip install -q --no-deps --no-index --find-links "$(WHEELHOUSE)" "$(LLAMA)"
	$(FLOORS_VENV)/bin/pip install -q --find-links "$(WHEELHOUSE)" -e '.[local,parquet]' 'pyarrow<26' 'pyparsing<3.3' $(FLOORS_PINS)
	$(FLOORS_VENV)/bin/pytest -q -n auto --dist worksteal -m 'not local_model' $(FLOORS_TESTS)
