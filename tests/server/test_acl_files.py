"""ACL users that outlive the process only as Redis's do: through the aclfile (ACL SAVE,
written atomically; ACL LOAD, all or nothing) or `user` lines of the configuration file,
never through the RDB or the AOF; start-up errors as redis-server 7.0 reports them;
hostile rules and files answered with errors, the server still serving."""
from __future__ import annotations

import os
import signal

import pytest
import redis

from servers import RedisServer, ServerDidNotStart, SluiceServer, needs_redis

pytestmark = needs_redis

BAD_ACLFILE = (b"user a on >p ~k* +get\nbogus line\nuser b +nocmd +nocmd2\nuser a off\n"
               b"user c \"unbalanced\nuser\n# a comment\n\nuser d on ~x bogus %Z~q\n"
               b"user e (+get\n")


def _error(client, *args) -> str:
    with pytest.raises(redis.ResponseError) as err:
        client.execute_command(*args)
    return str(err.value)


def test_acl_load_errors_as_redis_and_nothing_changes(tmp_path) -> None:
    texts = []
    for kind in (RedisServer, SluiceServer):
        folder = tmp_path / kind.__name__
        folder.mkdir()
        aclfile = folder / "users.acl"
        aclfile.write_bytes(b"user default on nopass ~* &* +@all\nuser a on >p ~k* +get\n")
        with kind(["--aclfile", str(aclfile)], workdir=folder) as srv:
            client = redis.Redis(port=srv.port)
            before = client.execute_command("ACL", "LIST")
            aclfile.write_bytes(BAD_ACLFILE)
            texts.append(_error(client, "ACL", "LOAD").replace(str(aclfile), "PATH"))
            assert client.execute_command("ACL", "LIST") == before
            assert client.ping()
    assert texts[1] == texts[0]
    assert "Traceback" not in (tmp_path / "SluiceServer" / "sluice.log").read_text()


def test_acl_save_is_atomic_and_survives_kill_9(tmp_path) -> None:
    aclfile = tmp_path / "users.acl"
    aclfile.write_bytes(b"")
    with SluiceServer(["--aclfile", str(aclfile), "--appendonly", "yes"],
                      workdir=tmp_path) as srv:
        client = redis.Redis(port=srv.port)
        client.execute_command("ACL", "SETUSER", "w", "on", ">pw", "~k*", "&ch", "+get",
                               "(%R~r* +@read)")
        client.execute_command("ACL", "SAVE")
        client.execute_command("ACL", "SETUSER", "unsaved", "on", "nopass")
        client.set("k", "v")
        listed = client.execute_command("ACL", "LIST")
        assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]
        srv.stop(signal.SIGKILL)
        srv.start()
        client = redis.Redis(port=srv.port)
        assert client.get("k") == b"v"                  # the data came back (AOF)...
        after = client.execute_command("ACL", "LIST")   # ...the users only from the aclfile
        assert after == [line for line in listed if not line.startswith(b"user unsaved")]
        assert redis.Redis(port=srv.port, username="w", password="pw").get("k") == b"v"
    saved = aclfile.read_bytes().splitlines()
    assert saved == [line for line in listed if not line.startswith(b"user unsaved")]


def test_users_from_config_lines(tmp_path) -> None:
    conf = tmp_path / "sluice.conf"
    conf.write_text("user default off\nuser app on >secret ~app:* +@all -@dangerous\n")
    with SluiceServer(workdir=tmp_path, config_file=str(conf)) as srv:
        assert redis.Redis(port=srv.port, username="app", password="secret").set("app:1", 1)
        with pytest.raises(redis.exceptions.NoPermissionError):
            redis.Redis(port=srv.port, username="app", password="secret").set("other", 1)
        with pytest.raises(redis.AuthenticationError):
            redis.Redis(port=srv.port).ping()


