"""Every command and subcommand of the table numbered, for the permission bitmaps of
ACL users (permissions.pyx), and Redis's ACL categories over them (ACL CAT, +@cat).

The ids follow the table's order; a container and each of its subcommands have their
own. One id beyond them (`FUTURE_ID`) stands for the commands a `+@all` user may run
that do not exist yet: only +@all (allcommands) sets it, which is how ACL LIST tells
"+@all -x" from "-@all +y"."""
from __future__ import annotations

from engine.commands.table import CATEGORY_ORDER, COMMANDS, Command

RECORDS: list[Command] = []
"""Every record by id: a container, then its subcommands."""
for _record in COMMANDS.values():
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
    record = COMMANDS.get(top.encode())
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
