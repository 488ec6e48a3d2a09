"""The `cmsgpack` library (lua-cmsgpack's API and encoding choices): pack Lua values into
MessagePack, unpack MessagePack into Lua values (decoding through the msgpack package)."""
from __future__ import annotations

import math
import struct
from typing import Any

import msgpack
from lupa.lua51 import lua_type

from engine.scripting.errors import LuaRaise

MAX_NESTING = 16        # deeper tables are packed as nil


class _Pairs(list):
    """A decoded map, kept as its (key, value) pairs (keys may be unhashable)."""


def _pack_number(n: float | int, out: bytearray) -> None:
    if not math.isinf(n) and n == n and -2**63 <= n < 2**63 and int(n) == n:
        _pack_int(int(n), out)
    elif _fits_float32(n):
        out += b"\xca" + struct.pack(">f", n)
    else:
        out += b"\xcb" + struct.pack(">d", n)


def _fits_float32(n: float) -> bool:
    try:
        return struct.unpack("<f", struct.pack("<f", n))[0] == n
    except OverflowError:
        return False


def _pack_int(n: int, out: bytearray) -> None:
    if n >= 0:
        if n <= 0x7F:
            out.append(n)
        elif n <= 0xFF:
            out += b"\xcc" + struct.pack(">B", n)
        elif n <= 0xFFFF:
            out += b"\xcd" + struct.pack(">H", n)
        elif n <= 0xFFFFFFFF:
            out += b"\xce" + struct.pack(">I", n)
        else:
            out += b"\xcf" + struct.pack(">Q", n)
    elif n >= -32:
        out.append(n & 0xFF)
    elif n >= -128:
        out += b"\xd0" + struct.pack(">b", n)
    elif n >= -32768:
        out += b"\xd1" + struct.pack(">h", n)
    elif n >= -2**31:
        out += b"\xd2" + struct.pack(">i", n)
    else:
        out += b"\xd3" + struct.pack(">q", n)


def _header(n: int, small: int, small_max: int, codes: bytes, out: bytearray) -> None:
    if n <= small_max:
        out.append(small | n)
    elif n <= 0xFFFF:
        out += codes[:1] + struct.pack(">H", n)
    else:
        out += codes[1:] + struct.pack(">I", n)


def _array_length(table: Any) -> int:
    """n when the keys are exactly 1..n, else -1 (a map)."""
    count = largest = 0
    for key in table.keys():
        if type(key) not in (int, float) or key <= 0 or int(key) != key:
            return -1
        count += 1
        largest = max(largest, int(key))
    return largest if largest == count else -1


def pack_value(value: Any, out: bytearray, level: int = 0) -> None:
    t = type(value)
    if t is bytes:
        n = len(value)
        if n < 32:
            out.append(0xA0 | n)
        elif n <= 0xFF:
            out += b"\xd9" + struct.pack(">B", n)
        elif n <= 0xFFFF:
            out += b"\xda" + struct.pack(">H", n)
        else:
            out += b"\xdb" + struct.pack(">I", n)
        out += value
    elif t is bool:
        out.append(0xC3 if value else 0xC2)
    elif t is int or t is float:
        _pack_number(value, out)
    elif lua_type(value) == "table" and level < MAX_NESTING:
        length = _array_length(value)
        if length >= 0:
            _header(length, 0x90, 15, b"\xdc\xdd", out)
            for i in range(1, length + 1):
                pack_value(value[i], out, level + 1)
        else:
            items = list(value.items())
            _header(len(items), 0x80, 15, b"\xde\xdf", out)
            for key, item in items:
                pack_value(key, out, level + 1)
                pack_value(item, out, level + 1)
    else:
        out.append(0xC0)


def library(lua: Any) -> tuple[dict, dict]:
    table = lua.table

    def to_lua(value: Any) -> Any:
        """A decoded value as Lua's; the tables in it are made first and filled from a
        list of work (no Python recursion, however deep the data nests)."""
        work: list = []
        root = one(value, work)
        while work:
            target, source = work.pop()
            if type(source) is list:
                for i, item in enumerate(source, 1):
                    target[i] = one(item, work)
            else:
                for key, item in source:
                    key = one(key, work)
                    if key is not None:
                        target[key] = one(item, work)
        return root

    def one(value: Any, work: list) -> Any:
        if type(value) is list or type(value) is _Pairs:
            result = table()
            work.append((result, value))
            return result
        if type(value) is int and not -2**53 <= value <= 2**53:
            return float(value)
        return value

    def decode(data: bytes, offset: int, limit: int) -> Any:
        """(offset after the last value read or -1 at the end, values...)"""
        if type(data) is not bytes:
            raise LuaRaise(b"bad argument #1 to 'unpack' (string expected)")
        unpacker = msgpack.Unpacker(raw=True, strict_map_key=False, use_list=True,
                                    object_pairs_hook=_Pairs, max_buffer_size=max(len(data), 1))
        unpacker.feed(data[offset:])
        values = []
        total = len(data) - offset
        try:
            while (limit <= 0 or len(values) < limit) and unpacker.tell() < total:
                try:
                    values.append(to_lua(unpacker.unpack()))
                except msgpack.OutOfData:
                    raise LuaRaise(b"Missing bytes in input.") from None
        except (msgpack.ExtraData, msgpack.FormatError, msgpack.StackError, ValueError):
            raise LuaRaise(b"Bad data format in input.") from None
        consumed = offset + unpacker.tell()
        return (-1 if consumed >= len(data) else consumed), *values

    def pack(*args: Any) -> Any:
        if not args:
            raise LuaRaise(b"bad argument #0 to 'pack' (MessagePack pack needs input.)")
        out = bytearray()
        for arg in args:
            pack_value(arg, out)
        return bytes(out)

    def unpack(data: Any = None, *_: Any) -> Any:
        result = decode(data, 0, 0)
        return tuple(result[1:])

    def unpack_one(data: Any = None, offset: Any = 0, *_: Any) -> Any:
        return decode(data, int(offset or 0), 1)

    def unpack_limit(data: Any = None, limit: Any = 0, offset: Any = 0, *_: Any) -> Any:
        return decode(data, int(offset or 0), int(limit or 0))

    return ({b"pack": pack, b"unpack": unpack, b"unpack_one": unpack_one,
             b"unpack_limit": unpack_limit},
            {b"_NAME": b"cmsgpack", b"_VERSION": b"lua-cmsgpack 0.4.0",
             b"_COPYRIGHT": b"Copyright (C) 2012, Salvatore Sanfilippo",
             b"_DESCRIPTION": b"MessagePack C implementation for Lua"})
