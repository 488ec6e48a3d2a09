#!/usr/bin/env python3
"""List commands, sluice-server beside redis-server in one run: redis-benchmark's own
list tests (`-t lpush,rpush,lpop,rpop,lrange_100 -c 50 -n N`, unpipelined and with
`-P 16`), alternating the servers round after round; each ratio is the median of the
per-round ratios (sluice / redis requests/s; the target is >= 1.0x). Beside the rates,
each server's CPU time per request (its process's utime + stime over the whole
redis-benchmark run of the five tests, /proc/PID/stat): the rate on a shared machine is
noisy, the CPU per request much less. Prints /proc/loadavg before and after.
"""
from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as C  # noqa: E402  (also makes the checkout's `engine` importable)

TESTS = "lpush,rpush,lpop,rpop,lrange_100"
PIPELINE = 16


def benchmark_rows(port: int, requests: int, pipeline: int) -> dict:
    """{test name: requests/s} of one redis-benchmark run of TESTS."""
    cmd = [C.REDIS_BENCHMARK, "-p", str(port), "-c", str(C.BENCH_CLIENTS), "-n", str(requests),
           "-t", TESTS, "--csv"]
    if pipeline > 1:
        cmd += ["-P", str(pipeline)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if out.returncode != 0 or "ERR" in out.stderr:
        raise RuntimeError("redis-benchmark failed (exit %d): %s" % (out.returncode,
                                                                      out.stderr[-500:]))
    rows = {}
    for row in csv.reader(out.stdout.splitlines()):
        if row and row[0] != "test" and "needed" not in row[0]:
            rows[row[0].split(" ")[0]] = float(row[1])
    return rows


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def loadavg() -> str:
    with open("/proc/loadavg") as f:
        return f.read().strip()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--requests", type=int, default=100_000)
    args = ap.parse_args(argv)
    C.header("list_bench", args)
    print("loadavg before:", loadavg())
    rates: dict = {}
    with C.sluice_beside_redis() as both:
        if both is None:
            return 0
        servers, version = both
        pids = {name: int(client.info("server")["process_id"])
                for name, (_, client) in servers.items()}
        cpu: dict = {}
        for rnd in range(args.rounds):
            for pipeline in (1, PIPELINE):
                for name, (port, client) in C.in_turn(servers, rnd):
                    client.flushall()
                    before = cpu_seconds(pids[name])
                    for test, rate in benchmark_rows(port, args.requests, pipeline).items():
                        rates.setdefault((test, pipeline, name), []).append(rate)
                    used = cpu_seconds(pids[name]) - before
                    requests = args.requests * (len(TESTS.split(",")) + 1)  # + LRANGE's fill
                    cpu.setdefault((pipeline, name), []).append(used / requests * 1e6)
    print("loadavg after:", loadavg())
    rows = []
    for test, pipeline in sorted({(t, p) for t, p, _ in rates}, key=lambda k: (k[1], k[0])):
        ours, theirs = rates[(test, pipeline, "sluice")], rates[(test, pipeline, "redis")]
        ratio = C.ratios(ours, theirs)
        rows.append(["%s%s" % (test, "" if pipeline == 1 else " -P %d" % pipeline),
                     "%.0f" % C.median(ours), "%.0f" % C.median(theirs), C.fmt_ratio(ratio),
                     C.verdict(ratio >= 1.0)])
    C.print_table("redis-benchmark -c %d -n %d, sluice-server vs redis-server %s (req/s, "
                  "medians of %d rounds)" % (C.BENCH_CLIENTS, args.requests, version,
                                             args.rounds),
                  ["test", "sluice-server", "redis-server", "ratio", ">= 1.0x"], rows, "lrrrl")
    rows = []
    for pipeline in (1, PIPELINE):
        ours, theirs = cpu[(pipeline, "sluice")], cpu[(pipeline, "redis")]
        ratio = C.ratios(theirs, ours)
        rows.append(["all five%s" % ("" if pipeline == 1 else " -P %d" % pipeline),
                     "%.2f" % C.median(ours), "%.2f" % C.median(theirs), C.fmt_ratio(ratio),
                     C.verdict(ratio >= 1.0)])
    C.print_table("CPU microseconds per request (ratio: redis / sluice, higher is better)",
                  ["tests", "sluice-server", "redis-server", "ratio", ">= 1.0x"], rows, "lrrrl")
    return 0


if __name__ == "__main__":
    sys.exit(main())
