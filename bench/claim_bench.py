#!/usr/bin/env python3
"""XREADGROUP ... CLAIM against XAUTOCLAIM: the benchmark of the Redis pull request
that introduced CLAIM (redis/redis#14402), plus a PEL-size scaling check.

Part 1 (the PR's workload). A stream of 20,000 entries (`XADD s * f v`), all read
by consumer c1 (the PEL holds 20,000 entries). Every iteration picks 1,000 random
pending entries and, untimed, sets their idle time to 1,100 ms and that of the
other 19,000 to 50 ms (`XCLAIM s g c1 0 <1,000 ids> IDLE <n> JUSTID`, 20 calls,
which also gives every entry back to c1), then times ONE call:

  engine  XREADGROUP GROUP g c2 COUNT 1000 CLAIM 1000 STREAMS s >   (Engine.execute)
  engine  XAUTOCLAIM s g c2 1000 0-0 COUNT 1000                     (Engine.execute)
  redis   XAUTOCLAIM s g c2 1000 0-0 COUNT 1000  (redis-server over loopback, one
          redis-py connection used raw: the hiredis-parsed reply, no response
          callback; full call latency with time.perf_counter)

The three run side by side in every iteration (their order rotates) on the same
random choice of entries, with the real clock (as in the PR). redis-server's own
`usec_per_call` for XAUTOCLAIM (INFO commandstats, reset just before the loop) is
printed as well, so the loopback/client share of its latency is visible.

Note that XAUTOCLAIM scans at most COUNT*10 PEL entries per call (Redis's
`attempts` limit), so with 1,000 idle entries spread over 20,000 it returns about
half of them; CLAIM returns all 1,000. The "returned" column shows this.

Part 2 (scaling). Engine CLAIM latency with a 1,000,000-entry PEL vs a 20,000-entry
PEL, same call shape (1,000 entries idle 1,100 ms, all others idle 50 ms). Setting
all 1M idles per iteration would take seconds, so both engines use a ManualClock
frozen at T: every entry is delivered at T-50 once; per iteration the 1,000 chosen
entries get `XCLAIM ... IDLE 1100` (delivery time T-1100), the CLAIM call is timed,
then the same 1,000 get `XCLAIM ... IDLE 50` (back to T-50, owner c1). The PEL seen
by every timed call is therefore exactly the PR's shape, and the 20k and 1M engines
go through the identical procedure, interleaved. Stream IDs are explicit,
1,000 per millisecond (about the rate `XADD *` reaches at full speed).

Part 3 (the slowest call). Consumer c1 owns a 500,000-entry PEL, all of it idle;
c2 takes it all, 1,000 entries per call (engine: XREADGROUP ... CLAIM; redis-server:
XAUTOCLAIM from the returned cursor). c1 loses every entry, so the engine sweeps the
stale keys of its PEL on the way (engine/core/groups.pyx): the table shows whether any
single call pays for that (max) beside the median.
"""
from __future__ import annotations

import argparse
import gc
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as C  # noqa: E402  (also makes the checkout's `engine` importable)

from engine import Engine, ManualClock  # noqa: E402

BATCH = 1000          # IDs per setup XCLAIM call
HOT = 1000            # entries made claimable per iteration
HOT_IDLE = 1100
COLD_IDLE = 50
MIN_IDLE = 1000
COUNT = 1000


# -- part 1: the PR workload -------------------------------------------------------

def fill_engine(n: int):
    e = Engine()
    for _ in range(n):
        e.execute("XADD", "s", "*", "f", "v")
    e.execute("XGROUP", "CREATE", "s", "g", "0")
    rep = e.execute("XREADGROUP", "GROUP", "g", "c1", "COUNT", n, "STREAMS", "s", ">")
    ids = [m[0] for m in rep[0][1]]
    assert len(ids) == n, len(ids)
    return e, ids


def fill_redis(raw, n: int):
    raw("FLUSHALL")
    conn = raw.conn
    for lo in range(0, n, BATCH):
        k = min(BATCH, n - lo)
        conn.send_packed_command(conn.pack_commands(
            [("XADD", "s", "*", "f", "v")] * k))
        for _ in range(k):
            conn.read_response()
    raw("XGROUP", "CREATE", "s", "g", "0")
    rep = raw("XREADGROUP", "GROUP", "g", "c1", "COUNT", n, "STREAMS", "s", ">")
    ids = [m[0] for m in rep[0][1]]
    assert len(ids) == n, len(ids)
    return ids


