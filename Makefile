# tfyarn developer entry points. Needs Java 17+, Maven and Python 3.11+ on PATH.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
TFYARN := $(PY) -m tfyarn

.PHONY: demo test unit integration up down venv clean

# Everything from nothing to a SUCCEEDED YARN application on the local cluster.
demo: up
	$(TFYARN) submit --name tfyarn-demo --num-workers 2 --worker-memory 512m --wait \
		--file examples/hello.py -- python hello.py

# The whole test suite (unit + integration on the real local cluster). CI runs this.
test: up
	$(PY) -m pytest tests -ra

unit: $(VENV)/.installed
	$(PY) -m pytest tests/unit -ra

up: $(VENV)/.installed
	$(TFYARN) cluster up

down:
	@if [ -x $(PY) ]; then $(TFYARN) cluster down; fi

venv: $(VENV)/.installed

$(VENV)/.installed: setup.cfg pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade --quiet pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

clean: down
	rm -rf $(VENV) build *.egg-info
