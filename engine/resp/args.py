"""Words of a text line, quoted the way Redis quotes them (sdssplitargs / sdscatrepr).

Redis uses one tokenizer for inline requests, redis.conf lines and the AOF manifest; so do we:
the request parser's splitter in engine.resp.codec serves all three, and ``repr_arg`` writes
the quoted form it reads back.  It lives in the RESP layer so that persist/ (the manifest)
and the server's configuration share it without importing upwards.
"""
from __future__ import annotations

from typing import Optional

from engine.resp.codec import split_inline


def c_string(b: bytes) -> bytes:
    """What C string functions see: everything before the first NUL."""
    nul = b.find(b"\0")
    return b if nul < 0 else b[:nul]


def split_args(line: bytes) -> Optional[list[bytes]]:
    """sdssplitargs: split a line into arguments; None on unbalanced quotes.

    The same splitter as inline requests (engine.resp.codec), on what a C string
    function would see of the line (everything before a NUL byte)."""
    return split_inline(c_string(line))


_ESCAPES = {0x5C: b"\\\\", 0x22: b'\\"', 0x0A: b"\\n", 0x0D: b"\\r", 0x09: b"\\t", 0x07: b"\\a",
            0x08: b"\\b"}


def repr_arg(value: bytes) -> bytes:
    """sdscatrepr: a double-quoted form that split_args turns back into ``value``."""
    out = bytearray(b'"')
    for c in value:
        escaped = _ESCAPES.get(c)
        if escaped is not None:
            out += escaped
        elif 0x20 <= c <= 0x7E:
            out.append(c)
        else:
            out += b"\\x%02x" % c
    out += b'"'
    return bytes(out)
