#!/usr/bin/env python3
"""sluice-server against redis-server over RESP, side by side in one run.

Both servers run on free loopback ports (sluice-server through
examples/processes.py's ServerProcess, redis-server with `--save "" --appendonly
no`); every measurement alternates between them, round after round, and a verdict
is the median of the per-round ratios, so load that comes and goes on a shared
machine hits both sides of a ratio alike.

  XADD        `redis-benchmark -c 50 -n 200000 XADD s * f v`, unpipelined and with
              `-P 16` (requests/s from `--csv`; FLUSHALL before each run).
  claim       the seed's claim benchmark (bench/claim_bench.py's workload and setup
              code: 20,000 entries all pending for c1; per iteration 1,000 random
              entries idle 1,100 ms and the rest 50 ms via XCLAIM ... IDLE n JUSTID,
              untimed), then one timed call over a raw redis-py connection (hiredis):
              sluice `XREADGROUP GROUP g c2 COUNT 1000 CLAIM 1000 STREAMS s >` and
              redis-server `XAUTOCLAIM s g c2 1000 0-0 COUNT 1000` (ms per call).
              Beside them, the floor: the same call to a process that answers at once
              with the bytes of sluice's first CLAIM reply (bench/_common.py
              canned_server), i.e. the round trip and redis-py's decoding of 1,000
              entries; no server can answer in less.
  consume     a redis-py consumer (hiredis, response callbacks on) drains 100,000
              entries: XREADGROUP COUNT 100, the XACK of the previous batch pipelined
              with the next read (entries/s).

Targets: XADD >= 0.8x redis-server unpipelined and >= 0.5x with -P 16; claim median
>= 22.5x faster than XAUTOCLAIM; consume >= 1.0x redis-server's entries/s.
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import os
import random
import sys
import tempfile
import time

import redis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as C  # noqa: E402  (also makes the checkout's `engine` importable)
from claim_bench import COUNT as CLAIM_COUNT  # noqa: E402
from claim_bench import HOT, MIN_IDLE, fill_redis, set_idles  # noqa: E402

from engine.resp.codec import encode_reply  # noqa: E402

PIPELINE = 16
READ_COUNT = 100
XADD = ("XADD", "s", "*", "f", "v")


# -- XADD with redis-benchmark ----------------------------------------------------------

def bench_xadd(servers: dict, args) -> dict:
    """{(server, pipeline): [requests/s per round]}."""
    rates: dict = {}
    for rnd in range(args.rounds):
        for pipeline in (1, PIPELINE):
            for name, (port, client) in C.in_turn(servers, rnd):
                client.flushall()
                rate = C.redis_benchmark_rps(port, args.requests, XADD, pipeline)
                if client.xlen("s") != args.requests:        # every XADD succeeded
                    raise RuntimeError("%s: XLEN s = %d after %d XADDs"
                                       % (name, client.xlen("s"), args.requests))
                rates.setdefault((name, pipeline), []).append(rate)
    return rates


# -- the claim benchmark over RESP ---------------------------------------------------

def server_usec_per_call(raw, command: str):
    """usec_per_call of `command` from the server's INFO commandstats, or None."""
    for line in raw("INFO", "commandstats").decode().splitlines():
        if line.startswith("cmdstat_%s:" % command):
            fields = dict(kv.split("=") for kv in line.split(":", 1)[1].split(","))
            return float(fields["usec_per_call"])
    return None


