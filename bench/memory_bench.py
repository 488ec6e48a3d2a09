#!/usr/bin/env python3
"""Bytes per stream entry and per pending entry: engine vs redis-server.

The memory test of the Redis CLAIM pull request (redis/redis#14402): insert 200,000
entries (`XADD s <id> f <value>`, value "v" by default, see --value-bytes), measure
memory before and after; create group g and read everything with
`XREADGROUP GROUP g c COUNT 100 STREAMS s >` (2,000 blocks, 200,000 pending
entries), measure again. Memory is INFO's `used_memory` for redis-server and
`Engine.used_memory()` (bytes the engine holds in C memory, counted with the
allocator's real block sizes) for the engine; only deltas are reported:

  B/stream entry  = (after insert - before insert) / N
  B/pending entry = (after reading - after XGROUP CREATE) / N

The engine's pending figure includes its pel_by_time index (Redis 7.0 has none).

Variant (i), server-generated IDs at full speed: redis-server makes the IDs
(`XADD s *`, pipelined 1,000 per round trip, i.e. hundreds of entries per ms); the
engine row "same IDs" stores exactly those IDs (explicit XADD), so both hold the same
data; the row "own * IDs" lets the engine generate its own (at its own, higher,
entries-per-ms rate). Reading is at full speed, both on the real clock.

Variant (ii), one entry per millisecond: IDs `<base+i>-0` (base = 1,700,000,000,000)
on both. Delivery times are spread like the PR's 5 ms wait after each block:
redis-server sleeps 5 ms (real time) after every block; the engine runs on a
ManualClock advanced 5 ms after every block. An extra, informational engine row
reads with COUNT 1 and advances the ManualClock 1 ms per entry, so every pending
entry has its own delivery time (the worst case for pel_by_time).

Reference (redis-server 7.0.15, value "v"): 84.8 B/pending entry with
server-generated IDs, 148.6 with one entry per ms; the PR's 31.3 B/stream entry
reproduces with a ~20-byte value (--value-bytes 20).
Targets: engine <= redis per stream entry and per pending entry.
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from typing import Callable, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as C  # noqa: E402  (also makes the checkout's `engine` importable)

from engine import Engine, ManualClock  # noqa: E402

BASE = 1_700_000_000_000
BLOCK = 100


class Measure:
    """Memory readings of one contender in one variant."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.before = self.inserted = self.grouped = self.read = None
        self.n = 0

    @property
    def per_entry(self):
        return (self.inserted - self.before) / self.n

    @property
    def per_pending(self):
        return (self.read - self.grouped) / self.n


def group_then_read_all(m: Measure, call: Callable, used: Callable[[], int], count: int,
                        pause: Optional[Callable[[], None]]) -> None:
    """Creates group g on "s" and has consumer c read all of its m.n entries in blocks
    of `count` (pause() after each block), noting the memory used after each step:
    the same steps for the engine and for redis-server."""
    call("XGROUP", "CREATE", "s", "g", "0")
    m.grouped = used()
    got = 0
    while True:
        rep = call("XREADGROUP", "GROUP", "g", "c", "COUNT", count, "STREAMS", "s", ">")
        if not rep:
            break
        got += len(rep[0][1])
        if pause is not None:
            pause()
    assert got == m.n, (got, m.n)
    m.read = used()


# -- engine ------------------------------------------------------------------------

def engine_run(name, n, value, ids=None, clock=None, step_ms=0, count=BLOCK):
    """ids: explicit IDs (None = `XADD *`); clock: ManualClock advanced step_ms
    after every XREADGROUP of `count` entries (None = real clock, no waits)."""
    gc.collect()
    e = Engine(clock=clock)
    ex = e.execute
    m = Measure(name)
    m.n = n
    m.before = e.used_memory()
    if ids is None:
        for _ in range(n):
            ex("XADD", "s", "*", "f", value)
    else:
        for i in ids:
            ex("XADD", "s", i, "f", value)
    m.inserted = e.used_memory()
    group_then_read_all(m, ex, e.used_memory, count,
                        (lambda: clock.advance(step_ms)) if step_ms else None)
    assert ex("XLEN", "s") == n and ex("XPENDING", "s", "g")[0] == n
    del e, ex
    gc.collect()
    return m


# -- redis-server ------------------------------------------------------------------

def redis_used(raw) -> int:
    for line in raw("INFO", "memory").decode().splitlines():
        if line.startswith("used_memory:"):
            return int(line.split(":")[1])
    raise RuntimeError("no used_memory in INFO")


