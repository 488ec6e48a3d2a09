"""Riding out a server restart: a command that cannot reach the server is retried with
a growing pause until it gets through, so a worker keeps its in-flight results (an
acknowledgement, a failure note) instead of dying or dropping them. A flow
(sluice/worker/flows.py): the sync and the asyncio worker share it."""
from __future__ import annotations

import logging
from typing import Callable, TypeVar

import redis

from sluice.worker.flows import Maybe, resolve

log = logging.getLogger("sluice.worker")

T = TypeVar("T")

# The server is down or restarting (a BusyLoadingError is a ConnectionError).
DISCONNECTED = (redis.ConnectionError, redis.TimeoutError)
FIRST_PAUSE_S = 0.05
MAX_PAUSE_S = 1.0


async def until_connected(call: Callable[[], Maybe[T]], what: str,
                          given_up_within: Callable[[float], Maybe[bool]]) -> T:
    """call()'s reply once the server answers; the connection error once
    `given_up_within(pause)` (which waits up to `pause` seconds) says to give up."""
    pause = FIRST_PAUSE_S
    while True:
        try:
            return await resolve(call())
        except DISCONNECTED as error:
            if pause == FIRST_PAUSE_S:
                log.warning("%s: the server is unreachable, retrying until it is back: %s", what, error)
            if await resolve(given_up_within(pause)):
                raise
            pause = min(2 * pause, MAX_PAUSE_S)
