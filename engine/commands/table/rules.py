"""Sluice's own rules for the commands of the table, beside Redis's facts
(redis_commands.json): which layer runs each command that the engine does not, where it may run (a RESP2 subscribed context, at
once inside MULTI), what a refusal does, how options name keys, and where COMMAND
DOCS deliberately differs from Redis's json. A command absent here runs in the
engine with the defaults of `rule`. What each rule means: the package's docstring.
"""
from __future__ import annotations

from typing import Callable, Optional

# SORT's options and how many arguments each takes, to find its STORE destination
_SORT_OPTIONS = {b"LIMIT": 2, b"BY": 1, b"GET": 1, b"STORE": 1}


def sort_keys(argv: list) -> list:
    """SORT's keys: the sorted key and the last STORE destination (as Redis's
    sortGetKeys finds it, skipping the arguments of LIMIT, BY and GET)."""
    keys = argv[1:2]
    store = None
    i = 2
    while i < len(argv):
        option = argv[i].upper()
        if option == b"STORE" and i + 1 < len(argv):
            store = argv[i + 1]
        i += 1 + _SORT_OPTIONS.get(option, 0)
    return keys if store is None else keys + [store]


def first_key(argv: list) -> list:
    """SORT_RO's key: its first argument (its options name none)."""
    return argv[1:2]


def rule(*, layer: Optional[str] = None, base_ok: bool = False,
         pubsub_ok: bool = False, immediate: bool = False, aborts_exec: bool = False,
         denied_on_misconf: Optional[bool] = None,
         find_keys: Optional[Callable] = None) -> dict:
    """The keyword arguments of record.cmd that are Sluice's, not Redis's."""
    return {name: value for name, value in (
        ("layer", layer), ("base_ok", base_ok),
        ("pubsub_ok", pubsub_ok), ("immediate", immediate), ("aborts_exec", aborts_exec),
        ("denied_on_misconf", denied_on_misconf), ("find_keys", find_keys))
        if value is not None}


RULES: dict[str, dict] = {
    # run by the session (engine/api/session.py), every client has them
    **dict.fromkeys((
        "auth", "hello", "unwatch", "eval", "eval_ro", "evalsha", "evalsha_ro", "fcall",
        "fcall_ro", "flushall"), rule(layer="session")),
    # run by the server (engine/server/session.py), only its clients have them
    **dict.fromkeys((
        "client|list", "client|kill", "client|unblock", "client|reply", "client|pause",
        "client|unpause", "publish", "spublish",
        "pubsub", "config", "info", "shutdown", "slowlog", "latency", "monitor"),
        rule(layer="server")),
    "sort": rule(find_keys=sort_keys),
    "sort_ro": rule(find_keys=first_key),
    "client": rule(layer="session"),
    "ping": rule(layer="session", pubsub_ok=True, denied_on_misconf=True),
    "quit": rule(layer="session", pubsub_ok=True, immediate=True),
    "reset": rule(layer="session", pubsub_ok=True, immediate=True),
    "discard": rule(layer="session", immediate=True),
    "exec": rule(layer="session", immediate=True, aborts_exec=True),
    "multi": rule(layer="session", immediate=True),
    "watch": rule(layer="session", immediate=True),
    "psubscribe": rule(layer="server", pubsub_ok=True),
    "punsubscribe": rule(layer="server", pubsub_ok=True),
    "subscribe": rule(layer="server", pubsub_ok=True),
    "unsubscribe": rule(layer="server", pubsub_ok=True),
    "ssubscribe": rule(layer="server", pubsub_ok=True),
    "sunsubscribe": rule(layer="server", pubsub_ok=True),
    "script": rule(layer="session"),
    "acl": rule(layer="session"),
    "command": rule(layer="server", base_ok=True),
}
"""name ("client|list" for a subcommand) -> its rules; a subcommand runs in its
container's layer unless it names its own."""

DOCS_OMIT_HISTORY: dict[str, frozenset] = {
    "xadd": frozenset({"8.6.0"}),           # IDMP, IDMPAUTO
    "xread": frozenset({"7.4.0"}),          # the `+` ID
    "set": frozenset({"8.4.0"}),            # IFEQ, IFNE, IFDEQ, IFDNE: not built
    "hscan": frozenset({"7.4.0"}),          # NOVALUES
    "client|list": frozenset({"7.2.0"}),    # the lib-name and lib-ver fields
    "client|kill": frozenset({"7.4.0"}),    # MAXAGE
}
"""Entries of Redis's history (by version) that COMMAND DOCS leaves out: Sluice's
docs of these commands have not listed them so far (an option Sluice lacks, as SET's,
must stay out; the others could be listed), and its replies stay as they were."""