def redis_run(name, raw, n, value, explicit_ids=None, sleep_ms=0):
    """Returns (Measure, the stream's IDs)."""
    raw("FLUSHALL")
    time.sleep(0.05)
    m = Measure(name)
    m.n = n
    m.before = redis_used(raw)
    conn = raw.conn
    ids = []
    for lo in range(0, n, 1000):
        k = min(1000, n - lo)
        if explicit_ids is None:
            cmds = [("XADD", "s", "*", "f", value)] * k
        else:
            cmds = [("XADD", "s", i, "f", value) for i in explicit_ids[lo:lo + k]]
        conn.send_packed_command(conn.pack_commands(cmds))
        for _ in range(k):
            ids.append(conn.read_response())
    m.inserted = redis_used(raw)
    group_then_read_all(m, raw, lambda: redis_used(raw), BLOCK,
                        (lambda: time.sleep(sleep_ms / 1000)) if sleep_ms else None)
    return m, ids


def entries_per_ms(ids) -> float:
    ms = {i.split(b"-")[0] for i in ids}
    return len(ids) / len(ms)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="~20 s run (50,000 entries)")
    ap.add_argument("--entries", type=int, default=None, help="default 200,000")
    ap.add_argument("--value-bytes", type=int, default=1,
                    help='length of the value of field "f" (default 1: "v")')
    ap.add_argument("--sleep-ms", type=int, default=5,
                    help="variant (ii): wait/clock step after each block (default 5)")
    args = ap.parse_args(argv)
    C.quick_defaults(args, entries=(50_000, 200_000))
    n = args.entries
    value = b"v" if args.value_bytes == 1 else (b"0123456789" * (args.value_bytes // 10 + 1))[:args.value_bytes]
    C.header("memory_bench", args, "value: f %r (%d bytes), blocks of COUNT %d"
             % (value, len(value), BLOCK))

    results = []   # (variant, [Measure...], redis Measure or None)
    notes = []
    with C.redis_server() as srv:
        raw = C.RawConnection(srv.client(protocol=2)) if srv else None
        # (i) server-generated IDs at full speed
        eng = []
        red = None
        if raw is not None:
            red, ids = redis_run("redis-server %s" % srv.version, raw, n, value)
            notes.append("(i) redis-server's XADD * made %.0f entries/ms" % entries_per_ms(ids))
            eng.append(engine_run("engine, same IDs (explicit)", n, value, ids=ids))
            del ids
        eng.append(engine_run("engine, own * IDs", n, value))
        results.append(("(i) server IDs, full speed", eng, red))
        # (ii) one entry per millisecond, deliveries 5 ms apart per block
        ids = [b"%d-0" % (BASE + i) for i in range(n)]
        red = None
        if raw is not None:
            red, _ = redis_run("redis-server %s" % srv.version, raw, n, value,
                               explicit_ids=ids, sleep_ms=args.sleep_ms)
        eng = [engine_run("engine, ManualClock +%d ms/block" % args.sleep_ms, n, value,
                          ids=ids, clock=ManualClock(BASE + n + 1000),
                          step_ms=args.sleep_ms),
               engine_run("(info) engine, COUNT 1, +1 ms/entry", n, value, ids=ids,
                          clock=ManualClock(BASE + n + 1000), step_ms=1, count=1)]
        results.append(("(ii) 1 entry/ms, spread deliveries", eng, red))
        if raw is not None:
            raw.close()

    rows = []
    for variant, engines, red in results:
        for m in ([red] if red else []) + engines:
            rows.append([variant, m.name, "%.1f" % m.per_entry, "%.1f" % m.per_pending,
                         "%.2f" % ((m.inserted - m.before) / 2**20),
                         "%.2f" % ((m.read - m.grouped) / 2**20)])
        if red is None:
            rows.append([variant, "redis-server", C.NA_REDIS, "", "", ""])
    C.print_table("Memory, %s entries" % "{:,}".format(n),
                  ["variant", "contender", "B/stream entry", "B/pending entry",
                   "stream MiB", "PEL MiB"], rows, "llrrrr")
    for note in notes:
        print(note)

    rows = []
    for variant, engines, red in results:
        for m in engines:
            if m.name.startswith("(info)"):
                continue
            if red is None:
                rows.append([variant, m.name, "n/a", "", "n/a", ""])
                continue
            rs = m.per_entry / red.per_entry
            rp = m.per_pending / red.per_pending
            rows.append([variant, m.name, "%.2f" % rs, C.verdict(rs <= 1.0),
                         "%.2f" % rp, C.verdict(rp <= 1.0)])
    C.print_table("Engine / redis-server (targets: <= 1.00 for both)",
                  ["variant", "engine", "stream", "", "pending", ""], rows, "llrlrl")
    return 0


if __name__ == "__main__":
    sys.exit(main())
