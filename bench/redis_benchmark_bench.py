#!/usr/bin/env python3
"""Every redis-benchmark test, sluice-server beside redis-server in one run.

`redis-benchmark -c 50 -n N --csv -t <all of its tests>` (PING_INLINE, PING_MBULK, SET,
GET, INCR, LPUSH, RPUSH, LPOP, RPOP, SADD, HSET, SPOP, ZADD, ZPOPMIN, the LPUSH that fills
the list for LRANGE, LRANGE_100/300/500/600, MSET), then commands of our own given to
redis-benchmark as its command line (XADD; sorted-set reads and updates on `board`,
filled with `--members` members `member:<i>` scored <i>, a skiplist), unpipelined and
with `-P 16`, on both servers (FLUSHALL before each run), alternating which goes first
round after round.

Each row gives both rates and the ratio sluice / redis (the median of the per-round
ratios), and each server's CPU microseconds per request: its process's utime + stime
(/proc/PID/stat) read as each test's CSV line arrives, so a test is charged what the
server spent between the line before and its own (in 10 ms ticks: figures want
`-n 100000`, `--quick` only shows the table works). On a shared machine the rate is
noisy, the CPU per request much less. Target: >= 1.0x redis-server on every row in both
modes on a quiet machine; /proc/loadavg is printed before and after.

`--tls`: the same over TLS (`redis-benchmark --tls`), each server on a TLS port with a
certificate of a test CA made with openssl for the run (tests/tls_certs.py).
"""
from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterator, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as C  # noqa: E402  (also makes the checkout's `engine` importable)

TESTS = ("ping_inline,ping_mbulk,set,get,incr,lpush,rpush,lpop,rpop,sadd,hset,spop,zadd,"
         "zpopmin,lrange_100,lrange_300,lrange_500,lrange_600,mset")
PIPELINE = 16
# Commands redis-benchmark runs as given (-r members for __rand_int__); True: on `board`.
COMMANDS: dict[str, tuple[list[str], bool]] = {
    "XADD": (["XADD", "s", "*", "f", "v"], False),
    "ZADD board": (["ZADD", "board", "__rand_int__", "member:__rand_int__"], True),
    "ZINCRBY": (["ZINCRBY", "board", "1", "member:__rand_int__"], True),
    "ZSCORE": (["ZSCORE", "board", "member:__rand_int__"], True),
    "ZRANK": (["ZRANK", "board", "member:__rand_int__"], True),
    "ZRANGE 0 9": (["ZRANGE", "board", "0", "9", "WITHSCORES"], True),
    "ZRANGE BYSCORE": (["ZRANGE", "board", "(__rand_int__", "+inf", "BYSCORE", "LIMIT", "0",
                        "10"], True),
}


def benchmark_command(port: int, requests: int, pipeline: int, keyspace: int,
                      tls: list[str]) -> list[str]:
    """`tls`: redis-benchmark's TLS arguments ([] for plain TCP)."""
    cmd = ["stdbuf", "-oL", C.REDIS_BENCHMARK, "-p", str(port), "-c", str(C.BENCH_CLIENTS),
           "-n", str(requests), "--csv", "-P", str(pipeline), *tls]
    return cmd + (["-r", str(keyspace)] if keyspace > 0 else [])


