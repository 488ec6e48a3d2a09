"""DUMP payloads in Redis's own format, so they move between redis-server and Sluice:
an RDB-encoded body, then the RDB version (2 bytes, little-endian) and the CRC-64 of
everything before it (8 bytes, little-endian). FUNCTION DUMP/RESTORE use it, and the
DUMP/RESTORE of keys (streams) can.

The body's strings are RDB strings: a length (6-bit, 14-bit, 32-bit or 64-bit
encoding), then the bytes; or an integer in 1, 2 or 4 bytes; or LZF-compressed data,
which redis-server writes for strings of more than 20 bytes. Sluice writes plain
strings (every Redis reads them) and reads all three.
"""
from __future__ import annotations

import struct

from engine.formats.crc64 import crc64
from engine.core.lzf import lzf_decompress

RDB_VERSION = 10            # what redis-server 7.0 writes (and the newest it reads)
TRAILER = struct.Struct("<HQ")
LZF_MAX_EXPANSION = 264
"""Bytes one byte of LZF data can stand for at most (a 3-byte back reference gives 264),
so that a payload's claimed length is checked before it is allocated."""


class PayloadError(ValueError):
    """A payload that does not parse (the message says where it went wrong)."""


def frame(body: bytes) -> bytes:
    """The payload of `body`: the version and checksum appended."""
    head = body + struct.pack("<H", RDB_VERSION)
    return head + struct.pack("<Q", crc64(head))


def check(payload: bytes, newest: int = RDB_VERSION) -> None:
    """PayloadError unless the payload's version is at most `newest` and its checksum
    holds."""
    if len(payload) < TRAILER.size:
        raise PayloadError("payload too short")
    version, crc = TRAILER.unpack_from(payload, len(payload) - TRAILER.size)
    if version > newest or crc64(memoryview(payload)[:-8]) != crc:
        raise PayloadError("version or checksum")


def encode_length(n: int) -> bytes:
    if n < 1 << 6:
        return bytes((n,))
    if n < 1 << 14:
        return bytes((0x40 | n >> 8, n & 0xff))
    if n < 1 << 32:
        return b"\x80" + struct.pack(">I", n)
    return b"\x81" + struct.pack(">Q", n)


def encode_string(s: bytes) -> bytes:
    """An RDB string, stored plain."""
    return encode_length(len(s)) + s


class BodyReader:
    """Reads a checked payload's opcodes and RDB strings in order. As in Redis, a string
    may run on into the trailer (its bytes then read as part of it): only the start of
    each item must lie in the body."""

    def __init__(self, payload: bytes) -> None:
        self.body = payload
        self.end = len(payload) - TRAILER.size
        self.pos = 0

    def at_end(self) -> bool:
        return self.pos >= self.end

    def _take(self, n: int) -> bytes:
        end = self.pos + n
        if end > len(self.body):
            raise PayloadError("payload ends early")
        data = self.body[self.pos:end]
        self.pos = end
        return data

    def byte(self) -> int:
        return self._take(1)[0]

    def length(self) -> int:
        n, special = self._length()
        if special:
            raise PayloadError("a string encoding where a length belongs")
        return n

    def _length(self) -> tuple[int, bool]:
        """A length, or (special encoding, True)."""
        first = self.byte()
        kind = first >> 6
        if kind == 0:
            return first & 0x3f, False
        if kind == 1:
            return (first & 0x3f) << 8 | self.byte(), False
        if kind == 3:
            return first & 0x3f, True
        if first == 0x80:
            return struct.unpack(">I", self._take(4))[0], False
        if first == 0x81:
            return struct.unpack(">Q", self._take(8))[0], False
        raise PayloadError("unknown length encoding")

    def string(self) -> bytes:
        n, special = self._length()
        if not special:
            return self._take(n)
        if n in (0, 1, 2):
            size = 1 << n
            return str(int.from_bytes(self._take(size), "little", signed=True)).encode()
        if n == 3:
            compressed, _ = self._length()
            length, _ = self._length()
            if length > compressed * LZF_MAX_EXPANSION:
                raise PayloadError("LZF length beyond what the data can expand to")
            try:
                return lzf_decompress(self._take(compressed), length)
            except ValueError as exc:
                raise PayloadError(str(exc)) from None
        raise PayloadError("unknown string encoding")
