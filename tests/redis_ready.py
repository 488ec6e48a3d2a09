"""Waiting for a redis-server a test started itself (its own flags: TLS, node limits)."""
from __future__ import annotations

import subprocess
import time
from typing import Callable

import redis

READY_TIMEOUT_S = 10.0


def wait_for_ping(client: redis.Redis, proc: subprocess.Popen, log: Callable[[], str] = lambda: "") -> None:
    """Returns once the server answers PING through `client` (so its TLS and password
    settings are checked too); kills it and fails, with its log, when it exits or does
    not answer within READY_TIMEOUT_S."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while True:
        try:
            client.ping()
            return
        except redis.ConnectionError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                raise AssertionError(f"redis-server did not answer PING:\n{log()}") from None
            time.sleep(0.05)
