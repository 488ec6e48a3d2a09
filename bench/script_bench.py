#!/usr/bin/env python3
"""Scripts (EVALSHA, cached EVAL) on sluice-server beside redis-server, in one run.

Both servers run on free loopback ports (sluice-server through
examples/processes.py's ServerProcess, redis-server with `--save "" --appendonly
no`); the contenders alternate round by round and each verdict is the median of the
per-round ratios, so load that comes and goes on a shared machine hits both sides alike.

  EVALSHA     `redis-benchmark -c 50 -n 100000 EVALSHA <sha> 1 key` of a 2-command script
              (INCR the key, then GET it), unpipelined and with `-P 16` (requests/s from
              `--csv`);
  EVAL        the same with `EVAL <script> 1 key`: the same text each time, so both
              servers compile it once and then find it in their cache.
              Beside each rate, the CPU time each server spent per request (INFO cpu's
              used_cpu_user + used_cpu_sys over the run): what a loaded machine moves
              least.
  in-process  what a script costs the engine itself, without a socket: the 2-command
              script through a Session of an Engine (us per run), and one script running
              `redis.call('INCR', KEYS[1])` 100,000 times (calls/s), beside redis-server
              running that same loop (its time from INFO commandstats).
  FUNCTION LOAD  libraries loaded per second over a pipe of FUNCTION LOADs, on an empty
              server and again once it holds --libraries of them: whether loading slows
              as libraries accumulate (it must not: each load checks its names against
              the others by lookup).

Target (issue 15): sluice-server >= 0.5x redis-server's rate for EVALSHA and cached EVAL
as `redis-benchmark -n 100000` sends them (50 clients, unpipelined). The -P 16 rows are
information: the cost per request once the socket round trip no longer dominates (there
the Python<->Lua crossings of lupa and the Python session weigh most).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as C  # noqa: E402  (also makes the checkout's `engine` importable)

from engine import Engine  # noqa: E402
from engine.api.session import Hub, Session  # noqa: E402

PIPELINE = 16
TWO_COMMANDS = "redis.call('INCR', KEYS[1]) return redis.call('GET', KEYS[1])"
LOOP = ("for i = 1, tonumber(ARGV[1]) do redis.call('INCR', KEYS[1]) end "
        "return redis.call('GET', KEYS[1])")
TARGET = 0.5


def server_cpu(client) -> float:
    """CPU seconds (user + system) the server has used, from its INFO cpu."""
    cpu = client.info("cpu")
    return float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"])


def bench_servers(servers: dict, args) -> tuple:
    """({(command, pipeline, server): [requests/s per round]}, the same keys: [server CPU
    seconds per request]); the key's INCR count is checked after each run, so every
    script ran and succeeded."""
    rates: dict = {}
    cpu: dict = {}
    for rnd in range(args.rounds):
        order = list(servers.items())
        if rnd % 2:
            order.reverse()
        for kind in ("EVALSHA", "EVAL"):
            for pipeline in (1, PIPELINE):
                for name, (port, client) in order:
                    client.flushall()
                    sha = client.script_load(TWO_COMMANDS)
                    command = ([kind, sha] if kind == "EVALSHA" else [kind, TWO_COMMANDS])
                    used = server_cpu(client)
                    rate = C.redis_benchmark_rps(port, args.requests,
                                                 command + ["1", "key"], pipeline)
                    used = server_cpu(client) - used
                    if int(client.get("key") or 0) != args.requests:
                        raise RuntimeError("%s: key = %r after %d scripts"
                                           % (name, client.get("key"), args.requests))
                    rates.setdefault((kind, pipeline, name), []).append(rate)
                    cpu.setdefault((kind, pipeline, name), []).append(used / args.requests)
    return rates, cpu


def bench_in_process(args, redis_client) -> dict:
    """In-process figures (see the module docstring), best of the rounds."""
    session = Session(Hub(Engine()))
    sha = session.call([b"SCRIPT", b"LOAD", TWO_COMMANDS.encode()])
    loop_sha = session.call([b"SCRIPT", b"LOAD", LOOP.encode()])
    call = session.call
    argv = [b"EVALSHA", sha, b"1", b"key"]
    per_run = []
    for _ in range(args.rounds):
        n = args.in_process_runs
        t0 = time.perf_counter()
        for _ in range(n):
            call(argv)
        per_run.append((time.perf_counter() - t0) / n)
    loop = args.loop_calls
    ours = []
    for _ in range(args.rounds):
        t0 = time.perf_counter()
        call([b"EVALSHA", loop_sha, b"1", b"counter", b"%d" % loop])
        ours.append(loop / (time.perf_counter() - t0))
    theirs = []
    if redis_client is not None:
        redis_client.config_resetstat()
        for _ in range(args.rounds):
            redis_client.eval(LOOP, 1, "counter", loop)
        usec = redis_client.info("commandstats")["cmdstat_eval"]["usec_per_call"]
        theirs.append(loop / (usec / 1e6))
    return {"per_run": min(per_run), "loop": max(ours),
            "redis_loop": max(theirs) if theirs else None}


def library(i: int) -> str:
    return "#!lua name=lib%d\nredis.register_function('f%d', function() return %d end)" % (
        i, i, i)


def load_rate(client, first: int, count: int) -> float:
    """Libraries first..first+count-1 loaded through one pipeline: loads per second."""
    pipe = client.pipeline(transaction=False)
    for i in range(first, first + count):
        pipe.function_load(library(i))
    t0 = time.perf_counter()
    pipe.execute()
    return count / (time.perf_counter() - t0)


def bench_function_loads(servers: dict, args) -> dict:
    """{(phase, server): loads/s}: the first libraries, then more once --libraries are in."""
    out = {}
    step = 2000
    for name, (_port, client) in servers.items():
        client.function_flush()
        out[("first", name)] = load_rate(client, 1, step)
        for first in range(step + 1, args.libraries + 1, 5000):
            load_rate(client, first, min(5000, args.libraries + 1 - first))
        out[("later", name)] = load_rate(client, args.libraries + 1, step)
        client.function_flush()
    return out


def report(rates: dict, cpu: dict, local: dict, loads: dict, args, version: str) -> None:
    rows = []
    for kind in ("EVALSHA", "EVAL"):
        for pipeline in (1, PIPELINE):
            ours, theirs = rates[(kind, pipeline, "sluice")], rates[(kind, pipeline, "redis")]
            ratio = C.ratios(ours, theirs)
            shape = "%s <2-command script> 1 key, -c %d%s" % (
                kind, C.BENCH_CLIENTS, " -P %d" % pipeline if pipeline > 1 else "")
            targeted = pipeline == 1        # the shape; -P 16: information
            rows.append([("" if targeted else "(info) ") + shape + " (req/s)",
                         "%.0f" % C.median(ours), "%.0f" % C.median(theirs), C.fmt_ratio(ratio),
                         ">= %sx" % TARGET if targeted else "",
                         C.verdict(ratio >= TARGET) if targeted else ""])
            ours, theirs = cpu[(kind, pipeline, "sluice")], cpu[(kind, pipeline, "redis")]
            rows.append(["(info) ... server CPU per request (us; ratio: redis's/ours)",
                         "%.1f" % (C.median(ours) * 1e6), "%.1f" % (C.median(theirs) * 1e6),
                         C.fmt_ratio(C.ratios(theirs, ours)), "", ""])
    rows.append(["(info) in-process EVALSHA of the 2-command script (us/run)",
                 "%.2f" % (local["per_run"] * 1e6), "", "", "", ""])
    theirs = local["redis_loop"]
    rows.append(["(info) redis.call('INCR') x %d in one script (calls/s; redis-server: "
                 "its usec_per_call)" % args.loop_calls, "%.0f" % local["loop"],
                 C.fmt_int(theirs), C.fmt_ratio(None if theirs is None else local["loop"] / theirs),
                 "", ""])
    for phase, label in (("first", "on an empty server"),
                         ("later", "once %d are loaded" % args.libraries)):
        ours, theirs = loads[(phase, "sluice")], loads[(phase, "redis")]
        rows.append(["(info) FUNCTION LOAD, 2000 libraries %s (loads/s)" % label,
                     "%.0f" % ours, "%.0f" % theirs, C.fmt_ratio(ours / theirs), "", ""])
    C.print_table("scripts: sluice-server vs redis-server %s (medians of %d rounds; ratios: "
                  "median of the per-round ratios)" % (version, args.rounds),
                  ["benchmark", "sluice", "redis-server", "ratio", "target", ""], rows,
                  "lrrrrl")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="~20 s run")
    ap.add_argument("--rounds", type=int, default=None, help="default 3, quick 1")
    ap.add_argument("--requests", type=int, default=None,
                    help="redis-benchmark -n (default 100000, quick 50000)")
    ap.add_argument("--in-process-runs", type=int, default=100_000)
    ap.add_argument("--loop-calls", type=int, default=100_000)
    ap.add_argument("--libraries", type=int, default=30_000,
                    help="libraries loaded before the second FUNCTION LOAD rate")
    args = ap.parse_args(argv)
    C.quick_defaults(args, rounds=(1, 3), requests=(50_000, 100_000))
    C.header("script_bench", args)
    with C.sluice_beside_redis() as both:
        if both is None:
            return 0
        servers, version = both
        rates, cpu = bench_servers(servers, args)
        local = bench_in_process(args, servers["redis"][1])
        loads = bench_function_loads(servers, args)
        report(rates, cpu, local, loads, args, version)
    return 0


if __name__ == "__main__":
    sys.exit(main())
