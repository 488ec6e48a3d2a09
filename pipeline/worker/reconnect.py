"""Riding out a server restart: a command that cannot reach the server is retried with
a growing pause until it gets through, so a worker keeps its in-flight results (an
acknowledgement, a failure note) instead of dying or dropping them."""
from __future__ import annotations

import logging
import threading
from typing import Callable, TypeVar

import redis

log = logging.getLogger("pipeline.worker")

T = TypeVar("T")

# The server is down or restarting (a BusyLoadingError is a ConnectionError).
DISCONNECTED = (redis.ConnectionError, redis.TimeoutError)
FIRST_PAUSE_S = 0.05
MAX_PAUSE_S = 1.0


def until_connected(call: Callable[[], T], what: str, give_up: threading.Event) -> T:
    """call()'s result once the server answers; the connection error, once `give_up` is set."""
    pause = FIRST_PAUSE_S
    while True:
        try:
            return call()
        except DISCONNECTED as error:
            if pause == FIRST_PAUSE_S:
                log.warning("%s: the server is unreachable, retrying until it is back: %s", what, error)
            if give_up.wait(pause):
                raise
            pause = min(2 * pause, MAX_PAUSE_S)
