"""COMMAND: COUNT, INFO, DOCS, LIST, GETKEYS, HELP, rendered from the one command
table (engine/commands/table/): name, arity, flags, key positions, ACL categories,
tips, key specs, subcommands, and the docs (summary, group, complexity, history,
arguments: what redis-cli's hints and client libraries read)."""
from __future__ import annotations

from typing import Optional

from engine.commands.table import COMMANDS, Arg, Command, KeySpec
from engine.core.errors import ResponseError, unknown_subcommand
from engine.core.glob import match
from engine.resp.numbers import strict_int
from engine.resp.reply import SetReply, Status


def _rw_flags(record: Command) -> list:
    if record.write:
        return [Status(b"RW"), Status(b"update")]
    return [Status(b"RO"), Status(b"access")]


def _keys_by_spec(record: Command, argv: list) -> Optional[list]:
    """(key, its key spec) for each key of argv, found spec by spec as Redis does for
    COMMAND GETKEYSANDFLAGS; None when a spec cannot say (unknown, or options that
    name keys)."""
    specs = record.key_specs
    if not specs:
        return None
    if record.find_keys is not None:      # SORT: the sorted key's, then STORE's (last)
        return [(key, specs[0] if i == 0 else specs[-1])
                for i, key in enumerate(record.find_keys(argv))]
    found = []
    argc = len(argv)
    for spec in specs:
        first = _search_begin(spec, argv)
        if first is None:
            return None
        if first == 0:
            continue                            # its keyword is absent
        if spec.range is not None:
            lastkey, step, limit = spec.range
            if lastkey >= 0:
                last = first + lastkey
            elif not limit:
                last = argc + lastkey
            else:
                last = first + (argc - first) // limit + lastkey
        elif spec.keynum is not None:
            keynumidx, firstkey, step = spec.keynum
            count = strict_int(argv[first + keynumidx]) if first + keynumidx < argc else None
            if count is None or count < 0:
                return None
            first += firstkey
            last = first + count - 1
        else:
            return None
        if last >= argc:
            return None
        found.extend((argv[i], spec) for i in range(first, last + 1, step or 1))
    return found


def _resolved_flags(spec: KeySpec, argv: list) -> tuple:
    """A key spec's flags for argv, as Redis's own key finders give them: SET's variable
    ones resolved (with GET it reads the old value: RW ACCESS UPDATE; else OW UPDATE),
    and an incomplete spec's keys found in full (XREAD's, XREADGROUP's)."""
    if "VARIABLE_FLAGS" not in spec.flags:
        return tuple(flag for flag in spec.flags if flag != "INCOMPLETE")
    if any(arg.upper() == b"GET" for arg in argv[3:]):
        return ("RW", "ACCESS", "UPDATE")
    return ("OW", "UPDATE")


def _search_begin(spec: KeySpec, argv: list) -> Optional[int]:
    """Where a key spec's keys begin in argv: 0 when its keyword is absent, None when
    the spec does not say."""
    if spec.index:
        return spec.index if spec.index < len(argv) else 0
    if spec.keyword is None:
        return None
    keyword = spec.keyword.encode()
    start = spec.startfrom if spec.startfrom >= 0 else len(argv) + spec.startfrom
    order = range(start, len(argv)) if spec.startfrom >= 0 else range(start, 0, -1)
    for i in order:
        if 0 < i < len(argv) - 1 and argv[i].upper() == keyword:
            return i + 1
    return 0


def _key_spec_flag(flag: str) -> Status:
    """Redis prints the access kinds (RO, RW, OW, RM) upper-case, the rest lower."""
    return Status((flag if len(flag) == 2 else flag.lower()).encode())


def key_spec(spec: KeySpec) -> dict:
    """One key specification as COMMAND INFO writes it."""
    if spec.index:
        begin = {b"type": b"index", b"spec": {b"index": spec.index}}
    elif spec.keyword is not None:
        begin = {b"type": b"keyword", b"spec": {b"keyword": spec.keyword.encode(),
                                                 b"startfrom": spec.startfrom}}
    else:
        begin = {b"type": b"unknown", b"spec": {}}
    if spec.range is not None:
        lastkey, step, limit = spec.range
        find = {b"type": b"range",
                b"spec": {b"lastkey": lastkey, b"keystep": step, b"limit": limit}}
    elif spec.keynum is not None:
        keynumidx, firstkey, step = spec.keynum
        find = {b"type": b"keynum",
                b"spec": {b"keynumidx": keynumidx, b"firstkey": firstkey, b"keystep": step}}
    else:
        find = {b"type": b"unknown", b"spec": {}}
    out = {} if spec.notes is None else {b"notes": spec.notes.encode()}
    out[b"flags"] = SetReply([_key_spec_flag(f) for f in spec.flags])
    out[b"begin_search"] = begin
    out[b"find_keys"] = find
    return out


