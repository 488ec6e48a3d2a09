"""ACL in the embedded engine: the same users, check and texts as the server's, on the
one road (a restricted user's client carries CLIENT_ACL; the default user's does not).
AUTH never fails in-process (any password): it picks the user whose rules apply."""
from __future__ import annotations

import pytest

from redis import ResponseError

from engine import EmbeddedRedis


@pytest.fixture
def r():
    client = EmbeddedRedis()
    client.execute_command("ACL", "SETUSER", "app", "on", ">pw", "-@all", "+get", "+set",
                           "+eval", "+multi", "+exec", "+acl|whoami", "~app:*")
    return client


def _session(client):
    conn = client.connection_pool.get_connection("PING")
    conn.send_command("PING")
    conn.read_response()
    return conn, conn._session


def test_default_user_takes_the_fast_branch(r) -> None:
    conn, session = _session(r)
    assert session.user.name == b"default" and not session.restricted
    conn.send_command("AUTH", "app", "pw")
    assert conn.read_response() in (b"OK", "OK", True)
    assert session.user.name == b"app" and session.restricted


def test_restricted_user_gets_noperm(r) -> None:
    assert r.execute_command("AUTH", "app", "pw")
    assert r.execute_command("ACL", "WHOAMI") == b"app"
    assert r.set("app:1", "v") and r.get("app:1") == b"v"
    with pytest.raises(ResponseError, match="access one of the keys"):
        r.get("other")
    with pytest.raises(ResponseError, match="run the 'hget' command"):
        r.hget("app:1", "f")
    with pytest.raises(ResponseError, match="The user executing the script can't access"):
        r.eval("return redis.call('get', 'other')", 0)
    assert r.eval("return redis.call('get', 'app:1')", 0) == b"v"


def test_refusals_are_logged(r) -> None:
    assert r.execute_command("AUTH", "app", "any")
    with pytest.raises(ResponseError):
        r.get("other")
    entry = EmbeddedRedis(r.engine).execute_command("ACL", "LOG", "1")[0]
    assert (entry[b"reason"], entry[b"object"], entry[b"username"]) == (b"key", b"other", b"app")


def test_exec_rechecks_queued_commands(r) -> None:
    admin = EmbeddedRedis(r.engine)
    conn, _ = _session(r)
    for cmd in (("AUTH", "app", "pw"), ("MULTI",), ("GET", "app:1"), ("SET", "app:1", "v")):
        conn.send_command(*cmd)
        conn.read_response()
    admin.execute_command("ACL", "SETUSER", "app", "-get")
    conn.send_command("EXEC")
    replies = conn.read_response()
    assert str(replies[0]) == ("ACLs rules changed between the moment the transaction was "
                               "accumulated and the EXEC call. This command is no longer "
                               "allowed for the following reason: no permission to execute "
                               "the command or subcommand")
    assert replies[1] in (b"OK", True)


def test_deleted_user_goes_back_to_default_unauthenticated(r) -> None:
    admin = EmbeddedRedis(r.engine)
    conn, session = _session(r)
    conn.send_command("AUTH", "app", "pw")
    conn.read_response()
    admin.execute_command("ACL", "DELUSER", "app")
    assert session.user.name == b"default" and not session.restricted
