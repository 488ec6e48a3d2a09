"""Values across the Lua boundary, converted the way Redis 7 converts them.

Replies -> Lua (what redis.call returns) depend on the protocol the script chose with
redis.setresp; Lua -> replies (what a script returns) depend on the calling client's protocol.
"""
from __future__ import annotations

import math
from typing import Any

from lupa.lua51 import LuaRuntime, lua_type

from engine.core.errors import ResponseError
from engine.resp.reply import NULL_ARRAY, BigNumber, SetReply, Status

INT64_MIN = -2**63
INT64_MAX = 2**63 - 1


def lua_number_to_integer(n: float | int) -> int:
    """A Lua number as a C cast to long long does it on x86: truncated; NaN, infinities and
    values out of range all become the smallest integer."""
    if type(n) is int:
        return n if INT64_MIN <= n <= INT64_MAX else INT64_MIN
    if n != n or n in (math.inf, -math.inf) or not (INT64_MIN <= n < 2.0**63):
        return INT64_MIN
    return int(n)


def lua_type_name(value: Any) -> str:
    """The Lua type of a value lupa handed Python, as Lua's type() names it."""
    if value is None:
        return "nil"
    t = type(value)
    if t is bool:
        return "boolean"
    if t is bytes:
        return "string"
    if t is int or t is float:
        return "number"
    return lua_type(value) or "userdata"


def lua_tointeger(value: Any) -> int | None:
    """lua_tonumber then a C cast to int: numbers and numeric strings (spaces, hex) count,
    fractions are truncated; anything else is None."""
    if type(value) is bytes:
        text = value.decode("latin-1").strip()
        try:
            value = float(text)
        except ValueError:
            try:
                value = float(int(text, 16)) if text.lower().lstrip("-").startswith("0x") else None
            except ValueError:
                value = None
    if type(value) is int:
        return value
    if type(value) is float and value == value and abs(value) != math.inf:
        return int(value)
    return None


def format_number_arg(n: float | int) -> bytes:
    """A Lua number passed to redis.call as Redis 7 spells it (%.17g, C's nan sign)."""
    if type(n) is int and -10**17 < n < 10**17:
        return b"%d" % n
    n = float(n)
    if n != n:
        return b"-nan" if math.copysign(1.0, n) < 0 else b"nan"
    return b"%.17g" % n


class ReplyToLua:
    """Turns a command's reply into the Lua value redis.call hands the script."""

    def __init__(self, lua: LuaRuntime) -> None:
        self._table = lua.table_from

    def convert(self, value: Any, resp3: bool) -> Any:
        t = type(value)
        if t is int or t is bytes:
            return value
        if value is None or value is NULL_ARRAY:
            return None if resp3 else False
        if t is Status:
            return self._table({b"ok": bytes(value)})
        if t is list or t is tuple:
            return self._table([self.convert(item, resp3) for item in value])
        if t is bool:
            return value if resp3 else int(value)
        if t is float:
            return self._table({b"double": value}) if resp3 else b"%.17g" % value
        if t is dict:
            if resp3:
                return self._table({b"map": self._table(
                    {self.convert(k, resp3): self.convert(v, resp3) for k, v in value.items()})})
            flat = []
            for k, v in value.items():
                flat.append(self.convert(k, resp3))
                flat.append(self.convert(v, resp3))
            return self._table(flat)
        if t is set or t is frozenset:
            if resp3:
                return self._table({b"set": self._table({self.convert(k, resp3): True for k in value})})
            return self._table([self.convert(item, resp3) for item in value])
        if isinstance(value, BaseException):
            return self._table({b"err": str(value).encode("utf-8", "surrogateescape")})
        if isinstance(value, bytes):
            return bytes(value)
        if isinstance(value, int):
            return int(value)
        raise TypeError(f"no Lua form for a {t.__name__} reply")


def lua_to_reply(value: Any, resp3: bool) -> Any:
    """A script's return value as the reply the client gets (`resp3`: the script's
    protocol, redis.setresp)."""
    t = type(value)
    if t is bytes:
        return value
    if t is int or t is float:
        return lua_number_to_integer(value)
    if value is None:
        return None
    if t is bool:
        if resp3:
            return value
        return 1 if value else None
    if lua_type(value) != "table":
        return None
    err = value[b"err"]
    if type(err) is bytes:
        return ResponseError(err.decode("utf-8", "surrogateescape"))
    ok = value[b"ok"]
    if type(ok) is bytes:
        return Status(ok)
    double = value[b"double"]
    if type(double) is int or type(double) is float:
        return float(double)
    big = value[b"big_number"]
    if type(big) is bytes:
        return BigNumber(big)
    mapping = value[b"map"]
    if lua_type(mapping) == "table":
        return {lua_to_reply(k, resp3): lua_to_reply(v, resp3) for k, v in mapping.items()}
    members = value[b"set"]
    if lua_type(members) == "table":
        return SetReply([lua_to_reply(k, resp3) for k in members.keys()])
    items = []
    i = 1
    while True:
        item = value[i]
        if item is None:
            return items
        items.append(lua_to_reply(item, resp3))
        i += 1
