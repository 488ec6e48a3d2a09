"""Server configuration: redis.conf files, the command line, CONFIG GET/SET/RESETSTAT/REWRITE.

Everything a Redis tool can observe follows redis-server 7.0 (checked against a real server by
tests/test_config.py): the file syntax, the way ``--directive value`` arguments are merged, the
fatal start-up report, the CONFIG replies and error texts, value formatting and CONFIG REWRITE.

How the server uses it
----------------------
::

    from engine.server.config import ServerConfig, ConfigError, usage, version_text

    cfg = ServerConfig()
    try:
        cmdline = cfg.apply_args(sys.argv[1:])   # [config-file] [--directive value ...] [-]
    except ConfigError as err:
        sys.stderr.write(err.report())           # Redis-style "*** FATAL CONFIG FILE ERROR" text
        sys.exit(1)
    if cmdline.action == "version": print(version_text()); sys.exit(0)
    if cmdline.action == "help": sys.stderr.write(usage()); sys.exit(1)
    os.chdir(cfg.dir)                            # like redis-server (ServerConfig never chdirs)
    engine = Engine(databases=cfg.databases,
                    stream_node_max_entries=cfg.stream_node_max_entries,
                    stream_node_max_bytes=cfg.stream_node_max_bytes)
    cfg.add_listener("stream-node-max-entries", lambda name, old, new: ...)
    cfg.add_resetstat_hook(stats.reset)
    # command table: CONFIG -> config_command(cfg, argv, resp3=ctx.resp3)

Values are typed (``cfg.port`` is an int, ``cfg.save`` a list of (seconds, changes), ``cfg.bind``
a list of str, ``cfg.notify_keyspace_events`` the NOTIFY_* bit set, ...); ``cfg["port"]`` and
``cfg.get("port")`` work too.  Strings are str decoded with surrogateescape (bytes round-trip).

Listeners run only for CONFIG SET (``ServerConfig.set``/``set_many``), never while loading the
configuration at start-up, and only for directives whose value really changed.  A listener is
``callback(name, old_value, new_value)``; raising ``ConfigApplyError("text")`` (or any exception)
vetoes the change: every value of that CONFIG SET is restored, listeners that already ran are
called again with (name, new, old), and the client gets
``ERR CONFIG SET failed (possibly related to argument '<name>') - text`` -- the same all-or-nothing
contract as Redis's apply functions (e.g. "Unable to listen on this port. Check server logs.").

Deliberate differences from redis-server 7.0 (all tested)
---------------------------------------------------------
* Only the directives in ``DIRECTIVES`` exist; anything else is "Bad directive" at start-up and
  "Unknown option" for CONFIG SET, and CONFIG GET * lists only these.
* ``loglevel nothing`` is accepted (Redis 7.2+), so the enum error lists it too.
* ``maxmemory`` is not enforced yet: only 0 (no limit) is accepted, anything else is refused with
  "maxmemory is not supported by Sluice yet ...".  ``maxmemory-policy`` is accepted and reported
  (with maxmemory 0 it never takes effect, as in Redis).
* ``daemonize yes`` is refused: sluice-server always runs in the foreground.
* Default ``bind`` is ``127.0.0.1 -::1`` (what the redis.conf shipped with Redis sets) instead of
  the compiled-in ``* -::*``.
* ``dir`` does not chdir: the value is checked (same strerror texts), resolved like chdir would
  (relative to the current ``dir``) and stored; relative ``include`` paths are resolved against it
  too, which is where Redis's chdir makes them land.
* CONFIG GET lists matches in table order (Redis: hash order, i.e. unspecified).
* CONFIG REWRITE appends missing lines in table order and writes ``requirepass`` itself (Redis 7
  also appends ACL ``user`` and ``latency-tracking-info-percentiles`` lines).
* Memory values that overflow once multiplied by their unit saturate at 2**64-1 like the newest
  Redis (redis/redis#15390) instead of wrapping around like 7.0.
* Fatal errors name the file (or stdin / the command-line argument) and the line inside it;
  Redis only gives a line number in the concatenation of file, stdin and arguments.
"""
from __future__ import annotations

import glob as _pyglob
import logging
import os
import re
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional, Union

from engine.core.errors import SYNTAX, ResponseError, arg_text, unknown_subcommand, wrong_arity
from engine.core.glob import match as _glob_match
from engine.resp.reply import OK, Status
from engine.resp.codec import split_inline
from persist.files import fsync_dir
from persist.snapshot import DEFAULT_FILENAME as SNAPSHOT_FILENAME

log = logging.getLogger(__name__)

PROGRAM_NAME = "sluice-server"


def _version() -> str:
    try:
        from importlib.metadata import version  # noqa: PLC0415
        return version("sluice")
    except Exception:  # noqa: BLE001 - not installed as a distribution: the source tree's version
        return "0.1.0"


VERSION = _version()

INT_MAX = 2**31 - 1
UINT_MAX = 2**32 - 1
LLONG_MAX = 2**63 - 1
LLONG_MIN = -(2**63)
ULLONG_MAX = 2**64 - 1
CONFIG_BINDADDR_MAX = 16
CONFIG_MIN_HZ, CONFIG_MAX_HZ = 1, 500
MAX_INCLUDE_DEPTH = 32
REWRITE_SIGNATURE = b"# Generated by CONFIG REWRITE"
LOADING_ERROR = "LOADING Redis is loading the dataset in memory"

StrOrBytes = Union[str, bytes]


# ------------------------------------------------------------------------------------------
# Errors
# ------------------------------------------------------------------------------------------

class ConfigValueError(ValueError):
    """A directive's value was refused; str() is Redis's reason text (no prefix)."""


class ConfigApplyError(Exception):
    """Raised by a change listener to veto a CONFIG SET; str() becomes the reason text."""


@dataclass(frozen=True)
class Origin:
    """Where a configuration line came from."""

    kind: str                 # "file", "stdin", "args" or "string"
    name: Optional[str]       # the file path, or the command-line argument that started the line
    line: int = 0             # 1-based line number inside the file / stdin / string

    def describe(self) -> str:
        if self.kind == "file":
            return f"Reading the configuration file '{self.name}', at line {self.line}"
        if self.kind == "stdin":
            return f"Reading the configuration from stdin, at line {self.line}"
        if self.kind == "args":
            return f"Reading the command line, at argument '{self.name}'"
        return f"Reading the configuration, at line {self.line}"


class ConfigError(Exception):
    """A fatal start-up configuration error.

    ``report()`` is the text to print on stderr before exiting with status 1; it has the shape of
    redis-server's report (blank line, ``*** FATAL CONFIG FILE ERROR (...) ***``, where, ``>>>
    'line'``, reason).  ``reason`` is Redis's reason text, ``origin``/``text`` say where.
    """

    def __init__(self, reason: str, origin: Optional[Origin] = None,
                 text: Optional[bytes] = None, *, fatal_header: bool = True) -> None:
        self.reason = reason
        self.origin = origin
        self.text = text
        self.fatal_header = fatal_header
        super().__init__(self._one_line())

    def _one_line(self) -> str:
        where = ""
        if self.origin is not None:
            if self.origin.kind == "args":
                where = f"command line ({self.origin.name}): "
            else:
                where = f"{self.origin.name or self.origin.kind}:{self.origin.line}: "
        shown = f" >>> '{_show(self.text)}'" if self.text is not None else ""
        return f"{where}{self.reason}{shown}"

    def report(self) -> str:
        if not self.fatal_header:
            return self.reason + "\n"
        out = ["", f"*** FATAL CONFIG FILE ERROR ({PROGRAM_NAME} {VERSION}) ***"]
        if self.origin is not None:
            out.append(self.origin.describe())
            out.append(f">>> '{_show(self.text or b'')}'")
        out.append(self.reason)
        return "\n".join(out) + "\n"


