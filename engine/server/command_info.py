"""COMMAND: COUNT, INFO, DOCS, LIST, GETKEYS, HELP, rendered from the one command
table (engine/commands/table.py): name, arity, flags, key positions, ACL categories,
key specs, subcommands, and the summary and group DOCS shows (what redis-cli reads)."""
from __future__ import annotations

from typing import Optional

from engine.commands.table import COMMANDS, Command
from engine.core.errors import ResponseError, unknown_subcommand
from engine.core.glob import match
from engine.resp.reply import SetReply, Status


def _rw_flags(record: Command) -> list:
    if record.write:
        return [Status(b"RW"), Status(b"update")]
    return [Status(b"RO"), Status(b"access")]


def key_specs(record: Command) -> list:
    """Redis 7's key specifications, from the record's key positions."""
    if record.keyword is not None:
        return [{b"flags": [_rw_flags(record)[0], Status(b"access")],
                 b"begin_search": {b"type": b"keyword",
                                   b"spec": {b"keyword": record.keyword.encode(),
                                             b"startfrom": 1}},
                 b"find_keys": {b"type": b"range",
                                b"spec": {b"lastkey": -1, b"keystep": 1, b"limit": 2}}}]
    if record.numkeys:
        # a script's keys: read and written, unless the command is read-only (EVAL_RO)
        access = ([Status(b"RO"), Status(b"access")] if "readonly" in record.flags
                  else [Status(b"RW"), Status(b"access"), Status(b"update")])
        return [{b"flags": access,
                 b"begin_search": {b"type": b"index", b"spec": {b"index": record.numkeys}},
                 b"find_keys": {b"type": b"keynum",
                                b"spec": {b"keynumidx": 0, b"firstkey": 1, b"keystep": 1}}}]
    if not record.first_key:
        return []
    last = record.last_key
    lastkey = last if last < 0 else last - record.first_key
    return [{b"flags": _rw_flags(record),
             b"begin_search": {b"type": b"index", b"spec": {b"index": record.first_key}},
             b"find_keys": {b"type": b"range",
                            b"spec": {b"lastkey": lastkey, b"keystep": record.step,
                                      b"limit": 0}}}]


def info(record: Command, resp3: bool) -> list:
    """One COMMAND INFO entry."""
    flags = [Status(f.encode()) for f in record.flags]
    if record.movable_keys:
        flags.append(Status(b"movablekeys"))
    cats = [Status(c.encode()) for c in record.acl_categories]
    subs = [info(sub, resp3) for sub in (record.subcommands or {}).values()]
    # (RESP3 sets in Redis's order, as it writes them)
    return [record.name.encode(), record.arity, SetReply(flags) if resp3 else flags,
            record.first_key, record.last_key, record.step,
            SetReply(cats) if resp3 else cats,
            [], key_specs(record), subs]


def docs(record: Command) -> dict:
    """One COMMAND DOCS entry."""
    out = {b"summary": record.summary.encode(), b"since": record.since.encode(),
           b"group": record.group.encode()}
    if record.subcommands:
        out[b"subcommands"] = {sub.name.encode(): docs(sub)
                               for sub in record.subcommands.values()}
    return out


def _table() -> dict:
    """name -> record of every command (engine/commands/table.py), sorted by name as
    COMMAND lists them; built per call, so COMMAND sees every record there is."""
    return {raw.decode(): record for raw, record in sorted(COMMANDS.items())}


def _find(table: dict, name: bytes) -> Optional[Command]:
    parts = name.decode("utf-8", "replace").lower().split("|", 1)
    record = table.get(parts[0])
    if record is not None and len(parts) == 2:
        return (record.subcommands or {}).get(parts[1].encode())
    return record


def command_command(argv: list, resp3: bool):
    """COMMAND [COUNT | INFO name... | DOCS name... | LIST [FILTERBY ...] | GETKEYS ... | HELP]."""
    table = _table()
    if len(argv) == 1:
        return [info(record, resp3) for record in table.values()]
    sub = argv[1].lower()
    if sub == b"count":
        return len(table)
    if sub == b"info":
        if len(argv) == 2:
            return [info(record, resp3) for record in table.values()]
        return [None if (r := _find(table, name)) is None else info(r, resp3)
                for name in argv[2:]]
    if sub == b"docs":
        if len(argv) == 2:
            return {record.name.encode(): docs(record) for record in table.values()}
        out = {}
        for name in argv[2:]:
            record = _find(table, name)
            if record is not None:
                out[record.name.encode()] = docs(record)
        return out
    if sub == b"list":
        # every command, each container followed by its subcommands (as Redis lists them)
        records = [r for record in table.values()
                   for r in (record, *(record.subcommands or {}).values())]
        if len(argv) == 2:
            return [r.name.encode() for r in records]
        if len(argv) != 5 or argv[2].lower() != b"filterby":
            raise ResponseError("ERR syntax error")
        how, what = argv[3].lower(), argv[4]
        if how == b"pattern":
            return [r.name.encode() for r in records if match(what, r.name.encode(), True)]
        if how == b"aclcat":
            cat = "@" + what.decode("utf-8", "replace").lower()
            return [r.name.encode() for r in records if cat in r.acl_categories]
        if how == b"module":
            return []
        raise ResponseError("ERR syntax error")
    if sub in (b"getkeys", b"getkeysandflags"):
        record = _find(table, argv[2])
        if record is None:
            raise ResponseError("ERR Invalid command specified")
        target = argv[2:]
        if record.subcommands and len(target) > 1:
            record = _find(table, target[0] + b"|" + target[1]) or record
        if not record.arity_ok(len(target)):
            raise ResponseError("ERR Invalid number of arguments specified for command")
        keys = record.keys(target)
        if not keys and "no_mandatory_keys" in record.flags:
            return []
        if not keys:
            raise ResponseError("ERR The command has no key arguments")
        if sub == b"getkeys":
            return keys
        return [[key, _rw_flags(record)] for key in keys]
    if sub == b"help":
        return [Status(line.encode()) for line in COMMAND_HELP]
    raise unknown_subcommand(argv[0], argv[1])


COMMAND_HELP = (
    "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "(no subcommand)",
    "    Return details about all commands.",
    "COUNT",
    "    Return the total number of commands in this server.",
    "LIST",
    "    Return a list of all commands in this server.",
    "INFO [<command-name> ...]",
    "    Return details about multiple commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "DOCS [<command-name> ...]",
    "    Return documentation details about multiple commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "GETKEYS <full-command>",
    "    Return the keys from a full command.",
    "GETKEYSANDFLAGS <full-command>",
    "    Return the keys and the access flags from a full command.",
    "HELP",
    "    Print this help.",
)
