"""The `bit` library (LuaBitOp's API): 32-bit operations on Lua numbers, results signed."""
from __future__ import annotations

import struct
from typing import Any

from engine.scripting.convert import lua_type_name
from engine.scripting.errors import LuaRaise

ROUNDING = 6755399441055744.0       # 2**52 + 2**51: adding it leaves the low 32 bits rounded
_double = struct.Struct("<d")
_low_word = struct.Struct("<I4x")


def _bits(n: Any) -> int | None:
    """A number as LuaBitOp reads it: rounded to nearest, modulo 2**32 (None: not a number)."""
    if type(n) is int and -2**51 <= n < 2**51:
        return n & 0xFFFFFFFF
    if type(n) is bytes:
        try:
            n = float(n)
        except ValueError:
            return None
    elif type(n) not in (int, float):
        return None
    return _low_word.unpack(_double.pack(float(n) + ROUNDING))[0]


def _signed(u: int) -> int:
    u &= 0xFFFFFFFF
    return u - 0x100000000 if u & 0x80000000 else u


def library(lua: Any) -> tuple[dict, dict]:
    def need(name: str, values: tuple, count: int) -> None:
        """Every one of the first `count` arguments must be a number."""
        for position in range(1, count + 1):
            value = values[position - 1] if position <= len(values) else None
            if _bits(value) is None:
                got = "no value" if position > len(values) else lua_type_name(value)
                raise LuaRaise(f"bad argument #{position} to '{name}' (number expected, got {got})".encode())

    def fold(name: str, op):
        def run(*args: Any) -> Any:
            need(name, args, max(len(args), 1))
            acc = _bits(args[0])
            for value in args[1:]:
                acc = op(acc, _bits(value))
            return _signed(acc)
        return run

    def unary(name: str, op):
        def run(*args: Any) -> Any:
            need(name, args, 1)
            return _signed(op(_bits(args[0])))
        return run

    def shift(name: str, op):
        def run(*args: Any) -> Any:
            need(name, args, 2)
            return _signed(op(_bits(args[0]), _bits(args[1]) & 31))
        return run

    def tohex(*args: Any) -> Any:
        need("tohex", args, 1)
        x, n = args[0], (args[1] if len(args) > 1 and args[1] is not None else 8)
        need("tohex", (x, n), 2)
        digits = _signed(_bits(n))
        upper = digits < 0
        digits = min(abs(digits), 8)
        text = "%0*x" % (8, _bits(x))
        text = text[8 - digits:] if digits else ""
        return (text.upper() if upper else text).encode()

    functions = {
        "tobit": unary("tobit", lambda x: x),
        "bnot": unary("bnot", lambda x: ~x),
        "bswap": unary("bswap", lambda x: int.from_bytes(x.to_bytes(4, "little"), "big")),
        "band": fold("band", lambda a, b: a & b),
        "bor": fold("bor", lambda a, b: a | b),
        "bxor": fold("bxor", lambda a, b: a ^ b),
        "lshift": shift("lshift", lambda x, n: x << n),
        "rshift": shift("rshift", lambda x, n: x >> n),
        "arshift": shift("arshift", lambda x, n: _signed(x) >> n),
        "rol": shift("rol", lambda x, n: (x << n) | (x >> (32 - n))),
        "ror": shift("ror", lambda x, n: (x >> n) | (x << (32 - n))),
        "tohex": tohex,
    }
    return {name.encode(): f for name, f in functions.items()}, {}


