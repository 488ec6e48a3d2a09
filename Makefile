# One-command entry points: `make test` and `make serve` set up everything they need.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
BENCH_STAMP := $(VENV)/.bench-installed

.PHONY: build probes test oracle java clean bench serve pipeline-demo

$(STAMP): pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip setuptools wheel "Cython>=3.0.10"
	$(PY) -m pip install -q -e '.[test,spark]'
	touch $(STAMP)

build: $(STAMP)
	$(PY) setup.py -q build_ext --inplace -j 2

# The test probes (tests/native/*.pyx): the engine's C structures driven from tests,
# built beside the engine by their own setup script so that no wheel ships them.
probes: build
	$(PY) tests/native/setup.py -q build_ext --inplace

# The differential oracle: Debian's redis-server.
oracle:
	@command -v redis-server >/dev/null 2>&1 || { \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server redis-tools; }
	@command -v redis-server >/dev/null 2>&1

# Spark 4 needs Java 17: Debian's headless JRE when no java is on the PATH.
java:
	@command -v java >/dev/null 2>&1 || { \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless; }
	@command -v java >/dev/null 2>&1

test: probes oracle java
	$(PY) -m pytest -q -p no:cacheprovider tests

# The RESP server on 127.0.0.1:6379 with persistence on (AOF + snapshots in ./data);
# Ctrl-C stops it cleanly (final fsync).
serve: build
	mkdir -p data && $(VENV)/bin/sluice-server --dir ./data --port 6379 --bind 127.0.0.1 --appendonly yes

# The example pipeline (pipeline/examples/): a temporary persistent sluice-server, a
# page-view generator, a Spark Structured Streaming job totalling them per user per
# window into another stream, a consumer group printing the totals, two sluice-worker
# processes alerting on them; ~90 s, then the
# counts of every stage, checked for agreement (non-zero exit if they disagree).
pipeline-demo: build java
	$(PY) -m pipeline.examples.demo

# The bench extra: the libraries worker_bench.py compares pipeline.worker with.
$(BENCH_STAMP): $(STAMP) pyproject.toml
	$(PY) -m pip install -q -e '.[bench]'
	touch $(BENCH_STAMP)

bench: build oracle java $(BENCH_STAMP)
	$(PY) bench/run_all.py

clean:
	rm -rf build $(VENV)
	find engine persist tests/native \( -name "*.so" -o -name "*.c" \) -delete
