"""ServerConfig: the running server's configuration values and the rules for changing them.

Values start at the directive table's defaults, are loaded at start-up from the command line, a
file and standard input (engine.server.config.config_file reads them), and change afterwards
only through CONFIG SET, all or nothing, with listeners that apply each change to the running
server and may veto it.
"""
from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Optional, Union

from engine.core.errors import ResponseError, arg_text
from engine.server.config.command_line import CommandLine, parse_command_line
from engine.server.config.config_file import load_line, load_text, read_config_file, rewrite_config_file
from engine.server.config.directives import DIRECTIVES, Directive
from engine.server.config.errors import ConfigApplyError, ConfigError, ConfigValueError, Origin
from engine.server.config.value_parsing import StrOrBytes, as_bytes, as_str
from persist import current_umask

log = logging.getLogger(__name__)

LOADING_ERROR = "LOADING Redis is loading the dataset in memory"

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
        self.user_lines: list[list[bytes]] = []     # `user <name> <rules>...` (the ACL's)
        # CONFIG REWRITE's `user` lines: the server's ACL users, or none with an aclfile
        self.user_rewrite: Callable[[], list[bytes]] = lambda: []
        self._listeners: dict[Optional[str], list[Listener]] = {}
        self._resetstat_hooks: list[Callable[[], None]] = []
        self._save_loaded = False
        self._umask = current_umask()

    # --- lookup and values ---

    @property
    def directives(self) -> tuple[Directive, ...]:
        return self._table

    def lookup(self, name: StrOrBytes) -> Optional[Directive]:
        """The directive called ``name`` (any case, aliases too), or None."""
        entry = self._by_name.get(as_bytes(name).lower())
        return entry[0] if entry else None

    def get(self, name: StrOrBytes) -> Any:
        d = self.lookup(name)
        if d is None:
            raise KeyError(as_str(as_bytes(name)))
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
            raise KeyError(as_str(as_bytes(name)))
        return _copy(self._defaults[d.name])

    def formatted(self, name: StrOrBytes) -> bytes:
        """The value exactly as CONFIG GET shows it."""
        d = self.lookup(name)
        if d is None:
            raise KeyError(as_str(as_bytes(name)))
        return d.kind.format(self._values[d.name])

    def is_sensitive(self, name: StrOrBytes) -> bool:
        d = self.lookup(name)
        return bool(d and d.sensitive)

    def names(self) -> list[tuple[bytes, Directive]]:
        """Every name a directive answers to (lower case, aliases too) with the directive."""
        return [(key, d) for key, (d, _) in self._by_name.items()]

    def items(self) -> list[tuple[str, Any]]:
        return [(d.name, self._values[d.name]) for d in self._table]

    # --- listeners and hooks ---

    def add_listener(self, names: Union[str, Iterable[str], None], callback: Listener) -> None:
        """Call ``callback(name, old, new)`` after CONFIG SET changes one of ``names``.

        ``names`` is a directive name, several, or None for every directive.  See the package
        docstring (engine.server.config) for vetoing a change.
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
            name_b, value_b = as_bytes(raw_name), as_bytes(raw_value)
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

    def load_value(self, d: Directive, args: list[bytes]) -> None:
        """Set ``d`` from the words of a configuration line (start-up: no listener runs)."""
        self._values[d.name] = self._parse(d, args, self._values[d.name], True)

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
            if old == new and not d.volatile:
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
        abspath = os.path.abspath(as_str(path) if isinstance(path, bytes) else path)
        content = read_config_file(abspath, None, None)
        if self.config_file is None:
            self.config_file = abspath
        load_text(self, content, "file", abspath)

    def load_string(self, text: StrOrBytes, *, source: str = "string") -> None:
        """Apply configuration text ("stdin" or "string" in error reports)."""
        load_text(self, as_bytes(text), "stdin" if source == "stdin" else "string", None)

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
            load_text(self, read_config_file(cl.config_file, None, None), "file",
                      cl.config_file)
        if cl.from_stdin:
            stream = stdin if stdin is not None else sys.stdin.buffer
            load_text(self, as_bytes(stream.read()), "stdin", None)
        for line, started_by in cl.options:
            load_line(self, line, Origin("args", started_by))
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
                with open(os.path.join(as_bytes(self._values["dir"]), as_bytes(logfile)), "ab"):
                    pass
            except OSError as exc:
                raise ConfigError(f"Can't open the log file: {os.strerror(exc.errno or 2)}") \
                    from None

    def rewrite(self, path: Optional[str] = None) -> None:
        """CONFIG REWRITE into ``path`` (default: the file loaded first); raises OSError."""
        path = path or self.config_file
        if path is None:
            raise ValueError("no configuration file to rewrite")
        rewrite_config_file(self, path, self._umask)


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


def _err_text(b: bytes) -> str:
    """An argument shown inside an error reply: Redis turns CR/LF into spaces there."""
    return arg_text(b).replace("\r", " ").replace("\n", " ")
