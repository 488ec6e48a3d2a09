"""Values across the Lua boundary, converted the way Redis 7 converts them.

Replies -> Lua (what redis.call returns) depend on the protocol the script chose with
redis.setresp; Lua -> replies (what a script returns) depend on the calling client's protocol.
"""
from __future__ import annotations

import math
from typing import Any

from lupa.lua51 import LuaRuntime, lua_type

from engine.core.errors import ResponseError
from engine.resp.reply import NULL_ARRAY, BigNumber, SetReply, Status, Verbatim

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
        if t is set or t is frozenset or t is SetReply:
            if resp3:
                return self._table({b"set": self._table({self.convert(k, resp3): True for k in value})})
            return self._table([self.convert(item, resp3) for item in value])
        if isinstance(value, BaseException):
            return self._table({b"err": str(value).encode("utf-8", "surrogateescape")})
        if t is Verbatim and resp3:
            return self._table({b"verbatim_string": self._table(
                {b"format": value.format, b"string": bytes(value)})})
        if isinstance(value, bytes):
            return bytes(value)
        if isinstance(value, int):
            return int(value)
        raise TypeError(f"no Lua form for a {t.__name__} reply")


REPLY_DEPTH = 990
"""Tables nested this deep in a script's return value are replaced by Redis's stack-limit
error (Redis nests until its Lua stack is full, about 8,000 deep; the reply codec takes
1,000 levels, and the reply may be nested in EXEC's)."""
STACK_LIMIT = "ERR reached lua stack limit"
_OPENED = object()
_END = object()


class LuaToReply:
    """A script's return value as the reply the client gets. Tables are read raw, as Redis
    reads them (lua_rawget: no metatable runs), and walked with a stack of their own (no
    Python recursion); a table that contains itself ends in the stack-limit error."""

    def __init__(self, lua: LuaRuntime) -> None:
        self._rawget = lua.eval("rawget")
        self._getmetatable = lua.eval("getmetatable")
        # lupa hands an integral Lua number over as an int, -0 as 0: Lua tells the sign
        self._negative_zero = lua.eval("function(t) return 1 / rawget(t, 'double') < 0 end")

    def convert(self, value: Any, resp3: bool) -> Any:
        """`resp3`: the script's protocol (redis.setresp)."""
        stack: list = []        # [finish, the converted items, the items still to convert]
        while True:
            if len(stack) >= REPLY_DEPTH:
                reply = ResponseError(STACK_LIMIT)
            else:
                reply = self._one(value, resp3, stack)
            if reply is not _OPENED:
                if not stack:
                    return reply
                stack[-1][1].append(reply)
            while True:
                frame = stack[-1]
                value = next(frame[2], _END)
                if value is not _END:
                    break
                stack.pop()
                reply = frame[0](frame[1])
                if not stack:
                    return reply
                stack[-1][1].append(reply)

    def _one(self, value: Any, resp3: bool, stack: list) -> Any:
        """A value's reply, or _OPENED once a table's frame is on the stack."""
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
        if self._getmetatable(value) is None:
            get = value.__getitem__
        else:
            rawget = self._rawget
            get = lambda key: rawget(value, key)   # noqa: E731
        err = get(b"err")
        if type(err) is bytes:
            return ResponseError(err.decode("utf-8", "surrogateescape"))
        ok = get(b"ok")
        if type(ok) is bytes:
            return Status(ok)
        double = get(b"double")
        if type(double) is int or type(double) is float:
            if double == 0 and self._negative_zero(value):
                return -0.0
            return float(double)
        big = get(b"big_number")
        if type(big) is bytes:
            return BigNumber(big)
        verbatim = get(b"verbatim_string")
        if lua_type(verbatim) == "table":
            text = verbatim[b"string"]
            form = verbatim[b"format"]
            if type(text) is bytes and type(form) is bytes:
                return _verbatim(text, form)    # (a bulk string to RESP2 clients)
        mapping = get(b"map")
        if lua_type(mapping) == "table":
            stack.append([_map_reply, [], (x for pair in mapping.items() for x in pair)])
        else:
            members = get(b"set")
            if lua_type(members) == "table":
                stack.append([SetReply, [], iter(members.keys())])
            else:
                stack.append([list, [], _array_items(get)])
        return _OPENED


def _verbatim(text: bytes, form: bytes) -> Verbatim:
    """A script's verbatim string: its format cut to three bytes (at a NUL too) and
    padded with spaces, as Redis writes it."""
    reply = Verbatim(text)
    reply.format = form.split(bytes(1), 1)[0][:3].ljust(3)
    return reply


def _array_items(get: Any) -> Any:
    i = 1
    while (item := get(i)) is not None:
        yield item
        i += 1


def _map_reply(flat: list) -> dict:
    """A map from its keys and values in turn (a key that is an array becomes a tuple)."""
    return {(tuple(k) if type(k) is list else k): v for k, v in zip(flat[::2], flat[1::2])}