def _show(b: Optional[bytes]) -> str:
    return (b or b"").decode("utf-8", "backslashreplace")


def _err_text(b: bytes) -> str:
    """An argument shown inside an error reply: Redis turns CR/LF into spaces there."""
    return arg_text(b).replace("\r", " ").replace("\n", " ")


# ------------------------------------------------------------------------------------------
# Redis's low-level parsers, byte for byte
# ------------------------------------------------------------------------------------------

_C_SPACE = b" \t\n\v\f\r"


def _cstr(b: bytes) -> bytes:
    """What C string functions see: everything before the first NUL."""
    nul = b.find(b"\0")
    return b if nul < 0 else b[:nul]


def _b(value: StrOrBytes) -> bytes:
    return value if isinstance(value, bytes) else os.fsencode(value)


def _s(value: bytes) -> str:
    return value.decode("utf-8", "surrogateescape")


def split_args(line: bytes) -> Optional[list[bytes]]:
    """sdssplitargs: split a config line into arguments; None on unbalanced quotes.

    The same splitter as inline requests (engine.resp.codec), on what a C string
    function would see of the line (everything before a NUL byte)."""
    return split_inline(_cstr(line))


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


_LL_RE = re.compile(rb"-?[1-9][0-9]*|0")


def string2ll(s: bytes) -> Optional[int]:
    """Redis's strict integer parser: no sign '+', no spaces, no leading zeros, 64-bit range."""
    if not s or len(s) >= 21 or not _LL_RE.fullmatch(s):
        return None
    v = int(s)
    return v if LLONG_MIN <= v <= LLONG_MAX else None


def _strtoll(s: bytes, base: int = 10) -> tuple[int, bytes, bool]:
    """C strtoll: (value, the rest after the number, overflowed).  No digits: (0, s, False)."""
    s = _cstr(s)
    n = len(s)
    i = 0
    while i < n and s[i] in _C_SPACE:
        i += 1
    negative = False
    if i < n and s[i] in b"+-":
        negative = s[i] == 0x2D
        i += 1
    digits = b"01234567" if base == 8 else b"0123456789"
    start = i
    v = 0
    while i < n and s[i] in digits:
        v = v * base + (s[i] - 48)
        i += 1
    if i == start:
        return 0, s, False
    if negative:
        v = -v
    if v > LLONG_MAX:
        return LLONG_MAX, s[i:], True
    if v < LLONG_MIN:
        return LLONG_MIN, s[i:], True
    return v, s[i:], False


_MEMORY_UNITS = {b"": 1, b"b": 1, b"k": 1000, b"kb": 1024, b"m": 1000**2, b"mb": 1024**2,
                 b"g": 1000**3, b"gb": 1024**3}


def memtoull(s: bytes) -> Optional[int]:
    """Redis's memory values: digits then k/kb/m/mb/g/gb (any case; 1k = 1000, 1kb = 1024).

    None when invalid.  Quirks kept: an empty string (or a bare unit) is 0, leading zeros are
    fine, a number too big for 64 bits saturates to 2**64-1 (strtoull).  A number that only
    overflows once multiplied by its unit also saturates, as in the newest Redis
    (redis/redis#15390); 7.0 wrapped it around modulo 2**64.
    """
    s = _cstr(s)
    if s[:1] == b"-":
        return None
    u = 0
    while u < len(s) and 48 <= s[u] <= 57:
        u += 1
    mul = _MEMORY_UNITS.get(s[u:].lower())
    if mul is None or u >= 128:
        return None
    val = min(int(s[:u]) if u else 0, ULLONG_MAX)
    if val > ULLONG_MAX // mul:
        return ULLONG_MAX
    return val * mul


