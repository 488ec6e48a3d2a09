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


def repr_arg(value: bytes) -> bytes:
    """sdscatrepr: a double-quoted form that split_args turns back into ``value``."""
    out = bytearray(b'"')
    for c in value:
        if c == 0x5C:
            out += b"\\\\"
        elif c == 0x22:
            out += b'\\"'
        elif c == 0x0A:
            out += b"\\n"
        elif c == 0x0D:
            out += b"\\r"
        elif c == 0x09:
            out += b"\\t"
        elif c == 0x07:
            out += b"\\a"
        elif c == 0x08:
            out += b"\\b"
        elif 0x20 <= c <= 0x7E:
            out.append(c)
        else:
            out += b"\\x%02x" % c
    out += b'"'
    return bytes(out)
