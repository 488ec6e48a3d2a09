#!/usr/bin/env python3
"""The snapshot beside redis-server's RDB on the same data: write time, size on disk
and load time.

Data (seeded): one stream of N entries `XADD s * f <value>`, value = random hex
digits (--value-bytes, default 8), added under a ManualClock that starts a day in
the past and moves irregularly (about 2 entries per ms, gaps of 1-5 ms); one group
whose 10 consumers hold P pending entries (XREADGROUP COUNT 1-10,000 by a random
consumer, the clock moving 1-50 ms between reads). Defaults N = 1,000,000 and
P = 500,000 (the issue's data set); --quick: 100,000 and 50,000.

redis-server gets exactly the same state through Sluice's RESP base
(persist.resp_base, the `aof-use-rdb-preamble no` AOF base) piped into it with
`redis-cli --pipe`; its seconds and size are reported too.

  sluice  write    write_snapshot (temp file, fsync, rename, directory fsync)
  sluice  load     load_snapshot into a new Engine
  redis   SAVE     the SAVE command's latency (client side, loopback)
  redis   load     redis-server restarted on its dump.rdb: from the process start
                   until INFO reports loading:0 (polled every 2 ms), and the
                   "DB loaded from disk" seconds redis-server logs itself

Times are medians of --repeat runs (load: fresh engines / restarts each time).
"""
from __future__ import annotations

import argparse
import gc
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as C  # noqa: E402  (also makes the checkout's `engine` importable)

try:
    import persist  # noqa: F401
except ImportError:
    sys.path.insert(0, C.REPO)

from engine import Engine, ManualClock  # noqa: E402
from persist.resp_base import write_resp_base  # noqa: E402
from persist.snapshot import load_snapshot, write_snapshot  # noqa: E402

CONSUMERS = 10
READ_COUNT = 10_000


def build(entries: int, pending: int, value_bytes: int) -> Engine:
    rng = random.Random(42)
    clock = ManualClock(int(time.time() * 1000) - 86_400_000)
    engine = Engine(clock=clock)
    x = engine.execute
    digits = 4 * value_bytes
    for _ in range(entries):
        if rng.random() < 0.4:
            clock.advance(rng.choice((1, 1, 1, 2, 5)))
        x(b"XADD", b"s", b"*", b"f", b"%0*x" % (value_bytes, rng.getrandbits(digits)))
    x(b"XGROUP", b"CREATE", b"s", b"g", b"0")
    delivered = 0
    while delivered < pending:
        clock.advance(rng.randrange(1, 51))
        count = min(rng.randrange(1, READ_COUNT + 1), pending - delivered)
        x(b"XREADGROUP", b"GROUP", b"g", b"c%d" % rng.randrange(CONSUMERS), b"COUNT",
          count, b"STREAMS", b"s", b">")
        delivered += count
    return engine


def sluice_figures(engine: Engine, workdir: str, repeat: int) -> dict:
    path = os.path.join(workdir, "sluice.snap")
    writes, loads = [], []
    for _ in range(repeat):
        writes.append(write_snapshot(engine, path)["seconds"])
    for _ in range(repeat):
        target = Engine()
        gc.collect()
        started = time.perf_counter()
        info = load_snapshot(target, path)
        loads.append(time.perf_counter() - started)
        assert info["entries"] == engine.databases[0].peek(b"s").length
        del target
    resp_path = os.path.join(workdir, "base.aof")
    resp_times = []
    for _ in range(repeat):
        started = time.perf_counter()
        with open(resp_path, "wb") as f:
            write_resp_base(engine, f)
        resp_times.append(time.perf_counter() - started)
    return {"write": C.median(writes), "size": os.path.getsize(path), "load": C.median(loads),
            "resp_write": C.median(resp_times), "resp_size": os.path.getsize(resp_path),
            "resp_path": resp_path}


