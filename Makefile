# tfyarn developer entry points. Needs Java 17+, Maven and Python 3.11+ on PATH.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(CURDIR)/$(VENV)/bin/python
TFYARN := $(PY) -m tfyarn

.PHONY: demo test test-kerberos unit integration lint bench up down venv browser tmux postgres krb5 docker docker-down image-base image-tf image-torch images devbox wheel-check clean

# Everything from nothing to a trained model fetched back from HDFS: the README's quick tour
# (examples/tour.sh): the local cluster up, a data set to HDFS, TF2 ParameterServerStrategy (1 chief +
# 2 workers + 1 ps) staging it in and publishing its model to HDFS, `tfyarn fetch`, the model scored.
demo: $(VENV)/.installed
	bash examples/tour.sh

# The whole test suite (lint and types, unit + integration on the real local cluster). CI runs this.
# The suite's cluster has two nodes (127.0.0.1 and 127.0.0.2): tasks cross nodes as on a real cluster.
test integration: NODES = 2
# Then the Kerberos suite (tests/kerberos) on a Kerberized cluster of its own: same ports, so after the
# plain cluster is stopped.
# --durations: the 30 slowest tests, so a run that grows shows where its time went.
# Two phases: the tests that only wait on YARN side by side (pytest-xdist, a module per worker), then
# those that need the cluster to themselves (exclusive, disruptive, lifecycle) one at a time.
PARALLEL ?= 2
# Each phase runs even when an earlier one failed (so one run shows every failure); make fails if any did
# (pytest's 5, no test collected, included).
test: lint wheel-check up browser docker tmux postgres
	@rc=0; \
	$(PY) -m pytest tests -ra --durations=30 -n $(PARALLEL) --dist loadfile \
	  -m "not exclusive and not disruptive and not lifecycle" || rc=$$?; \
	$(PY) -m pytest tests/integration -ra --durations=30 -m "exclusive or disruptive or lifecycle" || rc=$$?; \
	$(MAKE) test-kerberos || rc=$$?; \
	if [ $$rc -ne 0 ]; then echo "make test: a phase failed (last failing exit code $$rc); see above" >&2; fi; \
	exit $$rc

# tests/kerberos only: `cluster up --kerberos --nodes 2` in $$TFYARN_KERBEROS_CLUSTER_DIR (default
# ~/.tfyarn/cluster-kerberos), brought up and stopped by the test session; the plain cluster is stopped first.
test-kerberos: $(VENV)/.installed browser krb5
	$(TFYARN) cluster down
	TFYARN_TEST_KERBEROS=1 $(PY) -m pytest tests/kerberos -ra

# ruff (lint and format check) and mypy over tfyarn/ and appmaster/ (settings in pyproject.toml).
# `ruff format tfyarn appmaster` applies the format.
lint: $(VENV)/.installed
	$(PY) -m ruff check tfyarn appmaster
	$(PY) -m ruff format --check tfyarn appmaster
	$(PY) -m mypy

unit: $(VENV)/.installed
	$(PY) -m pytest tests/unit -ra

integration: up browser docker tmux postgres
	$(PY) -m pytest tests/integration -ra

