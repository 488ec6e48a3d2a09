"""The one command table (engine/commands/table/): every record is complete and
agrees with redis-server, and a record added to it is seen by every road in - the
embedded engine, the session (process_command), the server's fast and slow paths,
and COMMAND."""
from __future__ import annotations

import asyncio
import contextlib
import threading
import tomllib
from pathlib import Path
from typing import Iterator

import pytest
import redis

from engine import Engine
from engine.api.session import Hub, QUEUED, Session
from engine.commands.table import (COMMANDS, ENGINE_COMMANDS, FLAG_ORDER, command, from_facts,
                                   redis_facts)
from engine.core.errors import ResponseError
from engine.server.config.directives import DIRECTIVES
from engine.server.config.server_config import ServerConfig
from engine.server.server import Server
from engine.server.session import ServerSession
from raw_io import raw_socket, read_all
from servers import free_port

GROUPS = {"stream", "string", "generic", "connection", "transactions", "pubsub", "server",
          "scripting", "list", "hash", "set", "sorted-set"}
# Records whose arity follows a Redis newer than the 7.0 oracle: name -> 7.0's arity.
NEWER_ARITY = {"zrank": 3, "zrevrank": 3}     # WITHSCORE, Redis 7.2


def every_record():
    for record in COMMANDS.values():
        yield record
        yield from (record.subcommands or {}).values()


@pytest.mark.parametrize("record", list(every_record()), ids=lambda r: r.name)
def test_every_record_is_complete(record):
    assert record.summary and record.since and record.group in GROUPS
    assert record.arity != 0 and isinstance(record.arity, int)
    assert set(record.flags) <= set(FLAG_ORDER)
    ranks = [FLAG_ORDER.index(f) if f in FLAG_ORDER else len(FLAG_ORDER) for f in record.flags]
    assert ranks == sorted(ranks)                   # the order COMMAND INFO prints
    if record.first_key:
        assert record.step >= 1 and record.keyword is None
    else:
        assert record.last_key == record.step == 0
    if record.subcommands is not None:
        assert record.arity == -2 or record.base_ok
        return
    if record.layer == "engine":
        assert callable(record.handler) and record.client_handler is None
        assert ENGINE_COMMANDS[record.name.split("|")[0].encode()]
    else:
        owner = Session if record.layer == "session" else ServerSession
        handler = record.client_handler
        assert callable(handler) and getattr(owner, handler.__name__) is handler


def test_sessions_run_only_their_layers():
    """The embedded session runs the `session` layer; the server's adds `server`; the
    engine knows neither (unknown command, as Redis says it)."""
    session = Session(Hub(Engine()))
    with pytest.raises(ResponseError, match="unknown command 'INFO'"):
        session.call([b"INFO"])
    with pytest.raises(ResponseError, match="unknown subcommand 'LIST'"):
        session.call([b"CLIENT", b"LIST"])
    assert session.call([b"CLIENT", b"ID"]) == session.id
    with pytest.raises(ResponseError, match="unknown command 'HELLO'"):
        Engine().execute("HELLO")
    assert {r.layer for r in ServerSession.commands.values()} == {"session", "server"}
    assert {r.layer for r in Session.commands.values()} == {"session"}


def _sample_argv(record) -> list[str]:
    """A valid call of the record's command, keys named k1, k2... (GETKEYS)."""
    if record.name in MOVABLE_SAMPLES:
        return MOVABLE_SAMPLES[record.name]
    if record.numkeys:      # a destination or timeout before the key count, 2 keys after
        lead = ["dst" if i == record.first_key else "0" for i in range(1, record.numkeys)]
        return [record.name, *lead, "2", "k1", "k2"]
    argv = record.name.split("|")
    while len(argv) < abs(record.arity):
        argv.append(f"k{len(argv)}")
    return argv


# Calls of the commands whose keys are found by reading the arguments.
MOVABLE_SAMPLES = {
    "xread": ["xread", "COUNT", "2", "STREAMS", "k1", "k2", "0", "0"],
    "xreadgroup": ["xreadgroup", "GROUP", "g", "c", "STREAMS", "k1", "k2", ">", ">"],
    "sort": ["sort", "k1", "GET", "x", "STORE", "k2"],
    **{name: [name, "body", "2", "k1", "k2", "arg"]
       for name in ("eval", "eval_ro", "evalsha", "evalsha_ro", "fcall", "fcall_ro")},
}


