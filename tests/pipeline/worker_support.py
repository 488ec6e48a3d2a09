"""What the worker tests (test_worker.py, test_worker_cluster.py) share: worker
processes (worker_process.py) killed with kill -9 at a moment that tests recovery or
stopped with SIGTERM, waiting, and the records the processes leave."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable

import redis

from servers import checkout_env
from sluice.worker import lock_key

WORKER_SCRIPT = Path(__file__).with_name("worker_process.py")
WAIT_S = 30.0


def wait_for(condition: Callable[[], bool], what: str, timeout: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def held_by(client: Any, stream: str, group: str, consumer: str) -> list[str]:
    """The entries pending for `consumer` (none before a worker created the group)."""
    try:
        return [p["message_id"] for p in client.xpending_range(stream, group, "-", "+", 100, consumer)]
    except redis.ResponseError:             # no stream or no group yet
        return []


def stopped(pid: int) -> bool:
    """Every thread of process `pid` is stopped (SIGSTOP is delivered asynchronously:
    until then a thread may still read entries it has not locked)."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            state = (task / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:        # a thread that just ended
            continue
        if state not in ("T", "t"):
            return False
    return True


class ProcessWorker:
    """A worker process (worker_process.py, MODE sync or async; `settings` as its
    CONFIG_JSON): killed with kill -9, or stopped with SIGTERM."""

    def __init__(self, port: int, consumer: str, mode: str, settings: dict) -> None:
        self.proc = subprocess.Popen(   # this checkout's code, not the one installed
            [sys.executable, str(WORKER_SCRIPT), str(port), consumer, mode, json.dumps(settings)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=checkout_env())
        self.consumer, self.stream, self.group = consumer, settings["stream"], settings["group"]

    def kill_holding_locks(self, client: Any) -> None:
        """kill -9 while it holds tasks, each under its lock: frozen (SIGSTOP) to look, so
        it is not caught between reading entries and locking them (a window only the
        scan recovers, see test_worker.py's test_a_dead_consumers_entries_are_recovered)."""
        deadline = time.monotonic() + WAIT_S
        while True:
            self.proc.send_signal(signal.SIGSTOP)
            wait_for(lambda: stopped(self.proc.pid), f"{self.consumer} to stop", timeout=5)
            time.sleep(0.02)            # a read it sent before it stopped is served by now
            held = held_by(client, self.stream, self.group, self.consumer)
            if held and all(client.exists(lock_key(self.stream, entry_id)) for entry_id in held):
                break
            self.proc.send_signal(signal.SIGCONT)
            assert time.monotonic() < deadline, f"{self.consumer} never held locked tasks"
            time.sleep(0.05)            # it runs: locks what it read, renews its locks
        self.proc.kill()
        self.proc.wait()

    def stop(self) -> Counter:
        """SIGTERM; the stats it printed."""
        self.proc.send_signal(signal.SIGTERM)
        out, err = self.proc.communicate(timeout=10)
        assert self.proc.returncode == 0, err
        return Counter(json.loads(out))

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate()


def done(client: Any) -> Counter:
    """How many times worker_process.py's handler finished each task."""
    return Counter(f["task"] for _, f in client.xrange("done"))


def stop_and_collect(running: list) -> Counter:
    """Stops the workers (SIGTERM for processes); the sum of their stats."""
    return sum((worker.stop() for worker in running), Counter())
