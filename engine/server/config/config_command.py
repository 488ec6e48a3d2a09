"""The CONFIG command (GET, SET, RESETSTAT, REWRITE, HELP) over a ServerConfig: argument
counts, replies and error texts as redis-server 7.0 gives them.  The server's command table
sends CONFIG here; what the values mean lives in the rest of the package.
"""
from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

from engine.core.errors import SYNTAX, ResponseError, unknown_subcommand, wrong_arity
from engine.core.glob import match as _glob_match
from engine.resp.reply import OK, Status
from engine.server.config.directives import Directive
from engine.server.config.server_config import ServerConfig

log = logging.getLogger(__name__)


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
            d = cfg.lookup(key)
            if d is not None and key not in matches:
                matches[key] = (pattern, d)
            continue
        for key, d in cfg.names():
            if key not in matches and _glob_match(pattern, key, True):
                matches[key] = (key, d)
    if resp3:
        return {name: cfg.formatted(d.name) for name, d in matches.values()}
    reply: list[bytes] = []
    for name, d in matches.values():
        reply.append(name)
        reply.append(cfg.formatted(d.name))
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
