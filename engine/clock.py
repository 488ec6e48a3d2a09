"""The engine's one source of "now", so tests and log replay can set the time."""
import time


class SystemClock:
    """Wall-clock milliseconds, as Redis uses for stream IDs and idle times."""

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000


class ManualClock:
    """A clock that moves only when told to (tests, deterministic replays)."""

    def __init__(self, now_ms: int = 1_700_000_000_000) -> None:
        self._now = now_ms

    def now_ms(self) -> int:
        return self._now

    def set(self, now_ms: int) -> None:
        self._now = now_ms

    def advance(self, ms: int) -> None:
        self._now += ms
