"""The worker's helper threads (heartbeat, scan, expiry listener) share one life cycle:
a daemon thread that runs until `stop`, so a dead main thread never waits on them."""
from __future__ import annotations

import threading


class Background:
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