def bench_claim(servers: dict, args, workdir: str) -> tuple:
    """({server: [seconds per call]}, {server: [entries returned]}, {server: the
    server's own usec per call}); times also has "floor" (see the docstring)."""
    calls = {
        "sluice": ("XREADGROUP", "GROUP", "g", "c2", "COUNT", CLAIM_COUNT, "CLAIM", MIN_IDLE,
                   "STREAMS", "s", ">"),
        "redis": ("XAUTOCLAIM", "s", "g", "c2", MIN_IDLE, "0-0", "COUNT", CLAIM_COUNT),
    }
    count_returned = {
        "sluice": lambda rep: len(rep[0][1]) if rep else 0,
        "redis": lambda rep: len(rep[1]),
    }
    raws, ids = {}, {}
    for name, (_, client) in servers.items():
        raws[name] = C.RawConnection(client)
        ids[name] = fill_redis(raws[name], args.claim_entries)
    for raw in raws.values():
        raw("CONFIG", "RESETSTAT")
    rng = random.Random(args.seed)
    times = {name: [] for name in list(servers) + ["floor"]}
    returned = {name: [] for name in servers}
    n = args.claim_entries
    clock = time.perf_counter
    floor = None
    gc.collect()
    gc.freeze()
    with contextlib.ExitStack() as stack:
        for it in range(args.claim_iterations):
            hot = sorted(rng.sample(range(n), HOT))
            hot_set = set(hot)
            cold = [i for i in range(n) if i not in hot_set]
            order = list(servers) if it % 2 == 0 else list(reversed(servers))
            for name in order:
                raw = raws[name]
                set_idles(raw, ids[name], hot, cold)
                t0 = clock()
                rep = raw(*calls[name])
                t1 = clock()
                times[name].append(t1 - t0)
                returned[name].append(count_returned[name](rep))
                if name != "sluice":
                    continue
                if floor is None:
                    port = stack.enter_context(
                        C.canned_server(calls[name][0], encode_reply(rep), workdir))
                    floor = C.RawConnection(redis.Redis(host="127.0.0.1", port=port,
                                                        protocol=2))
                    stack.callback(floor.close)
                t0 = clock()
                floor(*calls[name])
                times["floor"].append(clock() - t0)
    gc.unfreeze()
    server_usec = {name: server_usec_per_call(raws[name], calls[name][0].lower())
                   for name in servers}
    for raw in raws.values():
        raw.close()
    return times, returned, server_usec


# -- a pipelined consumer loop -------------------------------------------------------

def fill_stream(client, n: int) -> None:
    client.flushall()
    for lo in range(0, n, 1000):
        pipe = client.pipeline(transaction=False)
        for _ in range(min(1000, n - lo)):
            pipe.xadd("s", {"f": "v"})
        pipe.execute()
    client.xgroup_create("s", "g", "0")


def consume_once(client) -> tuple:
    """(entries, seconds): drains group g of s from the start, COUNT 100 per read, the
    XACK of each batch sent in the same pipeline as the next read."""
    client.xgroup_setid("s", "g", "0")
    streams = {"s": ">"}
    pipe = client.pipeline(transaction=False)
    pending_ack: list = []
    got = 0
    t0 = time.perf_counter()
    while True:
        if pending_ack:
            pipe.xack("s", "g", *pending_ack)
        pipe.xreadgroup("g", "c", streams, count=READ_COUNT)
        rep = pipe.execute()[-1]
        if not rep:
            break
        msgs = rep[0][1]
        pending_ack = [m[0] for m in msgs]
        got += len(msgs)
    return got, time.perf_counter() - t0


def bench_consume(servers: dict, args) -> dict:
    """{server: [entries/s per round]}."""
    for _, client in servers.values():
        fill_stream(client, args.consume_entries)
    rates = {name: [] for name in servers}
    for rnd in range(args.rounds):
        order = list(servers.items()) if rnd % 2 == 0 else list(reversed(servers.items()))
        for name, (_, client) in order:
            gc.collect()
            got, spent = consume_once(client)
            if got != args.consume_entries:
                raise AssertionError("%s: consumed %d of %d" % (name, got, args.consume_entries))
            rates[name].append(got / spent)
    return rates


# -- the report ------------------------------------------------------------------------