def format_memory(n: int) -> bytes:
    """How CONFIG REWRITE writes a byte count: the largest of gb/mb/kb that divides it."""
    for unit, size in ((b"gb", 1024**3), (b"mb", 1024**2), (b"kb", 1024)):
        if n and n % size == 0:
            return b"%d%s" % (n // size, unit)
    return b"%d" % n


def _wrap_int32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - 2**32 if v >= 2**31 else v


def _to_signed64(v: int) -> int:
    v &= ULLONG_MAX
    return v - 2**64 if v > LLONG_MAX else v


# ------------------------------------------------------------------------------------------
# Keyspace notification classes (notify.c)
# ------------------------------------------------------------------------------------------

NOTIFY_KEYSPACE = 1 << 0   # K
NOTIFY_KEYEVENT = 1 << 1   # E
NOTIFY_GENERIC = 1 << 2    # g
NOTIFY_STRING = 1 << 3     # $
NOTIFY_LIST = 1 << 4       # l
NOTIFY_SET = 1 << 5        # s
NOTIFY_HASH = 1 << 6       # h
NOTIFY_ZSET = 1 << 7       # z
NOTIFY_EXPIRED = 1 << 8    # x
NOTIFY_EVICTED = 1 << 9    # e
NOTIFY_STREAM = 1 << 10    # t
NOTIFY_KEY_MISS = 1 << 11  # m
NOTIFY_LOADED = 1 << 12    # (module events only, no letter)
NOTIFY_MODULE = 1 << 13    # d
NOTIFY_NEW = 1 << 14       # n
NOTIFY_ALL = (NOTIFY_GENERIC | NOTIFY_STRING | NOTIFY_LIST | NOTIFY_SET | NOTIFY_HASH
              | NOTIFY_ZSET | NOTIFY_EXPIRED | NOTIFY_EVICTED | NOTIFY_STREAM | NOTIFY_MODULE)

_NOTIFY_LETTERS = {
    ord("A"): NOTIFY_ALL, ord("g"): NOTIFY_GENERIC, ord("$"): NOTIFY_STRING,
    ord("l"): NOTIFY_LIST, ord("s"): NOTIFY_SET, ord("h"): NOTIFY_HASH, ord("z"): NOTIFY_ZSET,
    ord("x"): NOTIFY_EXPIRED, ord("e"): NOTIFY_EVICTED, ord("K"): NOTIFY_KEYSPACE,
    ord("E"): NOTIFY_KEYEVENT, ord("t"): NOTIFY_STREAM, ord("m"): NOTIFY_KEY_MISS,
    ord("d"): NOTIFY_MODULE, ord("n"): NOTIFY_NEW,
}
_NOTIFY_ORDER = ((NOTIFY_GENERIC, b"g"), (NOTIFY_STRING, b"$"), (NOTIFY_LIST, b"l"),
                 (NOTIFY_SET, b"s"), (NOTIFY_HASH, b"h"), (NOTIFY_ZSET, b"z"),
                 (NOTIFY_EXPIRED, b"x"), (NOTIFY_EVICTED, b"e"), (NOTIFY_STREAM, b"t"),
                 (NOTIFY_MODULE, b"d"), (NOTIFY_NEW, b"n"))


def parse_notify_flags(classes: bytes) -> Optional[int]:
    """keyspaceEventsStringToFlags: the bit set for a class string, None on an unknown letter."""
    flags = 0
    for c in _cstr(classes):
        bit = _NOTIFY_LETTERS.get(c)
        if bit is None:
            return None
        flags |= bit
    return flags


def format_notify_flags(flags: int) -> bytes:
    """keyspaceEventsFlagsToString: 'A' absorbs g$lshzxetd (and hides n), then K, E, m."""
    out = bytearray()
    if flags & NOTIFY_ALL == NOTIFY_ALL:
        out += b"A"
    else:
        for bit, letter in _NOTIFY_ORDER:
            if flags & bit:
                out += letter
    if flags & NOTIFY_KEYSPACE:
        out += b"K"
    if flags & NOTIFY_KEYEVENT:
        out += b"E"
    if flags & NOTIFY_KEY_MISS:
        out += b"m"
    return bytes(out)


# ------------------------------------------------------------------------------------------
# Value kinds: how a directive parses, formats (CONFIG GET) and rewrites its value
# ------------------------------------------------------------------------------------------

RewriteLines = Optional[list[tuple[bytes, bool]]]   # [(line, force)], None = drop every line


class Kind:
    """Base of the value types.  ``multi_arg`` kinds take several words (save, bind, ...)."""

    multi_arg = False

    def parse(self, args: list[bytes], old: Any, cfg: "ServerConfig") -> Any:
        raise NotImplementedError

    def parse_in_file(self, args: list[bytes], old: Any, cfg: "ServerConfig") -> Any:
        return self.parse(args, old, cfg)

    def format(self, value: Any) -> bytes:
        raise NotImplementedError

    def rewrite(self, name: str, value: Any, default: Any) -> RewriteLines:
        return [(name.encode() + b" " + self.format(value), value != default)]


class Bool(Kind):
    def parse(self, args, old, cfg):
        word = _cstr(args[0]).lower()
        if word == b"yes":
            return True
        if word == b"no":
            return False
        raise ConfigValueError("argument must be 'yes' or 'no'")

    def format(self, value):
        return b"yes" if value else b"no"


class Int(Kind):
    """A number with Redis's bounds; ``memory`` accepts units, ``octal`` is base 8.

    ``unsigned`` mirrors the C type: the bound check and the error text are unsigned there
    (a negative input wraps to a huge number and is reported with the unsigned bounds).
    """

    def __init__(self, lower: int, upper: int, *, unsigned: bool = False, memory: bool = False,
                 octal: bool = False, clamp: Optional[tuple[int, int]] = None) -> None:
        self.lower, self.upper = lower, upper
        self.unsigned, self.memory, self.octal, self.clamp = unsigned, memory, octal, clamp

    def parse(self, args, old, cfg):
        text = args[0]
        value: Optional[int] = None
        if self.memory:
            mem = memtoull(text)
            if mem is not None:
                value = mem if self.unsigned else _to_signed64(mem)
            else:
                raise ConfigValueError("argument must be a memory value")
        elif self.octal:
            v, rest, overflow = _strtoll(text, 8)
            if overflow or rest:
                raise ConfigValueError("argument couldn't be parsed as an octal number")
            value = v
        else:
            value = string2ll(text)
            if value is None:
                raise ConfigValueError("argument couldn't be parsed into an integer")
        if self.unsigned:
            value &= ULLONG_MAX
        if not self.lower <= value <= self.upper:
            if self.octal:
                raise ConfigValueError(f"argument must be between {self.lower:o} and "
                                       f"{self.upper:o} inclusive")
            raise ConfigValueError(f"argument must be between {self.lower} and {self.upper} "
                                   "inclusive")
        if self.clamp is not None:
            value = min(max(value, self.clamp[0]), self.clamp[1])
        return value

    def format(self, value):
        return (b"%o" % value) if self.octal else (b"%d" % value)

    def rewrite(self, name, value, default):
        shown = format_memory(value) if self.memory else self.format(value)
        return [(name.encode() + b" " + shown, value != default)]


class Enum(Kind):
    def __init__(self, *names: str) -> None:
        self.names = names

    def parse(self, args, old, cfg):
        word = _s(_cstr(args[0]).lower())   # ASCII-only folding, like strcasecmp
        if word in self.names:
            return word
        raise ConfigValueError("argument(s) must be one of the following: "
                               + ", ".join(self.names))

    def format(self, value):
        return value.encode()


class String(Kind):
    """A string; ``empty_is_null`` ones (pidfile, unixsocket, requirepass) are unset when empty.

    ``c_string`` mirrors Redis keeping the value as a C string (cut at a NUL byte); requirepass
    is an sds and keeps every byte.
    """

    def __init__(self, *, empty_is_null: bool = False, c_string: bool = True,
                 check: Optional[Callable[[bytes], Optional[str]]] = None) -> None:
        self.empty_is_null, self.c_string, self.check = empty_is_null, c_string, check

    def parse(self, args, old, cfg):
        value = _cstr(args[0]) if self.c_string else args[0]
        if self.check is not None:
            problem = self.check(value)
            if problem:
                raise ConfigValueError(problem)
        return _s(value)

    def format(self, value):
        return _b(value)

    def rewrite(self, name, value, default):
        if self.empty_is_null and value == "":
            return None
        force = not (default is not None and not self.empty_is_null and value == default)
        return [(name.encode() + b" " + repr_arg(_b(value)), force)]


def _pathless(what: str, kind: str, allow_empty: bool) -> Callable[[bytes], Optional[str]]:
    def check(value: bytes) -> Optional[str]:
        if not allow_empty and value == b"":
            return f"{what} can't be empty"
        if b"/" in value or b"\\" in value:
            return f"{what} can't be a path, just a {kind}"
        return None
    return check


class Dir(Kind):
    """The working directory.  Checked like chdir(2) would, stored absolute, never chdir'd."""

    def parse(self, args, old, cfg):
        target = _cstr(args[0])
        path = os.path.join(_b(old), target) if target else b""
        try:
            if not path:
                raise FileNotFoundError(2, os.strerror(2))
            if not stat.S_ISDIR(os.stat(path).st_mode):
                raise NotADirectoryError(20, os.strerror(20))
            if not os.access(path, os.X_OK):
                raise PermissionError(13, os.strerror(13))
        except OSError as exc:
            raise ConfigValueError(os.strerror(exc.errno or 2)) from None
        return _s(os.path.realpath(path))

    def format(self, value):
        return _b(value)

    def rewrite(self, name, value, default):
        return [(name.encode() + b" " + repr_arg(_b(value)), True)]


def _strtol_field(s: bytes) -> tuple[int, bool]:
    """(value, fully consumed) the way setConfigSaveOption checks a field with strtoll."""
    v, rest, _ = _strtoll(s)
    return v, rest == b""


class Save(Kind):
    """RDB snapshot points: pairs "<seconds> <changes>"; "" = none.

    In configuration files (and command-line options) the pairs of several ``save`` lines
    accumulate: the first ``save`` of the whole load replaces the defaults and ``save ""``
    clears what was collected so far.  CONFIG SET replaces the list.
    """

    multi_arg = True

    def _pairs(self, args: list[bytes]) -> list[tuple[int, int]]:
        if len(args) == 1 and _cstr(args[0]) == b"":
            args = []
        elif len(args) == 1:
            args = args[0].split(b" ")     # `--save "3600 1"`: one argument, as Redis
            args = [a for a in args if a]
        if len(args) % 2:
            raise ConfigValueError("Invalid save parameters")
        values = []
        for j, arg in enumerate(args):
            v, whole = _strtol_field(arg)
            if not whole or (j % 2 == 0 and v < 1) or (j % 2 == 1 and v < 0):
                raise ConfigValueError("Invalid save parameters")
            values.append(v)
        return [(values[j], _wrap_int32(values[j + 1])) for j in range(0, len(values), 2)]

    def parse(self, args, old, cfg):
        return self._pairs(args)

    def parse_in_file(self, args, old, cfg):
        pairs = self._pairs(args)
        current = list(old)
        if len(args) == 1 and _cstr(args[0]) == b"":
            current = []
        if not cfg._save_loaded:
            cfg._save_loaded = True
            current = []
        return current + pairs

    def format(self, value):
        return b" ".join(b"%d %d" % pair for pair in value)

    def rewrite(self, name, value, default):
        if not value:
            return [(b'save ""', True)]
        return [(b"save %d %d" % pair, True) for pair in value]


class Bind(Kind):
    """Listening addresses ('-' prefix: optional, may fail to bind); "" = none."""

    multi_arg = True

    def parse(self, args, old, cfg):
        if len(args) > CONFIG_BINDADDR_MAX:
            raise ConfigValueError("Too many bind addresses specified.")
        if len(args) == 1 and args[0] == b"":
            args = []
        return [_s(_cstr(a)) for a in args]

    def format(self, value):
        return b" ".join(_b(a) for a in value)

    def rewrite(self, name, value, default):
        if value == default:
            return None
        return [(b"bind " + (self.format(value) if value else b'""'), True)]


class Notify(Kind):
    def parse(self, args, old, cfg):
        flags = parse_notify_flags(args[0])
        if flags is None:
            raise ConfigValueError("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.")
        return flags

    def format(self, value):
        return format_notify_flags(value)

    def rewrite(self, name, value, default):
        return [(name.encode() + b" " + repr_arg(format_notify_flags(value)), value != 0)]


OBUF_CLASSES = ("normal", "replica", "pubsub")
_OBUF_BY_NAME = {b"normal": "normal", b"slave": "replica", b"replica": "replica",
                 b"pubsub": "pubsub", b"master": None}


class ClientOutputBufferLimit(Kind):
    """Per client class (normal, replica, pubsub): (hard bytes, soft bytes, soft seconds).

    A value names one or more classes ("<class> <hard> <soft> <seconds>" groups); the classes
    not named keep their limits.  CONFIG GET spells the replica class "slave", like Redis.
    """

    multi_arg = True

    def parse(self, args, old, cfg):
        if len(args) % 4:
            raise ConfigValueError("Wrong number of arguments in buffer limit configuration.")
        new = dict(old)
        for j in range(0, len(args), 4):
            cls = _OBUF_BY_NAME.get(_cstr(args[j]).lower())
            if cls is None:
                raise ConfigValueError("Invalid client class specified in buffer limit "
                                       "configuration.")
            hard, soft = memtoull(args[j + 1]), memtoull(args[j + 2])
            seconds, rest, _ = _strtoll(args[j + 3])
            seconds = _wrap_int32(seconds)
            if hard is None or soft is None or seconds < 0 or rest:
                raise ConfigValueError("Error in hard, soft or soft_seconds setting in buffer "
                                       "limit configuration.")
            new[cls] = (hard, soft, seconds)
        return new

    def format(self, value):
        return b" ".join(b"%s %d %d %d" % (b"slave" if cls == "replica" else cls.encode(),
                                           *value[cls]) for cls in OBUF_CLASSES)

    def rewrite(self, name, value, default):
        lines = []
        for cls in OBUF_CLASSES:
            hard, soft, seconds = value[cls]
            lines.append((b"%s %s %s %s %d" % (name.encode(), cls.encode(), format_memory(hard),
                                               format_memory(soft), seconds),
                          value[cls] != default[cls]))
        return lines


# ------------------------------------------------------------------------------------------
# The directive table
# ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Directive:
    """One configuration directive.

    mutable       CONFIG SET may change it (else "can't set immutable config")
    protected     CONFIG SET only when enable-protected-configs allows it (dir, dbfilename)
    deny_loading  CONFIG SET refused with -LOADING while the dataset loads
    sensitive     the value is a secret: redact it in MONITOR/SLOWLOG/logs
    check         extra validation after parsing: value -> error text or None
    default       the value, or a zero-argument callable computing it (dir: the cwd)
    """

    name: str
    kind: Kind
    default: Any
    doc: str
    mutable: bool = True
    protected: bool = False
    deny_loading: bool = False
    sensitive: bool = False
    aliases: tuple[str, ...] = ()
    check: Optional[Callable[[Any], Optional[str]]] = None


def _only_no_daemonize(value: bool) -> Optional[str]:
    if value:
        return (f"daemonize yes is not supported: {PROGRAM_NAME} always runs in the foreground; "
                "use a process supervisor (systemd, docker, nohup) to run it in the background")
    return None


def _maxmemory_unsupported(value: int) -> Optional[str]:
    if value:
        return ("maxmemory is not supported by Sluice yet: memory is not limited and nothing is "
                "evicted, so only 0 (no limit) is accepted")
    return None


MB = 1024 * 1024

DIRECTIVES: tuple[Directive, ...] = (
    # --- network ---
    Directive("port", Int(0, 65535), 6379, "TCP port to accept connections on; 0 disables TCP."),
    Directive("bind", Bind(), ["127.0.0.1", "-::1"],
              "Addresses to listen on (up to 16); a '-' prefix marks an address that may be "
              "unavailable; \"\" listens on none."),
    Directive("protected-mode", Bool(), True,
              "Refuse non-loopback clients while no password is set and bind is the default."),
    Directive("unixsocket", String(empty_is_null=True), "",
              "Path of a Unix socket to listen on too; empty: none.", mutable=False),
    Directive("unixsocketperm", Int(0, 0o777, unsigned=True, octal=True), 0,
              "Permissions (octal) of the Unix socket; 0 keeps the umask's.", mutable=False),
    Directive("timeout", Int(0, INT_MAX), 0, "Close a client idle this many seconds; 0 = never."),
    Directive("tcp-keepalive", Int(0, INT_MAX), 300,
              "SO_KEEPALIVE interval in seconds for client sockets; 0 disables."),
    Directive("maxclients", Int(1, UINT_MAX, unsigned=True), 10000,
              "Maximum number of connected clients."),
    Directive("requirepass", String(empty_is_null=True, c_string=False), "",
              "Password clients must AUTH with; empty: no password.", sensitive=True),
    # --- limits ---
    Directive("proto-max-bulk-len", Int(MB, LLONG_MAX, memory=True), 512 * MB,
              "Largest bulk string a client may send."),
    Directive("client-query-buffer-limit", Int(MB, LLONG_MAX, unsigned=True, memory=True),
              1024 * MB, "Largest query buffer of one client."),
    Directive("client-output-buffer-limit", ClientOutputBufferLimit(),
              {"normal": (0, 0, 0), "replica": (256 * MB, 64 * MB, 60),
               "pubsub": (32 * MB, 8 * MB, 60)},
              "Output buffer limits per client class: <class> <hard> <soft> <soft-seconds>."),
    Directive("maxmemory", Int(0, ULLONG_MAX, unsigned=True, memory=True), 0,
              "Memory limit.  Not enforced by Sluice yet: only 0 (no limit) is accepted.",
              check=_maxmemory_unsupported),
    Directive("maxmemory-policy",
              Enum("volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl",
                   "allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction"),
              "noeviction",
              "Eviction policy; reported only (with maxmemory 0 nothing is ever evicted)."),
    # --- streams ---
    Directive("stream-node-max-entries", Int(0, LLONG_MAX), 100,
              "Entries per stream node before a new node starts; 0 = no limit."),
    Directive("stream-node-max-bytes", Int(0, LLONG_MAX, unsigned=True, memory=True), 4096,
              "Bytes per stream node before a new node starts; 0 = no limit."),
    Directive("notify-keyspace-events", Notify(), 0,
              "Keyspace notification classes: K E g $ l s h z x e t m n d, A = g$lshzxetd."),
    Directive("databases", Int(1, INT_MAX), 16, "Number of databases (SELECT 0..n-1).",
              mutable=False),
    # --- persistence ---
    Directive("dir", Dir(), lambda: _s(os.fsencode(os.getcwd())),
              "Working directory: where the AOF directory and the snapshot file live.",
              protected=True, deny_loading=True),
    Directive("dbfilename", String(check=_pathless("dbfilename", "filename", True)),
              SNAPSHOT_FILENAME,
              "Snapshot file name inside dir; the file is in Sluice's own format (not "
              "RDB) whatever its name.", protected=True),
    Directive("save", Save(), [(3600, 1), (300, 100), (60, 10000)],
              "Snapshot after <seconds> if at least <changes> writes; \"\" disables."),
    Directive("stop-writes-on-bgsave-error", Bool(), True,
              "Refuse write commands while the last background save failed (when save "
              "points are set), until a save succeeds."),
    Directive("appendonly", Bool(), False, "Log every write to the append-only file.",
              deny_loading=True),
    Directive("appendfilename",
              String(check=_pathless("appendfilename", "filename", False)), "appendonly.aof",
              "Base name of the append-only files.", mutable=False),
    Directive("appenddirname",
              String(check=_pathless("appenddirname", "dirname", False)), "appendonlydir",
              "Directory (inside dir) holding the append-only files.", mutable=False),
    Directive("appendfsync", Enum("everysec", "always", "no"), "everysec",
              "When the append-only file is fsynced: always, everysec or no (leave it to the OS)."),
    Directive("auto-aof-rewrite-percentage", Int(0, INT_MAX), 100,
              "Rewrite the AOF when it grew this many percent since the last rewrite; 0 = never."),
    Directive("auto-aof-rewrite-min-size", Int(0, LLONG_MAX, memory=True), 64 * MB,
              "Smallest AOF size that triggers an automatic rewrite."),
    Directive("aof-use-rdb-preamble", Bool(), True,
              "Start a rewritten AOF with a snapshot of the data set."),
    Directive("aof-load-truncated", Bool(), True,
              "Load an AOF whose last command is truncated (else refuse to start)."),
    # --- process ---
    Directive("loglevel", Enum("debug", "verbose", "notice", "warning", "nothing"), "notice",
              "Log verbosity: debug, verbose, notice, warning or nothing."),
    Directive("logfile", String(), "", "Log file; empty: standard output.", mutable=False),
    Directive("pidfile", String(empty_is_null=True), "",
              "Write the process id to this file; empty: none.", mutable=False),
    Directive("daemonize", Bool(), False,
              f"Only 'no': {PROGRAM_NAME} always runs in the foreground.", mutable=False,
              check=_only_no_daemonize),
    Directive("hz", Int(0, INT_MAX, clamp=(CONFIG_MIN_HZ, CONFIG_MAX_HZ)), 10,
              "Background tasks per second (expiry, timeouts); kept within 1..500."),
    Directive("enable-protected-configs", Enum("no", "yes", "local"), "no",
              "Whether CONFIG SET may change dir and dbfilename: no, yes, or local (loopback "
              "clients only).", mutable=False),
)


# ------------------------------------------------------------------------------------------
# The command line
# ------------------------------------------------------------------------------------------

@dataclass
class CommandLine:
    """``sluice-server [config-file] [--directive value ...] [-]`` taken apart like redis-server.

    action        "run", or "version" / "help" when the first argument asks for them
    config_file   the file named first (absolute path), or None
    from_stdin    "-" as the first or last argument: read configuration from standard input
    options       (config line, the argument that started it) for every --directive
    """

    action: str = "run"
    config_file: Optional[str] = None
    from_stdin: bool = False
    options: list[tuple[bytes, str]] = field(default_factory=list)


def parse_command_line(args: Sequence[StrOrBytes]) -> CommandLine:
    """Turn redis-server style arguments (without the program name) into config lines.

    ``--name`` starts a directive; the following words are its arguments (a word starting with
    ``--`` starts the next directive once the current one has at least one argument, so
    ``--requirepass --x`` sets the password "--x").  ``--save`` followed by another directive
    or nothing means ``save ""``.  ``--port 6380`` may also come as the single word
    "--port 6380".  Arguments are quoted with Redis's rules, so any byte survives.
    """
    words = [_b(a) for a in args]
    shown = [a if isinstance(a, str) else _s(a) for a in args]
    cl = CommandLine()
    if not words:
        return cl
    if words[0] in (b"-v", b"--version"):
        cl.action = "version"
        return cl
    if words[0] in (b"--help", b"-h"):
        cl.action = "help"
        return cl
    j = 0
    if not words[0].startswith(b"-"):
        cl.config_file = os.path.abspath(shown[0])
        j = 1
    n = len(words)
    current: Optional[bytearray] = None
    started_by = ""
    handled_last = True

    def finish() -> None:
        if current is not None:
            for part in bytes(current).split(b"\n"):
                cl.options.append((part, started_by))

    while j < n:
        word = words[j]
        if word == b"-" and (j == 0 or j == n - 1):
            cl.from_stdin = True
        elif handled_last and word.startswith(b"--"):
            finish()
            current = bytearray(word[2:] + b" ")
            started_by = shown[j]
            parts = split_args(word)
            if parts is not None and len(parts) == 1:
                handled_last = False
                is_save = word.lower() == b"--save"
                if is_save and j != n - 1 and words[j + 1].startswith(b"--"):
                    current += b'""'
                    handled_last = True
                elif is_save and j == n - 1:
                    current += b'""'
            else:
                handled_last = True
        else:
            if current is None:
                current = bytearray()
                started_by = shown[j]
            current += repr_arg(word) + b" "
            handled_last = True
        j += 1
    finish()
    return cl


def usage() -> str:
    p = PROGRAM_NAME
    return (f"Usage: ./{p} [/path/to/sluice.conf] [options] [-]\n"
            f"       ./{p} - (read config from stdin)\n"
            f"       ./{p} -v or --version\n"
            f"       ./{p} -h or --help\n\n"
            "Examples:\n"
            f"       ./{p} (run the server with default conf)\n"
            f"       ./{p} /etc/sluice/6379.conf\n"
            f"       ./{p} --port 7777\n"
            f"       ./{p} --save 900 1 300 10 --bind 127.0.0.1 ::1\n"
            f"       ./{p} /etc/mysluice.conf --loglevel verbose -\n"
            f"       ./{p} /etc/mysluice.conf --loglevel verbose\n")


def version_text() -> str:
    return f"Sluice server v={VERSION} (Redis 7.0 compatible RESP server)"


# ------------------------------------------------------------------------------------------
# ServerConfig
# ------------------------------------------------------------------------------------------

Listener = Callable[[str, Any, Any], None]


class ServerConfig:
    """The server's configuration values, loaded from files/arguments and changed by CONFIG SET."""

    def __init__(self, directives: Iterable[Directive] = DIRECTIVES) -> None:
        self._table: tuple[Directive, ...] = tuple(directives)
        self._by_name: dict[bytes, tuple[Directive, str]] = {}
        for d in self._table:
            for name in (d.name, *d.aliases):
                key = name.lower().encode()
                if key in self._by_name:
                    raise ValueError(f"directive {name!r} is defined twice")
                self._by_name[key] = (d, name.lower())
        self._values: dict[str, Any] = {}
        for d in self._table:
            default = d.default() if callable(d.default) else d.default
            self._values[d.name] = _copy(default)
        self._defaults = {d.name: _copy(self._values[d.name]) for d in self._table}
        self.config_file: Optional[str] = None
        self._listeners: dict[Optional[str], list[Listener]] = {}
        self._resetstat_hooks: list[Callable[[], None]] = []
        self._save_loaded = False
        self._umask = _current_umask()

    # --- lookup and values ---

    @property
    def directives(self) -> tuple[Directive, ...]:
        return self._table

    def lookup(self, name: StrOrBytes) -> Optional[Directive]:
        """The directive called ``name`` (any case, aliases too), or None."""
        entry = self._by_name.get(_b(name).lower())
        return entry[0] if entry else None

    def get(self, name: StrOrBytes) -> Any:
        d = self.lookup(name)
        if d is None:
            raise KeyError(_s(_b(name)))
        return _copy(self._values[d.name])

    __getitem__ = get

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("_"):
            raise AttributeError(attr)
        d = self.lookup(attr.replace("_", "-"))
        if d is None:
            raise AttributeError(attr)
        return _copy(self._values[d.name])

    def default(self, name: StrOrBytes) -> Any:
        d = self.lookup(name)
        if d is None:
            raise KeyError(_s(_b(name)))
        return _copy(self._defaults[d.name])

    def formatted(self, name: StrOrBytes) -> bytes:
        """The value exactly as CONFIG GET shows it."""
        d = self.lookup(name)
        if d is None:
            raise KeyError(_s(_b(name)))
        return d.kind.format(self._values[d.name])

    def is_sensitive(self, name: StrOrBytes) -> bool:
        d = self.lookup(name)
        return bool(d and d.sensitive)

    def items(self) -> list[tuple[str, Any]]:
        return [(d.name, self._values[d.name]) for d in self._table]

    # --- listeners and hooks ---

    def add_listener(self, names: Union[str, Iterable[str], None], callback: Listener) -> None:
        """Call ``callback(name, old, new)`` after CONFIG SET changes one of ``names``.

        ``names`` is a directive name, several, or None for every directive.  See the module
        docstring for vetoing a change.
        """
        keys: list[Optional[str]]
        if names is None:
            keys = [None]
        else:
            keys = []
            for name in ([names] if isinstance(names, str) else names):
                d = self.lookup(name)
                if d is None:
                    raise KeyError(name)
                keys.append(d.name)
        for key in keys:
            self._listeners.setdefault(key, []).append(callback)

    def remove_listener(self, callback: Listener) -> None:
        for callbacks in self._listeners.values():
            while callback in callbacks:
                callbacks.remove(callback)

    def add_resetstat_hook(self, hook: Callable[[], None]) -> None:
        """CONFIG RESETSTAT calls every hook (reset INFO stats, command stats, error stats)."""
        self._resetstat_hooks.append(hook)

    def reset_stats(self) -> None:
        for hook in list(self._resetstat_hooks):
            hook()

    # --- runtime changes (CONFIG SET) ---

    def set(self, name: StrOrBytes, value: StrOrBytes, **kwargs: Any) -> None:
        """CONFIG SET of one directive; raises ResponseError with Redis's text."""
        self.set_many([(name, value)], **kwargs)

    def set_many(self, pairs: Sequence[tuple[StrOrBytes, StrOrBytes]], *, loading: bool = False,
                 client_is_local: bool = False) -> None:
        """CONFIG SET name value [name value ...]: all or nothing, Redis's checks and texts.

        ``loading``: the data set is still loading (appendonly and dir are then refused);
        ``client_is_local``: the client is on loopback/unix socket (enable-protected-configs
        local).
        """
        chosen: list[tuple[Directive, str, bytes]] = []
        unknown: Optional[bytes] = None
        error: Optional[str] = None
        error_name: Optional[bytes] = None
        deny_loading = False
        invalid = False
        protected_ok = self._values.get("enable-protected-configs", "no") == "yes" or (
            self._values.get("enable-protected-configs") == "local" and client_is_local)
        for raw_name, raw_value in pairs:
            name_b, value_b = _b(raw_name), _b(raw_value)
            entry = self._by_name.get(name_b.lower())
            if entry is None:
                if not invalid:
                    unknown = name_b
                    invalid = True
                continue
            if invalid:
                continue
            d, registered = entry
            if not d.mutable or (d.protected and not protected_ok):
                error = "can't set immutable config" if not d.mutable else \
                    "can't set protected config"
                error_name = name_b
                invalid = True
                continue
            if loading and d.deny_loading:
                deny_loading = invalid = True
                continue
            if any(prev is d for prev, _, _ in chosen):
                error = "duplicate parameter"
                error_name = name_b
                invalid = True
                continue
            chosen.append((d, registered, value_b))
        if invalid:
            if deny_loading:
                raise ResponseError(LOADING_ERROR)
            if unknown is not None:
                raise ResponseError("ERR Unknown option or number of arguments for CONFIG SET - "
                                    f"'{_err_text(unknown)}'")
            raise ResponseError(f"ERR CONFIG SET failed (possibly related to argument "
                                f"'{_err_text(error_name or b'')}') - {error}")

        updates: list[tuple[Directive, str, Any]] = []
        for d, registered, value_b in chosen:
            try:
                new = self._parse(d, _split_runtime(d, value_b), self._values[d.name], False)
            except ConfigValueError as exc:
                raise ResponseError(f"ERR CONFIG SET failed (possibly related to argument "
                                    f"'{registered}') - {exc}") from None
            updates.append((d, registered, new))
        self._commit(updates)

    def _parse(self, d: Directive, args: list[bytes], old: Any, in_file: bool) -> Any:
        new = d.kind.parse_in_file(args, old, self) if in_file else d.kind.parse(args, old, self)
        if d.check is not None:
            problem = d.check(new)
            if problem:
                raise ConfigValueError(problem)
        return new

    def _commit(self, updates: list[tuple[Directive, str, Any]]) -> None:
        olds = {d.name: self._values[d.name] for d, _, _ in updates}
        for d, _, new in updates:
            self._values[d.name] = new
        ran: list[tuple[Listener, str, Any, Any]] = []
        for d, registered, new in updates:
            old = olds[d.name]
            if old == new:
                continue
            for callback in self._listeners.get(d.name, []) + self._listeners.get(None, []):
                ran.append((callback, d.name, old, new))
                try:
                    callback(d.name, old, new)
                except Exception as exc:  # noqa: BLE001 - any failure vetoes the whole change
                    if not isinstance(exc, ConfigApplyError):
                        log.exception("config listener for %s failed", d.name)
                    self._rollback(olds, ran)
                    reason = str(exc) or type(exc).__name__
                    raise ResponseError(f"ERR CONFIG SET failed (possibly related to argument "
                                        f"'{registered}') - {reason}") from None

    def _rollback(self, olds: dict[str, Any], ran: list[tuple[Listener, str, Any, Any]]) -> None:
        self._values.update(olds)
        for callback, name, old, new in reversed(ran):
            try:
                callback(name, new, old)
            except Exception:  # noqa: BLE001 - Redis logs and carries on here too
                log.exception("restoring %s after a failed CONFIG SET failed", name)

    # --- loading (start-up) ---

    def load_file(self, path: StrOrBytes) -> None:
        """Apply a redis.conf-syntax file; it becomes the CONFIG REWRITE target if none is set."""
        abspath = os.path.abspath(_s(_b(path)) if isinstance(path, bytes) else path)
        content = self._read_config_file(abspath, None, None)
        if self.config_file is None:
            self.config_file = abspath
        self._load_text(content, "file", abspath, 0)

    def load_string(self, text: StrOrBytes, *, source: str = "string") -> None:
        """Apply configuration text ("stdin" or "string" in error reports)."""
        self._load_text(_b(text), "stdin" if source == "stdin" else "string", None, 0)

    def apply_args(self, args: Sequence[StrOrBytes], *, stdin: Any = None) -> CommandLine:
        """Everything redis-server does with its arguments (``args`` = sys.argv[1:]).

        Loads the config file named first (it becomes the CONFIG REWRITE target), then standard
        input when "-" is given (``stdin``: a binary file object, default sys.stdin.buffer),
        then the ``--directive value`` options, so options win over the file; finally checks
        that the log file can be opened.  Returns the CommandLine (check ``.action`` for
        --version/--help, in which case nothing was loaded).  Raises ConfigError.
        """
        cl = parse_command_line(args)
        if cl.action != "run":
            return cl
        if cl.config_file is not None:
            self.config_file = cl.config_file
            self._load_text(self._read_config_file(cl.config_file, None, None), "file",
                            cl.config_file, 0)
        if cl.from_stdin:
            stream = stdin if stdin is not None else sys.stdin.buffer
            self._load_text(_b(stream.read()), "stdin", None, 0)
        for line, started_by in cl.options:
            self._load_line(line, Origin("args", started_by), 0)
        self.check_startup()
        return cl

    @classmethod
    def from_args(cls, args: Sequence[StrOrBytes], *, stdin: Any = None) -> "ServerConfig":
        cfg = cls()
        cfg.apply_args(args, stdin=stdin)
        return cfg

    def check_startup(self) -> None:
        """Redis's checks after loading: the log file must be writable."""
        logfile = self._values.get("logfile")
        if logfile:
            try:
                with open(os.path.join(_b(self._values["dir"]), _b(logfile)), "ab"):
                    pass
            except OSError as exc:
                raise ConfigError(f"Can't open the log file: {os.strerror(exc.errno or 2)}") \
                    from None

    def _read_config_file(self, path: str, origin: Optional[Origin],
                          text: Optional[bytes]) -> bytes:
        try:
            with open(path, "rb") as f:
                return f.read()
        except OSError as exc:
            reason = f"can't open config file '{path}': {os.strerror(exc.errno or 2)}"
            if origin is None:
                raise ConfigError("Fatal error, " + reason, fatal_header=False) from None
            raise ConfigError(reason[0].upper() + reason[1:], origin, text) from None

    def _load_text(self, content: bytes, kind: str, name: Optional[str], depth: int) -> None:
        for number, raw in enumerate(content.split(b"\n"), 1):
            self._load_line(raw, Origin(kind, name, number), depth)

    def _load_line(self, raw: bytes, origin: Origin, depth: int) -> None:
        line = raw.strip(b" \t\r\n")
        if not line or line[:1] == b"#":
            return
        argv = split_args(line)
        if argv is None:
            raise ConfigError("Unbalanced quotes in configuration line", origin, line)
        if not argv:
            return
        name = argv[0].lower()
        entry = self._by_name.get(name)
        if entry is not None:
            d = entry[0]
            if not d.kind.multi_arg and len(argv) != 2:
                raise ConfigError("wrong number of arguments", origin, line)
            try:
                self._values[d.name] = self._parse(d, argv[1:], self._values[d.name], True)
            except ConfigValueError as exc:
                raise ConfigError(str(exc), origin, line) from None
            return
        if name == b"include" and len(argv) == 2:
            self._include(argv[1], origin, line, depth)
            return
        raise ConfigError("Bad directive or wrong number of arguments", origin, line)

    def _include(self, target: bytes, origin: Origin, line: bytes, depth: int) -> None:
        if depth >= MAX_INCLUDE_DEPTH:
            raise ConfigError(f"Too many nested includes (more than {MAX_INCLUDE_DEPTH}): "
                              "is a file including itself?", origin, line)
        # Relative paths resolve against dir: redis-server has chdir'ed there by now.
        target_s = _s(_cstr(target))
        if any(c in target_s for c in "*?["):
            files = sorted(_pyglob.glob(os.path.join(_pyglob.escape(self._values["dir"]),
                                                     target_s)))
        else:
            files = [os.path.join(self._values["dir"], target_s)]
        for file in files:
            content = self._read_config_file(file, origin, line)
            self._load_text(content, "file", file, depth + 1)

    # --- CONFIG REWRITE ---

    def rewrite(self, path: Optional[str] = None) -> None:
        """Write the configuration back into its file the way CONFIG REWRITE does.

        Comments, blank lines, include lines and the order of the file are kept; each directive
        reuses its own lines (first occurrence first), surplus lines become blank, lines that
        are not directives are kept as "# ??? <line>", and non-default values the file lacks are
        appended after "# Generated by CONFIG REWRITE".  Written atomically (temp file, fsync,
        rename).  Raises OSError.
        """
        path = path or self.config_file
        if path is None:
            raise ValueError("no configuration file to rewrite")
        try:
            with open(path, "rb") as f:
                content = f.read()
        except FileNotFoundError:
            content = b""
        lines: list[bytes] = []
        option_lines: dict[str, list[int]] = {}
        needs_signature = True
        for raw in (content.split(b"\n") if content else []):
            line = raw.strip(b"\r\n\t ")
            if not line or line[:1] == b"#":
                if needs_signature and line == REWRITE_SIGNATURE:
                    needs_signature = False
                lines.append(line)
                continue
            argv = split_args(line)
            name = argv[0].lower() if argv else b""
            entry = self._by_name.get(name)
            if entry is None and name != b"include":
                lines.append(b"# ??? " + line)
                continue
            lines.append(line)
            option_lines.setdefault(entry[0].name if entry else "include", []).append(
                len(lines) - 1)

        processed: set[str] = set()
        for d in self._table:
            processed.add(d.name)
            rewritten = d.kind.rewrite(d.name, self._values[d.name], self._defaults[d.name])
            for new_line, force in rewritten or []:
                reuse = option_lines.get(d.name)
                if reuse:
                    lines[reuse.pop(0)] = new_line
                elif force:
                    if needs_signature:
                        lines.append(REWRITE_SIGNATURE)
                        needs_signature = False
                    lines.append(new_line)
        for option, remaining in option_lines.items():
            if option in processed:
                for index in remaining:
                    lines[index] = b""

        out = bytearray()
        was_empty = False
        for line in lines:
            if not line:
                if was_empty:
                    continue
                was_empty = True
            else:
                was_empty = False
            out += line + b"\n"
        self._write_atomically(path, bytes(out))

    def _write_atomically(self, path: str, content: bytes) -> None:
        directory = os.path.dirname(path) or "."
        fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", dir=directory)
        try:
            view = memoryview(content)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
            os.fchmod(fd, 0o644 & ~self._umask)
            os.replace(tmp, path)
            fsync_dir(directory)            # the rename itself survives a power cut
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        finally:
            os.close(fd)


def _current_umask() -> int:
    """The process umask, read without changing it when /proc allows (other threads may be
    creating files), else by setting and restoring it as redis-server does at start-up."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


def _copy(value: Any) -> Any:
    if isinstance(value, list):
        return list(value)
    if isinstance(value, dict):
        return dict(value)
    return value


def _split_runtime(d: Directive, value: bytes) -> list[bytes]:
    """CONFIG SET gives one string; multi-word directives split it on single spaces."""
    if not d.kind.multi_arg:
        return [value]
    return value.split(b" ") if value else []


# ------------------------------------------------------------------------------------------
# CONFIG subcommands: (cfg, argv) -> reply; argv is the whole command, argv[0] == b"CONFIG"
# ------------------------------------------------------------------------------------------

def config_get(cfg: ServerConfig, argv: list[bytes], *, resp3: bool = False, **_: Any) -> Any:
    """CONFIG GET pattern [pattern ...]: [name, value, ...] (RESP2) or {name: value} (RESP3).

    A pattern without * ? [ is an exact (case-insensitive) name and is echoed as typed; glob
    patterns match case-insensitively and reply the directive's own name.  Each directive
    appears once.
    """
    if len(argv) < 3:
        raise wrong_arity("config|get")
    matches: dict[bytes, tuple[bytes, Directive]] = {}
    for pattern in argv[2:]:
        if not any(c in pattern for c in b"*?["):
            key = pattern.lower()
            entry = cfg._by_name.get(key)
            if entry is not None and key not in matches:
                matches[key] = (pattern, entry[0])
            continue
        for key, (d, _) in cfg._by_name.items():
            if key not in matches and _glob_match(pattern, key, True):
                matches[key] = (key, d)
    if resp3:
        return {name: d.kind.format(cfg._values[d.name]) for name, d in matches.values()}
    reply: list[bytes] = []
    for name, d in matches.values():
        reply.append(name)
        reply.append(d.kind.format(cfg._values[d.name]))
    return reply


def config_set(cfg: ServerConfig, argv: list[bytes], *, loading: bool = False,
               client_is_local: bool = False, **_: Any) -> Any:
    """CONFIG SET name value [name value ...] (atomic)."""
    if len(argv) < 4:
        raise wrong_arity("config|set")
    if len(argv) % 2:
        raise ResponseError(SYNTAX)
    pairs = [(argv[i], argv[i + 1]) for i in range(2, len(argv), 2)]
    cfg.set_many(pairs, loading=loading, client_is_local=client_is_local)
    return OK


def config_resetstat(cfg: ServerConfig, argv: list[bytes], **_: Any) -> Any:
    if len(argv) != 2:
        raise wrong_arity("config|resetstat")
    cfg.reset_stats()
    return OK


def config_rewrite(cfg: ServerConfig, argv: list[bytes], **_: Any) -> Any:
    if len(argv) != 2:
        raise wrong_arity("config|rewrite")
    if cfg.config_file is None:
        raise ResponseError("ERR The server is running without a config file")
    try:
        cfg.rewrite()
    except OSError as exc:
        log.warning("CONFIG REWRITE failed: %s", os.strerror(exc.errno or 5))
        raise ResponseError(f"ERR Rewriting config file: {os.strerror(exc.errno or 5)}") from None
    log.warning("CONFIG REWRITE executed with success.")
    return OK


HELP_LINES = (
    "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GET <pattern>",
    "    Return parameters matching the glob-like <pattern> and their values.",
    "SET <directive> <value>",
    "    Set the configuration <directive> to <value>.",
    "RESETSTAT",
    "    Reset statistics reported by the INFO command.",
    "REWRITE",
    "    Rewrite the configuration file.",
    "HELP",
    "    Prints this help.",
)


def config_help(cfg: ServerConfig, argv: list[bytes], **_: Any) -> Any:
    if len(argv) != 2:
        raise wrong_arity("config|help")
    return [Status(line.encode()) for line in HELP_LINES]


SUBCOMMANDS: dict[bytes, Callable[..., Any]] = {
    b"get": config_get,
    b"set": config_set,
    b"resetstat": config_resetstat,
    b"rewrite": config_rewrite,
    b"help": config_help,
}


def config_command(cfg: ServerConfig, argv: list[bytes], *, resp3: bool = False,
                   loading: bool = False, client_is_local: bool = False) -> Any:
    """The whole CONFIG command: subcommand lookup, arity, then the subcommand."""
    if len(argv) < 2:
        raise wrong_arity("config")
    handler = SUBCOMMANDS.get(argv[1].lower())
    if handler is None:
        raise unknown_subcommand(argv[0], argv[1])
    return handler(cfg, argv, resp3=resp3, loading=loading, client_is_local=client_is_local)