def set_idles(call, ids, hot_idx, cold_idx) -> None:
    """Untimed: the 1,000 chosen entries idle 1,100 ms, all others 50 ms, owner c1."""
    for lo in range(0, len(cold_idx), BATCH):
        call("XCLAIM", "s", "g", "c1", 0, *[ids[i] for i in cold_idx[lo:lo + BATCH]],
             "IDLE", COLD_IDLE, "JUSTID")
    call("XCLAIM", "s", "g", "c1", 0, *[ids[i] for i in hot_idx],
         "IDLE", HOT_IDLE, "JUSTID")


def part1(args, srv):
    n = args.entries
    e, e_ids = fill_engine(n)
    contenders = []   # (name, setup(hot, cold), timed() -> number returned)

    def engine_claim():
        rep = e.execute("XREADGROUP", "GROUP", "g", "c2", "COUNT", COUNT,
                        "CLAIM", MIN_IDLE, "STREAMS", "s", ">")
        return len(rep[0][1]) if rep else 0

    def engine_autoclaim():
        return len(e.execute("XAUTOCLAIM", "s", "g", "c2", MIN_IDLE, "0-0",
                             "COUNT", COUNT)[1])

    contenders.append(("engine XREADGROUP ... CLAIM",
                       lambda h, c: set_idles(e.execute, e_ids, h, c), engine_claim))
    contenders.append(("engine XAUTOCLAIM",
                       lambda h, c: set_idles(e.execute, e_ids, h, c), engine_autoclaim))
    raw = None
    if srv is not None:
        raw = C.RawConnection(srv.client(protocol=2))
        r_ids = fill_redis(raw, n)

        def redis_autoclaim():
            return len(raw("XAUTOCLAIM", "s", "g", "c2", MIN_IDLE, "0-0",
                           "COUNT", COUNT)[1])

        contenders.append(("redis-server %s XAUTOCLAIM (redis-py)" % srv.version,
                           lambda h, c: set_idles(raw, r_ids, h, c), redis_autoclaim))
        raw("CONFIG", "RESETSTAT")

    rng = random.Random(args.seed)
    times = {name: [] for name, _, _ in contenders}
    returned = {name: [] for name, _, _ in contenders}
    gc.collect()
    gc.freeze()
    clock = time.perf_counter
    for it in range(args.iterations):
        hot = sorted(rng.sample(range(n), HOT))
        hs = set(hot)
        cold = [i for i in range(n) if i not in hs]
        k = it % len(contenders)
        for name, setup, timed in contenders[k:] + contenders[:k]:
            setup(hot, cold)
            t0 = clock()
            got = timed()
            t1 = clock()
            times[name].append(t1 - t0)
            returned[name].append(got)
    gc.unfreeze()

    server_usec = None
    if raw is not None:
        stats = raw("INFO", "commandstats").decode()
        for line in stats.splitlines():
            if line.startswith("cmdstat_xautoclaim:"):
                fields = dict(kv.split("=") for kv in line.split(":", 1)[1].split(","))
                server_usec = float(fields["usec_per_call"])
        raw.close()

    bad = [x for x in returned[contenders[0][0]] if x != HOT]
    if bad:
        print("WARNING: engine CLAIM returned %d entries in %d iterations (expected %d)"
              % (bad[0], len(bad), HOT))

    rows = []
    stats = {}
    for name, _, _ in contenders:
        s = C.summary(times[name])
        stats[name] = s
        rows.append([name, "%.0f" % (sum(returned[name]) / len(returned[name])),
                     C.fmt_ms(s["avg"]), C.fmt_ms(s["median"]), C.fmt_ms(s["p95"]),
                     C.fmt_ms(s["p99"]), C.fmt_ms(s["min"])])
    if srv is not None:
        rows.append(["redis-server XAUTOCLAIM, server side (usec_per_call)", "",
                     C.fmt_ms(server_usec / 1e6 if server_usec is not None else None),
                     "", "", "", ""])
    else:
        rows.append(["redis-server XAUTOCLAIM", C.NA_REDIS, "", "", "", "", ""])
    C.print_table(
        "Part 1: one call, %s-entry PEL, %s entries idle %s ms, rest %d ms; "
        "%d iterations (ms per call)" % ("{:,}".format(n), "{:,}".format(HOT),
                                         "{:,}".format(HOT_IDLE), COLD_IDLE,
                                         args.iterations),
        ["contender", "returned", "avg", "median", "p95", "p99", "min"], rows)

    claim = stats[contenders[0][0]]
    auto = stats[contenders[1][0]]
    redis_s = stats[contenders[2][0]] if srv is not None else None
    r1 = redis_s["median"] / claim["median"] if redis_s else None
    r2 = redis_s["median"] / auto["median"] if redis_s else None
    r3 = (server_usec / 1e6) / claim["avg"] if server_usec else None
    rows = [
        ["redis XAUTOCLAIM median / engine CLAIM median", C.fmt_ratio(r1), ">= 22.5x",
         C.verdict(None if r1 is None else r1 >= 22.5)],
        ["redis XAUTOCLAIM median / engine XAUTOCLAIM median", C.fmt_ratio(r2), "> 1x",
         C.verdict(None if r2 is None else r2 > 1)],
        ["(info) redis server-side avg / engine CLAIM avg", C.fmt_ratio(r3), "", ""],
    ]
    C.print_table("Part 1 ratios", ["ratio", "value", "target", ""], rows, "lrrl")
    return claim


