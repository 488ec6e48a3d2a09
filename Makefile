# One-command entry points: `make test` and `make serve` set up everything they need.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
SERVER_STAMP := $(VENV)/.installed-server
STAMP := $(VENV)/.installed
BENCH_STAMP := $(VENV)/.bench-installed

.PHONY: build probes test oracle exporter tmux java clean bench serve pipeline-demo conf

# What the server needs: the core dependencies and the compiled engine.
$(SERVER_STAMP): pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip setuptools wheel "Cython>=3.0.10"
	@echo "== installing sluice's dependencies (the extensions are built next, in place)"
	SLUICE_NO_EXTENSIONS=1 $(PY) -m pip install -e .
	touch $(SERVER_STAMP)

# Everything else: the test tools, Spark (pyspark, pandas, pyarrow), sluice-top's rich
# and the bench charts' matplotlib (their tests run in `make test`).
$(STAMP): $(SERVER_STAMP)
	@echo "== installing the test, Spark, top and charts extras"
	SLUICE_NO_EXTENSIONS=1 $(PY) -m pip install -e '.[test,spark,top,charts]'
	touch $(STAMP)

build: $(SERVER_STAMP)
	@echo "== building the extension modules that changed (all of them the first time: a few minutes)"
	$(PY) setup.py -q build_ext --inplace -j 2

# The test probes (tests/native/*.pyx): the engine's C structures driven from tests,
# built beside the engine by their own setup script so that no wheel ships them.
probes: build $(STAMP)
	$(PY) tests/native/setup.py -q build_ext --inplace

# The differential oracle: Debian's redis-server (built with TLS), and openssl, which
# makes the TLS tests' CA and certificates.
oracle:
	@command -v redis-server >/dev/null 2>&1 || { \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server redis-tools; }
	@command -v openssl >/dev/null 2>&1 || { \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssl; }
	@command -v redis-server >/dev/null 2>&1 && command -v openssl >/dev/null 2>&1

# The Prometheus exporter the monitoring test runs against both servers: Debian's
# prometheus-redis-exporter (oliver006/redis_exporter).
exporter:
	@command -v prometheus-redis-exporter >/dev/null 2>&1 || { \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus-redis-exporter; }
	@command -v prometheus-redis-exporter >/dev/null 2>&1

# sluice-top's terminal test runs it in a real terminal: tmux.
tmux:
	@command -v tmux >/dev/null 2>&1 || { \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux; }
	@command -v tmux >/dev/null 2>&1

# Spark 4 needs Java 17: Debian's headless JRE when no java is on the PATH.
java:
	@command -v java >/dev/null 2>&1 || { \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless; }
	@command -v java >/dev/null 2>&1

# Two test processes (pytest-xdist), each taking whole files: most tests wait on servers,
# workers and Spark, so two share two cores well and the suite takes about half as long.
TEST_WORKERS ?= 2
test: probes oracle java exporter tmux
	$(PY) -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) --dist loadfile tests

# The RESP server on 127.0.0.1:6379 with persistence on (AOF + snapshots in ./data);
# Ctrl-C stops it cleanly (final fsync).
serve: build
	mkdir -p data && $(VENV)/bin/sluice-server sluice.conf --dir ./data --appendonly yes

# sluice.conf, the example configuration, written again from the directive table.
conf: build
	$(PY) -m engine.server.config.example > sluice.conf

# The example pipeline (examples/, not installed): a temporary persistent sluice-server, a
# page-view generator, a Spark Structured Streaming job totalling them per user per
# window into another stream, a consumer group printing the totals, two sluice-worker
# processes alerting on them; ~90 s, then the
# counts of every stage, checked for agreement (non-zero exit if they disagree).
pipeline-demo: build $(STAMP) java
	$(PY) -m examples.demo

# The bench extra: the libraries worker_bench.py compares sluice.worker with; the charts
# extra: matplotlib, which draws the tables as PNGs in bench/results/.
$(BENCH_STAMP): $(STAMP) pyproject.toml
	$(PY) -m pip install -q -e '.[bench,charts]'
	touch $(BENCH_STAMP)

bench: build oracle java $(BENCH_STAMP)
	$(PY) bench/run_all.py

clean:
	rm -rf build $(VENV)
	find engine persist tests/native \( -name "*.so" -o -name "*.c" \) -delete
