"""ACL LOG: the refusals of the ACL (a command, a key, a channel, an AUTH), newest
first, a repeat of a recent one counted in its entry, at most acllog-max-len kept."""
from __future__ import annotations

import time
from typing import Optional

GROUPING_MS = 60000             # a repeat within this joins the earlier entry (Redis's)
REASONS = {1: "command", 2: "key", 3: "auth", 4: "channel"}    # by AclVerdict


class AclLogEntry:
    __slots__ = ("entry_id", "count", "reason", "context", "object", "username",
                 "client_info", "created_ms", "updated_ms")

    def reply(self, now_ms: int) -> dict:
        return {b"count": self.count, b"reason": self.reason.encode(),
                b"context": self.context.encode(), b"object": self.object,
                b"username": self.username,
                b"age-seconds": (now_ms - self.updated_ms) / 1000.0,
                b"client-info": self.client_info, b"entry-id": self.entry_id,
                b"timestamp-created": self.created_ms,
                b"timestamp-last-updated": self.updated_ms}


class AclLog:
    """The entries, newest first (see the module docstring)."""

    def __init__(self, max_len: int = 128) -> None:
        self.max_len = max_len
        self.entries: list[AclLogEntry] = []
        self.next_id = 0

    def add(self, reason: str, context: str, obj: bytes, username: bytes,
            client_info: bytes, now_ms: Optional[int] = None) -> None:
        now_ms = int(time.time() * 1000) if now_ms is None else now_ms
        for i, entry in enumerate(self.entries):
            if (entry.reason == reason and entry.context == context and entry.object == obj
                    and entry.username == username and now_ms - entry.updated_ms < GROUPING_MS):
                entry.count += 1
                entry.updated_ms = now_ms
                entry.client_info = client_info
                self.entries.insert(0, self.entries.pop(i))
                return
        entry = AclLogEntry()
        entry.entry_id = self.next_id
        self.next_id += 1
        entry.count = 1
        entry.reason, entry.context, entry.object = reason, context, obj
        entry.username, entry.client_info = username, client_info
        entry.created_ms = entry.updated_ms = now_ms
        self.entries.insert(0, entry)
        self.trim()

    def trim(self) -> None:
        del self.entries[self.max_len:]

    def reply(self, count: Optional[int]) -> list:
        now_ms = int(time.time() * 1000)
        shown = self.entries if count is None else self.entries[:max(count, 0)]
        return [entry.reply(now_ms) for entry in shown]

    def reset(self) -> None:
        self.entries = []