@pytest.mark.parametrize("lines,args,expected", [
    ("user x on\n", ["--aclfile", "users.acl"], "Configuring Redis with users defined in "
     "redis.conf and at the same setting an ACL file path is invalid."),
    ("", ["--aclfile", "missing.acl"], "Aborting Redis startup because of ACL errors: Error "
     "loading ACLs, opening file 'missing.acl': No such file or directory"),
    ("user x bogus\n", [], "Error in user declaration 'user': Syntax error"),
])
def test_startup_errors_as_redis(tmp_path, lines, args, expected) -> None:
    for kind in ("redis", "sluice"):
        folder = tmp_path / kind
        folder.mkdir()
        (folder / "users.acl").write_text("")
        conf = folder / "server.conf"
        conf.write_text(lines)
        if kind == "redis":
            srv = RedisServer(args, workdir=folder, config_file=conf)
            with pytest.raises(ServerDidNotStart):
                srv.start()
            text = srv.log_text()
        else:
            srv = SluiceServer(args, workdir=folder, config_file=str(conf))
            with pytest.raises(ServerDidNotStart):
                srv.start()
            text = srv.log_text() + srv.stderr_text
        srv.close()
        assert expected in text, kind


# -- hostile input -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def sluice():
    with SluiceServer() as srv:
        yield srv


def test_hostile_rules_are_answered(sluice) -> None:
    client = redis.Redis(port=sluice.port)
    rules = ["~k%d" % i for i in range(100_000)] + ["&c%d" % i for i in range(100_000)] + ["+get"]
    assert client.execute_command("ACL", "SETUSER", "many", *rules)
    assert client.execute_command("ACL", "DRYRUN", "many", "get", "k99999") == b"OK"
    huge = "~" + "a*" * 500_000
    assert client.execute_command("ACL", "SETUSER", "huge", "on", "nopass", "+get", huge)
    assert client.execute_command("ACL", "DRYRUN", "huge", "get", "b" * 1000) != b"OK"
    deep = ["(+get ~k%d)" % i for i in range(2000)]
    assert client.execute_command("ACL", "SETUSER", "deep", *deep)
    assert client.execute_command("ACL", "DRYRUN", "deep", "get", "k1999") == b"OK"
    assert "Unmatched parenthesis" in _error(client, "ACL", "SETUSER", "x", "((((" * 10000)
    assert "Syntax error" in _error(client, "ACL", "SETUSER", "x", "(" + "(" * 5000 + ")")
    assert "Syntax error" in _error(client, "ACL", "SETUSER", "x", "\x00\xff")
    assert "can't contain spaces" in _error(client, "ACL", "SETUSER", "a\x00b")
    assert client.ping()
    for name in ("many", "huge", "deep"):
        client.execute_command("ACL", "DELUSER", name)
    assert "Traceback" not in sluice.log_text()


def test_config_rewrite_writes_the_users_as_redis(tmp_path) -> None:
    """Without an aclfile CONFIG REWRITE writes every user as a `user` line (replacing
    the file's), as redis-server does; the server started from the file has them."""
    files = []
    for kind in (RedisServer, SluiceServer):
        folder = tmp_path / kind.__name__
        folder.mkdir()
        conf = folder / "server.conf"
        conf.write_text("user old on nopass +@all ~*\n")
        with kind(workdir=folder, config_file=str(conf)) as srv:
            client = redis.Redis(port=srv.port)
            client.execute_command("ACL", "SETUSER", "app", "on", ">pw", "~app:*", "+get")
            client.execute_command("ACL", "DELUSER", "old")
            client.config_rewrite()
        files.append(sorted(line for line in conf.read_text().splitlines()
                            if line.startswith("user ")))
    assert files[1] == files[0]
    with SluiceServer(workdir=tmp_path / "SluiceServer",
                      config_file=str(tmp_path / "SluiceServer" / "server.conf")) as srv:
        assert redis.Redis(port=srv.port, username="app", password="pw").get("app:1") is None
