"""The Redis version Sluice reports (SERVER_VERSION: HELLO, INFO, redis.REDIS_VERSION,
`sluice-server --version`) is true: every command and argument that Redis added up to
that version, in the groups Sluice implements, exists here - except the deliberate
exclusions below, each with its reason. Clients and test suites switch features on by
this version, so claiming more than we have makes them use commands we lack.

The facts (name, group, since, history) are Redis's, in the command table's data file
(engine/commands/table/redis_commands.json, read by tests/redis_command_versions.py);
the first test proves their 7.0 part against redis-server 7.0's COMMAND DOCS.
"""
from __future__ import annotations

import redis

from engine import Engine
from engine.api.session import SERVER_VERSION, Hub, Session
from engine.commands.table import COMMANDS as TABLE
from engine.server.config.version import version_text

from redis_command_versions import COMMANDS, COMMANDS_7_0, HISTORY, HISTORY_7_0, version_key

REPORTED = SERVER_VERSION.decode()

# Whole groups Sluice does not implement (their commands are not in the facts file).
EXCLUDED_GROUPS = {
    "bitmap": "bit-level string commands (SETBIT, BITCOUNT, BITFIELD, ...): not part of "
              "a streams engine; strings are stored as opaque bytes",
    "hyperloglog": "probabilistic cardinality (PFADD & co.): a separate data structure",
    "geo": "geospatial indexes (GEOADD & co.): sorted sets with geohash encodings",
    "cluster": "Sluice is one standalone node: no slots, no CLUSTER commands",
    "sentinel": "no high-availability monitoring: one standalone node",
    "module": "no module API (RedisJSON, search, bloom, time series, vector sets are "
              "modules or module-like built-ins in 8.x)",
}

# Commands of the groups in the facts file that Sluice deliberately lacks, by reason.
EXCLUDED_COMMANDS = {
    "replication: Sluice has no replicas (its durability is the AOF and snapshots), so "
    "nothing to acknowledge, fail over, or sync (WAITAOF, whose local part "
    "is the AOF's fsync, is here: its replica count is always 0)": {
        "wait", "sync", "psync", "replconf", "replicaof", "slaveof", "role",
        "failover"},
    "moving keys between instances, a cluster's tool": {"migrate", "restore-asking"},
    "client-side caching (key tracking and invalidation messages) is not built": {
        "client|tracking", "client|caching", "client|getredir", "client|trackinginfo"},
    "diagnostics of Redis's own internals (allocator, event loop, debugger)": {
        "debug", "lolwut", "script|debug"},
    "no module API": {"module", "module|list", "module|load", "module|unload",
                      "module|help", "module|loadex"},
}
EXCLUDED = set().union(*EXCLUDED_COMMANDS.values())


# History entries (Redis's facts) whose arguments Sluice does not take.
MISSING_ARGUMENTS = {
    ("set", "8.4.0"): "SET's IFEQ/IFNE/IFDEQ/IFDNE conditions",
}


def _ours() -> set:
    names = set()
    for record in TABLE.values():
        names.add(record.name)
        names.update(sub.name for sub in (record.subcommands or {}).values())
    return names


def _missing() -> dict:
    """name -> since of every command in the facts that Sluice lacks (not excluded)."""
    ours = _ours()
    return {name: since for name, (_, since) in COMMANDS.items()
            if name not in ours and name not in EXCLUDED}


def test_facts_match_redis_7_0_command_docs(redis_server):
    """The 7.0 part of the facts file is what redis-server 7.0 says of itself."""
    real = redis.Redis(*redis_server)
    real.set_response_callback("COMMAND", lambda reply, **_: reply)
    docs = real.execute_command("COMMAND", "DOCS")
    seen, history = {}, set()

    def pairs(reply) -> dict:
        return reply if isinstance(reply, dict) else dict(zip(reply[::2], reply[1::2]))

    def walk(name: str, fields) -> None:
        doc = pairs(fields)
        group = doc[b"group"].decode()
        seen[name] = (group, doc[b"since"].decode())
        history.update((name, entry[0].decode(), entry[1].decode())
                       for entry in doc.get(b"history") or [])
        for sub, sub_doc in pairs(doc.get(b"subcommands") or []).items():
            walk(sub.decode(), sub_doc)

    for name, doc in pairs(docs).items():
        walk(name.decode(), doc)
    groups = {group for group, _ in COMMANDS_7_0.values()}
    assert {n: v for n, v in seen.items() if v[0] in groups} == COMMANDS_7_0
    assert {h for h in history if seen[h[0]][0] in groups} == set(HISTORY_7_0)
    assert not groups & set(EXCLUDED_GROUPS)
    assert {v[0] for v in seen.values()} <= groups | set(EXCLUDED_GROUPS)


def test_reported_version_claims_no_missing_command():
    """Nothing the version promises is missing: every command of an implemented group
    with `since` <= the reported version is in the command table (or excluded)."""
    claimed = {name: since for name, since in _missing().items()
               if version_key(since) <= version_key(REPORTED)}
    assert claimed == {}, f"SERVER_VERSION {REPORTED} claims commands Sluice lacks"


def test_reported_version_claims_no_missing_argument():
    history = {(name, version) for name, version, _ in HISTORY}
    for (name, version), what in MISSING_ARGUMENTS.items():
        assert (name, version) in history, what
        assert version_key(version) > version_key(REPORTED), what


def test_reported_version_is_the_newest_true_one():
    """The version is not more modest than it must be: the first missing feature
    belongs to the next Redis release line, and the reported one is the last patch
    of its own line (7.2.16, released 2026-08-25)."""
    lacking = [version_key(since) for since in _missing().values()]
    lacking += [version_key(version) for _, version in MISSING_ARGUMENTS]
    first_gap = min(lacking)
    lines = sorted({version_key(v)[:2] for _, v in COMMANDS.values()} |
                   {version_key(v)[:2] for _, v, _ in HISTORY})
    newest_whole_line = max(line for line in lines if line < first_gap[:2])
    assert version_key(REPORTED)[:2] == newest_whole_line
    assert REPORTED == "7.2.16"         # the last 7.2 release


def test_exclusions_are_real():
    """Each excluded command is one Redis has and Sluice does not."""
    ours = _ours()
    assert EXCLUDED <= set(COMMANDS)
    assert not EXCLUDED & ours
    assert {record.group for record in TABLE.values()}.isdisjoint(EXCLUDED_GROUPS)


def test_every_place_reports_the_same_version():
    session = Session(Hub(Engine()))
    number = session.call([b"EVAL", b"return redis.REDIS_VERSION_NUM", b"0"])
    major, minor, patch = version_key(REPORTED)
    assert number == (major << 16) | (minor << 8) | patch
    assert session.call([b"EVAL", b"return redis.REDIS_VERSION", b"0"]) == SERVER_VERSION
    hello = session.call([b"HELLO"])
    assert hello[hello.index(b"version") + 1] == SERVER_VERSION
    assert version_text().startswith(f"Sluice server v={REPORTED} ")
