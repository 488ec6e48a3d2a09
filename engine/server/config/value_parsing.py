"""Redis's value parsers, byte for byte: integers (strtoll; the strict string2ll is
engine.resp.numbers.strict_int, shared with the commands), memory sizes with units (memtoull,
and the form CONFIG REWRITE writes back), C integer wrap-around, and the str/bytes
conversions every directive uses.  Kept apart from the directive kinds so each quirk carried over
from Redis is tested on its own (tests/server/test_config.py).
"""
from __future__ import annotations

import os
from typing import Optional, Union

from engine.resp.args import c_string

INT_MAX = 2**31 - 1
UINT_MAX = 2**32 - 1
LLONG_MAX = 2**63 - 1
LLONG_MIN = -(2**63)
ULLONG_MAX = 2**64 - 1

StrOrBytes = Union[str, bytes]

_C_SPACE = b" \t\n\v\f\r"


def as_bytes(value: StrOrBytes) -> bytes:
    """A name or value as bytes (str through the file system encoding, so bytes round-trip)."""
    return value if isinstance(value, bytes) else os.fsencode(value)


def as_str(value: bytes) -> str:
    """Bytes as the str a directive stores (surrogateescape: any byte survives)."""
    return value.decode("utf-8", "surrogateescape")


def strtoll(s: bytes, base: int = 10) -> tuple[int, bytes, bool]:
    """C strtoll: (value, the rest after the number, overflowed).  No digits: (0, s, False)."""
    s = c_string(s)
    n = len(s)
    i = 0
    while i < n and s[i] in _C_SPACE:
        i += 1
    negative = False
    if i < n and s[i] in b"+-":
        negative = s[i] == 0x2D
        i += 1
    digits = b"01234567" if base == 8 else b"0123456789"
    start = i
    v = 0
    while i < n and s[i] in digits:
        v = v * base + (s[i] - 48)
        i += 1
    if i == start:
        return 0, s, False
    if negative:
        v = -v
    if v > LLONG_MAX:
        return LLONG_MAX, s[i:], True
    if v < LLONG_MIN:
        return LLONG_MIN, s[i:], True
    return v, s[i:], False


MEMORY_UNITS = {b"": 1, b"b": 1, b"k": 1000, b"kb": 1024, b"m": 1000**2, b"mb": 1024**2,
                b"g": 1000**3, b"gb": 1024**3}


def memtoull(s: bytes) -> Optional[int]:
    """Redis's memory values: digits then k/kb/m/mb/g/gb (any case; 1k = 1000, 1kb = 1024).

    None when invalid.  Quirks kept: an empty string (or a bare unit) is 0, leading zeros are
    fine, a number too big for 64 bits saturates to 2**64-1 (strtoull).  A number that only
    overflows once multiplied by its unit also saturates, as in the newest Redis
    (redis/redis#15390); 7.0 wrapped it around modulo 2**64.
    """
    s = c_string(s)
    if s[:1] == b"-":
        return None
    u = 0
    while u < len(s) and 48 <= s[u] <= 57:
        u += 1
    mul = MEMORY_UNITS.get(s[u:].lower())
    if mul is None or u >= 128:
        return None
    val = min(int(s[:u]) if u else 0, ULLONG_MAX)
    if val > ULLONG_MAX // mul:
        return ULLONG_MAX
    return val * mul


def format_memory(n: int) -> bytes:
    """How CONFIG REWRITE writes a byte count: the largest of gb/mb/kb that divides it."""
    for unit, size in ((b"gb", 1024**3), (b"mb", 1024**2), (b"kb", 1024)):
        if n and n % size == 0:
            return b"%d%s" % (n // size, unit)
    return b"%d" % n


def wrap_int32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - 2**32 if v >= 2**31 else v


def to_signed64(v: int) -> int:
    v &= ULLONG_MAX
    return v - 2**64 if v > LLONG_MAX else v