# Benchmarks (not tests): each prints its table and a JSON line (kept in build/bench/<name>.out);
# then benchmarks/report.py writes the README's performance table from those lines. The cluster
# runs 4 nodes for them (scale.py's 48 tasks need 49 vcores). About 35 minutes.
BENCH = cli am_scale startup scale ddp_overhead ps_throughput staging driver
bench: $(VENV)/.installed
	$(TFYARN) cluster up --nodes 4
	@mkdir -p build/bench && rm -f build/bench/*.out
	@for b in $(BENCH); do \
	  echo "== benchmarks/$$b.py (progress on stderr; its table below when it ends)"; \
	  $(PY) benchmarks/$$b.py > build/bench/$$b.out; rc=$$?; cat build/bench/$$b.out; \
	  [ $$rc -eq 0 ] || { echo "benchmarks/$$b.py failed (exit $$rc)"; exit $$rc; }; \
	done
	$(PY) benchmarks/report.py --write README.md

# NODES=N runs N NodeManagers (node i on 127.0.0.i); fewer than run now stops the extra ones.
# `make test` and `make integration` use 2; `make demo` and a plain `make up` keep 1.
NODES ?= 1
up: $(VENV)/.installed
	$(TFYARN) cluster up --nodes $(NODES)

down:
	@if [ -x $(PY) ]; then $(TFYARN) cluster down; fi

venv: $(VENV)/.installed

# The status page is tested in a real headless browser: Debian's chromium and its driver.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
browser:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || { \
	  echo 'Installing Debian chromium + chromium-driver for the browser tests...'; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq chromium chromium-driver >/dev/null; }

# tests/integration/test_exec.py types into `tfyarn exec -it`'s shell through tmux.
tmux:
	@command -v tmux >/dev/null || { echo 'Installing Debian tmux for the exec test...'; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq tmux >/dev/null; }

# tests/integration/test_sweep.py keeps a sweep's Optuna study in a PostgreSQL server it starts.
postgres:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { echo 'Installing Debian postgresql for the sweep test...'; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq postgresql >/dev/null; }

# `cluster up --kerberos` runs MIT Kerberos: Debian's KDC, its admin tools and kinit/klist.
krb5:
	@command -v kinit >/dev/null && { command -v krb5kdc || test -x /usr/sbin/krb5kdc; } >/dev/null || { \
	  echo 'Installing Debian krb5-kdc, krb5-admin-server and krb5-user for the Kerberos tests...'; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq \
	    krb5-kdc krb5-admin-server krb5-user >/dev/null; }

# The Docker tests (tests/integration/test_docker.py) need a Docker engine: Debian's docker.io, and
# busybox-static for their small image. dockerd is started here when none answers (vfs storage; no
# iptables or bridge: tasks use the host network) and records its pid in $(DOCKERD_PID);
# `make docker-down` stops a dockerd started so, and no other.
DOCKERD_PID ?= $(HOME)/.tfyarn/dockerd.pid
docker:
	@command -v dockerd >/dev/null && test -x /bin/busybox || { \
	  echo 'Installing Debian docker.io and busybox-static for the Docker tests...'; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq \
	    docker.io busybox-static >/dev/null; }
	@docker info >/dev/null 2>&1 || { \
	  echo 'Starting dockerd (vfs storage, no iptables, no bridge)...'; mkdir -p $(dir $(DOCKERD_PID)); \
	  $(SUDO) setsid dockerd --storage-driver=vfs --iptables=false --bridge=none --pidfile $(DOCKERD_PID) \
	    >$(dir $(DOCKERD_PID))dockerd.log 2>&1 < /dev/null & \
	  for i in $$(seq 60); do docker info >/dev/null 2>&1 && exit 0; sleep 1; done; \
	  echo 'dockerd did not answer within 60 s; see $(dir $(DOCKERD_PID))dockerd.log' >&2; exit 1; }

# Task images (docker/README.md), each built once per machine and printed: tfyarn-base (Debian's Python,
# from debootstrap), tfyarn-tf (tensorflow-cpu from PyPI) and tfyarn-torch (Debian's CPU torch) on it.
image-base image-torch: docker
	docker/build-image.sh $(@:image-%=%)

image-tf: docker $(VENV)/.installed
	PYTHON=$(PY) docker/build-image.sh tf

images: image-base image-tf image-torch

# The dev box (docker/Dockerfile): Java, Maven and the venv on tfyarn-base; `docker run --rm -it
# --network host tfyarn-dev make demo`. Several GB (the venv has TensorFlow and PyTorch); not built by CI.
devbox: image-base
	rm -rf .devbox-ca && mkdir .devbox-ca && cp -L /usr/local/share/ca-certificates/*.crt .devbox-ca/ 2>/dev/null || true
	docker build --network host -f docker/Dockerfile -t tfyarn-dev .
	rm -rf .devbox-ca

docker-down:
	@if [ -f $(DOCKERD_PID) ]; then echo 'Stopping the dockerd that `make docker` started...'; \
	  $(SUDO) kill $$(cat $(DOCKERD_PID)) 2>/dev/null || true; \
	  for i in $$(seq 30); do [ -f $(DOCKERD_PID) ] || break; sleep 1; done; fi

$(VENV)/.installed: setup.cfg pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade --quiet pip
	@echo 'Installing tfyarn with TensorFlow (CPU) and PyTorch: large on a cold pip cache...'
	$(PY) -m pip install --progress-bar off -e '.[test,tensorflow,pytorch]' -c constraints.txt
	touch $@

# What a pip user gets: the wheel, built and installed alone in a fresh venv (base dependencies only,
# at constraints.txt's versions), must run `tfyarn --help`, ship conf's job.yaml, and plan each example
# with --dry-run (no cluster). Part of `make test`; about a minute on a warm pip cache.
WHEEL_DIR := build/wheel-check
wheel-check: $(VENV)/.installed
	rm -rf $(WHEEL_DIR) && mkdir -p $(WHEEL_DIR)
	$(PY) -m pip wheel --quiet --no-deps -w $(WHEEL_DIR)/dist .
	$(PYTHON) -m venv $(WHEEL_DIR)/venv
	$(WHEEL_DIR)/venv/bin/pip install --quiet $(WHEEL_DIR)/dist/tfyarn-*.whl -c constraints.txt
	cd $(WHEEL_DIR) && venv/bin/tfyarn --help >/dev/null
	cd $(WHEEL_DIR) && venv/bin/python -c 'import importlib.resources as r; \
	  assert "docker_image:" in r.files("tfyarn").joinpath("job.yaml").read_text(), "job.yaml not shipped"; \
	  assert "docker_image" in r.files("tfyarn").joinpath("job.schema.json").read_text(), "no schema"'
	for ex in $(wildcard examples/*/*/submit.sh); do \
	  TFYARN=$(CURDIR)/$(WHEEL_DIR)/venv/bin/tfyarn TFYARN_SUBMIT_FLAGS='--dry-run --python-env local' \
	    HADOOP_CONF_DIR=/nonexistent bash $$ex | grep -q '^# tfyarn job' || \
	    { echo "wheel-check: the installed wheel could not plan $$ex" >&2; exit 1; }; done
	@echo 'wheel-check: the wheel installs alone and plans every example.'

clean: down
	rm -rf $(VENV) build *.egg-info
