"""Long scripts: busy-reply-threshold (lua-time-limit), BUSY, SCRIPT KILL, SHUTDOWN NOSAVE.

The same scenes run on redis-server 7.0 and sluice-server and their bytes are compared: a
looping script past a low threshold, the BUSY replies of a client connected before it and
of one that connects meanwhile, the allow-busy commands, SCRIPT KILL (OK for a script that
has not written, UNKILLABLE for one that has), what the script's own client gets, and
SHUTDOWN NOSAVE (the process exits, nothing of the script is there after a restart from
the AOF). Then kill -9 during a script under appendfsync always, clients accepted while a
script is busy, the configuration, and the embedded engine (SCRIPT KILL from another
thread; the entry FUNCTION KILL calls).
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest
import redis

from engine import Engine, EmbeddedRedis
from engine.api.client import _state_for
from engine.api.scripts import BUSY_EVAL, kill_script
from engine.core.errors import ResponseError
from preloaded import kill_and_wait
from lua_wire import encode
from raw_io import raw_socket
from servers import RedisServer, SluiceServer

THRESHOLD = ["--busy-reply-threshold", "100"]
AOF_ALWAYS = ["--save", "", "--appendonly", "yes", "--appendfsync", "always"]
BUSY = b"-" + BUSY_EVAL.encode() + b"\r\n"
LOOP = "local i = 0\nwhile true do\n  i = i + 1\nend"
WRITE_THEN_LOOP = "redis.call('set', KEYS[1], 'by-script')\nwhile true do end"
MARK = "END-OF-REPLY"
MARK_REPLY = b"-ERR unknown command 'END-OF-REPLY', with args beginning with: \r\n"
WAIT = 30.0          # generous: the machine is shared


def read_reply(sock, timeout: float = WAIT) -> bytes:
    """The bytes of one simple reply (status, error or integer) or bulk string."""
    sock.settimeout(timeout)
    data = b""
    while not data.endswith(b"\r\n") or (data[:1] == b"$" and data.count(b"\r\n") < 2
                                           and not data.startswith(b"$-1")):
        chunk = sock.recv(65536)
        assert chunk, f"the server closed the connection after {data!r}"
        data += chunk
    return data


def ask(sock, *argv) -> bytes:
    """The bytes answering argv: it is followed by an unknown command whose error (the
    same whether a script is busy or not) marks the end."""
    sock.sendall(encode(*argv) + encode(MARK))
    sock.settimeout(WAIT)
    data = b""
    while not data.endswith(MARK_REPLY):
        chunk = sock.recv(65536)
        assert chunk, f"the server closed the connection after {data!r}"
        data += chunk
    return data[:-len(MARK_REPLY)]


def start_script(port: int, script: str, *keys) -> tuple:
    """(the script's client, a client connected before it) once the script is busy: the
    other client's PING is answered with PONG until the script has started, then waits
    until the server answers it with BUSY."""
    other = raw_socket(port, WAIT)
    caller = raw_socket(port, WAIT)
    caller.sendall(encode("EVAL", script, len(keys), *keys))
    while (reply := ask(other, "PING")) == b"+PONG\r\n":
        time.sleep(0.02)
    assert reply == BUSY
    return caller, other


def servers(*args: str):
    """redis-server 7.0 and sluice-server with the same arguments."""
    return [RedisServer(list(args)), SluiceServer(list(args))]


def on_both(scene: Callable, *args: str) -> list:
    """What `scene(server)` returns on redis-server and on sluice-server."""
    out = []
    for server in servers(*args):
        with server:
            out.append(scene(server))
    return out


# -- BUSY, the allow-busy commands, SCRIPT KILL ----------------------------------------

def killed_loop_scene(server) -> list:
    port = server.port
    setup = raw_socket(port)
    assert ask(setup, "SET", "k", "before") == b"+OK\r\n"
    assert ask(setup, "MULTI") == b"+OK\r\n" and ask(setup, "GET", "k") == b"+QUEUED\r\n"
    caller, other = start_script(port, LOOP)
    seen = [("setup: EXEC of a transaction queued before", ask(setup, "EXEC"))]
    for argv in [("GET", "k"), ("SET", "k", "during"), ("NOPE",), ("GET",),
                 ("SCRIPT", "LOAD", "return 1"), ("SCRIPT", "FLUSH"), ("SHUTDOWN",),
                 ("SHUTDOWN", "SAVE"), ("SHUTDOWN", "ABORT"), ("CLIENT", "ID"),
                 ("SELECT", "1"), ("CONFIG", "GET", "port"), ("EVAL", "return 1", 0),
                 ("MULTI",), ("GET", "k"), ("EXEC",), ("MULTI",), ("DISCARD",),
                 ("WATCH", "k"), ("UNWATCH",), ("AUTH", "pw"), ("HELLO", "2"), ("RESET",)]:
        reply = ask(other, *argv)
        if argv[0] == "HELLO":          # the server's name and version differ
            reply = reply[:reply.index(b"\r\n")]
        seen.append((argv, reply))
    newcomer = raw_socket(port, WAIT)
    seen.append(("a new client's PING", ask(newcomer, "PING")))
    seen.append(("a new client's SCRIPT KILL", ask(newcomer, "SCRIPT", "KILL")))
    seen.append(("the script's client", read_reply(caller)))
    seen.append(("then", ask(caller, "PING")))
    seen.append(("SCRIPT KILL with no script", ask(newcomer, "SCRIPT", "KILL")))
    seen.append(("the new client after", ask(newcomer, "GET", "k")))
    seen.append(("the other client after", ask(other, "SET", "k", "after")))
    for sock in (setup, caller, other, newcomer):
        sock.close()
    return seen


def test_a_looping_script_is_busy_and_script_kill_stops_it():
    redis_seen, sluice_seen = on_both(killed_loop_scene, "--save", "", *THRESHOLD)
    assert sluice_seen == redis_seen
    seen = dict((str(what), reply) for what, reply in sluice_seen)
    assert seen["('GET', 'k')"] == BUSY
    assert seen["a new client's SCRIPT KILL"] == b"+OK\r\n"
    assert seen["the script's client"].startswith(
        b"-ERR Script killed by user with SCRIPT KILL... script: ")
    assert seen["the script's client"].endswith(b", on @user_script:3.\r\n")
    assert seen["the new client after"] == b"$6\r\nbefore\r\n"    # nothing ran meanwhile


def pcall_scene(server) -> list:
    script = "while true do pcall(function() while true do end end) end"
    caller, other = start_script(server.port, script)
    with raw_socket(server.port, WAIT) as killer:
        killed = ask(killer, "SCRIPT", "KILL")
    seen = [killed, read_reply(caller), ask(other, "PING")]
    caller.close()
    other.close()
    return seen


def test_a_script_cannot_catch_its_kill_with_pcall():
    redis_seen, sluice_seen = on_both(pcall_scene, "--save", "", *THRESHOLD)
    assert sluice_seen == redis_seen
    assert sluice_seen[1].startswith(b"-ERR Script killed by user with SCRIPT KILL")


def function_scene(server) -> list:
    with raw_socket(server.port) as setup:
        assert ask(setup, "FUNCTION", "LOAD", LIBRARY) == b"$3\r\nlib\r\n"
    other = raw_socket(server.port, WAIT)
    caller = raw_socket(server.port, WAIT)
    caller.sendall(encode("FCALL", "spin", 1, "k1"))
    while (reply := ask(other, "PING")) == b"+PONG\r\n":
        time.sleep(0.02)
    seen = [reply]
    with raw_socket(server.port, WAIT) as killer:
        seen.append(ask(killer, "SCRIPT", "KILL"))
        stats = ask(killer, "FUNCTION", "STATS")
        at = stats.index(b"duration_ms\r\n:") + len(b"duration_ms\r\n:")
        seen.append(stats[:at] + b"<ms>" + stats[stats.index(b"\r\n", at):])
        seen.append(ask(killer, "FUNCTION", "KILL"))
    seen.append(read_reply(caller))
    seen.append(ask(other, "FUNCTION", "KILL"))
    caller.close()
    other.close()
    return seen


LIBRARY = ("#!lua name=lib\n"
           "redis.register_function('spin', function(keys, args)\n  while true do end\nend)")


def test_a_looping_function_is_busy_and_function_kill_stops_it():
    redis_seen, sluice_seen = on_both(function_scene, "--save", "", *THRESHOLD)
    assert sluice_seen == redis_seen
    assert sluice_seen[0] == BUSY.replace(b"SCRIPT KILL", b"FUNCTION KILL")
    assert sluice_seen[3] == b"+OK\r\n"
    assert sluice_seen[4] == (b"-ERR Script killed by user with SCRIPT KILL... script: spin, "
                              b"on @user_function:3.\r\n")


def kill_reply_scene(script: str) -> Callable:
    def scene(server) -> bytes:
        with raw_socket(server.port) as setup:
            assert ask(setup, "SET", "str", "text") == b"+OK\r\n"
        caller, other = start_script(server.port, script)
        with raw_socket(server.port, WAIT) as killer:
            reply = ask(killer, "SCRIPT", "KILL")
            if reply.startswith(b"-UNKILLABLE"):
                killer.sendall(encode("SHUTDOWN", "NOSAVE"))
                server.proc.wait(WAIT)
        caller.close()
        other.close()
        return reply
    return scene


@pytest.mark.parametrize("script, killable", [
    ("pcall(redis.call, 'set') while true do end", True),             # arity: not run
    ("redis.pcall('incr', 'str') while true do end", False),           # a write that failed
    ("redis.call('get', 'str') redis.call('xlen', 'none') while true do end", True),
    ("redis.pcall('xgroup', 'create', 'none', 'g', '$') while true do end", False),
])
def test_what_makes_a_script_unkillable(script: str, killable: bool):
    redis_reply, sluice_reply = on_both(kill_reply_scene(script), "--save", "", *THRESHOLD)
    assert sluice_reply == redis_reply
    assert (sluice_reply == b"+OK\r\n") is killable


# -- a script that wrote: UNKILLABLE, then SHUTDOWN NOSAVE -------------------------------

def unkillable_scene(server, script: str = WRITE_THEN_LOOP) -> list:
    port = server.port
    with raw_socket(port) as before:
        assert ask(before, "SET", "acknowledged", "1") == b"+OK\r\n"
    caller, other = start_script(port, script, "k")
    with raw_socket(port, WAIT) as killer:
        seen = [ask(killer, "SCRIPT", "KILL"), ask(killer, "SHUTDOWN")]
        killer.sendall(encode("SHUTDOWN", "NOSAVE"))
        killer.settimeout(WAIT)
        seen.append(killer.recv(100))              # b"": closed, no reply
    seen.append(caller.recv(100))                  # the script's client gets nothing
    server.proc.wait(WAIT)
    seen.append(server.proc.returncode)
    caller.close()
    other.close()
    server.start()                                 # the same directory: from its AOF
    r = redis.Redis(port=server.port)
    seen.append((r.get("acknowledged"), r.get("k")))
    r.close()
    return seen


def test_a_script_that_wrote_is_unkillable_and_shutdown_nosave_drops_it():
    redis_seen, sluice_seen = on_both(unkillable_scene, *AOF_ALWAYS, *THRESHOLD)
    assert sluice_seen == redis_seen
    assert sluice_seen[0].startswith(b"-UNKILLABLE Sorry the script already executed write")
    assert sluice_seen[1] == BUSY
    assert sluice_seen[2:] == [b"", b"", 0, (b"1", None)]


def test_kill_9_during_a_script_under_appendfsync_always_keeps_none_of_its_writes():
    with SluiceServer([*AOF_ALWAYS, *THRESHOLD]) as server:
        r = redis.Redis(port=server.port)
        r.set("acknowledged", "1")
        script = "for i = 1, 50 do redis.call('set', 'k' .. i, i) end\nwhile true do end"
        caller, other = start_script(server.port, script)
        kill_and_wait([server.proc.pid])
        caller.close()
        other.close()
        r.close()
        server.start()
        r = redis.Redis(port=server.port)
        assert r.get("acknowledged") == b"1"
        assert r.mget([f"k{i}" for i in range(1, 51)]) == [None] * 50
        r.close()


# -- the clients around a busy script ----------------------------------------------------

def test_clients_accepted_during_a_busy_script_work_afterwards():
    with SluiceServer(["--save", "", *THRESHOLD]) as server:
        caller, other = start_script(server.port, LOOP)
        newcomers = [raw_socket(server.port, WAIT) for _ in range(3)]
        for sock in newcomers:
            assert ask(sock, "PING") == BUSY
        assert ask(newcomers[0], "SCRIPT", "KILL") == b"+OK\r\n"
        assert read_reply(caller).startswith(b"-ERR Script killed")
        big = b"x" * (4 * 1024 * 1024)       # more than one socket write
        for i, sock in enumerate(newcomers):
            assert ask(sock, "SET", f"k{i}", big) == b"+OK\r\n"
            sock.sendall(encode("GET", f"k{i}"))
            expected = b"$%d\r\n%s\r\n" % (len(big), big)
            data = b""
            while len(data) < len(expected):
                data += sock.recv(1 << 20)
            assert data == expected
        assert ask(other, "DBSIZE") == b":3\r\n"
        r = redis.Redis(port=server.port)
        assert r.client_list().__len__() == 6       # the raw clients and this one
        r.close()
        for sock in (caller, other, *newcomers):
            sock.close()


def test_a_short_script_under_the_threshold_is_never_busy():
    with SluiceServer(["--save", "", "--busy-reply-threshold", "5000"]) as server:
        r = redis.Redis(port=server.port)
        # about 3 million Lua instructions: the count hook runs ~30 times, well under 5 s
        assert r.eval("local n = 0 for i = 1, 1000000 do n = n + i end return n", 0) \
            == 500000500000
        with raw_socket(server.port) as sock:
            assert ask(sock, "SCRIPT", "KILL") == \
                b"-NOTBUSY No scripts in execution right now.\r\n"
        r.close()


# -- the configuration ------------------------------------------------------------------

def config_scene(server) -> list:
    r = redis.Redis(port=server.port)
    seen = [r.config_get("busy-reply-threshold"), r.config_get("lua-time-limit")]
    r.config_set("lua-time-limit", 250)
    seen.append(r.config_get("busy-reply-threshold"))
    for bad in ("-1", "x"):
        try:
            r.config_set("busy-reply-threshold", bad)
        except redis.ResponseError as err:
            seen.append(str(err))
    r.close()
    return seen


def test_busy_reply_threshold_and_its_alias_lua_time_limit():
    redis_seen, sluice_seen = on_both(config_scene, "--save", "", "--lua-time-limit", "300")
    assert sluice_seen == redis_seen
    assert sluice_seen[0] == {"busy-reply-threshold": "300"}
    assert sluice_seen[2] == {"busy-reply-threshold": "250"}


def test_busy_reply_threshold_from_a_config_file(tmp_path):
    conf = tmp_path / "sluice.conf"
    conf.write_text("busy-reply-threshold 150\n")
    with SluiceServer(["--save", ""], config_file=str(conf)) as server:
        r = redis.Redis(port=server.port)
        assert r.config_get("lua-time-limit") == {"lua-time-limit": "150"}
        r.close()


# -- the embedded engine and FUNCTION KILL's entry -----------------------------------------

def test_embedded_script_kill_from_another_thread_stops_a_long_script():
    engine = Engine()
    runner, killer = EmbeddedRedis(engine), EmbeddedRedis(engine)
    state = _state_for(engine)
    state.busy_threshold = 0.1
    assert killer.ping()                 # connected (connecting takes the engine's lock)
    outcome = []

    def run() -> None:
        try:
            runner.eval(LOOP, 0)
        except redis.ResponseError as err:
            outcome.append(str(err))
    thread = threading.Thread(target=run)
    thread.start()
    deadline = time.monotonic() + WAIT
    while state.busy is None:
        assert time.monotonic() < deadline, "the script never became busy"
        time.sleep(0.01)
    assert killer.script_kill() is True
    thread.join(WAIT)
    assert not thread.is_alive()
    assert outcome[0].startswith("Script killed by user with SCRIPT KILL...")
    assert killer.set("k", "v") and state.busy is None


def test_kill_script_refuses_function_kill_of_an_eval_and_stops_it_with_script_kill():
    """kill_script(engine, False) is FUNCTION KILL: against a running EVAL it answers
    Redis's BUSY for scripts, as 7.0 does."""
    engine = Engine()
    r = EmbeddedRedis(engine)
    state = _state_for(engine)
    state.busy_threshold = 0.0
    refusals = []

    def while_busy() -> None:
        try:
            kill_script(engine, False)
        except ResponseError as err:
            refusals.append(str(err))
        kill_script(engine, True)
    state.while_busy = while_busy
    with pytest.raises(redis.ResponseError, match="Script killed by user"):
        r.eval(LOOP, 0)
    assert refusals == [BUSY_EVAL]
    with pytest.raises(ResponseError, match="NOTBUSY"):
        kill_script(engine, True)
    assert r.eval("return 7", 0) == 7          # the hook is armed again, nothing is killed
