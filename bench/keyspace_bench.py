#!/usr/bin/env python3
"""String keyspace commands: sluice-server beside redis-server in one run.

`redis-benchmark -c 50 -n N -r 1000000 -t set,get,incr,mset`, unpipelined and with
`-P 16`, alternating between the two servers round after round (FLUSHALL before each
run). Each row gives both rates, the median of the per-round ratios sluice / redis,
and each server's CPU seconds per request (utime + stime from /proc/PID/stat, less
noisy than the rate on a shared machine). Target: >= 1.0x on every row.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as C  # noqa: E402  (also makes the checkout's `engine` importable)

TESTS = ("set", "get", "incr", "mset")


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(port: int, pid: int, test: str, n: int, pipeline: int) -> tuple[float, float]:
    """(requests/s, CPU s per request) of one redis-benchmark test."""
    cmd = [C.REDIS_BENCHMARK, "-p", str(port), "-c", str(C.BENCH_CLIENTS), "-n", str(n),
           "-r", "1000000", "-P", str(pipeline), "-t", test, "--csv"]
    before = cpu_seconds(pid)
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=True)
    cpu = cpu_seconds(pid) - before
    row = [line for line in out.stdout.splitlines() if line.startswith('"')][-1]
    return float(row.split(",")[1].strip('"')), cpu / n


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=100_000, help="requests per run")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    C.header("keyspace_bench", args)
    with C.sluice_beside_redis() as found:
        if found is None:
            return 0
        servers, version = found
        pids = {"sluice": int(servers["sluice"][1].info("server")["process_id"]),
                "redis": int(servers["redis"][1].info("server")["process_id"])}
        rows = []
        for pipeline in (1, 16):
            for test in TESTS:
                got = {"sluice": [], "redis": []}
                for _ in range(args.rounds):
                    for name, (port, client) in servers.items():
                        client.flushall()
                        got[name].append(run(port, pids[name], test, args.n, pipeline))
                rate = C.ratios([r for r, _ in got["sluice"]], [r for r, _ in got["redis"]])
                cpu = {k: sorted(c for _, c in v)[len(v) // 2] for k, v in got.items()}
                rows.append([test.upper(), "-P %d" % pipeline,
                             "%.0f" % max(r for r, _ in got["sluice"]),
                             "%.0f" % max(r for r, _ in got["redis"]), C.fmt_ratio(rate),
                             "%.2f" % (cpu["sluice"] * 1e6), "%.2f" % (cpu["redis"] * 1e6),
                             C.fmt_ratio(cpu["redis"] / cpu["sluice"])])
        C.print_table(f"requests/s and CPU us per request (redis-server {version}; "
                      "ratios: sluice as fast as redis = 1.0x)",
                      ["test", "mode", "sluice rps", "redis rps", "ratio", "sluice CPU us",
                       "redis CPU us", "CPU ratio"], rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
