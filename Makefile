# The two commands: `make run` (set up everything and serve) and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 5000

.PHONY: run test test-quick test-js lint install translations messages system-deps bench clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	@touch $@

install: $(STAMP) translations

# Compiled catalogs (.mo) are built from the .po files, never committed.
translations: $(STAMP)
	@$(BIN)/pybabel compile --statistics -d vtt/translations

# For translators: collect new messages into every catalog (then fill them: scripts/fill_po.py).
messages: $(STAMP)
	$(BIN)/pybabel extract -F babel.cfg -k _l -o vtt/translations/messages.pot .
	$(BIN)/pybabel update -i vtt/translations/messages.pot -d vtt/translations --width 120 --no-fuzzy-matching

run: install
	$(BIN)/vtt db upgrade
	$(BIN)/vtt demo load
	$(BIN)/python run.py --host $(HOST) --port $(PORT)

system-deps:
	@bash scripts/system-deps.sh

test: install system-deps lint
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# Lint and format check over the whole tree (settings in pyproject.toml); `ruff format .` fixes the format.
lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# The pages' own tests under Node (tests/js; `make test` runs them too, through tests/test_view_cases_js.py).
test-js:
	node --test tests/js/

# The inner loop: no browser, no PostgreSQL, no server process, no fuzz (a few minutes); `make test` runs them all.
test-quick: install
	$(BIN)/python -m pytest -m "not browser and not postgres and not slow" -x $(PYTEST_ARGS)

bench: install
	$(BIN)/python bench/bench_profiles.py
	$(BIN)/python bench/bench_report.py
	$(BIN)/python bench/bench_builder.py
	$(BIN)/python bench/bench_import.py
	$(BIN)/python bench/bench_problems.py
	$(BIN)/python bench/bench_media.py
	$(BIN)/python bench/bench_load.py --jurors 200,2000

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
