#!/usr/bin/env python3
"""Persistence, sluice-server beside redis-server in one run.

  XADD/fsync   `redis-benchmark -c 50 -n N XADD s * f v` with the AOF off, and on with
               appendfsync always, everysec and no (requests/s, ratio to redis-server
               under the same settings).
  data set     1,000,000 entries (XADD from redis-benchmark, pipelined) plus a
               500,000-entry PEL (XREADGROUP COUNT 10000), AOF on (everysec):
               - the AOF as logged: size on disk, load time at restart;
               - BGREWRITEAOF: time until done, size of the new base, load time;
  Load times are the servers' own log lines ("DB loaded from append only file: X
  seconds"), so process start-up is not counted on either side.

  python bench/persistence_bench.py            # full sizes
  python bench/persistence_bench.py --quick    # 100,000 entries, 50,000 pending
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import redis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as C  # noqa: E402  (also makes the checkout's `engine` importable)

from examples.processes import ServerProcess, free_port  # noqa: E402

LOADED = re.compile(r"DB loaded from append only file: ([0-9.]+) seconds")


class RedisProcess:
    """redis-server with a data directory and a log file we can read."""

    def __init__(self, workdir: str, args: list) -> None:
        self.dir = workdir
        self.args = args
        self.logfile = os.path.join(workdir, "redis.log")
        self.port = free_port()
        self.proc = None

    def start(self) -> "RedisProcess":
        self.proc = subprocess.Popen(
            [C.redis_server_path(), "--port", str(self.port), "--bind", "127.0.0.1",
             "--dir", self.dir, "--logfile", self.logfile, "--save", "", *self.args],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if redis.Redis(port=self.port).ping():
                    return self
            except redis.BusyLoadingError:
                pass
            except redis.ConnectionError:
                pass
            time.sleep(0.02)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(120)

    def log_text(self) -> str:
        with open(self.logfile, errors="replace") as fh:
            return fh.read()


def xadd_rate(port: int, n: int) -> float:
    out = subprocess.run(["redis-benchmark", "-p", str(port), "-c", "50", "-n", str(n),
                          "--csv", "XADD", "s", "*", "f", "v"],
                         capture_output=True, text=True, check=True).stdout
    row = [line for line in out.splitlines() if line.startswith('"XADD')][0]
    return float(row.split(",")[1].strip('"'))


def aof_bytes(workdir: str) -> int:
    aof = os.path.join(workdir, "appendonlydir")
    return sum(os.path.getsize(os.path.join(aof, f)) for f in os.listdir(aof))


def last_load_seconds(log: str) -> float:
    found = LOADED.findall(log)
    return float(found[-1]) if found else float("nan")


def fill(port: int, entries: int, pending: int) -> None:
    subprocess.run(["redis-benchmark", "-p", str(port), "-c", "4", "-P", "64", "-n",
                    str(entries), "-q", "XADD", "s", "*", "f", "v"], check=True,
                   stdout=subprocess.DEVNULL)
    r = redis.Redis(port=port)
    r.xgroup_create("s", "g", id="0")
    delivered = 0
    while delivered < pending:
        reply = r.execute_command("XREADGROUP", "GROUP", "g", "c", "COUNT",
                                  min(10_000, pending - delivered), "STREAMS", "s", ">")
        delivered += len(reply[0][1])
    r.close()


def rewrite_seconds(port: int) -> float:
    r = redis.Redis(port=port)
    t0 = time.monotonic()
    r.bgrewriteaof()
    while True:
        info = r.info("persistence")
        if not info["aof_rewrite_in_progress"] and not info["aof_rewrite_scheduled"]:
            break
        time.sleep(0.005)
    r.close()
    return time.monotonic() - t0


def measure_data_set(side: str, entries: int, pending: int) -> dict:
    workdir = tempfile.mkdtemp(prefix=f"pbench-{side}-")
    args = ["--appendonly", "yes", "--appendfsync", "everysec",
            "--auto-aof-rewrite-percentage", "0"]     # the log as written, not rewritten
    server = ServerProcess(args + ["--save", ""], workdir=workdir, loglevel="notice") \
        if side == "sluice" else RedisProcess(workdir, args)
    try:
        server.start()
        fill(server.port, entries, pending)
        r = redis.Redis(port=server.port)
        held = (r.xlen("s"), r.xpending("s", "g")["pending"])   # -P may overshoot -n a bit
        r.close()
        time.sleep(1.2)
        out = {"aof_mb": aof_bytes(workdir) / 2 ** 20}
        server.stop(timeout=120) if side == "sluice" else server.stop()
        server.start()
        out["aof_load_s"] = last_load_seconds(server.log_text())
        out["rewrite_s"] = rewrite_seconds(server.port)
        out["base_mb"] = aof_bytes(workdir) / 2 ** 20
        server.stop()
        server.start()
        out["base_load_s"] = last_load_seconds(server.log_text())
        r = redis.Redis(port=server.port)
        assert (r.xlen("s"), r.xpending("s", "g")["pending"]) == held, "data lost"
        r.close()
        return out
    finally:
        try:
            server.stop()
        except Exception:  # noqa: BLE001 - already stopped
            pass
        shutil.rmtree(workdir, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--requests", type=int, default=None)
    args = ap.parse_args()
    if C.redis_server_path() is None or shutil.which("redis-benchmark") is None:
        print(C.NA_REDIS)
        return 0
    n = args.requests or (50_000 if args.quick else 200_000)
    entries, pending = (100_000, 50_000) if args.quick else (1_000_000, 500_000)

    rows = []
    for label, extra in (("AOF off", ["--appendonly", "no"]),
                         ("always", ["--appendonly", "yes", "--appendfsync", "always"]),
                         ("everysec", ["--appendonly", "yes", "--appendfsync", "everysec"]),
                         ("no", ["--appendonly", "yes", "--appendfsync", "no"])):
        with tempfile.TemporaryDirectory() as d1, tempfile.TemporaryDirectory() as d2:
            ours = ServerProcess(extra + ["--save", ""], workdir=d1, loglevel="warning").start()
            theirs = RedisProcess(d2, extra).start()
            try:
                a, b = xadd_rate(ours.port, n), xadd_rate(theirs.port, n)
            finally:
                ours.stop()
                theirs.stop()
        rows.append([f"XADD/s, {label}", f"{a:,.0f}", f"{b:,.0f}", f"{a / b:.2f}x"])
    C.print_table(f"XADD throughput by fsync policy (redis-benchmark -c 50 -n {n})",
                  ["measure", "sluice", "redis-server", "ratio"], rows)

    ours = measure_data_set("sluice", entries, pending)
    theirs = measure_data_set("redis", entries, pending)
    labels = [("aof_mb", "AOF as logged, MiB"), ("aof_load_s", "AOF load, s"),
              ("rewrite_s", "BGREWRITEAOF, s"), ("base_mb", "rewritten base, MiB"),
              ("base_load_s", "base load, s")]
    rows = [[label, f"{ours[k]:.2f}", f"{theirs[k]:.2f}", f"{ours[k] / theirs[k]:.2f}x"]
            for k, label in labels]
    C.print_table(f"{entries:,} entries + {pending:,} pending (lower is better)",
                  ["measure", "sluice", "redis-server", "ratio"], rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
