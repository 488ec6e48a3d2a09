"""Value kinds: how a directive's words become its value (files, arguments, CONFIG SET), how
CONFIG GET shows it and which lines CONFIG REWRITE writes for it.  Each kind carries Redis's
checks and error texts for its type (bool, bounded integer, enum, string, dir, save points, bind
addresses, keyspace event classes, client output buffer limits), so the directive table only has
to name a kind and its bounds.
"""
from __future__ import annotations

import os
import stat
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Optional

from engine.resp.args import c_string, repr_arg
from engine.resp.numbers import strict_int
from engine.server.config.errors import ConfigValueError
from engine.server.config.keyspace_events import format_notify_flags, parse_notify_flags
from engine.server.config.value_parsing import (ULLONG_MAX, as_bytes, as_str, format_memory,
                                                memtoull, strtoll, to_signed64,
                                                wrap_int32)

if TYPE_CHECKING:  # pragma: no cover
    from engine.server.config.server_config import ServerConfig

CONFIG_BINDADDR_MAX = 16



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
        word = c_string(args[0]).lower()
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
                value = mem if self.unsigned else to_signed64(mem)
            else:
                raise ConfigValueError("argument must be a memory value")
        elif self.octal:
            v, rest, overflow = strtoll(text, 8)
            if overflow or rest:
                raise ConfigValueError("argument couldn't be parsed as an octal number")
            value = v
        else:
            value = strict_int(text)
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
        word = as_str(c_string(args[0]).lower())   # ASCII-only folding, like strcasecmp
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
        value = c_string(args[0]) if self.c_string else args[0]
        if self.check is not None:
            problem = self.check(value)
            if problem:
                raise ConfigValueError(problem)
        return as_str(value)

    def format(self, value):
        return as_bytes(value)

    def rewrite(self, name, value, default):
        if self.empty_is_null and value == "":
            return None
        force = not (default is not None and not self.empty_is_null and value == default)
        return [(name.encode() + b" " + repr_arg(as_bytes(value)), force)]


def pathless(what: str, kind: str, allow_empty: bool) -> Callable[[bytes], Optional[str]]:
    """A String check for a bare file or directory name (dbfilename, appendfilename, ...)."""
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
        target = c_string(args[0])
        path = os.path.join(as_bytes(old), target) if target else b""
        try:
            if not path:
                raise FileNotFoundError(2, os.strerror(2))
            if not stat.S_ISDIR(os.stat(path).st_mode):
                raise NotADirectoryError(20, os.strerror(20))
            if not os.access(path, os.X_OK):
                raise PermissionError(13, os.strerror(13))
        except OSError as exc:
            raise ConfigValueError(os.strerror(exc.errno or 2)) from None
        return as_str(os.path.realpath(path))

    def format(self, value):
        return as_bytes(value)

    def rewrite(self, name, value, default):
        return [(name.encode() + b" " + repr_arg(as_bytes(value)), True)]


def _strtol_field(s: bytes) -> tuple[int, bool]:
    """(value, fully consumed) the way setConfigSaveOption checks a field with strtoll."""
    v, rest, _ = strtoll(s)
    return v, rest == b""


class Save(Kind):
    """RDB snapshot points: pairs "<seconds> <changes>"; "" = none.

    In configuration files (and command-line options) the pairs of several ``save`` lines
    accumulate: the first ``save`` of the whole load replaces the defaults and ``save ""``
    clears what was collected so far.  CONFIG SET replaces the list.
    """

    multi_arg = True

    def _pairs(self, args: list[bytes]) -> list[tuple[int, int]]:
        if len(args) == 1 and c_string(args[0]) == b"":
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
        return [(values[j], wrap_int32(values[j + 1])) for j in range(0, len(values), 2)]

    def parse(self, args, old, cfg):
        return self._pairs(args)

    def parse_in_file(self, args, old, cfg):
        pairs = self._pairs(args)
        current = list(old)
        if len(args) == 1 and c_string(args[0]) == b"":
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
        return [as_str(c_string(a)) for a in args]

    def format(self, value):
        return b" ".join(as_bytes(a) for a in value)

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
            cls = _OBUF_BY_NAME.get(c_string(args[j]).lower())
            if cls is None:
                raise ConfigValueError("Invalid client class specified in buffer limit "
                                       "configuration.")
            hard, soft = memtoull(args[j + 1]), memtoull(args[j + 2])
            seconds, rest, _ = strtoll(args[j + 3])
            seconds = wrap_int32(seconds)
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

