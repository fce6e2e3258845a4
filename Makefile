# The two commands a newcomer needs: `make run` and `make test`. Both install what they need.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cksum requirements.txt | cut -d' ' -f1)

.PHONY: run test bench

$(STAMP): requirements.txt
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	rm -f $(VENV)/.installed-* && touch $(STAMP)

run: $(STAMP)
	$(PY) -m sessions run --db var/sessions.db --task "Find a vegan chocolate brownie recipe with 4+ rating" --model script:tests/scripts/brownie.json
	$(PY) -m sessions show $$($(PY) -m sessions list --db var/sessions.db | $(PY) -c "import json,sys; print(json.load(sys.stdin)['sessions'][0]['session_id'])") --db var/sessions.db

test: $(STAMP)
	$(PY) -m pytest -q

bench: $(STAMP)
	$(PY) -m bench.engine