# -- part 2: scaling with the PEL size ----------------------------------------------

T = 1_700_000_000_000     # the frozen "now" of the ManualClock engines
PER_MS = 1000             # stream entries per millisecond of ID


class ScaledEngine:
    def __init__(self, n: int) -> None:
        self.n = n
        self.base = T - 10_000 - n // PER_MS   # IDs lie before "now"
        self.clock = ManualClock(T - COLD_IDLE)
        e = self.e = Engine(clock=self.clock)
        ex = e.execute
        base = self.base
        for i in range(n):
            ex("XADD", "s", "%d-%d" % (base + i // PER_MS, i % PER_MS), "f", "v")
        ex("XGROUP", "CREATE", "s", "g", "0")
        got = 0
        while got < n:   # every entry delivered at T-50
            rep = ex("XREADGROUP", "GROUP", "g", "c1", "COUNT", 10_000, "STREAMS", "s", ">")
            got += len(rep[0][1])
            del rep
        self.clock.set(T)

    def id_of(self, i: int) -> bytes:
        return b"%d-%d" % (self.base + i // PER_MS, i % PER_MS)

    def iteration(self, rng: random.Random) -> float:
        ids = [self.id_of(i) for i in sorted(rng.sample(range(self.n), HOT))]
        ex = self.e.execute
        ex("XCLAIM", "s", "g", "c1", 0, *ids, "IDLE", HOT_IDLE, "JUSTID")
        t0 = time.perf_counter()
        rep = ex("XREADGROUP", "GROUP", "g", "c2", "COUNT", COUNT, "CLAIM", MIN_IDLE,
                 "STREAMS", "s", ">")
        t1 = time.perf_counter()
        got = rep[0][1]
        if len(got) != HOT or got[0][2] != HOT_IDLE:
            raise AssertionError("CLAIM returned %d entries, first idle %r"
                                 % (len(got), got[0][2] if got else None))
        ex("XCLAIM", "s", "g", "c1", 0, *ids, "IDLE", COLD_IDLE, "JUSTID")
        return t1 - t0


def part2(args, claim_realclock):
    t0 = time.perf_counter()
    small = ScaledEngine(args.entries)
    big = ScaledEngine(args.scale_entries)
    build = time.perf_counter() - t0
    rng = random.Random(args.seed + 1)
    times = {small.n: [], big.n: []}
    round_ratios = []
    gc.collect()
    gc.freeze()
    for r in range(args.scale_rounds):
        if r and args.scale_pause:
            time.sleep(args.scale_pause)
        this_round = {small.n: [], big.n: []}
        for it in range(args.scale_iterations):
            pair = (small, big) if it % 2 == 0 else (big, small)
            for eng in pair:
                this_round[eng.n].append(eng.iteration(rng))
        for n, ts in this_round.items():
            times[n].extend(ts)
        round_ratios.append(C.summary(this_round[big.n])["median"]
                            / C.summary(this_round[small.n])["median"])
    gc.unfreeze()
    s_small = C.summary(times[small.n])
    s_big = C.summary(times[big.n])
    rows = []
    for n, s in ((small.n, s_small), (big.n, s_big)):
        rows.append(["engine CLAIM, %s-entry PEL" % "{:,}".format(n), C.fmt_ms(s["avg"]),
                     C.fmt_ms(s["median"]), C.fmt_ms(s["p95"]), C.fmt_ms(s["p99"]),
                     C.fmt_ms(s["min"])])
    rows.append(["(part 1, real clock, %s-entry PEL)" % "{:,}".format(args.entries),
                 C.fmt_ms(claim_realclock["avg"]), C.fmt_ms(claim_realclock["median"]),
                 C.fmt_ms(claim_realclock["p95"]), C.fmt_ms(claim_realclock["p99"]),
                 C.fmt_ms(claim_realclock["min"])])
    C.print_table(
        "Part 2: engine CLAIM latency vs PEL size, %d iterations each, ManualClock "
        "(build %.1f s) (ms per call)" % (len(times[small.n]), build),
        ["PEL", "avg", "median", "p95", "p99", "min"], rows)
    ratio = s_big["median"] / s_small["median"]
    ratio_rows = [["CLAIM median %s / %s" % ("{:,}".format(big.n), "{:,}".format(small.n)),
                   C.fmt_ratio(ratio), "<= 1.5x", C.verdict(ratio <= 1.5)]]
    if len(round_ratios) > 1:
        ratio_rows.append(["(info) per round of %d: min / max" % args.scale_iterations,
                           "%s / %s" % (C.fmt_ratio(min(round_ratios)),
                                        C.fmt_ratio(max(round_ratios))), "", ""])
    C.print_table("Part 2 ratio", ["ratio", "value", "target", ""], ratio_rows, "lrrl")


# -- part 3: the slowest call while one consumer loses its whole PEL ----------------

def drain_engine(n: int) -> list:
    clock = ManualClock(T)
    e = Engine(clock=clock)
    for i in range(n):
        e.execute("XADD", "s", "%d-%d" % (T - 10_000 + i // PER_MS, i % PER_MS), "f", "v")
    e.execute("XGROUP", "CREATE", "s", "g", "0")
    got = 0
    while got < n:
        got += len(e.execute("XREADGROUP", "GROUP", "g", "c1", "COUNT", 10_000,
                             "STREAMS", "s", ">")[0][1])
    clock.advance(10)
    times, claimed = [], 0
    gc.collect()
    gc.freeze()
    while claimed < n:
        t0 = time.perf_counter()
        rep = e.execute("XREADGROUP", "GROUP", "g", "c2", "COUNT", COUNT, "CLAIM", 5,
                        "STREAMS", "s", ">")
        times.append(time.perf_counter() - t0)
        claimed += len(rep[0][1])
    gc.unfreeze()
    return times


def drain_redis(srv, n: int) -> list:
    raw = C.RawConnection(srv.client(protocol=2))
    fill_redis(raw, n)
    time.sleep(0.02)
    times, claimed, cursor = [], 0, b"0-0"
    while claimed < n:
        t0 = time.perf_counter()
        rep = raw("XAUTOCLAIM", "s", "g", "c2", 5, cursor, "COUNT", COUNT)
        times.append(time.perf_counter() - t0)
        cursor = rep[0]
        claimed += len(rep[1])
    raw.close()
    return times


def part3(args, srv) -> None:
    n = args.drain_entries
    rows = []
    for name, times in (("engine XREADGROUP ... CLAIM", drain_engine(n)),
                        ("redis-server %s XAUTOCLAIM (redis-py)" % srv.version
                         if srv is not None else None,
                         drain_redis(srv, n) if srv is not None else None)):
        if name is None:
            rows.append(["redis-server XAUTOCLAIM", C.NA_REDIS, "", "", ""])
            continue
        st = C.summary(times)
        rows.append([name, len(times), C.fmt_ms(st["median"]), C.fmt_ms(st["p99"]),
                     C.fmt_ms(max(times))])
    C.print_table(
        "Part 3: c2 takes all of c1's %s pending entries, %s per call (ms per call)"
        % ("{:,}".format(n), "{:,}".format(COUNT)),
        ["contender", "calls", "median", "p99", "max"], rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="~20 s run")
    ap.add_argument("--iterations", type=int, default=None,
                    help="part 1 iterations (default 200, quick 60; the PR used 1000)")
    ap.add_argument("--entries", type=int, default=20_000)
    ap.add_argument("--scale-entries", type=int, default=1_000_000,
                    help="PEL size of the scaling check (default 1,000,000)")
    ap.add_argument("--scale-iterations", type=int, default=None,
                    help="part 2 iterations (default 200, quick 40)")
    ap.add_argument("--scale-rounds", type=int, default=1,
                    help="part 2 rounds of --scale-iterations each (the ratio of each "
                         "round is shown too: on a shared machine it drifts with the "
                         "neighbours' memory traffic)")
    ap.add_argument("--scale-pause", type=float, default=0.0,
                    help="seconds between part 2 rounds")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--skip-scaling", action="store_true")
    ap.add_argument("--drain-entries", type=int, default=None,
                    help="PEL size of part 3 (default 500,000, quick 100,000)")
    args = ap.parse_args(argv)
    C.quick_defaults(args, iterations=(60, 200), scale_iterations=(40, 200),
                     drain_entries=(100_000, 500_000))
    C.header("claim_bench", args)
    with C.redis_server() as srv:
        claim = part1(args, srv)
        part3(args, srv)
    if not args.skip_scaling:
        part2(args, claim)
    return 0


if __name__ == "__main__":
    sys.exit(main())
