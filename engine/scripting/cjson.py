"""The `cjson` library (lua-cjson 2.1's API and output): JSON text <-> Lua values.

Numbers are written with 14 significant digits, an empty table as `{}`, a table whose keys
are 1..n (holes allowed up to lua-cjson's sparseness rule) as an array; decoding gives
`cjson.null` for JSON null."""
from __future__ import annotations

import math
import sys
from typing import Any

from lupa.lua51 import lua_type

from engine.scripting.convert import lua_type_name
from engine.scripting.errors import LuaRaise

ESCAPES = {i: b"\\u%04x" % i for i in range(32)}
ESCAPES.update({8: b"\\b", 9: b"\\t", 10: b"\\n", 12: b"\\f", 13: b"\\r", 34: b'\\"',
                92: b"\\\\", 47: b"\\/", 127: b"\\u007f"})
ESCAPE_TABLE = {i: e.decode() for i, e in ESCAPES.items()}

TOKEN_NAMES = {"{": "T_OBJ_BEGIN", "}": "T_OBJ_END", "[": "T_ARR_BEGIN", "]": "T_ARR_END",
               ":": "T_COLON", ",": "T_COMMA", "": "T_END"}
WHITESPACE = b" \t\n\r"
NUMBER_START = b"-0123456789"


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


def encode(value: Any, cfg: Config, depth: int = 0) -> str:
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
    if kind != "table":
        raise JsonError(f"Cannot serialise {kind or 'userdata'}: type not supported")
    depth += 1
    if depth > cfg.encode_depth:
        raise JsonError(f"Cannot serialise, excessive nesting ({depth})")
    length = _array_length(value, cfg)
    if length > 0:
        return "[" + ",".join(encode(value[i], cfg, depth) for i in range(1, length + 1)) + "]"
    parts = []
    for key, item in value.items():
        if type(key) is bytes:
            name = _string(key)
        elif type(key) in (int, float):
            name = '"' + _number(key, cfg) + '"'
        else:
            raise JsonError(f"Cannot serialise {lua_type_name(key)}: table key must be a number or string")
        parts.append(name + ":" + encode(item, cfg, depth))
    return "{" + ",".join(parts) + "}"


class Decoder:
    """A recursive-descent reader with lua-cjson's tokens and error messages."""

    def __init__(self, text: bytes, cfg: Config) -> None:
        self.text, self.cfg, self.table, self.pos, self.depth = text, cfg, cfg.table, 0, 0

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

    def value(self, token: tuple[str, Any, int]) -> Any:
        kind, value, at = token
        if kind in ("T_STRING", "T_NUMBER", "T_BOOLEAN", "T_NULL"):
            return value
        if kind == "T_OBJ_BEGIN":
            return self.container(at, self.object)
        if kind == "T_ARR_BEGIN":
            return self.container(at, self.array)
        raise self.fail("value", value if kind == "T_ERROR" else kind, at)

    def container(self, at: int, read) -> Any:
        self.depth += 1
        if self.depth > self.cfg.decode_depth:
            raise JsonError(f"Found too many nested data structures ({self.depth}) at character {at + 1}")
        result = read()
        self.depth -= 1
        return result

    def object(self) -> Any:
        result = self.table()
        token = self.token()
        if token[0] == "T_OBJ_END":
            return result
        while True:
            kind, key, at = token
            if kind != "T_STRING":
                raise self.fail("object key string", key if kind == "T_ERROR" else kind, at)
            kind, found, at = self.token()
            if kind != "T_COLON":
                raise self.fail("colon", found if kind == "T_ERROR" else kind, at)
            result[key] = self.value(self.token())
            kind, found, at = self.token()
            if kind == "T_OBJ_END":
                return result
            if kind != "T_COMMA":
                raise self.fail("comma or object end", found if kind == "T_ERROR" else kind, at)
            token = self.token()

    def array(self) -> Any:
        result = self.table()
        token = self.token()
        if token[0] == "T_ARR_END":
            return result
        index = 1
        while True:
            result[index] = self.value(token)
            index += 1
            kind, found, at = self.token()
            if kind == "T_ARR_END":
                return result
            if kind != "T_COMMA":
                raise self.fail("comma or array end", found if kind == "T_ERROR" else kind, at)
            token = self.token()

    def document(self) -> Any:
        result = self.value(self.token())
        kind, found, at = self.token()
        if kind != "T_END":
            raise self.fail("the end", found if kind == "T_ERROR" else kind, at)
        return result


def library(lua: Any) -> tuple[dict, dict]:
    cfg = Config(lua)

    def guarded(f):
        def run(*args: Any) -> Any:
            # each nesting level is a few Python frames: leave room for the configured depths
            limit = sys.getrecursionlimit()
            sys.setrecursionlimit(max(limit, 4 * max(cfg.encode_depth, cfg.decode_depth) + 200))
            try:
                return f(*args)
            except JsonError as err:
                raise LuaRaise(str(err).encode()) from None
            finally:
                sys.setrecursionlimit(limit)
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
                if type(value) not in (int, float) or not lo <= value <= hi:
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


