# Two commands do all set-up on a fresh machine with Python 3.11+:
#   make demo   - creates .venv if missing, installs loo-table, plays a game night
#   make test   - creates .venv if missing, installs test tooling, lints, type-checks, runs the tests
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
# The CPU build of torch for the training extra (the tests train a tiny model end to end).
TORCH_SPEC ?= torch==2.13.0

.PHONY: demo test lint typecheck pytest bench clean help

help:
	@echo "make demo   - play a seeded game night (installs into $(VENV) first)"
	@echo "make test   - lint, type-check and run the whole test suite"
	@echo "make bench  - run the benchmarks under bench/ and print their figures"

$(BIN)/python:
	$(PYTHON) -c 'import sys; sys.exit("loo-table needs Python 3.11+, found " + sys.version.split()[0]) if sys.version_info < (3, 11) else None'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q -e '.[dev,train]' '$(TORCH_SPEC)'
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/loo-table demo $(ARGS)

lint: $(STAMP)
	$(BIN)/ruff check engine vision table web models tests bench

typecheck: $(STAMP)
	$(BIN)/mypy --strict engine vision table web

pytest: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

test: lint typecheck pytest

bench: $(STAMP)
	@for b in bench/*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
