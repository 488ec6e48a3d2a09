"""The `cjson` library (lua-cjson 2.1's API and output): JSON text <-> Lua values.

Numbers are written with 14 significant digits, an empty table as `{}`, a table whose keys
are 1..n (holes allowed up to lua-cjson's sparseness rule) as an array; decoding gives
`cjson.null` for JSON null."""
from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from lupa.lua51 import lua_type

from engine.scripting.convert import lua_tointeger, lua_type_name
from engine.scripting.errors import LuaRaise

ESCAPES = {i: b"\\u%04x" % i for i in range(32)}
ESCAPES.update({8: b"\\b", 9: b"\\t", 10: b"\\n", 12: b"\\f", 13: b"\\r", 34: b'\\"',
                92: b"\\\\", 47: b"\\/", 127: b"\\u007f"})
ESCAPE_TABLE = {i: e.decode() for i, e in ESCAPES.items()}

TOKEN_NAMES = {"{": "T_OBJ_BEGIN", "}": "T_OBJ_END", "[": "T_ARR_BEGIN", "]": "T_ARR_END",
               ":": "T_COLON", ",": "T_COMMA", "": "T_END"}
WHITESPACE = b" \t\n\r"
NUMBER_START = b"-0123456789"
# How deep lua-cjson gets before its Lua stack (LUAI_MAXCSTACK slots, a few per level) is
# full: the depth its encode and decode report as excessive whatever the configured maximum.
ENCODE_STACK_DEPTH = 7997
DECODE_STACK_DEPTH = 7998


class JsonError(Exception):
    """An encode or decode failure, with lua-cjson's message."""


class Config:
    """lua-cjson keeps its settings across calls (and so across scripts)."""

    def __init__(self, lua: Any) -> None:
        self.null = lua.eval("newproxy()")          # a userdata of its own, as Redis's is
        self.same = lua.eval("rawequal")
        self.table = lua.table
        self.precision = 14
        self.sparse_convert, self.sparse_ratio, self.sparse_safe = False, 2, 10
        self.encode_depth = self.decode_depth = 1000
        self.keep_buffer = True
        self.encode_invalid = False
        self.decode_invalid = True


def _number(n: float | int, cfg: Config) -> str:
    if type(n) is float and (n != n or n in (math.inf, -math.inf)):
        if not cfg.encode_invalid:
            raise JsonError("Cannot serialise number: must not be NaN or Inf")
        return "null" if cfg.encode_invalid == "null" else ("nan" if n != n else
                                                             ("inf" if n > 0 else "-inf"))
    return "%.*g" % (cfg.precision, n)


def _string(s: bytes) -> str:
    return '"' + s.decode("latin-1").translate(ESCAPE_TABLE) + '"'


def _array_length(table: Any, cfg: Config) -> int:
    """How long the table is as an array, or -1 when it is an object."""
    largest = items = 0
    for key in table.keys():
        if type(key) in (int, float) and key >= 1 and math.floor(key) == key:
            largest = max(largest, int(key))
            items += 1
        else:
            return -1
    if cfg.sparse_ratio > 0 and largest > items * cfg.sparse_ratio and largest > cfg.sparse_safe:
        if not cfg.sparse_convert:
            raise JsonError("Cannot serialise table: excessively sparse array")
        return -1
    return largest


def _scalar(value: Any, cfg: Config) -> str:
    t = type(value)
    if t is bytes:
        return _string(value)
    if t is int or t is float:
        return _number(value, cfg)
    if t is bool:
        return "true" if value else "false"
    if value is None:
        return "null"
    kind = lua_type(value)
    if kind == "userdata" and cfg.same(value, cfg.null):
        return "null"
    raise JsonError(f"Cannot serialise {kind or 'userdata'}: type not supported")


def _array_items(table: Any, length: int) -> Iterator[tuple[str, Any]]:
    yield "", table[1]
    for i in range(2, length + 1):
        yield ",", table[i]


def _object_items(table: Any, cfg: Config) -> Iterator[tuple[str, Any]]:
    comma = ""
    for key, item in table.items():
        if type(key) is bytes:
            name = _string(key)
        elif type(key) in (int, float):
            name = '"' + _number(key, cfg) + '"'
        else:
            raise JsonError(f"Cannot serialise {lua_type_name(key)}: table key must be a number or string")
        yield comma + name + ":", item
        comma = ","


def encode(value: Any, cfg: Config) -> str:
    """JSON text of a Lua value, nested tables walked with a stack of their own (no Python
    recursion): nesting past encode_max_depth, or past what lua-cjson's Lua stack holds
    (ENCODE_STACK_DEPTH), is refused with lua-cjson's error."""
    out: list = []
    stack: list = []           # (the items still to write, the closing bracket)
    limit = min(cfg.encode_depth, ENCODE_STACK_DEPTH)
    while True:
        if type(value) is not bytes and lua_type(value) == "table":
            if len(stack) >= limit:
                raise JsonError(f"Cannot serialise, excessive nesting ({len(stack) + 1})")
            length = _array_length(value, cfg)
            if length > 0:
                out.append("[")
                stack.append((_array_items(value, length), "]"))
            else:
                out.append("{")
                stack.append((_object_items(value, cfg), "}"))
        else:
            out.append(_scalar(value, cfg))
        while stack:
            step = next(stack[-1][0], None)
            if step is not None:
                out.append(step[0])
                value = step[1]
                break
            out.append(stack.pop()[1])
        else:
            return "".join(out)


