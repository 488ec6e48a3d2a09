#!/usr/bin/env python3
"""The cost of one ACL check per command: a restricted user beside the default user.

In-process: `GET k` and `SET k v` through the one road (`Session.call`, i.e.
process_command) of an Engine, as the default user (unrestricted: its client never
enters the ACL code) and as `app` (`+@read +@write ~k* ~app:*`: each command checked
against its bitmap and key patterns), ns per command, medians of rounds; and the check
alone (`acl_verdict`). Over the network: `redis-benchmark -c 50 -t get,set` with
`--user app -a pw` and as the default user, on sluice-server and on redis-server
(requests/s), alternating round by round.
"""
from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
import time
from typing import Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as C  # noqa: E402  (also makes the checkout's `engine` importable)

USER_RULES = ["on", ">pw", "-@all", "+@read", "+@write", "~k*", "~app:*", "~key:*"]


def in_process(calls: int, rounds: int) -> list:
    from engine import Engine
    from engine.api.acl.permissions import acl_verdict
    from engine.api.session import Hub, Session
    from engine.commands.table import COMMANDS
    hub = Hub(Engine())
    admin = Session(hub)
    admin.call([b"ACL", b"SETUSER", b"app", *[r.encode() for r in USER_RULES]])
    default = Session(hub)
    app = Session(hub)
    app.call([b"AUTH", b"app", b"pw"])
    assert app.restricted and not default.restricted
    rows = []
    for argv in ([b"GET", b"k1"], [b"SET", b"k1", b"v"]):
        times: dict = {"default": [], "app": []}
        for _ in range(rounds):
            for name, session in (("default", default), ("app", app)):
                call = session.call
                start = time.perf_counter_ns()
                for _ in range(calls):
                    call(argv)
                times[name].append((time.perf_counter_ns() - start) / calls)
        record = COMMANDS[argv[0].lower()]
        user = app.user
        start = time.perf_counter_ns()
        for _ in range(calls):
            acl_verdict(user, record, argv)
        alone = (time.perf_counter_ns() - start) / calls
        d, a = C.median(times["default"]), C.median(times["app"])
        rows.append([argv[0].decode(), "%.0f" % d, "%.0f" % a, "%+.0f" % (a - d),
                     "%.0f" % alone])
    return rows


def benchmark(port: int, requests: int, user: Optional[tuple]) -> dict:
    cmd = [C.REDIS_BENCHMARK, "-p", str(port), "-c", str(C.BENCH_CLIENTS), "-n",
           str(requests), "--csv", "-t", "get,set"]
    if user is not None:
        cmd += ["--user", user[0], "-a", user[1]]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if out.returncode != 0 or "ERR" in out.stderr or "NOPERM" in out.stdout:
        raise RuntimeError("redis-benchmark failed: %s %s" % (out.stdout[-300:], out.stderr[-300:]))
    return {row[0]: float(row[1]) for row in csv.reader(out.stdout.splitlines())
            if row and row[0] != "test"}


def main(argv: Optional[list] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer calls and requests")
    ap.add_argument("--calls", type=int, default=None)
    ap.add_argument("--requests", "-n", type=int, default=None)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    C.quick_defaults(args, calls=(20_000, 200_000), requests=(20_000, 100_000))
    C.header("acl_bench", args)
    C.print_table("In-process, ns per command through Session.call (medians of %d rounds)"
                  % args.rounds, ["command", "default user", "restricted user", "difference",
                                  "acl_verdict alone"],
                  in_process(args.calls, args.rounds), "lrrrr")
    with C.sluice_beside_redis() as both:
        if both is None:
            return 0
        servers, version = both
        for _, client in servers.values():
            client.execute_command("ACL", "SETUSER", "app", *USER_RULES)
        results: dict = {}
        for rnd in range(args.rounds):
            for name, (port, _) in C.in_turn(servers, rnd):
                for who, user in (("default", None), ("app", ("app", "pw"))):
                    for test, rps in benchmark(port, args.requests, user).items():
                        results.setdefault((name, test, who), []).append(rps)
    rows = []
    for name in ("sluice", "redis"):
        for test in ("SET", "GET"):
            d = C.median(results[(name, test, "default")])
            a = C.median(results[(name, test, "app")])
            rows.append([name, test, C.fmt_int(d), C.fmt_int(a), C.fmt_ratio(a / d)])
    C.print_table("redis-benchmark -c %d -n %d -t get,set, default user vs --user app "
                  "(redis-server %s; medians of %d rounds)"
                  % (C.BENCH_CLIENTS, args.requests, version, args.rounds),
                  ["server", "test", "default rps", "restricted rps", "restricted / default"],
                  rows, "llrrr")
    return 0


if __name__ == "__main__":
    sys.exit(main())
