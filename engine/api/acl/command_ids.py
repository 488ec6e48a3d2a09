"""Every command and subcommand of the table numbered, for the permission bitmaps of
ACL users (permissions.pyx), and Redis's ACL categories over them (ACL CAT, +@cat).

The ids follow Redis's facts (redis_commands.json): a container and each of its
subcommands have their own, and so do the commands Sluice does not run (DEBUG,
BITFIELD...), which rules may name as in Redis (a `Known` name, in no category). One id beyond them (`FUTURE_ID`) stands for the commands a `+@all` user may run
that do not exist yet: only +@all (allcommands) sets it, which is how ACL LIST tells
"+@all -x" from "-@all +y"."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from engine.commands.table import CATEGORY_ORDER, COMMANDS, Command, redis_facts


@dataclass
class Known:
    """A command of Redis's that Sluice does not run: only its name for the rules."""

    name: str
    subcommands: Optional[dict] = None
    acl_categories: tuple = ()


def _known(name: str, facts: dict, container: str = "") -> Known:
    full = container + "|" + name if container else name
    subs = facts.get("subcommands")
    return Known(full, None if subs is None else
                 {sub.encode(): _known(sub, f, full) for sub, f in subs.items()})


TOP: dict = {}
"""Every command Redis knows by lower-case name: its record, or a Known (also for a
container of Sluice's that lacks some of Redis's subcommands: CLIENT TRACKING...)."""
for _name, _facts in redis_facts().items():
    _record = COMMANDS.get(_name.encode())
    if _record is None:
        _record = _known(_name, _facts)
    elif _record.subcommands is not None:
        _all = _known(_name, _facts).subcommands
        if _all.keys() != _record.subcommands.keys():
            _record = Known(_name, {**_all, **_record.subcommands}, _record.acl_categories)
    TOP[_name.encode()] = _record

RECORDS: list = []
"""Every command by id (a record, or a Known): a container, then its subcommands."""
for _record in TOP.values():
    RECORDS.append(_record)
    RECORDS.extend((_record.subcommands or {}).values())

ID_BY_NAME: dict[str, int] = {record.name: i for i, record in enumerate(RECORDS)}
"""A record's full name ("client|id") -> its id."""
FUTURE_ID = len(RECORDS)
BITMAP_BYTES = FUTURE_ID // 8 + 1

CATEGORIES: tuple[str, ...] = tuple(c[1:] for c in CATEGORY_ORDER)
"""The category names (no @), in Redis's order (ACL CAT)."""


def by_name(name: str):
    """The record of a command ("get") or subcommand ("client|id") named in a rule,
    or None."""
    top, sep, sub = name.lower().partition("|")
    record = TOP.get(top.encode())
    if record is None or not sep:
        return record
    return (record.subcommands or {}).get(sub.encode())


def ids_with_subcommands(record: Command) -> list[int]:
    """The ids a rule on `record` changes: its own and its subcommands'."""
    ids = [ID_BY_NAME[record.name]]
    ids.extend(ID_BY_NAME[sub.name] for sub in (record.subcommands or {}).values())
    return ids


def category_members(category: str) -> list[Command]:
    """The records of a category (containers and subcommands alike), table order."""
    tag = "@" + category
    return [record for record in RECORDS if tag in record.acl_categories]
