# The two commands a newcomer runs: `make demo` and `make test`. Both build .venv themselves.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev

.PHONY: demo test test-fast lint typecheck pytest fuzz golden bench clean system-deps

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e .
	touch $@

$(DEV_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP) $@

# Fonts for Greek/Cyrillic/Arabic/Devanagari/CJK/emoji and the rendering libraries WeasyPrint needs.
# Installed only when missing and only when we may (root with apt-get); otherwise a hint is printed.
system-deps:
	@bash .ci/system-deps fonts

demo: $(STAMP) system-deps
	$(BIN)/citerender demo --out out

test: $(DEV_STAMP) system-deps
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python -m pytest -q -n 2 --dist loadfile

# The quick loop: every test not marked slow, libreoffice or browser (under 90 s on 2 cores: the limit the project keeps).
test-fast: $(DEV_STAMP) system-deps
	$(BIN)/python -m pytest -q -n 2 --dist loadfile -m "not slow and not libreoffice and not browser"

fuzz: $(DEV_STAMP)
	HYPOTHESIS_PROFILE=fuzz $(BIN)/python -m pytest -q tests -k fuzz -p no:randomly

golden: $(DEV_STAMP)
	$(BIN)/python -m pytest -q tests/golden/test_golden.py --update-golden

# Every benchmark in turn (several minutes; run on a quiet machine). Needs pandoc for the A/B peers
# and redis-server for the workers benchmark.
bench: $(DEV_STAMP)
	$(BIN)/python bench/citations_bench.py
	$(BIN)/python bench/render_bench.py
	$(BIN)/python bench/cite_run_bench.py
	$(BIN)/python bench/typst_bench.py
	$(BIN)/python bench/startup_bench.py
	$(BIN)/python bench/typst_bounds_bench.py
	$(BIN)/python bench/docx_bench.py
	$(BIN)/python bench/pptx_bench.py
	$(BIN)/python bench/cmap_bench.py
	$(BIN)/python bench/service_bench.py
	$(BIN)/python bench/refusal_bench.py
	$(BIN)/python bench/workers_bench.py
	$(BIN)/python bench/registry_bench.py
	$(BIN)/python bench/styles_bench.py
	$(BIN)/python bench/bidi_bench.py
	$(BIN)/python bench/math_bench.py
	$(BIN)/python bench/highlight_bench.py

clean:
	rm -rf $(VENV) out .pytest_cache .mypy_cache .ruff_cache
