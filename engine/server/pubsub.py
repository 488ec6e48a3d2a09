"""Pub/Sub and keyspace notifications.

Channels and patterns map to the connections subscribed to them (ordered sets, so
messages go out in subscription order). A message is written into each subscriber's
reply buffer as a push (RESP3 `>`, a plain array in RESP2) and the subscriber is
flushed once per event-loop turn, so a pipeline that fires thousands of keyspace
events costs one socket write per subscriber.

Keyspace notifications (notify-keyspace-events) come from the events the engine
reports per command, (class letter, event, key): `__keyspace@<db>__:<key>` carries the
event name, `__keyevent@<db>__:<event>` the key, as in Redis.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from engine.core.glob import match
from engine.server.config.keyspace_events import (NOTIFY_EVICTED, NOTIFY_EXPIRED,
                                                  NOTIFY_GENERIC, NOTIFY_HASH, NOTIFY_KEYEVENT, NOTIFY_KEYSPACE, NOTIFY_LIST,
                                                  NOTIFY_NEW, NOTIFY_SET, NOTIFY_STREAM,
                                                  NOTIFY_STRING, NOTIFY_ZSET)

if TYPE_CHECKING:  # pragma: no cover
    from engine.server.connection import ClientConnection

# the class letters of the engine's events -> notify-keyspace-events bits
CLASS_BITS = {"g": NOTIFY_GENERIC, "$": NOTIFY_STRING, "t": NOTIFY_STREAM,
              "l": NOTIFY_LIST, "h": NOTIFY_HASH, "s": NOTIFY_SET, "z": NOTIFY_ZSET,
              "x": NOTIFY_EXPIRED, "e": NOTIFY_EVICTED, "n": NOTIFY_NEW}

MESSAGE = b"message"
PMESSAGE = b"pmessage"
SMESSAGE = b"smessage"


def _add(table: dict, own: dict, conn: "ClientConnection", name: bytes) -> bool:
    """Subscribes conn to a channel or pattern: in the server's table and in the
    session's own set. False when it was subscribed already."""
    if name in own:
        return False
    own[name] = None
    table.setdefault(name, {})[conn] = None
    conn.session.subscriptions_changed()
    return True


def _remove(table: dict, own: dict, conn: "ClientConnection", name: bytes) -> bool:
    """Undoes _add; a name left without subscribers leaves the table. False when conn
    was not subscribed."""
    if name not in own:
        return False
    del own[name]
    subscribers = table.get(name)
    if subscribers is not None:
        subscribers.pop(conn, None)
        if not subscribers:
            del table[name]
    conn.session.subscriptions_changed()
    return True


class PubSub:
    """The server's channels and patterns."""

    def __init__(self) -> None:
        self.channels: dict[bytes, dict] = {}    # channel -> {conn: None}
        self.patterns: dict[bytes, dict] = {}    # pattern -> {conn: None}
        self.shard_channels: dict[bytes, dict] = {}  # shard channel -> {conn: None}
        self.notify_flags = 0                    # notify-keyspace-events bits

    def channel_count(self) -> int:
        return len(self.channels)

    def pattern_count(self) -> int:
        return len(self.patterns)

    # subscriptions (the session keeps its own set too)

    def subscribe(self, conn: "ClientConnection", channel: bytes) -> bool:
        return _add(self.channels, conn.session.channels, conn, channel)

    def unsubscribe(self, conn: "ClientConnection", channel: bytes) -> bool:
        return _remove(self.channels, conn.session.channels, conn, channel)

    def psubscribe(self, conn: "ClientConnection", pattern: bytes) -> bool:
        return _add(self.patterns, conn.session.patterns, conn, pattern)

    def punsubscribe(self, conn: "ClientConnection", pattern: bytes) -> bool:
        return _remove(self.patterns, conn.session.patterns, conn, pattern)

    def ssubscribe(self, conn: "ClientConnection", channel: bytes) -> bool:
        return _add(self.shard_channels, conn.session.shard_channels, conn, channel)

    def sunsubscribe(self, conn: "ClientConnection", channel: bytes) -> bool:
        return _remove(self.shard_channels, conn.session.shard_channels, conn, channel)

    def drop(self, conn: "ClientConnection") -> None:
        """Forgets every subscription of a connection (closed, or RESET)."""
        for channel in list(conn.session.channels):
            self.unsubscribe(conn, channel)
        for pattern in list(conn.session.patterns):
            self.punsubscribe(conn, pattern)
        for channel in list(conn.session.shard_channels):
            self.sunsubscribe(conn, channel)

    # messages

    def publish(self, channel: bytes, message: bytes) -> int:
        """Sends message to the channel's subscribers and matching patterns; returns
        how many received it."""
        receivers = 0
        subscribers = self.channels.get(channel)
        if subscribers:
            push = [MESSAGE, channel, message]
            for conn in list(subscribers):
                conn.push(push)
                receivers += 1
        if self.patterns:
            for pattern, conns in list(self.patterns.items()):
                if match(pattern, channel):
                    push = [PMESSAGE, pattern, channel, message]
                    for conn in list(conns):
                        conn.push(push)
                        receivers += 1
        return receivers

    def spublish(self, channel: bytes, message: bytes) -> int:
        """Sends message to the shard channel's subscribers (no pattern sees it, as in
        Redis); returns how many received it."""
        subscribers = self.shard_channels.get(channel)
        if not subscribers:
            return 0
        push = [SMESSAGE, channel, message]
        for conn in list(subscribers):
            conn.push(push)
        return len(subscribers)

    def matching_channels(self, pattern=None, shard: bool = False) -> list:
        table = self.shard_channels if shard else self.channels
        if pattern is None:
            return list(table)
        return [c for c in table if match(pattern, c)]

    def numsub(self, channel: bytes, shard: bool = False) -> int:
        return len((self.shard_channels if shard else self.channels).get(channel, ()))

    # keyspace notifications

    def notify(self, db: int, events: list) -> None:
        """Publishes the keyspace/keyevent messages for a command's events."""
        flags = self.notify_flags
        if not flags or not (self.channels or self.patterns):
            return
        for cls, event, key in events:
            if not flags & CLASS_BITS.get(cls, 0):
                continue
            where = db
            if type(key) is tuple:          # (db, key): a key of another database
                where, key = key
            if flags & NOTIFY_KEYSPACE:
                self.publish(b"__keyspace@%d__:%s" % (where, key), event)
            if flags & NOTIFY_KEYEVENT:
                self.publish(b"__keyevent@%d__:%s" % (where, event), key)