# Flags on which the newest Redis and 7.0 differ (DELIBERATE_DIFFERENCES), left out of
# comparisons with 7.0: PUBLISH's may_replicate, which 7.0 lacks
# (https://github.com/redis/redis/blob/unstable/src/commands/publish.json); the
# noscript of BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BZPOPMIN and BZPOPMAX, which 7.0 has and
# 7.2 dropped (redis/redis#11568: in a script they answer at once, as in MULTI).
NEWER_FLAGS = {"publish": {"may_replicate"},
               **{name: {"noscript"} for name in ("blpop", "brpop", "blmove", "brpoplpush",
                                                  "bzpopmin", "bzpopmax")}}


def _info_view(info: list, newer_arity: dict = {}) -> tuple:
    """COMMAND INFO's arity (as 7.0 had it, by `newer_arity`), flags (less NEWER_FLAGS),
    first key, last key, step."""
    name = info[0].decode()
    skip = NEWER_FLAGS.get(name, set())
    flags = [f.decode() for f in info[2] if f.decode() not in skip]
    return newer_arity.get(name, info[1]), flags, info[3], info[4], info[5]


def test_command_coverage_matches_redis(redis_server):
    """COMMAND, COMMAND COUNT, COMMAND INFO and COMMAND GETKEYS cover every record,
    and agree with redis-server 7.0 on every command it also has: arity, flags and
    key positions, and the keys GETKEYS finds."""
    real = redis.Redis(*redis_server)
    real.response_callbacks.clear()
    with server_in_thread() as server:
        ours = redis.Redis(port=server.cfg.port)
        ours.response_callbacks.clear()
        try:
            listed = {info[0].decode(): info for info in ours.execute_command("COMMAND")}
            assert set(listed) == {r.decode() for r in COMMANDS}
            assert ours.execute_command("COMMAND", "COUNT") == len(COMMANDS)
            checked = 0
            for record in every_record():
                info = ours.execute_command("COMMAND", "INFO", record.name)[0]
                assert info is not None and info[0].decode() == record.name, record.name
                if "|" not in record.name:
                    assert _info_view(listed[record.name]) == _info_view(info)
                theirs = real.execute_command("COMMAND", "INFO", record.name)[0]
                if theirs is not None:          # (None: newer than 7.0, e.g. CLIENT SETINFO)
                    assert _info_view(info, NEWER_ARITY) == _info_view(theirs), record.name
                    checked += 1
                if not (record.first_key or record.movable_keys) or all(
                        "NOT_KEY" in spec.flags for spec in record.key_specs):
                    continue                    # (a shard channel: GETKEYS finds no key)
                argv = _sample_argv(record)
                keys = ours.execute_command("COMMAND", "GETKEYS", *argv)
                assert keys == record.keys([a.encode() for a in argv]) and keys, argv
                if theirs is not None:
                    assert keys == real.execute_command("COMMAND", "GETKEYS", *argv), argv
        finally:
            ours.close()
            real.close()
    assert checked > 100


def test_config_get_lists_every_directive():
    """CONFIG GET * names every directive of directives.py and its aliases (and only
    those); an alias has its directive's value."""
    with server_in_thread() as server:
        client = redis.Redis(port=server.cfg.port, decode_responses=True)
        try:
            listed = client.config_get("*")                # (aliases too, as in 7.0)
            assert set(listed) == {name for d in DIRECTIVES for name in (d.name, *d.aliases)}
            for directive in DIRECTIVES:
                for alias in directive.aliases:
                    assert client.config_get(alias) == {alias: listed[directive.name]}
        finally:
            client.close()


# -- a record added to the table ------------------------------------------------------

