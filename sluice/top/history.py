"""Rates between samples and their recent past: entries added per second per stream, the
server's commands per second, kept for the last minutes and drawn as sparklines."""
from __future__ import annotations

from collections import deque
from typing import Deque, Dict, Iterable, List, Optional, Tuple

from sluice.top.sample import Sample

BARS = "▁▂▃▄▅▆▇█"
SERVER = ""           # the key of the server's ops/s series
SPARK_WIDTH = 24      # bars in a sparkline


class History:
    """The rates of the samples taken in the last `seconds`."""

    def __init__(self, seconds: float = 300.0) -> None:
        self.seconds = seconds
        self.last: Optional[Sample] = None
        self.series: Dict[str, Deque[Tuple[float, float]]] = {}

    def add(self, sample: Sample) -> None:
        previous, self.last = self.last, sample
        if previous is None or sample.taken <= previous.taken:
            return
        elapsed = sample.taken - previous.taken
        self._record(SERVER, sample.taken, (sample.server.commands_processed
                                            - previous.server.commands_processed) / elapsed)
        before = {stream.name: stream.entries_added for stream in previous.streams}
        for stream in sample.streams:
            if stream.name in before:
                added = max(0, stream.entries_added - before[stream.name])
                self._record(stream.name, sample.taken, added / elapsed)
        for name in set(self.series) - {SERVER} - {stream.name for stream in sample.streams}:
            del self.series[name]

    def _record(self, key: str, taken: float, rate: float) -> None:
        series = self.series.setdefault(key, deque())
        series.append((taken, rate))
        while series and series[0][0] < taken - self.seconds:
            series.popleft()

    def rate(self, key: str) -> Optional[float]:
        """The latest rate of a stream (its name) or of the server (SERVER); None before two samples."""
        series = self.series.get(key)
        return series[-1][1] if series else None

    def rates(self, key: str, width: int = SPARK_WIDTH) -> List[float]:
        """The kept rates, at most `width` of them: consecutive ones averaged so that the
        line spans the whole history (the last minutes), not its last `width` samples."""
        rates = [rate for _, rate in self.series.get(key, ())]
        chunk = -(-len(rates) // width) or 1
        return [sum(rates[i:i + chunk]) / len(rates[i:i + chunk]) for i in range(0, len(rates), chunk)]


def sparkline(values: Iterable[float]) -> str:
    """The values as bars scaled to their maximum (empty before any)."""
    values = list(values)
    if not values:
        return ""
    top = max(values)
    if top <= 0:
        return BARS[0] * len(values)
    return "".join(BARS[min(len(BARS) - 1, int(value / top * (len(BARS) - 1) + 0.5))] for value in values)
