"""The `struct` library (Roberto Ierusalimschy's lua-struct, as Redis loads it): pack, unpack
and size with its format letters."""
from __future__ import annotations

import struct
from typing import Any

from engine.scripting.convert import lua_type_name
from engine.scripting.errors import LuaRaise

SIZES = {"b": 1, "B": 1, "h": 2, "H": 2, "l": 8, "L": 8, "T": 8, "i": 4, "I": 4,
         "f": 4, "d": 8, "x": 1}
SIGNED = set("bhli")
MAX_INT_SIZE = 32


class StructError(Exception):
    pass


def _digits(fmt: str, i: int, default: int) -> tuple[int, int]:
    start = i
    while i < len(fmt) and fmt[i].isdigit():
        i += 1
    return (int(fmt[start:i]) if i > start else default), i


def options(fmt: str):
    """(letter, size, little_endian, alignment) for each item of the format."""
    little, max_align, i = True, 1, 0
    while i < len(fmt):
        c = fmt[i]
        i += 1
        if c == " ":
            continue
        if c in "<>=":
            little = c != ">"
            continue
        if c == "!":
            max_align, i = _digits(fmt, i, 8)
            if max_align & (max_align - 1):
                raise StructError(f"alignment {max_align} is not a power of 2")
            continue
        if c in "iI":
            size, i = _digits(fmt, i, 4)
            if size > MAX_INT_SIZE:
                raise StructError(f"integral size {size} is larger than limit of {MAX_INT_SIZE}")
        elif c == "c":
            size, i = _digits(fmt, i, 1)
        elif c == "s":
            size = 0
        elif c in SIZES:
            size = SIZES[c]
        else:
            raise StructError(f"bad argument #1 to '{{name}}' (invalid format option '{c}')")
        yield c, size, little, max_align


def _padding(offset: int, size: int, max_align: int, letter: str) -> int:
    """lua-struct's padding rule, kept as it computes it (sizes that are no power of two,
    such as i3, pad by its bit arithmetic too)."""
    if size == 0 or letter == "c":
        return 0
    size = min(size, max_align)
    return (size - (offset & (size - 1))) & (size - 1)


def _to_int(value: Any) -> int:
    if type(value) is bytes:
        value = float(value)
    if type(value) not in (int, float):
        raise TypeError
    return int(value)


def pack(fmt: bytes, *values: Any) -> bytes:
    out = bytearray()
    args = iter(enumerate(values, 2))
    for letter, size, little, max_align in options(fmt.decode("latin-1")):
        out += bytes(_padding(len(out), size, max_align, letter))
        if letter == "x":
            out.append(0)
            continue
        position, value = next(args, (len(values) + 2, None))     # missing reads as nil
        if letter in "fd":
            if type(value) not in (int, float):
                raise StructError(f"bad argument #{position} to 'pack' (number expected, got {lua_type_name(value)})")
            out += struct.pack(("<" if little else ">") + letter, value)
        elif letter in "cs":
            if type(value) in (int, float):
                value = b"%.14g" % value
            if type(value) is not bytes:
                raise StructError(f"bad argument #{position} to 'pack' (string expected, got {lua_type_name(value)})")
            if letter == "s":
                out += value + b"\0"
            else:
                size = size or len(value)
                if len(value) < size:     # lua-struct names the argument after this one
                    raise StructError(f"bad argument #{position + 1} to 'pack' (string too short)")
                out += value[:size]
        else:
            try:
                n = _to_int(value)
            except (TypeError, ValueError):
                raise StructError(f"bad argument #{position} to 'pack' (number expected, got {lua_type_name(value)})") from None
            out += (n & ((1 << (8 * size)) - 1)).to_bytes(size, "little" if little else "big")
    return bytes(out)


def unpack(fmt: bytes, data: bytes, init: int = 1) -> tuple:
    pos = init - 1
    results: list = []
    for letter, size, little, max_align in options(fmt.decode("latin-1")):
        pos += _padding(pos, size, max_align, letter)
        if letter == "s":
            end = data.find(b"\0", pos)
            if end < 0:
                raise StructError("unfinished string in data")
            results.append(data[pos:end])
            pos = end + 1
            continue
        if letter == "c" and size == 0:
            if not results or type(results[-1]) not in (int, float):
                raise StructError("format 'c0' needs a previous size")
            size = int(results.pop())
        if pos + size > len(data):
            raise StructError("bad argument #2 to 'unpack' (data string too short)")
        chunk = data[pos:pos + size]
        pos += size
        if letter == "x":
            continue
        if letter == "c":
            results.append(chunk)
        elif letter in "fd":
            results.append(struct.unpack(("<" if little else ">") + letter, chunk)[0])
        else:
            n = int.from_bytes(chunk, "little" if little else "big", signed=letter in SIGNED)
            results.append(n if -2**53 <= n <= 2**53 else float(n))
    return (*results, pos + 1)


def size(fmt: bytes) -> int:
    total = 0
    for letter, item_size, _, max_align in options(fmt.decode("latin-1")):
        if letter == "s" or (letter == "c" and item_size == 0):
            raise StructError(f"bad argument #1 to 'size' (option '{letter}' has no fixed size)")
        total += _padding(total, item_size, max_align, letter) + item_size
    return total


def library(lua: Any) -> tuple[dict, dict]:
    def guarded(name: str, f):
        def run(fmt: Any = None, *args: Any) -> Any:
            if type(fmt) is not bytes:
                got = "no value" if fmt is None else lua_type_name(fmt)
                raise LuaRaise(f"bad argument #1 to '{name}' (string expected, got {got})".encode())
            try:
                return f(fmt, *args)
            except StructError as err:
                raise LuaRaise(str(err).replace("{name}", name).encode()) from None
        return run

    def do_unpack(fmt: bytes, data: Any = None, init: Any = 1, *_: Any) -> tuple:
        if type(data) is not bytes:
            raise StructError(f"bad argument #2 to 'unpack' (string expected, got {lua_type_name(data)})")
        return unpack(fmt, data, int(init))

    return ({b"pack": guarded("pack", pack), b"unpack": guarded("unpack", do_unpack),
             b"size": guarded("size", lambda fmt, *_: size(fmt))}, {})
