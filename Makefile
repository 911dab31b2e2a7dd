# Each target sets itself up from nothing: a .venv with the package and its dev tools.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck unit bench clean bytecode

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[fast,dev]'
	touch $(STAMP)

# Byte-compile the package: an editable install has no .pyc files, and where
# PYTHONDONTWRITEBYTECODE is set Python would compile every module at every start.
bytecode: $(STAMP)
	$(BIN)/python -m compileall -q src/sitemapkit

demo: $(STAMP) bytecode
	rm -rf demo-out
	$(BIN)/sitemapkit write examples/catalog.jsonl -o demo-out --base-url https://shop.example.com/ --max-urls 200
	@echo
	@echo "demo-out/sitemap.xml:"; head -c 600 demo-out/sitemap.xml; echo

lint: $(STAMP)
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src

typecheck: $(STAMP)
	$(BIN)/mypy src/sitemapkit

# Two test processes (the machine has two cores) pay for tracing the branches; the summary
# shows core file by file, then every package and the total (no threshold yet).
JOBS ?= 2

unit: $(STAMP) bytecode
	$(BIN)/pytest -n $(JOBS) --dist worksteal --cov --cov-report=
	@$(BIN)/python .ci/summary.py

test: lint typecheck unit

# The peer harness (../shared/bench): sitemapkit beside its reference rows, 200k URLs.
bench: $(STAMP) bytecode
	../shared/bench/run_peers.sh --candidate $(BIN)/sitemapkit --quick-candidate --size 200000

clean:
	rm -rf $(VENV) demo-out .pytest_cache .mypy_cache .ruff_cache .coverage
	find src -name __pycache__ -type d -exec rm -rf {} +
