#!/usr/bin/env python3
"""Runs every benchmark script in turn (`make bench`).

    python bench/run_all.py            # full runs (each script ~10 s .. 3 min)
    python bench/run_all.py --quick    # ~20 s per script
    python bench/run_all.py claim      # only scripts whose name contains "claim"

Each script runs in its own Python process (with this interpreter) and prints its
own tables; the exit status is non-zero only if a script crashed (missed targets are
reported as MISS in the tables, not as failures). The tables are also kept in
bench/results/tables.jsonl and drawn as PNG charts beside it (bench/charts.py; needs
matplotlib, the charts extra).
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
RESULTS = os.path.join(HERE, "results")
SCRIPTS = ["claim_bench.py", "memory_bench.py", "throughput_bench.py", "server_bench.py",
           "redis_benchmark_bench.py", "script_bench.py", "persistence_bench.py", "snapshot_bench.py", "spark_bench.py",
           "worker_bench.py", "acl_bench.py"]


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    passthrough = [a for a in argv if a.startswith("-")]
    only = [a for a in argv if not a.startswith("-")]
    if "-h" in passthrough or "--help" in passthrough:
        print(__doc__)
        return 0
    os.makedirs(RESULTS, exist_ok=True)
    tables = os.path.join(RESULTS, "tables.jsonl")
    open(tables, "w").close()
    env = dict(os.environ, SLUICE_BENCH_TABLES=tables)   # PYTHONPATH passes through (see bench/_common.py)
    env.setdefault("PYTHONUNBUFFERED", "1")
    failed = []
    for script in SCRIPTS:
        if only and not any(o in script for o in only):
            continue
        cmd = [sys.executable, os.path.join("bench", script), *passthrough]
        print("=" * 100)
        print("$ " + " ".join(cmd))
        print("=" * 100, flush=True)
        t0 = time.monotonic()
        rc = subprocess.call(cmd, cwd=REPO, env=env)
        print("[%s: exit %d, %.1f s]\n" % (script, rc, time.monotonic() - t0), flush=True)
        if rc != 0:
            failed.append(script)
    draw_charts(tables)
    if failed:
        print("FAILED: " + ", ".join(failed))
        return 1
    return 0


def draw_charts(tables: str) -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("no charts: matplotlib is not installed (pip install -e '.[charts]')")
        return
    from charts import draw_all         # beside this script, on sys.path as its folder
    for path in draw_all(Path(tables), Path(RESULTS)):
        print("chart: " + os.path.relpath(path, REPO))


if __name__ == "__main__":
    sys.exit(main())
