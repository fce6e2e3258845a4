# The two commands a newcomer needs: `make run` and `make test`. Both install what they need.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cksum requirements.txt | cut -d' ' -f1)

.PHONY: run test bench browser

$(STAMP): requirements.txt
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	rm -f $(VENV)/.installed-* && touch $(STAMP)

browser: $(STAMP)
	$(PY) -m planner.chromium

run: browser
	$(PY) -m sessions demo --db var/sessions.db

test: browser
	$(PY) -m pytest -q

bench: browser
	$(PY) -m bench.engine
	$(PY) -m bench.browser
