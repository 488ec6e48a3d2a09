"""Acknowledgements sent in groups: a handler that finishes while another one's
acknowledgement is on its way leaves its task to that sender, which takes every task
that finished meanwhile in its next script call (a group commit). One round trip thus
acknowledges as many tasks as finished during the previous one, with no timer and no
extra thread, the same for handler threads and asyncio tasks.

A task waiting here still holds its lock, renewed by the heartbeat, so no recovery
takes it; if its process dies before the group is sent, the lock expires and recovery
requeues the entry (its owner is gone, so running it again is allowed)."""
from __future__ import annotations

import threading
from typing import Generic, TypeVar

T = TypeVar("T")

# Most tasks one script call acknowledges (the script passes their IDs to one XACK).
MAX_GROUP = 500


class AckQueue(Generic[T]):
    def __init__(self) -> None:
        self._waiting: list[T] = []
        self._sending = False           # a caller is in its send loop (see `add`)
        self._guard = threading.Lock()

    def add(self, item: T) -> bool:
        """Queues a finished task. True: the caller becomes the sender and must call
        `next_group` until it returns nothing; False: the sender in flight takes it."""
        with self._guard:
            self._waiting.append(item)
            if self._sending:
                return False
            self._sending = True
            return True

    def next_group(self) -> list[T]:
        """The sender's next group; empty once nothing waits, which ends its turn."""
        with self._guard:
            group, self._waiting = self._waiting[:MAX_GROUP], self._waiting[MAX_GROUP:]
            if not group:
                self._sending = False
            return group

    def give_up(self) -> list[T]:
        """The sender's send failed for good: ends its turn; what still waited (its
        locks expire unrenewed, then recovery requeues those entries)."""
        with self._guard:
            left, self._waiting = self._waiting, []
            self._sending = False
            return left
