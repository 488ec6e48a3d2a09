#!/usr/bin/env python3
"""Sorted-set commands: sluice-server beside redis-server, redis-benchmark -c 50.

Each workload runs unpipelined and with -P 16 on both servers, alternating, round
after round (`--rounds`); a ratio is the median of the per-round ratios sluice / redis
of requests/s, so load that comes and goes hits both sides alike. Before each run the
servers are flushed and `board` is filled with `--members` members (`member:<i>`
scored <i>, a skiplist) so reads and pops have something to work on.

  ZADD       ZADD board __rand_int__ member:__rand_int__ (-r members: adds and updates)
  ZINCRBY    ZINCRBY board 1 member:__rand_int__
  ZSCORE     ZSCORE board member:__rand_int__
  ZRANK      ZRANK board member:__rand_int__
  ZRANGE     ZRANGE board 0 9 WITHSCORES (a leaderboard's top ten, from the head)
  BYSCORE    ZRANGE board (__rand_int__ +inf BYSCORE LIMIT 0 10
  ZPOPMIN    ZPOPMIN board (the set holds more members than the run pops)

Target: >= 1.0x redis-server on every row (issue 23); give `/proc/loadavg`.
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as C  # noqa: E402

WORKLOADS = {
    "ZADD": ["ZADD", "board", "__rand_int__", "member:__rand_int__"],
    "ZINCRBY": ["ZINCRBY", "board", "1", "member:__rand_int__"],
    "ZSCORE": ["ZSCORE", "board", "member:__rand_int__"],
    "ZRANK": ["ZRANK", "board", "member:__rand_int__"],
    "ZRANGE": ["ZRANGE", "board", "0", "9", "WITHSCORES"],
    "BYSCORE": ["ZRANGE", "board", "(__rand_int__", "+inf", "BYSCORE", "LIMIT", "0", "10"],
    "ZPOPMIN": ["ZPOPMIN", "board"],
}


def fill(client, members: int) -> None:
    client.flushall()
    pipe = client.pipeline(transaction=False)
    for start in range(0, members, 1000):
        args = []
        for i in range(start, min(members, start + 1000)):
            args += [i, b"member:%d" % i]
        pipe.execute_command("ZADD", "board", *args)
    pipe.execute()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--requests", type=int, default=100_000)
    ap.add_argument("--members", type=int, default=200_000)
    ap.add_argument("--workload", action="append", choices=list(WORKLOADS))
    args = ap.parse_args(argv)
    C.header("zset_bench", args)
    with C.sluice_beside_redis() as got:
        if got is None:
            return 0
        servers, version = got
        rows = []
        for name in args.workload or WORKLOADS:
            for pipeline in (1, 16):
                rps = {"sluice": [], "redis": []}
                for _ in range(args.rounds):
                    for side, (port, client) in servers.items():
                        fill(client, args.members)
                        rps[side].append(C.redis_benchmark_rps(
                            port, args.requests, WORKLOADS[name], pipeline, args.members))
                rows.append([name, pipeline, C.fmt_int(C.median(rps["sluice"])),
                             C.fmt_int(C.median(rps["redis"])),
                             C.fmt_ratio(C.ratios(rps["sluice"], rps["redis"]))])
        C.print_table(f"requests/s, redis-benchmark -c {C.BENCH_CLIENTS} -n {args.requests} "
                      f"(redis-server {version}; target >= 1.0x)",
                      ["workload", "-P", "sluice", "redis", "ratio"], rows)
    print("loadavg", open("/proc/loadavg").read().strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