@pytest.fixture
def probe_command() -> Iterator[None]:
    """PROBE key [arg]: a write command of the engine added for the test (and removed)."""
    facts = {"group": "generic", "since": "1.0.0", "summary": "A command a test adds to the table.",
             "arity": -2, "flags": ["write", "fast"], "acl_categories": ["keyspace"],
             "key_specs": [{"flags": ["RW", "UPDATE"], "index": 1, "range": [0, 1, 0]}]}
    record = from_facts("probe", facts, {}, {})
    COMMANDS[b"probe"] = record

    @command("probe")
    def probe(ctx, argv):
        if ctx.tracking:                # what ctx.touch does for a compiled command
            ctx.touched.append(argv[1])
        return b"probed:" + argv[1]
    try:
        yield
    finally:
        del COMMANDS[b"probe"], ENGINE_COMMANDS[b"probe"], ENGINE_COMMANDS[b"PROBE"]


@contextlib.contextmanager
def server_in_thread() -> Iterator[Server]:
    """A sluice server on an event loop of its own thread, in this process (so that it
    sees the test's table)."""
    cfg = ServerConfig()
    cfg.apply_args(["--port", str(free_port()), "--bind", "127.0.0.1", "--save", ""])
    server = Server(cfg, engine=Engine())
    loop = asyncio.new_event_loop()
    started = threading.Event()

    def run() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(server.start(bound=started.set))
        loop.run_until_complete(server.wait_closed())
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert started.wait(10)
    try:
        yield server
    finally:
        loop.call_soon_threadsafe(server.request_shutdown)
        thread.join(10)
        loop.close()


def test_a_record_added_is_seen_by_the_engine_and_the_session(probe_command):
    engine = Engine()
    assert engine.execute("PROBE", "k") == b"probed:k"
    with pytest.raises(ResponseError, match="wrong number of arguments for 'probe'"):
        engine.execute("probe")
    hub = Hub(engine, track=True)
    session, other = Session(hub), Session(hub)
    other.call([b"WATCH", b"k"])
    assert session.call([b"probe", b"k"]) == b"probed:k"
    other.call([b"MULTI"])
    assert other.call([b"PROBE", b"k"]) is QUEUED
    assert other.call([b"EXEC"]) is None           # the PROBE touched k: WATCH aborts
    hub.write_refusal = "MISCONF refused"          # a write: refused as one
    with pytest.raises(ResponseError, match="MISCONF"):
        session.call([b"PROBE", b"k"])


def test_a_record_added_is_seen_by_the_server(probe_command):
    with server_in_thread() as server:
        client = redis.Redis(port=server.cfg.port)
        client.response_callbacks.clear()
        try:
            assert client.execute_command("PROBE", "a") == b"probed:a"          # fast path
            pipe = client.pipeline(transaction=True)                           # slow path
            pipe.execute_command("PROBE", "b")
            assert pipe.execute() == [b"probed:b"]
            info = client.execute_command("COMMAND", "INFO", "probe")[0]
            assert info[:2] == [b"probe", -2] and info[3:6] == [1, 1, 1]
            assert b"probe" in client.execute_command("COMMAND", "LIST")
            assert client.execute_command("COMMAND", "GETKEYS", "probe", "x") == [b"x"]
            docs = client.execute_command("COMMAND", "DOCS", "probe")     # (a map to redis-py)
            assert docs == {b"probe": {b"summary": b"A command a test adds to the table.",
                                       b"since": b"1.0.0", b"group": b"generic"}}
            stats = client.execute_command("INFO", "commandstats")
            assert b"cmdstat_probe:calls=2" in stats
        finally:
            client.close()
        s = raw_socket(server.cfg.port)
        s.sendall(b"PROBE\r\n")
        assert read_all(s, 0.2)[0] == \
            b"-ERR wrong number of arguments for 'probe' command\r\n"
        s.close()


def test_the_facts_file_ships_with_the_package():
    """The table is built from redis_commands.json at import: pyproject.toml lists it as
    package data, so that an installed wheel has it, and every record comes from it."""
    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    data = project["tool"]["setuptools"]["package-data"]["engine.commands.table"]
    assert "redis_commands.json" in data
    facts = redis_facts()
    assert {name.encode() for name, entry in facts.items() if "arity" in entry} == set(COMMANDS)