class Decoder:
    """A reader with lua-cjson's tokens and error messages."""

    def __init__(self, text: bytes, cfg: Config) -> None:
        self.text, self.cfg, self.table, self.pos = text, cfg, cfg.table, 0

    def fail(self, expected: str, found: str, at: int) -> JsonError:
        return JsonError(f"Expected {expected} but found {found} at character {at + 1}")

    def token(self) -> tuple[str, Any, int]:
        text, pos = self.text, self.pos
        while pos < len(text) and text[pos] in WHITESPACE:
            pos += 1
        start = pos
        if pos >= len(text):
            self.pos = pos
            return "T_END", None, start
        c = chr(text[pos])
        if c in "{}[]:,":
            self.pos = pos + 1
            return TOKEN_NAMES[c], None, start
        if c == '"':
            return "T_STRING", self.string(pos + 1, start), start
        for word, kind, value in ((b"true", "T_BOOLEAN", True), (b"false", "T_BOOLEAN", False),
                                  (b"null", "T_NULL", self.cfg.null)):
            if text.startswith(word, pos):
                self.pos = pos + len(word)
                return kind, value, start
        if text[pos] in NUMBER_START or (self.cfg.decode_invalid and c in "iInN+."):
            return "T_NUMBER", self.number(pos, start), start
        return "T_ERROR", "invalid token", start

    def number(self, pos: int, start: int) -> Any:
        end = pos
        while end < len(self.text) and self.text[end] not in WHITESPACE + b",]}:":
            end += 1
        word = self.text[pos:end].decode("latin-1")
        try:
            value = float(word)
        except ValueError:
            try:                        # strtod reads hexadecimal too
                value = float.fromhex(word)
            except ValueError:
                raise self.fail("value", "invalid number", start) from None
        self.pos = end
        return int(value) if value.is_integer() and abs(value) < 2**53 else value

    def string(self, pos: int, start: int) -> bytes:
        text, out = self.text, bytearray()
        while True:
            if pos >= len(text):
                raise self.fail("value", "unexpected end of string", pos)
            ch = text[pos]
            if ch == 34:
                self.pos = pos + 1
                return bytes(out)
            if ch != 92:
                out.append(ch)
                pos += 1
                continue
            esc = chr(text[pos + 1]) if pos + 1 < len(text) else ""
            simple = {'"': b'"', "\\": b"\\", "/": b"/", "b": b"\b", "f": b"\f", "n": b"\n",
                      "r": b"\r", "t": b"\t"}
            if esc in simple:
                out += simple[esc]
                pos += 2
            elif esc == "u":
                code, pos = self.unicode(pos, pos)
                out += chr(code).encode("utf-8", "surrogatepass")
            else:
                raise self.fail("value", "invalid escape code", pos)

    def unicode(self, pos: int, start: int) -> tuple[int, int]:
        def hex4(at: int) -> int:
            digits = self.text[at:at + 4]
            if len(digits) != 4 or not all(chr(d) in "0123456789abcdefABCDEF" for d in digits):
                raise self.fail("value", "invalid unicode escape code", start)
            return int(digits, 16)
        code = hex4(pos + 2)
        pos += 6
        if 0xDC00 <= code <= 0xDFFF:
            raise self.fail("value", "invalid unicode escape code", start)
        if 0xD800 <= code <= 0xDBFF:
            if self.text[pos:pos + 2] != b"\\u":
                raise self.fail("value", "invalid unicode escape code", start)
            low = hex4(pos + 2)
            if not 0xDC00 <= low <= 0xDFFF:
                raise self.fail("value", "invalid unicode escape code", start)
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
            pos += 6
        return code, pos

    def key(self, token: tuple[str, Any, int]) -> bytes:
        """An object's key and its colon."""
        kind, key, at = token
        if kind != "T_STRING":
            raise self.fail("object key string", key if kind == "T_ERROR" else kind, at)
        kind, found, at = self.token()
        if kind != "T_COLON":
            raise self.fail("colon", found if kind == "T_ERROR" else kind, at)
        return key

    def document(self) -> Any:
        """The one value of the text. Open arrays and objects wait on a stack of their own
        (no Python recursion), each with the slot its next value goes to: an index, or a
        key; nesting past decode_max_depth, or past what lua-cjson's Lua stack holds
        (DECODE_STACK_DEPTH), is refused with lua-cjson's error."""
        limit = min(self.cfg.decode_depth, DECODE_STACK_DEPTH)
        stack: list = []
        token = self.token()
        while True:
            kind, value, at = token
            if kind == "T_OBJ_BEGIN" or kind == "T_ARR_BEGIN":
                if len(stack) >= limit:
                    raise JsonError(f"Found too many nested data structures ({len(stack) + 1}) "
                                    f"at character {at + 1}")
                value = self.table()
                token = self.token()
                closed = token[0] == ("T_OBJ_END" if kind == "T_OBJ_BEGIN" else "T_ARR_END")
                if not closed:
                    if kind == "T_OBJ_BEGIN":
                        stack.append([value, self.key(token)])
                        token = self.token()
                    else:
                        stack.append([value, 1])
                    continue
            elif kind not in ("T_STRING", "T_NUMBER", "T_BOOLEAN", "T_NULL"):
                raise self.fail("value", value if kind == "T_ERROR" else kind, at)
            while stack:         # the value is complete: into its container
                frame = stack[-1]
                container, slot = frame
                container[slot] = value
                kind, found, at = self.token()
                in_array = type(slot) is int
                if kind == ("T_ARR_END" if in_array else "T_OBJ_END"):
                    value = stack.pop()[0]
                    continue
                if kind != "T_COMMA":
                    raise self.fail("comma or array end" if in_array else "comma or object end",
                                    found if kind == "T_ERROR" else kind, at)
                frame[1] = slot + 1 if in_array else self.key(self.token())
                token = self.token()
                break
            else:
                break
        kind, found, at = self.token()
        if kind != "T_END":
            raise self.fail("the end", found if kind == "T_ERROR" else kind, at)
        return value


