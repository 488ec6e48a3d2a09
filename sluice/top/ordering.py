"""Which streams are shown, in what order: a filter on their names and a sort key, the
same for the live view and `--once --json`."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, List

from sluice.top.history import History
from sluice.top.sample import GroupReading, StreamReading


def _most(stream: StreamReading, figure: Callable[[GroupReading], int]) -> int:
    return max((figure(group) or 0 for group in stream.groups), default=0)


# sort key -> a stream's figure under it (name ascending, figures largest first)
SORT_KEYS: Dict[str, Callable[[StreamReading, History], object]] = {
    "name": lambda stream, history: stream.name,
    "length": lambda stream, history: stream.length,
    "rate": lambda stream, history: history.rate(stream.name) or 0.0,
    "memory": lambda stream, history: stream.memory or 0,
    "lag": lambda stream, history: _most(stream, lambda group: group.lag),
    "pending": lambda stream, history: _most(stream, lambda group: group.pending),
}


@dataclass
class Ordering:
    sort: str = "name"
    reverse: bool = False
    filter: str = ""          # a part of the stream's name; empty: every stream

    def next_sort(self) -> None:
        keys = list(SORT_KEYS)
        self.sort = keys[(keys.index(self.sort) + 1) % len(keys)]

    def apply(self, streams: List[StreamReading], history: History) -> List[StreamReading]:
        shown = [stream for stream in streams if self.filter in stream.name]
        figure = SORT_KEYS[self.sort]
        descending = self.sort != "name"
        shown.sort(key=lambda stream: stream.name)
        shown.sort(key=lambda stream: figure(stream, history), reverse=descending != self.reverse)
        return shown