def report(xadd: dict, claim: tuple, consume: dict, args, version: str) -> None:
    times, returned, server_usec = claim
    rows = []
    for name, label in (("sluice", "sluice-server CLAIM"),
                        ("redis", "redis-server %s XAUTOCLAIM" % version)):
        s = C.summary(times[name])
        usec = server_usec[name]
        rows.append([label, "%.0f" % (sum(returned[name]) / len(returned[name])),
                     C.fmt_ms(s["avg"]), C.fmt_ms(s["median"]), C.fmt_ms(s["p95"]),
                     C.fmt_ms(s["min"]), C.fmt_ms(None if usec is None else usec / 1e6)])
    s = C.summary(times["floor"])
    rows.append(["floor: canned CLAIM reply, no server work", "1000", C.fmt_ms(s["avg"]),
                 C.fmt_ms(s["median"]), C.fmt_ms(s["p95"]), C.fmt_ms(s["min"]), "0"])
    C.print_table("claim: %s-entry PEL, %d iterations (ms per call over RESP; last column: "
                  "the server's own time, INFO commandstats)"
                  % ("{:,}".format(args.claim_entries), args.claim_iterations),
                  ["server", "returned", "avg", "median", "p95", "min", "server avg"], rows)

    rows = []

    def add(label, ours, theirs, ratio, target, unit):
        rows.append([label, unit % C.median(ours), unit % C.median(theirs),
                     C.fmt_ratio(ratio), ">= %sx" % target, C.verdict(ratio >= target)])

    add("XADD, redis-benchmark -c 50 -n %d (req/s)" % args.requests,
        xadd[("sluice", 1)], xadd[("redis", 1)],
        C.ratios(xadd[("sluice", 1)], xadd[("redis", 1)]), 0.8, "%.0f")
    add("XADD, redis-benchmark -c 50 -P 16 -n %d (req/s)" % args.requests,
        xadd[("sluice", PIPELINE)], xadd[("redis", PIPELINE)],
        C.ratios(xadd[("sluice", PIPELINE)], xadd[("redis", PIPELINE)]), 0.5, "%.0f")
    add("claim: CLAIM vs XAUTOCLAIM, median (ms/call)",
        [t * 1e3 for t in times["sluice"]], [t * 1e3 for t in times["redis"]],
        C.median(times["redis"]) / C.median(times["sluice"]), 22.5, "%.3f")
    best = C.median(times["redis"]) / C.median(times["floor"])
    rows.append(["(info) claim: XAUTOCLAIM vs the floor, the best any server gets here",
                 "%.3f" % (C.median(times["floor"]) * 1e3),
                 "%.3f" % (C.median(times["redis"]) * 1e3), C.fmt_ratio(best), "", ""])
    add("consume: XREADGROUP COUNT 100 + XACK, pipelined (entries/s)",
        consume["sluice"], consume["redis"], C.ratios(consume["sluice"], consume["redis"]),
        1.0, "%.0f")
    C.print_table("sluice-server vs redis-server %s (medians; XADD and consume ratios: "
                  "median of %d per-round ratios)" % (version, args.rounds),
                  ["benchmark", "sluice-server", "redis-server", "ratio", "target", ""],
                  rows, "lrrrrl")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="~15 s run")
    ap.add_argument("--rounds", type=int, default=None,
                    help="XADD and consume rounds (default 5, quick 1)")
    ap.add_argument("--requests", type=int, default=None,
                    help="redis-benchmark -n (default 200000, quick 100000)")
    ap.add_argument("--claim-entries", type=int, default=20_000)
    ap.add_argument("--claim-iterations", type=int, default=None,
                    help="default 200, quick 40")
    ap.add_argument("--consume-entries", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    C.quick_defaults(args, rounds=(1, 5), requests=(100_000, 200_000),
                     claim_iterations=(40, 200))
    C.header("server_bench", args)
    with C.sluice_beside_redis() as both:
        if both is None:
            return 0
        servers, version = both
        xadd = bench_xadd(servers, args)
        with tempfile.TemporaryDirectory() as workdir:
            claim = bench_claim(servers, args, workdir)
        consume = bench_consume(servers, args)
        report(xadd, claim, consume, args, version)
    return 0


if __name__ == "__main__":
    sys.exit(main())
