"""What the worker tests (test_worker.py, test_worker_cluster.py) share: worker
processes (worker_process.py), waiting, a kill -9 at a moment that tests recovery,
and the records the processes leave."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable

import redis

from pipeline.worker import lock_key

WORKER_SCRIPT = Path(__file__).with_name("worker_process.py")
WAIT_S = 30.0


@contextmanager
def worker_processes(port: int, base: dict) -> Iterator[Callable[..., subprocess.Popen]]:
    """Yields `start(consumer, **overrides)`, which starts a worker process with the
    settings `base` updated by `overrides` (recovery settings merged); kills what is
    left at the end."""
    started: list[subprocess.Popen] = []

    def start(consumer: str, **overrides: Any) -> subprocess.Popen:
        settings = {**base, **overrides}
        settings["recovery"] = {**base["recovery"], **overrides.get("recovery", {})}
        proc = subprocess.Popen([sys.executable, str(WORKER_SCRIPT), str(port), consumer, json.dumps(settings)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        started.append(proc)
        return proc

    try:
        yield start
    finally:
        for proc in started:
            if proc.poll() is None:
                proc.kill()
            proc.communicate()


def wait_for(condition: Callable[[], bool], what: str, timeout: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def kill_holding_locks(client: Any, stream: str, group: str, consumer: str, proc: subprocess.Popen) -> None:
    """kill -9 of the worker `proc` once it holds entries, every one under its lock.
    An entry it has read but not locked yet has no lock to expire, so only the scan
    could recover it; the process is stopped (SIGSTOP) while this looks, so what it
    sees is what the kill leaves."""
    deadline = time.monotonic() + WAIT_S
    while True:
        proc.send_signal(signal.SIGSTOP)
        try:
            held = [p["message_id"] for p in
                    client.xpending_range(stream, group, "-", "+", 100, consumername=consumer)]
        except redis.ResponseError:             # no group yet
            held = []
        if held and all(client.exists(lock_key(stream, entry_id)) for entry_id in held):
            proc.kill()
            proc.wait()
            return
        proc.send_signal(signal.SIGCONT)
        assert time.monotonic() < deadline, f"{consumer} never held entries under their locks"
        time.sleep(0.02)


def done(client: Any) -> Counter:
    """How many times worker_process.py's handler finished each task."""
    return Counter(f["task"] for _, f in client.xrange("done"))


def stop_and_collect(procs: list[subprocess.Popen]) -> Counter:
    """SIGTERM the workers; the sum of their stats."""
    total: Counter = Counter()
    for proc in procs:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=10)
        assert proc.returncode == 0, err
        total.update(json.loads(out))
    return total
