"""The command table: every command and subcommand Sluice knows, one record each, so
that a reader (and COMMAND, the session, the road's checks, WATCH,
tools/aof_cli.py) finds all of them in one place. Built from one data source:
- `redis_commands.json`: Redis's facts (src/commands/*.json), in the groups' order
  (COMMAND lists them so): per command its group, since, summary, complexity, arity,
  flags, ACL categories, tips, key specifications, history, doc flags, arguments and
  subcommands. A command (or subcommand) Sluice does not have keeps only its group,
  since and history there (tests/commands/test_reported_version.py reads them all);
  one with an arity is in the table.
- `rules.py`: Sluice's own rules beside them (the fields below), and the history
  entries its COMMAND DOCS leaves out.
- `record.py`: the record's shape and how one is built from the two.
Here: COMMANDS, and the lookups the engine and the sessions make.

A record says what Redis's json says - name, arity, command flags, ACL categories,
tips, key specifications, docs (group, since, summary, complexity, history, doc flags,
arguments), subcommands - and which layer runs it:
- `engine`: a handler(ctx, argv) of the command layer, bound by the `@command`
  decorator of its module (engine/commands/*.pyx; SAVE & co. in
  engine/api/persistence_commands.py, which drive persistence); Engine.execute runs it.
- `session`: a handler(client, argv) of engine/api/session.py's Session (every client
  has them), bound by `@client_command` on the method.
- `server`: the same, of engine/server/session.py's ServerSession (only the server's
  clients have them).
A subcommand runs its own handler, or else its container's. PING and FLUSHALL run in
the session, which calls the engine's handler: Engine.execute runs that handler
directly.

Arity follows Redis: positive = exact argument count (command name included),
negative = at least that many. The key specifications are the one declaration of
where the keys are; the legacy key positions (first, last, step) COMMAND INFO prints
come from them as Redis derives them, and so do `keyword` (keys that follow a
keyword: XREAD's STREAMS) and `numkeys` (the position of a key count that the keys
follow: EVAL's). `find_keys` is a function that reads the keys from the arguments
where options name them (SORT's STORE; Redis's getkeys_proc): movablekeys.

Flags are Redis's command flags, as COMMAND INFO prints them; `acl_categories` the
categories Redis's json names, to which Redis adds those the flags imply (write:
@write, readonly: @read, admin: @admin @dangerous, ...). Our own rules beyond them
are fields: `pubsub_ok` (allowed in a RESP2 subscribed context), `immediate` (runs at
once inside MULTI instead of being queued), `aborts_exec` (a refusal aborts the
transaction with the reason: EXEC), `denied_on_misconf` (refused while persistence
fails: every write, and PING so that health checks notice). `no_auth`, `no_multi`,
`allow_busy` and `write` come from the flags of the same names.
"""
from __future__ import annotations

import json
from dataclasses import replace
from importlib import resources
from typing import Callable, Optional

from engine.commands.table.record import (CATEGORY_ORDER, FLAG_ORDER, KEY_SPEC_FLAGS, LAYERS, Arg,
                                          Command, KeySpec, arg, cmd, from_facts, ks,
                                          legacy_key_range)
from engine.commands.table.rules import DOCS_OMIT_HISTORY, RULES, sort_keys

__all__ = ["COMMANDS", "ENGINE_COMMANDS", "command", "client_command", "classify", "layer_commands",
           "redis_facts", "from_facts", "Command", "KeySpec", "Arg", "cmd", "ks", "arg",
           "legacy_key_range", "sort_keys", "FLAG_ORDER", "CATEGORY_ORDER", "KEY_SPEC_FLAGS",
           "LAYERS"]


def redis_facts() -> dict:
    """Redis's facts of every command (redis_commands.json, package data): name ->
    its entry, subcommands nested under "subcommands"."""
    text = resources.files(__name__).joinpath("redis_commands.json").read_text("utf-8")
    return json.loads(text)["commands"]


COMMANDS: dict[bytes, Command] = {
    name.encode(): from_facts(name, facts, RULES, DOCS_OMIT_HISTORY)
    for name, facts in redis_facts().items() if "arity" in facts}
"""Every top-level record by lower-case name."""

ENGINE_COMMANDS: dict[bytes, Command] = {}
"""The records the engine runs (Engine.execute): those with a handler, filled by
@command, by lower- and upper-case name (the common spellings, found without
lower()). Session and server commands are unknown there."""


def _record(name: str) -> tuple:
    """(the record `name` - "xgroup|create" for a subcommand -, its container's)."""
    top, _, sub = name.partition("|")
    container = COMMANDS[top.encode()]
    return (container.subcommands[sub.encode()] if sub else container), container


def command(name: str):
    """Binds the decorated handler(ctx, argv) -> reply to the record `name`
    ("xgroup|create" for a subcommand): the engine then runs it."""
    def bind(handler: Callable) -> Callable:
        record, container = _record(name)
        record.handler = handler
        ENGINE_COMMANDS[container.name.encode()] = \
            ENGINE_COMMANDS[container.name.upper().encode()] = container
        return handler
    return bind


def client_command(name: str):
    """Binds the decorated handler(client, argv) -> reply (a method of a session
    class) to the record `name` of the session or server layer; bound to a container,
    it also runs every subcommand that has no handler of its own."""
    def bind(handler: Callable) -> Callable:
        record, _ = _record(name)
        record.client_handler = handler
        for sub in (record.subcommands or {}).values():
            if sub.client_handler is None:
                sub.client_handler = handler
        return handler
    return bind


def classify(argv: list, spec: Optional[Command] = None) -> tuple:
    """(full command name or None, rejected) for a command that failed (an engine
    command unless its record `spec` is given): rejected = refused by lookup/arity
    before running (Redis's rejected_calls); unknown commands and subcommands have no
    name (no commandstats entry)."""
    if spec is None:
        spec = ENGINE_COMMANDS.get(argv[0].lower())
    if spec is None:
        return None, True
    argc = len(argv)
    if spec.subcommands is not None:
        if argc < 2:
            return spec.name, True
        sub = spec.subcommands.get(argv[1].lower())
        if sub is None:
            return None, True
        spec = sub
    return spec.name, not spec.arity_ok(argc)


def layer_commands(*layers: str) -> dict:
    """The records a session of these layers runs itself (not through the engine),
    containers holding only those subcommands; by lower- and upper-case name (the
    common spellings, found without lower())."""
    out: dict = {}
    for raw, record in COMMANDS.items():
        if record.layer not in layers:
            continue
        if record.subcommands is not None:
            subs = {n: s for n, s in record.subcommands.items() if s.layer in layers}
            record = _with_subcommands(record, subs)
        out[raw] = out[raw.upper()] = record
    return out


def _with_subcommands(record: Command, subcommands: dict) -> Command:
    if subcommands.keys() == record.subcommands.keys():
        return record
    return replace(record, subcommands=subcommands)
