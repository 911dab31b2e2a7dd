# Each target sets itself up from nothing: a .venv with the package and its dev tools.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

CHROMIUM := $(VENV)/.chromium

.PHONY: demo test lint typecheck unit bench clean bytecode screenshot fuzz

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[fast,dev]'
	touch $(STAMP)

# The HTML report's tests render it in headless Chromium: Debian's package, installed here
# when missing (CI runs as root). Where apt-get cannot install it, the set-up goes on and
# those tests fail, saying so; the stamp is made only once chromium is there.
$(CHROMIUM): | $(STAMP)
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; } || \
	  echo "make: could not install chromium with apt-get: the report's browser tests will fail" >&2
	@if command -v chromium >/dev/null 2>&1; then touch $@; fi

# Byte-compile the package: an editable install has no .pyc files, and where
# PYTHONDONTWRITEBYTECODE is set Python would compile every module at every start.
bytecode: $(STAMP)
	$(BIN)/python -m compileall -q src/sitemapkit

demo: $(STAMP) bytecode
	rm -rf demo-out
	$(BIN)/sitemapkit write examples/catalog.jsonl -o demo-out --base-url https://shop.example.com/ --max-urls 200
	@echo
	@echo "demo-out/sitemap.xml:"; head -c 600 demo-out/sitemap.xml; echo

# The README's picture: the report of the bundled example (`make demo`, every rule
# selected), as headless Chromium shows it.
screenshot: demo $(CHROMIUM)
	$(BIN)/sitemapkit report demo-out/sitemap.xml --published-at https://shop.example.com/sitemap.xml \
	  --select SM,IMG,VID,NEWS,HRE --title "shop.example.com (examples/catalog.jsonl)" \
	  -o demo-out/report.html || test $$? -eq 1
	chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars \
	  --user-data-dir=demo-out/.chromium --window-size=1280,1720 \
	  --screenshot=docs/report.png file://$(CURDIR)/demo-out/report.html

lint: $(STAMP)
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src

typecheck: $(STAMP)
	$(BIN)/mypy src/sitemapkit

# Two test processes (the machine has two cores) pay for tracing the branches; the summary
# shows core file by file, then every package and the total (no threshold yet).
JOBS ?= 2

unit: $(STAMP) $(CHROMIUM) bytecode
	$(BIN)/pytest -n $(JOBS) --dist worksteal --cov --cov-report=
	@$(BIN)/python .ci/summary.py

test: lint typecheck unit

# The peer harness (../shared/bench): sitemapkit beside its reference rows, 200k URLs.
bench: $(STAMP) bytecode
	../shared/bench/run_peers.sh --candidate $(BIN)/sitemapkit --quick-candidate --size 200000

# The mutation fuzzer of issue #16 §3, full size: 100,000 inputs (seeds 1 and 2, 50,000
# each), each in a child capped in memory and time; minimised failures go to fuzz-out/.
fuzz: $(STAMP) bytecode
	$(BIN)/python bench/fuzz.py --inputs 50000 --seed 1 --seed 2 --jobs $(JOBS) --out fuzz-out

clean:
	rm -rf $(VENV) demo-out .pytest_cache .mypy_cache .ruff_cache .coverage
	find src -name __pycache__ -type d -exec rm -rf {} +
