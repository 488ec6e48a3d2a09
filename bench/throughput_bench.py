#!/usr/bin/env python3
"""Producer/consumer throughput, in process: native Engine.execute, EmbeddedRedis
(redis-py code over the engine), fakeredis.FakeRedis (the same redis-py code over
fakeredis) and, for reference, redis-py against a real redis-server over loopback.

Workloads, one command at a time (no pipelining), payload `f v`:
  XADD      `XADD s * f v` N times into a fresh stream (ops/s). Native:
            e.execute("XADD", "s", "*", "f", "v"); the others: r.xadd("s", {"f": "v"}).
  consume   the stream just filled, drained by one consumer of group g:
            XREADGROUP GROUP g c COUNT 100 STREAMS s > then XACK of the returned
            IDs, until the reply is empty (entries/s). The stream is drained
            `passes` times per round (XGROUP SETID g 0 between passes, untimed) so the
            faster contenders are measured over a long enough interval.
N and passes differ per contender (each measured interval is a few tenths of a
second); the rates are per op / per entry, so they compare directly. Every round runs
every contender (order rotating); the table shows the median over rounds. A ratio
is the median over rounds of (contender's rate / fakeredis's rate in the same round),
so load that comes and goes on a shared machine hits both sides of each ratio alike.
redis-py clients use redis-py 8's defaults (hiredis parser for the socket client).

Targets: native >= 50x fakeredis for XADD and >= 20x for consume; EmbeddedRedis
>= 3x fakeredis. Reference: fakeredis did ~16,000 XADD/s on this kind of machine.
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as C  # noqa: E402  (also makes the checkout's `engine` importable)

from engine import Engine  # noqa: E402

COUNT = 100


class Native:
    name = "native Engine.execute"

    def __init__(self) -> None:
        self.e = Engine()

    def xadd_loop(self, key: str, n: int) -> float:
        ex = self.e.execute
        t0 = time.perf_counter()
        for _ in range(n):
            ex("XADD", key, "*", "f", "v")
        return time.perf_counter() - t0

    def consume(self, key: str, passes: int) -> tuple:
        ex = self.e.execute
        ex("XGROUP", "CREATE", key, "g", "0")
        total = 0
        spent = 0.0
        for _ in range(passes):
            ex("XGROUP", "SETID", key, "g", "0")
            got = 0
            t0 = time.perf_counter()
            while True:
                rep = ex("XREADGROUP", "GROUP", "g", "c", "COUNT", COUNT, "STREAMS", key, ">")
                if not rep:
                    break
                msgs = rep[0][1]
                ex("XACK", key, "g", *[m[0] for m in msgs])
                got += len(msgs)
            spent += time.perf_counter() - t0
            total += got
        return total, spent

    def delete(self, key: str) -> None:
        self.e.execute("DEL", key)


class PyClient:
    """Any redis-py-compatible client: the same calls for all of them."""

    def __init__(self, name: str, client) -> None:
        self.name = name
        self.r = client

    def xadd_loop(self, key: str, n: int) -> float:
        xadd = self.r.xadd
        fields = {"f": "v"}
        t0 = time.perf_counter()
        for _ in range(n):
            xadd(key, fields)
        return time.perf_counter() - t0

    def consume(self, key: str, passes: int) -> tuple:
        r = self.r
        r.xgroup_create(key, "g", "0")
        streams = {key: ">"}
        total = 0
        spent = 0.0
        for _ in range(passes):
            r.xgroup_setid(key, "g", "0")
            got = 0
            t0 = time.perf_counter()
            while True:
                rep = r.xreadgroup("g", "c", streams, count=COUNT)
                if not rep:
                    break
                msgs = rep[0][1] if isinstance(rep, list) else next(iter(rep.values()))[0]
                if not msgs:
                    break
                r.xack(key, "g", *[m[0] for m in msgs])
                got += len(msgs)
            spent += time.perf_counter() - t0
            total += got
        return total, spent

    def delete(self, key: str) -> None:
        self.r.delete(key)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="~20 s run")
    ap.add_argument("--rounds", type=int, default=None, help="default 11, quick 5")
    ap.add_argument("--scale", type=float, default=None,
                    help="multiplies every N (default 1, quick 0.5)")
    args = ap.parse_args(argv)
    C.quick_defaults(args, rounds=(5, 11), scale=(0.5, 1.0))

    EmbeddedRedis, why = C.load_embedded()
    C.header("throughput_bench", args)
    if EmbeddedRedis is None:
        print("engine.api.client: %s" % why)

    import fakeredis

    # (contender, XADD N per round, consume passes per round)
    plan = [(Native(), 200_000, 3)]
    if EmbeddedRedis is not None:
        plan.append((PyClient("EmbeddedRedis (redis-py)", EmbeddedRedis()), 60_000, 4))
    plan.append((PyClient("fakeredis.FakeRedis (redis-py)", fakeredis.FakeRedis()), 8_000, 4))
    with C.redis_server() as srv:
        if srv is not None:
            plan.append((PyClient("redis-py -> redis-server %s (loopback)" % srv.version,
                                  srv.client()), 8_000, 8))
        plan = [(c, max(1000, int(n * args.scale)), p) for c, n, p in plan]
        xadd = {c.name: [] for c, _, _ in plan}
        cons = {c.name: [] for c, _, _ in plan}
        for rnd in range(args.rounds):
            k = rnd % len(plan)
            for c, n, passes in plan[k:] + plan[:k]:
                key = "s%d" % rnd
                gc.collect()
                xadd[c.name].append(n / c.xadd_loop(key, n))
                gc.collect()
                got, spent = c.consume(key, passes)
                assert got == n * passes, (c.name, got, n * passes)
                cons[c.name].append(got / spent)
                c.delete(key)

    med_x = {name: C.median(v) for name, v in xadd.items()}
    med_c = {name: C.median(v) for name, v in cons.items()}
    rows = []
    for c, n, passes in plan:
        rows.append([c.name, C.fmt_int(n), C.fmt_int(med_x[c.name]),
                     C.fmt_int(min(xadd[c.name])), C.fmt_int(max(xadd[c.name])),
                     C.fmt_int(n * passes), C.fmt_int(med_c[c.name]),
                     C.fmt_int(min(cons[c.name])), C.fmt_int(max(cons[c.name]))])
    if EmbeddedRedis is None:
        rows.insert(1, ["EmbeddedRedis (redis-py)", C.NA_CLIENT, "", "", "", "", "", "", ""])
    C.print_table("Throughput, %d rounds (median, min, max over rounds)" % args.rounds,
                  ["contender", "XADD N", "XADD/s", "min", "max",
                   "consumed", "entries/s", "min", "max"], rows)

    fake = "fakeredis.FakeRedis (redis-py)"
    targets = {"native Engine.execute": (50, 20), "EmbeddedRedis (redis-py)": (3, 3)}
    rows = []
    for c, _, _ in plan:
        if c.name == fake:
            continue
        rx = C.median(a / b for a, b in zip(xadd[c.name], xadd[fake]))
        rc = C.median(a / b for a, b in zip(cons[c.name], cons[fake]))
        tx, tc = targets.get(c.name, (None, None))
        rows.append([c.name, C.fmt_ratio(rx), ">= %dx" % tx if tx else "",
                     C.verdict(rx >= tx) if tx else "",
                     C.fmt_ratio(rc), ">= %dx" % tc if tc else "",
                     C.verdict(rc >= tc) if tc else ""])
    if EmbeddedRedis is None:
        rows.insert(1, ["EmbeddedRedis (redis-py)", C.NA_CLIENT, ">= 3x", "n/a", "",
                        ">= 3x", "n/a"])
    C.print_table("Ratios vs fakeredis (median of per-round ratios)",
                  ["contender", "XADD", "target", "", "consume", "target", ""], rows,
                  "lrrlrrl")
    return 0


if __name__ == "__main__":
    sys.exit(main())
