"""Since which Redis version each command exists, and what later versions added to it,
read from Redis's facts in the command table's data file
(engine/commands/table/redis_commands.json: group, since, history of every command of
the groups Sluice implements and of the server group, those Sluice lacks included),
for tests/commands/test_reported_version.py, which checks the version Sluice reports
(SERVER_VERSION) against them and proves the 7.0 part against redis-server 7.0's
COMMAND DOCS.

Where the facts come from: everything Redis 7.0 has, COMMAND DOCS of redis-server
7.0.15 (the oracle), whose replies are generated from 7.0's src/commands/*.json; what
7.2 and later added, the newest src/commands/*.json of https://github.com/redis/redis
and the history sections of https://redis.io/docs/latest/commands/<name>/. Bitmap,
hyperloglog, geo, cluster, sentinel and module commands are left out
(test_reported_version.py says why). Names are COMMAND DOCS' ("xgroup|create").
"""
from __future__ import annotations

from engine.commands.table import redis_facts


def version_key(version: str) -> tuple:
    """A version as a comparable tuple ("2.9.50" < "7.2.0" < "8.10.0")."""
    return tuple(int(part) for part in version.split("."))


def _walk(facts: dict, prefix: str = ""):
    for name, entry in facts.items():
        yield prefix + name, entry
        yield from _walk(entry.get("subcommands", {}), prefix + name + "|")


_ALL = dict(_walk(redis_facts()))
_IN_7_0 = (7, 1)        # anything older than 7.1 is in 7.0

# name: (group, since)
COMMANDS: dict[str, tuple[str, str]] = {
    name: (entry["group"], entry["since"]) for name, entry in _ALL.items()}
COMMANDS_7_0: dict[str, tuple[str, str]] = {
    name: fact for name, fact in COMMANDS.items() if version_key(fact[1]) < _IN_7_0}

# (command, version, what that version changed)
HISTORY: tuple[tuple[str, str, str], ...] = tuple(
    (name, version, what) for name, entry in _ALL.items()
    for version, what in entry.get("history", ()))
HISTORY_7_0: tuple[tuple[str, str, str], ...] = tuple(
    entry for entry in HISTORY if version_key(entry[1]) < _IN_7_0)
