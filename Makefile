# Two commands do all set-up on a fresh machine with Python 3.11+:
#   make demo   - creates .venv if missing, installs loo-table (the runtime only), plays a game night
#   make test   - creates .venv if missing, adds the test and training extras, lints, type-checks,
#                 runs the tests
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# One stamp per install level, named after pyproject.toml's checksum: editing it reinstalls.
SUM    := $(shell cat pyproject.toml | cksum | cut -d' ' -f1)
RUNTIME_STAMP := $(VENV)/.installed-runtime-$(SUM)
DEV_STAMP     := $(VENV)/.installed-dev-$(SUM)
# The CPU build of torch for the training extra (the tests train a tiny model end to end).
TORCH_SPEC ?= torch==2.13.0

.PHONY: demo test lint typecheck pytest bench clean help

help:
	@echo "make demo   - play a seeded game night (installs into $(VENV) first)"
	@echo "make test   - lint, type-check and run the whole test suite"
	@echo "make bench  - run the benchmarks under bench/ and print their figures (PHOTOS=FOLDER: labelled photos;"
	@echo "              DECK=FOLDER: a deck laid out suit by suit; QUICK=1: each with its quickest options)"

$(BIN)/python:
	$(PYTHON) -c 'import sys; sys.exit("loo-table needs Python 3.11+, found " + sys.version.split()[0]) if sys.version_info < (3, 11) else None'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# What `loo-table run` needs (onnxruntime, OpenCV, gpiozero, Flask, waitress): no torch.
$(RUNTIME_STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q -e .
	rm -f $(VENV)/.installed-runtime-*
	touch $(RUNTIME_STAMP)

# The test tooling and the training stack (torch) on top.
$(DEV_STAMP): $(RUNTIME_STAMP)
	$(BIN)/python -m pip install -q -e '.[dev,train]' '$(TORCH_SPEC)'
	rm -f $(VENV)/.installed-dev-*
	touch $(DEV_STAMP)

demo: $(RUNTIME_STAMP)
	$(BIN)/loo-table demo $(ARGS)

lint: $(DEV_STAMP)
	$(BIN)/ruff check engine vision table web models tests bench

typecheck: $(DEV_STAMP)
	$(BIN)/mypy --strict engine vision table web models bench

pytest: $(DEV_STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

test: lint typecheck pytest

# The benchmarks on labelled real photos read PHOTOS (learn_photos.py learns there and reads
# PHOTOS_TEST); by default the few in tests/data, so that every benchmark runs. show_deck.py needs a
# deck laid out suit by suit (DECK=FOLDER with a labels.tsv, such as felt-52) and is skipped without.
# QUICK=1 runs each benchmark with its quickest options (seconds, not minutes): the figures mean
# little, but every script runs to the end; tests/pi/test_bench.py runs it so that none can rot.
# instructions.py needs valgrind and a minute even then, so QUICK=1 leaves it out.
PHOTOS ?= tests/data/photos/bicycle-9a
PHOTOS_TEST ?= $(PHOTOS)
DECK ?=
QUICK ?=

bench: $(DEV_STAMP)
	@for b in bench/*.py; do \
	  case $$b in \
	    bench/_*) continue;; \
	    bench/realphotos.py) args="$(PHOTOS)$(if $(QUICK), --limit 1)";; \
	    bench/on_top.py) args="$(if $(QUICK),--scenes 2 --whole-scenes 2,$(PHOTOS))";; \
	    bench/learn_photos.py) args="$(PHOTOS) $(PHOTOS_TEST)";; \
	    bench/show_deck.py) args="$(DECK)"; \
	      if [ -z "$$args" ]; then echo "== $$b skipped (DECK=FOLDER: a deck's photos with a labels.tsv)"; continue; fi;; \
	    bench/instructions.py) args="$(if $(QUICK),skip)"; \
	      if [ -n "$$args" ]; then echo "== $$b skipped (QUICK=1: valgrind takes a minute)"; continue; fi;; \
	    *) args="$(if $(QUICK),$$(grep -m1 '^# quick:' $$b | cut -c10-))";; \
	  esac; \
	  echo "== $$b $$args"; $(BIN)/python $$b $$args || exit 1; \
	done

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
