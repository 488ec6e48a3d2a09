"""The notify-keyspace-events classes (Redis's notify.c): the NOTIFY_* bits the pub/sub layer
tests before publishing a keyspace event, and the letters ("AKE", "Kx", ...) CONFIG SET and
CONFIG GET read and write for them.
"""
from __future__ import annotations

from typing import Optional

from engine.resp.args import c_string

NOTIFY_KEYSPACE = 1 << 0   # K
NOTIFY_KEYEVENT = 1 << 1   # E
NOTIFY_GENERIC = 1 << 2    # g
NOTIFY_STRING = 1 << 3     # $
NOTIFY_LIST = 1 << 4       # l
NOTIFY_SET = 1 << 5        # s
NOTIFY_HASH = 1 << 6       # h
NOTIFY_ZSET = 1 << 7       # z
NOTIFY_EXPIRED = 1 << 8    # x
NOTIFY_EVICTED = 1 << 9    # e
NOTIFY_STREAM = 1 << 10    # t
NOTIFY_KEY_MISS = 1 << 11  # m
NOTIFY_LOADED = 1 << 12    # (module events only, no letter)
NOTIFY_MODULE = 1 << 13    # d
NOTIFY_NEW = 1 << 14       # n
NOTIFY_ALL = (NOTIFY_GENERIC | NOTIFY_STRING | NOTIFY_LIST | NOTIFY_SET | NOTIFY_HASH
              | NOTIFY_ZSET | NOTIFY_EXPIRED | NOTIFY_EVICTED | NOTIFY_STREAM | NOTIFY_MODULE)

_NOTIFY_LETTERS = {
    ord("A"): NOTIFY_ALL, ord("g"): NOTIFY_GENERIC, ord("$"): NOTIFY_STRING,
    ord("l"): NOTIFY_LIST, ord("s"): NOTIFY_SET, ord("h"): NOTIFY_HASH, ord("z"): NOTIFY_ZSET,
    ord("x"): NOTIFY_EXPIRED, ord("e"): NOTIFY_EVICTED, ord("K"): NOTIFY_KEYSPACE,
    ord("E"): NOTIFY_KEYEVENT, ord("t"): NOTIFY_STREAM, ord("m"): NOTIFY_KEY_MISS,
    ord("d"): NOTIFY_MODULE, ord("n"): NOTIFY_NEW,
}
_NOTIFY_ORDER = ((NOTIFY_GENERIC, b"g"), (NOTIFY_STRING, b"$"), (NOTIFY_LIST, b"l"),
                 (NOTIFY_SET, b"s"), (NOTIFY_HASH, b"h"), (NOTIFY_ZSET, b"z"),
                 (NOTIFY_EXPIRED, b"x"), (NOTIFY_EVICTED, b"e"), (NOTIFY_STREAM, b"t"),
                 (NOTIFY_MODULE, b"d"), (NOTIFY_NEW, b"n"))


def parse_notify_flags(classes: bytes) -> Optional[int]:
    """keyspaceEventsStringToFlags: the bit set for a class string, None on an unknown letter."""
    flags = 0
    for c in c_string(classes):
        bit = _NOTIFY_LETTERS.get(c)
        if bit is None:
            return None
        flags |= bit
    return flags


def format_notify_flags(flags: int) -> bytes:
    """keyspaceEventsFlagsToString: 'A' absorbs g$lshzxetd (and hides n), then K, E, m."""
    out = bytearray()
    if flags & NOTIFY_ALL == NOTIFY_ALL:
        out += b"A"
    else:
        for bit, letter in _NOTIFY_ORDER:
            if flags & bit:
                out += letter
    if flags & NOTIFY_KEYSPACE:
        out += b"K"
    if flags & NOTIFY_KEYEVENT:
        out += b"E"
    if flags & NOTIFY_KEY_MISS:
        out += b"m"
    return bytes(out)