def info(record: Command) -> list:
    """One COMMAND INFO entry (Redis writes its flags, categories, tips and key specs
    as RESP3 sets, and no subcommands as an empty set)."""
    flags = [Status(f.encode()) for f in record.flags]
    if record.movable_keys:
        flags.append(Status(b"movablekeys"))
    return [record.name.encode(), record.arity, SetReply(flags),
            record.first_key, record.last_key, record.step,
            SetReply([Status(c.encode()) for c in record.acl_categories]),
            SetReply([tip.encode() for tip in record.tips]),
            SetReply([key_spec(spec) for spec in record.key_specs]),
            [info(sub) for sub in record.subcommands.values()] if record.subcommands
            else SetReply()]


def _argument(argument: Arg) -> dict:
    out = {b"name": argument.name.encode(), b"type": argument.type.encode()}
    if argument.key_spec_index >= 0:
        out[b"key_spec_index"] = argument.key_spec_index
    for field in ("token", "since"):
        if (value := getattr(argument, field)) is not None:
            out[field.encode()] = value.encode()
    if argument.flags:
        out[b"flags"] = SetReply([Status(f.encode()) for f in argument.flags])
    if argument.deprecated_since is not None:
        out[b"deprecated_since"] = argument.deprecated_since.encode()
    if argument.arguments:
        out[b"arguments"] = [_argument(a) for a in argument.arguments]
    return out


def docs(record: Command) -> dict:
    """One COMMAND DOCS entry, its fields in Redis's order."""
    out = {b"summary": record.summary.encode(), b"since": record.since.encode(),
           b"group": record.group.encode()}
    if record.complexity is not None:
        out[b"complexity"] = record.complexity.encode()
    if record.doc_flags:
        out[b"doc_flags"] = SetReply([Status(f.encode()) for f in record.doc_flags])
    if record.deprecated_since is not None:
        out[b"deprecated_since"] = record.deprecated_since.encode()
    if record.replaced_by is not None:
        out[b"replaced_by"] = record.replaced_by.encode()
    if record.history:
        out[b"history"] = SetReply([[v.encode(), text.encode()] for v, text in record.history])
    if record.arguments:
        out[b"arguments"] = [_argument(a) for a in record.arguments]
    if record.subcommands:
        out[b"subcommands"] = {sub.name.encode(): docs(sub)
                               for sub in record.subcommands.values()}
    return out


def _table() -> dict:
    """name -> record of every command (engine/commands/table/), sorted by name as
    COMMAND lists them; built per call, so COMMAND sees every record there is."""
    return {raw.decode(): record for raw, record in sorted(COMMANDS.items())}


def _find(table: dict, name: bytes) -> Optional[Command]:
    parts = name.decode("utf-8", "replace").lower().split("|", 1)
    record = table.get(parts[0])
    if record is not None and len(parts) == 2:
        return (record.subcommands or {}).get(parts[1].encode())
    return record


def command_command(argv: list):
    """COMMAND [COUNT | INFO name... | DOCS name... | LIST [FILTERBY ...] | GETKEYS ... | HELP]."""
    table = _table()
    if len(argv) == 1:
        return [info(record) for record in table.values()]
    sub = argv[1].lower()
    if sub == b"count":
        return len(table)
    if sub == b"info":
        if len(argv) == 2:
            return [info(record) for record in table.values()]
        return [None if (r := _find(table, name)) is None else info(r)
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
        flagged = _keys_by_spec(record, target)
        if flagged is None:
            return [[key, _rw_flags(record)] for key in keys]
        return [[key, [_key_spec_flag(f) for f in _resolved_flags(spec, target)]]
                for key, spec in flagged]
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