def timed_rows(cmd: list[str], pid: int) -> Iterator[tuple[str, float, float]]:
    """(test, requests/s, server CPU s since the previous row) for each CSV row of a
    redis-benchmark run, as the rows arrive."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    last = cpu_seconds(pid)
    for row in csv.reader(proc.stdout):
        if not row or row[0] == "test":
            continue
        now = cpu_seconds(pid)
        yield row[0], float(row[1]), now - last
        last = now
    err = proc.stderr.read()
    if proc.wait() != 0 or "ERR" in err:
        raise RuntimeError("redis-benchmark failed (exit %d): %s" % (proc.returncode, err[-500:]))


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def fill_board(client, members: int) -> None:
    pipe = client.pipeline(transaction=False)
    for start in range(0, members, 1000):
        args: list = []
        for i in range(start, min(members, start + 1000)):
            args += [i, b"member:%d" % i]
        pipe.execute_command("ZADD", "board", *args)
    pipe.execute()


def one_run(port: int, client, pid: int, args, pipeline: int) -> dict:
    """{test: (requests/s, CPU s per request)} of every test on one server."""
    got = {}
    client.flushall()
    for test, rate, cpu in timed_rows(benchmark_command(port, args.requests, pipeline,
                                                        args.random_keys, args.tls_args)
                                      + ["-t", TESTS], pid):
        got[test.split(" (")[0] + (" (fill)" if "needed" in test else "")] = (
            rate, cpu / args.requests)
    client.flushall()
    fill_board(client, args.members)
    for name, (command, on_board) in COMMANDS.items():
        keyspace = args.members if on_board else args.random_keys
        ((_, rate, cpu),) = timed_rows(
            benchmark_command(port, args.requests, pipeline, keyspace, args.tls_args) + command,
            pid)
        got[name] = (rate, cpu / args.requests)
    return got


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="10,000 requests a test, one round")
    ap.add_argument("--requests", "-n", type=int, default=None,
                    help="requests per test (default 100,000)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--members", type=int, default=None,
                    help="members of `board` (default 200,000)")
    ap.add_argument("--random-keys", "-r", type=int, default=0,
                    help="redis-benchmark -r for the -t tests and XADD (0: one key each)")
    ap.add_argument("--tls", action="store_true",
                    help="over TLS: redis-benchmark --tls against each server's tls-port")
    args = ap.parse_args(argv)
    C.quick_defaults(args, requests=(10_000, 100_000), members=(20_000, 200_000))
    C.header("redis_benchmark_bench", args)
    with tempfile.TemporaryDirectory(prefix="bench-tls-") as directory:
        certs = None
        args.tls_args = []
        if args.tls:
            sys.path.insert(0, os.path.join(C.REPO, "tests"))
            from tls_certs import make_certs
            certs = make_certs(Path(directory))
            args.tls_args = ["--tls", "--cacert", str(certs.ca)]
        return run(args, certs)


def run(args: argparse.Namespace, certs) -> int:
    print("loadavg before:", C.loadavg(), flush=True)
    results: dict = {}       # (test, pipeline, server) -> [(rps, cpu/request) per round]
    with C.sluice_beside_redis(certs) as both:
        if both is None:
            return 0
        servers, version = both
        pids = {name: int(client.info("server")["process_id"])
                for name, (_, client) in servers.items()}
        for rnd in range(args.rounds):
            for pipeline in (1, PIPELINE):
                for name, (port, client) in C.in_turn(servers, rnd):
                    for test, got in one_run(port, client, pids[name], args, pipeline).items():
                        results.setdefault((test, pipeline, name), []).append(got)
    print("loadavg after:", C.loadavg())
    tests = list(dict.fromkeys(t for t, _, _ in results))
    rows = []
    for pipeline in (1, PIPELINE):
        for test in tests:
            ours, theirs = results[(test, pipeline, "sluice")], results[(test, pipeline, "redis")]
            rate = C.ratios([r for r, _ in ours], [r for r, _ in theirs])
            cpu_ours = C.median(c for _, c in ours)
            cpu_theirs = C.median(c for _, c in theirs)
            rows.append([test, "-P %d" % pipeline, C.fmt_int(C.median(r for r, _ in ours)),
                         C.fmt_int(C.median(r for r, _ in theirs)), C.fmt_ratio(rate),
                         "%.2f" % (cpu_ours * 1e6), "%.2f" % (cpu_theirs * 1e6),
                         C.fmt_ratio(cpu_theirs / cpu_ours if cpu_ours else None),
                         C.verdict(rate >= 1.0)])
    C.print_table("redis-benchmark -c %d -n %d%s, sluice-server vs redis-server %s (medians of "
                  "%d rounds; CPU ratio: redis / sluice, higher is better)"
                  % (C.BENCH_CLIENTS, args.requests, " --tls" if args.tls else "", version,
                     args.rounds),
                  ["test", "mode", "sluice rps", "redis rps", "ratio", "sluice CPU us/req",
                   "redis CPU us/req", "CPU ratio", ">= 1.0x"], rows, "llrrrrrrl")
    return 0


if __name__ == "__main__":
    sys.exit(main())
