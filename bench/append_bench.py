#!/usr/bin/env python3
"""APPEND growth: a string built by appending CHUNK_MB chunks until TOTAL_MB, on
sluice-server (this checkout, or PYTHONPATH's build) and on redis-server. Prints the
total time of the appends and the worst PING latency seen meanwhile by a second
client (one PING every 10 ms): a server that copies the whole string on each APPEND
is quadratic overall and stalls everyone for the length of each copy.

    python bench/append_bench.py [TOTAL_MB [CHUNK_MB]]     (default 512 8)
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time

import _common  # noqa: F401  (puts the checkout on sys.path)
import redis

from examples.processes import ServerProcess, free_port


def worst_ping(port: int, stop: threading.Event, out: list) -> None:
    client = redis.Redis(port=port)
    worst = 0.0
    while not stop.is_set():
        t0 = time.perf_counter()
        client.ping()
        worst = max(worst, time.perf_counter() - t0)
        time.sleep(0.01)
    out.append(worst)


def run(port: int, total_mb: int, chunk_mb: int) -> tuple[float, float]:
    client = redis.Redis(port=port, socket_timeout=600)
    client.delete("big")
    chunk = b"x" * (chunk_mb << 20)
    stop, worst = threading.Event(), []
    pinger = threading.Thread(target=worst_ping, args=(port, stop, worst))
    pinger.start()
    t0 = time.perf_counter()
    for _ in range(total_mb // chunk_mb):
        client.append("big", chunk)
    elapsed = time.perf_counter() - t0
    stop.set()
    pinger.join()
    assert client.strlen("big") == (total_mb // chunk_mb) * len(chunk)
    client.delete("big")
    return elapsed, worst[0]


def main() -> None:
    total_mb = int(sys.argv[1]) if len(sys.argv) > 1 else 512
    chunk_mb = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    with tempfile.TemporaryDirectory() as tmp:
        with ServerProcess(["--save", ""], workdir=tmp, loglevel="warning") as srv:
            took, ping = run(srv.port, total_mb, chunk_mb)
            print(f"sluice-server  {total_mb} MB by {chunk_mb} MB appends: {took:.2f} s, "
                  f"worst PING {ping * 1000:.0f} ms")
        port = free_port()
        proc = subprocess.Popen(["redis-server", "--port", str(port), "--save", "",
                                 "--dir", tmp], stdout=subprocess.DEVNULL)
        try:
            client = redis.Redis(port=port)
            for _ in range(100):
                try:
                    client.ping()
                    break
                except redis.ConnectionError:
                    time.sleep(0.05)
            took, ping = run(port, total_mb, chunk_mb)
            print(f"redis-server   {total_mb} MB by {chunk_mb} MB appends: {took:.2f} s, "
                  f"worst PING {ping * 1000:.0f} ms")
        finally:
            proc.terminate()
            proc.wait()


if __name__ == "__main__":
    main()
