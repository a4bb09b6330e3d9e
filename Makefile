# Two commands set everything up on a fresh machine: `make site`, then `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The committed demo site is built with a fixed clock, so it is byte-identical on every machine.
DEMO_NOW := 2026-06-01T00:00:00Z
DEMO_CACHE := .cache/demo

.PHONY: install site test lint fixtures bench screenshots clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

# Exit code 1 means "built, with sessions left out of the totals": the demo corpus has one
# session of an unknown model on purpose, so that is success here.
site: $(STAMP)
	@command -v dot >/dev/null 2>&1 || echo "note: Graphviz's dot is not installed: the agent trees are drawn as nested lists, so site/ differs from the committed one (sudo apt-get install graphviz)" >&2
	@$(BIN)/agenthropic build --corpus fixtures/corpus --out site --cache $(DEMO_CACHE) --now $(DEMO_NOW) -q; \
	  status=$$?; if [ $$status -gt 1 ]; then exit $$status; fi
	@echo "$(CURDIR)/site/index.html"

# PNGs of the demo site for README.md and docs/usage.md, from the system's headless Chromium.
screenshots: site
	$(BIN)/python docs/screenshots.py --site site --out docs/screenshots

# Tests run on every core (pytest-xdist): most of them start builds, browsers or servers; an idle
# worker takes tests queued for another (worksteal), so one slow test at the end does not hold the run.
# A run leaves some 43,000 files in 18,000 folders and 400 SQLite caches (about 900 MB): on a
# tmpfs they cost half the system time of a journaled disk (docs/benchmarks.md "Test suite"), so a
# run keeps its temporary files in /dev/shm when that has 2 GB free, else where pytest keeps them.
# A passing run removes them; a failing one leaves them and says where.
TEST_TMP = /dev/shm/agenthropic-tests-$(shell id -u)-$(shell printf %s '$(CURDIR)' | cksum | cut -d ' ' -f 1)
PYTEST := $(BIN)/python -m pytest -n auto --dist worksteal
test: $(STAMP)
	@free=$$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 { print $$4 }'); \
	if [ -w /dev/shm ] && [ "$${free:-0}" -ge 2097152 ]; then \
	  echo "$(PYTEST) --basetemp=$(TEST_TMP)"; \
	  $(PYTEST) --basetemp=$(TEST_TMP) && rm -rf $(TEST_TMP) \
	    || { status=$$?; echo "the tests' files are kept in $(TEST_TMP)"; exit $$status; }; \
	else echo "$(PYTEST)"; $(PYTEST); fi

# ruff over the repository and mypy over the package, with the settings in pyproject.toml
# (tests/test_code_quality.py runs the same two, so `make test` keeps them clean too).
lint: $(STAMP)
	$(BIN)/python -m ruff check .
	$(BIN)/python -m mypy

# Regenerate the demo corpus and its ground truth (then run `make site` to refresh site/).
fixtures: $(STAMP)
	$(BIN)/python -m fixtures.generate

# agenthropic against claude-code-log on a generated 500-session corpus (docs/benchmarks.md);
# claude-code-log is installed into bench/.work/ccl-venv, never into the project's venv.
bench: $(STAMP)
	$(BIN)/python bench/compare_claude_code_log.py

clean:
	rm -rf $(VENV) .cache .pytest_cache .hypothesis build dist