def info_field(port: int, section: str, field: str):
    """One INFO field over a raw socket (works while redis-server is loading)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"*2\r\n$4\r\nINFO\r\n$%d\r\n%s\r\n" % (len(section), section.encode()))
        data = b""
        while not data.endswith(b"\r\n") or data.count(b"\r\n") < 2:
            data += s.recv(65536)
            header, _, body = data.partition(b"\r\n")
            if header.startswith(b"$") and len(body) >= int(header[1:]) + 2:
                break
    m = re.search(rb"^%s:(\S+)" % field.encode(), data, re.M)
    return m.group(1).decode() if m else None


def redis_load(workdir: str) -> tuple[float, float | None]:
    """Starts redis-server on workdir/dump.rdb; (seconds until loading:0, seconds
    it logged for the load)."""
    port = C.free_port()
    log = os.path.join(workdir, "redis-load.log")
    if os.path.exists(log):
        os.unlink(log)
    started = time.perf_counter()
    proc = subprocess.Popen(
        [C.redis_server_path(), "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", workdir, "--dbfilename", "dump.rdb",
         "--logfile", log, "--loglevel", "notice", "--daemonize", "no"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:
            try:
                if info_field(port, "persistence", "loading") == "0":
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.perf_counter() - started > 120:
                raise RuntimeError("redis-server did not finish loading")
            time.sleep(0.002)
        elapsed = time.perf_counter() - started
    finally:
        proc.terminate()
        proc.wait(10)
    with open(log) as f:
        m = re.search(r"DB loaded from disk: ([\d.]+) seconds", f.read())
    return elapsed, float(m.group(1)) if m else None


def redis_figures(resp_path: str, workdir: str, repeat: int, entries: int) -> dict | None:
    if C.redis_server_path() is None or shutil.which("redis-cli") is None:
        print("note: redis-server/redis-cli not found; its columns read n/a", file=sys.stderr)
        return None
    rdir = os.path.join(workdir, "redis")
    os.makedirs(rdir)
    srv = C.RedisServer("--dir", rdir, "--dbfilename", "dump.rdb")
    try:
        with open(resp_path, "rb") as f:
            done = subprocess.run(["redis-cli", "-p", str(srv.port), "--pipe"], stdin=f,
                                  capture_output=True, check=True)
        if b"errors: 0," not in done.stdout:
            raise RuntimeError("redis-cli --pipe: %s" % done.stdout.decode())
        client = srv.client()
        assert client.xlen("s") == entries
        saves = []
        for _ in range(repeat):
            started = time.perf_counter()
            client.save()
            saves.append(time.perf_counter() - started)
        client.close()
    finally:
        srv.stop()
    loads = [redis_load(rdir) for _ in range(repeat)]
    logged = [s for _, s in loads if s is not None]
    return {"version": srv.version, "save": C.median(saves),
            "size": os.path.getsize(os.path.join(rdir, "dump.rdb")),
            "load": C.median(t for t, _ in loads),
            "load_logged": C.median(logged) if logged else None}


def mib(n: float | None) -> str:
    return "n/a" if n is None else "%.1f MiB" % (n / 2**20)


def secs(s: float | None) -> str:
    return "n/a" if s is None else "%.3f s" % s


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="100,000 entries, 50,000 pending")
    ap.add_argument("--entries", type=int, default=None, help="default 1,000,000")
    ap.add_argument("--pending", type=int, default=None, help="default 500,000")
    ap.add_argument("--value-bytes", type=int, default=8, help="hex digits per value")
    ap.add_argument("--repeat", type=int, default=3, help="runs per figure (median)")
    args = ap.parse_args(argv)
    entries = args.entries or (100_000 if args.quick else 1_000_000)
    pending = args.pending if args.pending is not None else (
        50_000 if args.quick else 500_000)
    C.header("snapshot_bench", args, "entries=%d pending=%d" % (entries, pending))
    started = time.perf_counter()
    engine = build(entries, pending, args.value_bytes)
    print("built the data set in %.1f s" % (time.perf_counter() - started), flush=True)
    with tempfile.TemporaryDirectory(prefix="snapshot-bench-") as workdir:
        ours = sluice_figures(engine, workdir, args.repeat)
        theirs = redis_figures(ours["resp_path"], workdir, args.repeat, entries)
    r = theirs or {}

    def ratio(a, b):
        return C.fmt_ratio(a / b) if a is not None and b else "n/a"

    def ok(a, b):
        return C.verdict(None if a is None or b is None else a <= b)

    rows = [
        ["size on disk", mib(ours["size"]), mib(r.get("size")),
         ratio(ours["size"], r.get("size")), "<= 1x", ok(ours["size"], r.get("size"))],
        ["write (snapshot / SAVE)", secs(ours["write"]), secs(r.get("save")),
         ratio(ours["write"], r.get("save")), "<= 1x", ok(ours["write"], r.get("save"))],
        ["load (until loading:0)", secs(ours["load"]), secs(r.get("load")),
         ratio(ours["load"], r.get("load")), "<= 1x", ok(ours["load"], r.get("load"))],
        ["load (redis-server's own log)", secs(ours["load"]), secs(r.get("load_logged")),
         ratio(ours["load"], r.get("load_logged")), "<= 1x",
         ok(ours["load"], r.get("load_logged"))],
        ["RESP AOF base: write / size", "%s / %s" % (secs(ours["resp_write"]),
                                                     mib(ours["resp_size"])),
         "", "", "", ""],
    ]
    C.print_table("Snapshot vs redis-server %s RDB: %s entries, %s pending (medians of %d)"
                  % (r.get("version", "n/a"), C.fmt_int(entries), C.fmt_int(pending),
                     args.repeat),
                  ["", "sluice", "redis-server", "ratio", "target", "verdict"], rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