def library(lua: Any) -> tuple[dict, dict]:
    cfg = Config(lua)

    def guarded(f):
        def run(*args: Any) -> Any:
            try:
                return f(*args)
            except JsonError as err:
                raise LuaRaise(str(err).encode()) from None
        return run

    def do_encode(*args: Any) -> Any:
        if len(args) != 1:
            raise LuaRaise(b"bad argument #1 to 'encode' (expected 1 argument)")
        return encode(args[0], cfg).encode("latin-1")

    def do_decode(*args: Any) -> Any:
        if len(args) != 1:
            raise LuaRaise(b"bad argument #1 to 'decode' (expected 1 argument)")
        text = args[0]
        if type(text) in (int, float):
            text = b"%.14g" % text
        if type(text) is not bytes:
            raise LuaRaise(b"bad argument #1 to 'decode' (string expected, got "
                           + lua_type_name(text).encode() + b")")
        return Decoder(text, cfg).document()

    def setting(name: str, lo: int, hi: int):
        def run(*args: Any) -> Any:
            if args and args[0] is not None:
                value = args[0]
                if type(value) not in (int, float):
                    value = lua_tointeger(value)
                    if value is None:
                        raise LuaRaise(f"bad argument #1 to '{name}' (number expected, got "
                                       f"{lua_type_name(args[0])})".encode())
                if not lo <= value <= hi:
                    raise LuaRaise(f"bad argument #1 to '{name}' (expected integer between "
                                   f"{lo} and {hi})".encode())
                setattr(cfg, ATTRS[name], int(value))
            return getattr(cfg, ATTRS[name])
        return run

    def switch(name: str, allow_null: bool = False):
        def run(*args: Any) -> Any:
            if args and args[0] is not None:
                value = args[0]
                if allow_null and value == b"null":
                    setattr(cfg, ATTRS[name], "null")
                else:
                    setattr(cfg, ATTRS[name], bool(value) and value not in (b"off", 0))
            current = getattr(cfg, ATTRS[name])
            return b"null" if current == "null" else bool(current)
        return run

    def sparse(*args: Any) -> Any:
        if args and args[0] is not None:
            cfg.sparse_convert = bool(args[0]) and args[0] != b"off"
        if len(args) > 1 and args[1] is not None:
            cfg.sparse_ratio = int(args[1])
        if len(args) > 2 and args[2] is not None:
            cfg.sparse_safe = int(args[2])
        return cfg.sparse_convert, cfg.sparse_ratio, cfg.sparse_safe

    functions = {
        b"encode": guarded(do_encode), b"decode": guarded(do_decode),
        b"encode_number_precision": setting("encode_number_precision", 1, 14),
        b"encode_max_depth": setting("encode_max_depth", 1, 2**31 - 1),
        b"decode_max_depth": setting("decode_max_depth", 1, 2**31 - 1),
        b"encode_keep_buffer": switch("encode_keep_buffer"),
        b"encode_invalid_numbers": switch("encode_invalid_numbers", allow_null=True),
        b"decode_invalid_numbers": switch("decode_invalid_numbers"),
        b"encode_sparse_array": sparse,
    }
    return functions, {b"null": cfg.null, b"_NAME": b"cjson", b"_VERSION": b"2.1.0"}


ATTRS = {"encode_number_precision": "precision", "encode_max_depth": "encode_depth",
         "decode_max_depth": "decode_depth", "encode_keep_buffer": "keep_buffer",
         "encode_invalid_numbers": "encode_invalid", "decode_invalid_numbers": "decode_invalid"}


