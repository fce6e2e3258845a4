# The two commands a newcomer needs: `make run` and `make test`. Both install what they need.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cksum requirements.txt | cut -d' ' -f1)

.PHONY: run test coverage bench browser postgres fleet foreign

$(STAMP): requirements.txt
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	rm -f $(VENV)/.installed-* && touch $(STAMP)

browser: $(STAMP)
	$(PY) -m planner.browser.chromium
	@command -v dot >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && apt-get update -qq && apt-get install -y -qq graphviz >/dev/null; } || echo "note: SVG export needs Graphviz (apt-get install graphviz)"

# The foreign-application gallery's own venv (bench/foreign.py): Django, Datasette, Flask-Admin and
# JupyterLab from tests/foreign/requirements.txt, re-installed only when that file changes; and the
# editors page (bench/foreign_editors.py) built from its npm packages, rebuilt only when they change.
FOREIGN_VENV := var/foreign/venv
FOREIGN_STAMP := $(FOREIGN_VENV)/.installed-$(shell cksum tests/foreign/requirements.txt | cut -d' ' -f1)

$(FOREIGN_STAMP): tests/foreign/requirements.txt
	test -x $(FOREIGN_VENV)/bin/python || python3 -m venv $(FOREIGN_VENV)
	$(FOREIGN_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r tests/foreign/requirements.txt
	rm -f $(FOREIGN_VENV)/.installed-* && touch $(FOREIGN_STAMP)

foreign: $(FOREIGN_STAMP)
	bash tests/foreign/editors/build.sh var/foreign/editors

# The console on http://127.0.0.1:8501 with the demo shop and the offline model.
run: browser
	ANDOR_SHOP=1 $(PY) -m streamlit run app.py --server.address 127.0.0.1 --server.headless true --browser.gatherUsageStats false

# The tests need PostgreSQL's server binaries (one throwaway server per run); install them as root when missing.
postgres:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && apt-get update -qq && apt-get install -y -qq postgresql >/dev/null; } || echo "note: PostgreSQL tests are skipped without its binaries (apt-get install postgresql)"

# Two workers, a test file each at a time, the longest files first (tests/conftest.py orders them; xdist
# keeps that order): the browser tests wait on Chromium and the console, so the other core runs the
# rest meanwhile (each file keeps its own console, shop and PostgreSQL server). mypy checks while the
# workers start; both must pass.
test: browser postgres foreign
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy & types=$$!; \
	$(PY) -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder; tests=$$?; \
	wait $$types && exit $$tests

# The same suite under coverage.py; prints the product code's coverage (settings in pyproject.toml).
coverage: browser postgres foreign
	$(PY) -m coverage erase
	$(PY) -m coverage run -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder
	$(PY) -m coverage combine -q
	$(PY) -m coverage report --sort=cover

bench: browser foreign
	$(PY) -m bench.engine
	$(PY) -m bench.durable --cli
	$(PY) -m bench.secrets
	$(PY) -m bench.browser
	$(PY) -m bench.console

# A fleet on this machine: PostgreSQL in a temporary directory, three workers and the console as their
# client; Ctrl-C stops them all and removes the directory (see docs/fleet.md).
fleet: browser postgres
	$(PY) -m sessions.worker.fleet
