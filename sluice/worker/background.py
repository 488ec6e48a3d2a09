"""The worker's helper loops (heartbeat, scan, expiry listener) and their two ways to
run: a daemon thread beside the sync worker, a task beside the asyncio one. A periodic
part is written once: its `step` is a flow (sluice/worker/flows.py)."""
from __future__ import annotations

import asyncio
import threading
from typing import Protocol

from sluice.worker.flows import run_sync


class Periodic(Protocol):
    name: str

    def interval(self) -> float:
        """Seconds until the next step."""

    async def step(self) -> None:
        """One round; handles its own server errors (the loop must outlive them)."""


class Background:
    """A daemon thread that runs until `stop`, so a dead main thread never waits on it."""

    def __init__(self, name: str) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        raise NotImplementedError


class EveryThread(Background):
    """Runs a periodic part's steps in a thread, with a sync client."""

    def __init__(self, part: Periodic) -> None:
        super().__init__(part.name)
        self._part = part

    def _run(self) -> None:
        while not self._stop.wait(self._part.interval()):
            run_sync(self._part.step())


async def stopped_within(stop: asyncio.Event, seconds: float) -> bool:
    """Waits up to `seconds`; True when `stop` was set by then."""
    try:
        await asyncio.wait_for(stop.wait(), seconds)
    except asyncio.TimeoutError:
        return False
    return True


async def every(part: Periodic, stop: asyncio.Event) -> None:
    """Runs a periodic part's steps on the event loop, with an asyncio client, until `stop`."""
    while not await stopped_within(stop, part.interval()):
        await part.step()
