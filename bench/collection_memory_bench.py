#!/usr/bin/env python3
"""Bytes per element of lists, sets, hashes, sorted sets and string keys: sluice-server
beside redis-server.

For each row a fresh pair of servers (no persistence) is filled over the network with
pipelined RPUSH / SADD / HSET / ZADD in one of two shapes, 10 keys of 100,000 elements and 100,000
keys of 10 elements (`--quick`: a tenth of each), and measured before and after:

  RSS B/elem   = growth of the server process's resident set (/proc/PID/status) / elements
  used B/elem  = growth of INFO's used_memory / elements

List elements are `element:<i>`; set members are `member:<i>` strings, or integers (the
`set (integers)` rows: intsets while small); hash fields and values are `field:<i>` /
`value:<i>`; sorted-set members are `member:<i>` scored <i> (listpacks while small,
skiplists when big). A ratio is
sluice / redis; the target is <= 1.0 on every row.

The string row is the keyspace itself: `--strings` keys (1,000,000 by default; a tenth
with `--quick`) made by `SET k:<i> v:<i>`, pipelined BATCH a trip; bytes per key.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Callable

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as C  # noqa: E402  (also makes the checkout's `engine` importable)

BATCH = 1000            # elements per command, and commands per pipelined round trip

ELEMENTS: dict[str, Callable[[int], list]] = {
    "list": lambda i: [b"element:%d" % i],
    "set (strings)": lambda i: [b"member:%d" % i],
    "set (integers)": lambda i: [b"%d" % (i * 7)],
    "hash": lambda i: [b"field:%d" % i, b"value:%d" % i],
    "sorted set": lambda i: [b"%d" % i, b"member:%d" % i],
}
COMMAND = {"list": b"RPUSH", "set (strings)": b"SADD", "set (integers)": b"SADD", "hash": b"HSET",
           "sorted set": b"ZADD"}


def rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def used_memory(client) -> int:
    return int(client.info("memory")["used_memory"])


def fill(client, kind: str, keys: int, per_key: int) -> None:
    """keys x per_key elements, BATCH elements per command, BATCH commands per trip."""
    make, command = ELEMENTS[kind], COMMAND[kind]
    pipe = client.pipeline(transaction=False)
    queued = 0
    for k in range(keys):
        key = b"key:%d" % k
        for start in range(0, per_key, BATCH):
            args = []
            for i in range(start, min(per_key, start + BATCH)):
                args.extend(make(i))
            pipe.execute_command(command, key, *args)
            queued += 1
            if queued == BATCH:
                pipe.execute()
                queued = 0
    pipe.execute()


def fill_strings(client, keys: int) -> None:
    """`SET k:<i> v:<i>` for i < keys, BATCH commands per round trip."""
    pipe = client.pipeline(transaction=False)
    for i in range(keys):
        pipe.execute_command(b"SET", b"k:%d" % i, b"v:%d" % i)
        if i % BATCH == BATCH - 1:
            pipe.execute()
    pipe.execute()


def measure(pid: int, client, kind: str, keys: int, per_key: int) -> tuple[float, float]:
    client.ping()
    rss0, used0 = rss_bytes(pid), used_memory(client)
    if kind == "string":
        fill_strings(client, keys)
    else:
        fill(client, kind, keys, per_key)
    n = keys * per_key
    return (rss_bytes(pid) - rss0) / n, (used_memory(client) - used0) / n


def one_row(kind: str, keys: int, per_key: int) -> dict:
    """{server: (rss B/elem, used B/elem)} on a fresh pair of servers."""
    import redis
    from examples.processes import ServerProcess
    out = {}
    with C.redis_server() as redis_srv, \
            ServerProcess(["--save", "", "--appendonly", "no"], loglevel="warning") as sluice:
        ours = redis.Redis(host="127.0.0.1", port=sluice.port, protocol=2)
        theirs = redis_srv.client(protocol=2)
        try:
            out["sluice"] = measure(sluice.proc.pid, ours, kind, keys, per_key)
            out["redis"] = measure(redis_srv.proc.pid, theirs, kind, keys, per_key)
        finally:
            ours.close()
            theirs.close()
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="a tenth of each shape")
    ap.add_argument("--kind", action="append", choices=[*ELEMENTS, "string"],
                    help="only these element kinds (repeatable; default: all)")
    ap.add_argument("--strings", type=int, default=1_000_000, help="string keys (SET k:i v:i)")
    args = ap.parse_args(argv)
    C.header("collection_memory_bench", args)
    scale = 10 if args.quick else 1
    shapes = [(f"{10} keys x {100_000 // scale:,}", 10, 100_000 // scale),
              (f"{100_000 // scale:,} keys x 10", 100_000 // scale, 10)]
    strings = args.strings // scale
    rows = []
    cases = []
    for kind in args.kind or [*ELEMENTS, "string"]:
        cases += ([(kind, (f"{strings:,} keys", strings, 1))] if kind == "string"
                  else [(kind, shape) for shape in shapes])
    for kind, (label, keys, per_key) in cases:
        got = one_row(kind, keys, per_key)
        (s_rss, s_used), (r_rss, r_used) = got["sluice"], got["redis"]
        rows.append([kind, label, "%.1f" % s_rss, "%.1f" % r_rss, C.fmt_ratio(s_rss / r_rss),
                     "%.1f" % s_used, "%.1f" % r_used, C.fmt_ratio(s_used / r_used)])
    C.print_table("bytes per element (sluice / redis; target <= 1.0x)",
                  ["type", "shape", "sluice RSS", "redis RSS", "ratio", "sluice used",
                   "redis used", "ratio"], rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
