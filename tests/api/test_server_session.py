"""engine/api/session.py without sockets: Redis's processCommand rules as the embedded
client and the server share them (the server's byte-level behaviour is compared with
redis-server in test_server_differential.py)."""
from __future__ import annotations

import pytest
import redis

from engine import Engine, ResponseError
from engine.api.client import EmbeddedRedis
from engine.api.session import BlockedRead, Hub, Session, Verbatim


@pytest.fixture
def session():
    return Session(Hub(Engine(), track=True))


def call(session, *args):
    try:
        return session.call([a if isinstance(a, bytes) else str(a).encode() for a in args])
    except ResponseError as err:
        return str(err)


def test_queue_time_errors_abort_exec(session):
    assert call(session, "MULTI") == b"OK"
    assert call(session, "SET", "a", "1") == b"QUEUED"
    assert call(session, "NOSUCH").startswith("ERR unknown command 'NOSUCH'")
    assert call(session, "CLIENT", "NOSUCH") == "ERR unknown subcommand 'NOSUCH'. Try CLIENT HELP."
    assert call(session, "EXEC") == "EXECABORT Transaction discarded because of previous errors."
    assert call(session, "GET", "a") is None
    assert call(session, "MULTI") == b"OK"
    assert call(session, "EXEC", "x") == ("EXECABORT Transaction discarded because of: wrong "
                                          "number of arguments for 'exec' command")
    assert call(session, "EXEC") == "ERR EXEC without MULTI"


def test_exec_runs_session_and_engine_commands(session):
    call(session, "MULTI")
    for cmd in (("CLIENT", "SETNAME", "n"), ("XADD", "s", "1-0", "f", "v"), ("PING",),
                ("XADD", "s", "1-0", "f", "v"), ("CLIENT", "GETNAME")):
        assert call(session, *cmd) == b"QUEUED"
    replies = call(session, "EXEC")
    assert replies[:3] == [b"OK", b"1-0", b"PONG"]
    assert isinstance(replies[3], ResponseError) and replies[4] == b"n"


def test_watch_flushall_from_another_database():
    hub = Hub(Engine(), track=True)
    watcher, other = Session(hub), Session(hub)
    call(watcher, "SELECT", 1)
    call(watcher, "SET", "w", 1)
    call(watcher, "WATCH", "w")
    call(other, "FLUSHALL")
    call(watcher, "MULTI")
    call(watcher, "PING")
    assert call(watcher, "EXEC") is None and watcher.null_array


def test_auth_and_hello_rules():
    hub = Hub(Engine())
    hub.password = b"pw"
    s = Session(hub)
    assert call(s, "GET", "k") == "NOAUTH Authentication required."
    assert call(s, "GET").startswith("ERR wrong number of arguments")     # arity first
    assert call(s, "HELLO", "3").startswith("NOAUTH HELLO must be called")
    assert call(s, "HELLO", "3", "AUTH", "default", "no") == \
        "WRONGPASS invalid username-password pair or user is disabled."
    reply = call(s, "HELLO", "3", "AUTH", "default", "pw", "SETNAME", "me")
    assert reply[b"proto"] == 3 and s.name == b"me" and s.ctx.resp3
    assert call(s, "RESET") == b"RESET" and call(s, "PING") == "NOAUTH Authentication required."
    nopass = Session(Hub(Engine()))
    assert call(nopass, "AUTH", "x").startswith("ERR AUTH <password> called without any password")
    assert call(nopass, "AUTH", "default", "anything") == b"OK"


def test_blocked_read_and_retry(session):
    other = Session(session.hub)
    call(session, "XADD", "s", "1-0", "f", "v")
    blocked = call(session, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    assert isinstance(blocked, BlockedRead)
    assert blocked.argv[-1] == b"1-0"                        # $ fixed when it blocked
    assert blocked.retry() == (False, None)
    call(other, "XADD", "s", "2-0", "f", "w")
    done, reply = blocked.retry()
    assert done and reply == [[b"s", [[b"2-0", [b"f", b"w"]]]]]


def test_pubsub_context_is_refused_in_resp2(session):
    session.channels[b"c"] = None                             # what SUBSCRIBE leaves
    session.subscriptions_changed()
    assert call(session, "GET", "k") == ("ERR Can't execute 'get': only (P|S)SUBSCRIBE / "
                                         "(P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed "
                                         "in this context")
    assert call(session, "PING") == [b"pong", b""]
    session.ctx.resp3 = True
    assert call(session, "GET", "k") is None and call(session, "PING") == b"PONG"


def test_embedded_client_info_is_plain_bytes():
    r = EmbeddedRedis()
    raw = r.execute_command("CLIENT", "INFO")
    assert type(raw) is not Verbatim
    assert r.client_info()["lib-name"] == "redis-py"


def test_non_utf8_names_in_error_texts(session):
    """Client-supplied names go into error texts byte for byte (surrogate escapes,
    which the server's encoder turns back into the original bytes, as redis-server
    echoes them); the embedded client shows them as redis-py does, with U+FFFD."""
    call(session, "XADD", "s", "1-0", "f", "v")
    text = call(session, b"XINFO", b"CONSUMERS", b"s", b"g\xff\x00rest")
    assert text.encode("utf-8", "surrogateescape") == \
        b"NOGROUP No such consumer group 'g\xff' for key name 's'"
    text = call(session, b"XGROUP", b"\xc3\xa9" * 70)          # cut at 128 bytes, as Redis
    assert text.encode("utf-8", "surrogateescape") == \
        b"ERR unknown subcommand '" + b"\xc3\xa9" * 64 + b"'. Try XGROUP HELP."
    r = EmbeddedRedis()
    with pytest.raises(redis.ResponseError, match="unknown subcommand 'x\ufffd'"):
        r.execute_command(b"XGROUP", b"x\xff")
