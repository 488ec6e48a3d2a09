"""An endless loop inside a coroutine, or in a library's code at FUNCTION LOAD, is under
the busy-script rules: BUSY to the other clients, SCRIPT/FUNCTION KILL (UNKILLABLE once
it wrote, then SHUTDOWN NOSAVE), the load stopped after 500 ms. The
scenes run on redis-server 7.0 and sluice-server and their bytes are compared."""
from __future__ import annotations

import signal
import time
from functools import partial

import pytest

from raw_io import raw_socket
from servers import SluiceServer
from test_busy import (AOF_ALWAYS, BUSY, THRESHOLD, WAIT, ask, encode, on_both, read_reply,
                       start_script, unkillable_scene)

COROUTINE_LOOPS = [
    "coroutine.wrap(function() while true do end end)()",
    "local co = coroutine.create(function() while true do end end)\ncoroutine.resume(co)",
    "coroutine.wrap(function()\n  coroutine.wrap(function() while true do end end)()\nend)()",
    "while true do pcall(coroutine.wrap(function() while true do end end)) end",
]


def killed_scene(script: str):
    def scene(server) -> list:
        caller, other = start_script(server.port, script)
        return stopped(server, caller, other, "SCRIPT")
    return scene


def stopped(server, caller, other, kind: str) -> list:
    """KILL's reply, then the script's client's, then the other client's PING."""
    with raw_socket(server.port, WAIT) as killer:
        seen = [ask(killer, kind, "KILL")]
    seen += [read_reply(caller), ask(other, "PING")]
    caller.close()
    other.close()
    return seen


@pytest.mark.parametrize("script", COROUTINE_LOOPS)
def test_a_loop_in_a_coroutine_is_busy_and_script_kill_stops_it(script):
    redis_seen, sluice_seen = on_both(killed_scene(script), "--save", "", *THRESHOLD)
    assert sluice_seen == redis_seen
    assert sluice_seen[0] == b"+OK\r\n"
    assert sluice_seen[2] == b"+PONG\r\n"


def test_a_coroutine_loop_after_a_write_is_unkillable_and_shutdown_nosave_ends_it():
    script = "redis.call('set', KEYS[1], '1')\ncoroutine.wrap(function() while true do end end)()"
    redis_seen, sluice_seen = on_both(partial(unkillable_scene, script=script),
                                      *AOF_ALWAYS, *THRESHOLD)
    assert sluice_seen == redis_seen
    assert sluice_seen[0].startswith(b"-UNKILLABLE")


LIBRARY = ("#!lua name=co\nredis.register_function('spin', function(keys, args)\n"
           "  coroutine.wrap(function() while true do end end)()\nend)")


def function_scene(server) -> list:
    with raw_socket(server.port) as setup:
        assert ask(setup, "FUNCTION", "LOAD", LIBRARY) == b"$2\r\nco\r\n"
    other = raw_socket(server.port, WAIT)
    caller = raw_socket(server.port, WAIT)
    caller.sendall(encode("FCALL", "spin", 0))
    while (reply := ask(other, "PING")) == b"+PONG\r\n":
        time.sleep(0.02)
    return [reply] + stopped(server, caller, other, "FUNCTION")


def test_a_coroutine_loop_in_a_function_is_busy_and_function_kill_stops_it():
    redis_seen, sluice_seen = on_both(function_scene, "--save", "", *THRESHOLD)
    assert sluice_seen == redis_seen
    assert sluice_seen[0] == BUSY.replace(b"SCRIPT KILL", b"FUNCTION KILL")


LOADS = ["#!lua name=lib1\nwhile true do end",
         "#!lua name=lib1\ncoroutine.wrap(function() while true do end end)()",
         "#!lua name=lib1\nwhile true do pcall(function() while true do end end) end"]


def load_scene(server) -> list:
    seen = []
    with raw_socket(server.port, WAIT) as client:
        for code in LOADS:
            start = time.monotonic()
            seen.append(ask(client, "FUNCTION", "LOAD", code))
            assert time.monotonic() - start < 5
        seen.append(ask(client, "FUNCTION", "LOAD",
                        "#!lua name=lib1\nredis.register_function('f', function() return 1 end)"))
        seen.append(ask(client, "FCALL", "f", 0))
    return seen


def test_function_load_of_code_that_never_ends_times_out():
    redis_seen, sluice_seen = on_both(load_scene, "--save", "")
    assert sluice_seen == redis_seen
    assert sluice_seen[0] == b"-ERR Error registering functions: ERR FUNCTION LOAD timeout\r\n"


def test_a_looping_xpcall_handler_does_not_outlive_script_kill():
    """Lua runs an error handler with hooks off when the error came from a hook, so the
    handler of a killed script would loop for ever: Sluice runs none for a stopped script
    (redis-server 7.0 hangs on this one)."""
    script = "xpcall(function() while true do end end, function(e) while true do end end)"
    with SluiceServer(["--save", "", *THRESHOLD]) as server:
        killed, reply, pong = killed_scene(script)(server)
    assert killed == b"+OK\r\n"
    assert reply.startswith(b"-ERR Script killed by user with SCRIPT KILL...")
    assert pong == b"+PONG\r\n"


@pytest.mark.parametrize("script", [COROUTINE_LOOPS[0], "while true do end"])
def test_sigterm_ends_a_server_busy_in_a_script(script):
    """(redis-server 7.0 leaves SIGTERM until the script ends: Sluice obeys it, keeping
    nothing of the script, as SHUTDOWN NOSAVE does.)"""
    with SluiceServer(["--save", "", *THRESHOLD]) as server:
        caller, other = start_script(server.port, script)
        server.proc.send_signal(signal.SIGTERM)
        assert server.proc.wait(WAIT) == 0
        caller.close()
        other.close()
        assert "Received SIGTERM" in server.log_text()
        assert "Traceback" not in server.log_text()
