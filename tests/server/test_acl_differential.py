"""ACL against redis-server 7.0, over RESP: every ACL subcommand's replies and error
texts (SETUSER rules and their errors, GETUSER, LIST, DRYRUN, CAT, GENPASS, LOG),
and the NOPERM texts a restricted user gets for a command, a key and a channel, at
the top level, in MULTI, at EXEC after the rules changed, and from scripts."""
from __future__ import annotations

import pytest
import redis

from differential import RedisOracle
from servers import RedisServer, SluiceServer, needs_redis

pytestmark = needs_redis


@pytest.fixture(scope="module")
def servers():
    with RedisServer(("--save", "", "--appendonly", "no")) as oracle, SluiceServer() as sluice:
        yield oracle, sluice


class Pair:
    """One raw connection to each server; `both(*cmd)` runs a command on both."""

    def __init__(self, oracle, sluice) -> None:
        self.conns = (RedisOracle("127.0.0.1", oracle.port), RedisOracle("127.0.0.1", sluice.port))

    @staticmethod
    def outcome(conn, args):
        try:
            return _errors_as_text(conn.execute(*args))
        except redis.ResponseError as err:
            return ("error", str(err))

    def both(self, *args, same=True, tokens=False):
        """The two replies (asserted equal unless same=False; tokens=True: each ACL
        LIST line compared as a set of words, the order of single-command rules being
        Redis's hash order)."""
        expected, got = (self.outcome(c, args) for c in self.conns)
        if tokens:
            expected, got = _tokens(expected), _tokens(got)
        if same:
            assert got == expected, args
        return expected, got

    def close(self) -> None:
        for conn in self.conns:
            conn.close()


def _errors_as_text(reply):
    if isinstance(reply, list):
        return [_errors_as_text(x) for x in reply]
    if isinstance(reply, redis.ResponseError):
        return ("error", str(reply))
    return reply


def _tokens(reply):
    if isinstance(reply, list):
        return [_tokens(x) for x in reply]
    if isinstance(reply, bytes):
        return sorted(reply.split(b" "))
    return reply


@pytest.fixture
def pair(servers):
    p = Pair(*servers)
    for conn in p.conns:
        for name in conn.execute("ACL", "USERS"):
            if name != b"default":
                conn.execute("ACL", "DELUSER", name)
    p.both("ACL", "SETUSER", "default", "reset", "on", "nopass", "~*", "&*", "+@all", same=False)
    p.both("ACL", "LOG", "RESET")
    p.both("CONFIG", "RESETSTAT")
    p.both("FLUSHALL")
    yield p
    p.close()


SETUSER_CASES = [
    ["u1"],
    ["u1", "on", ">pw", "+get", "~k*"],
    ["u1", "+@all", "-@hash", "+hget"],
    ["u1", "-@all", "+@hash", "-hget", "+get"],
    ["u1", "-@all", "+@read", "+@write"],
    ["u1", "-@all", "+client|id", "+config|get"],
    ["u1", "-@all", "+select|0", "+select|1"],
    ["u1", "+@all", "-client|kill", "-debug"],
    ["u1", "%R~r*", "%W~w*", "%RW~rw*", "~a*", "%R~a*"],
    ["u1", "&ch", "&ch*", "resetchannels", "&x"],
    ["u1", "allchannels"],
    ["u1", "(+get ~k*)", "(+set %W~w*)"],
    ["u1", "(+get", "~k*)", "clearselectors", "(+@read)"],
    ["u1", "nopass", ">a", "resetpass", ">b", ">c", "<b"],
    ["u1", "#" + "a" * 64, "!" + "a" * 64, "on", "off", "on"],
    ["u1", "reset"],
    ["u1", "skip-sanitize-payload"],
    ["u1", "sanitize-payload", "allkeys", "allcommands", "nocommands", "+acl"],
    ["u1", "ON", "ALLKEYS", "+GET", "+@HASH"],
    # errors
    ["u1", "bogus"],
    ["u1", "+nocmd"],
    ["u1", "+@nocat"],
    ["u1", "#abc"],
    ["u1", "#" + "A" * 64],
    ["u1", "<nopw"],
    ["u1", "(+get"],
    ["u1", "(on)"],
    ["u1", "+client|nosub"],
    ["u1", "-select|0"],
    ["u1", "allkeys", "~a"],
    ["u1", "allchannels", "&a"],
    ["u1", "%X~a"],
    ["u1", "%~a"],
    ["u1", "%R"],
    ["a b"],
    ["u1", "+get|x|y"],
    ["u1", "+config|get|x"],
]


def same_permissions(pair) -> None:
    """ACL LIST of both servers says the same: word for word but the command rules,
    which Sluice writes as Redis 7.2+ does (in the order given; 7.0 recomputes them
    from the bitmap): each of Sluice's lines, given back to the oracle as a user's
    rules, must describe that user as the oracle describes the original."""
    oracle = pair.conns[0]
    expected, got = pair.both("ACL", "LIST", same=False)
    assert len(got) == len(expected)
    for want, have in zip(expected, got):
        name = have.split(b" ")[1]
        oracle.execute("ACL", "SETUSER", "check", *have.split(b" ")[2:])
        again = [line for line in oracle.execute("ACL", "LIST")
                 if line.startswith(b"user check ")][0]
        oracle.execute("ACL", "DELUSER", "check")
        assert again.replace(b"user check ", b"user " + name + b" ", 1) == want


@pytest.mark.parametrize("rules", SETUSER_CASES, ids=lambda r: " ".join(r)[:40])
def test_setuser_then_list_and_getuser(pair, rules) -> None:
    pair.both("ACL", "SETUSER", *rules)
    same_permissions(pair)
    expected, got = pair.both("ACL", "GETUSER", rules[0], same=False)
    if expected is not None:
        expected, got = dict(zip(expected[::2], expected[1::2])), dict(zip(got[::2], got[1::2]))
        for field in (b"flags", b"passwords", b"keys", b"channels"):
            assert got[field] == expected[field], field
        assert len(got[b"selectors"]) == len(expected[b"selectors"])
    assert got == expected or expected is not None
    pair.both("ACL", "USERS")


def test_failed_setuser_changes_nothing(pair) -> None:
    pair.both("ACL", "SETUSER", "u2", "on", "+get", "~k*")
    pair.both("ACL", "SETUSER", "u2", "+set", "bogus")
    pair.both("ACL", "LIST")


@pytest.mark.parametrize("rules,described", [
    (["+@all", "-@hash", "+client|id"], "+@all -@hash +client|id"),
    (["-@all", "+get", "+set", "-get", "+@hash", "-hget"], "-@all +set -get +@hash -hget"),
    (["+acl|whoami", "-acl", "+acl|getuser"], "-@all -acl +acl|getuser"),
    (["+@set", "+@hash", "-@geo", "+get", "+mget", "-hset"],
     "-@all +@set +@hash -@geo +get +mget -hset"),
])
def test_command_rules_kept_in_order(pair, rules, described) -> None:
    """Redis 7.2+ writes the command rules as given (a rule again moves to the end);
    redis-py's ACL tests read them so."""
    pair.both("ACL", "SETUSER", "ordered", *rules)
    reply = pair.conns[1].execute("ACL", "GETUSER", "ordered")
    assert dict(zip(reply[::2], reply[1::2]))[b"commands"] == described.encode()
    same_permissions(pair)


@pytest.mark.parametrize("cmd", [
    ("ACL", "WHOAMI"), ("ACL", "USERS"), ("ACL", "DELUSER", "default"),
    ("ACL", "DELUSER", "nx"), ("ACL", "GETUSER", "nx"), ("ACL", "CAT"), ("ACL", "CAT", "nope"),
    ("ACL", "CAT", "a", "b"), ("ACL", "GENPASS", "0"), ("ACL", "GENPASS", "-1"),
    ("ACL", "GENPASS", "4097"), ("ACL", "GENPASS", "abc"), ("ACL", "GENPASS", "1", "2"),
    ("ACL", "LOG", "x"), ("ACL", "LOG", "-1"), ("ACL", "LOG", "1", "2"), ("ACL", "LOAD"),
    ("ACL", "SAVE"), ("ACL", "NOPE"), ("ACL", "HELP"), ("ACL", "LIST", "x"), ("ACL",),
    ("ACL", "WHOAMI", "x"), ("ACL", "SETUSER"), ("ACL", "DRYRUN", "default"),
    ("ACL", "DRYRUN", "nx", "get", "a"), ("ACL", "DRYRUN", "default", "nocmd"),
    ("ACL", "DRYRUN", "default", "get"), ("ACL", "DRYRUN", "default", "get", "a"),
    ("AUTH", "a", "b", "c"), ("AUTH", "x"), ("AUTH", "nx", "pw"), ("AUTH", "default", "x"),
    # integers in Redis's strict syntax, within 64 bits
    ("ACL", "LOG", "99999999999999999999"), ("ACL", "LOG", " 1"), ("ACL", "LOG", "+1"),
    ("ACL", "LOG", "1_0"), ("ACL", "GENPASS", " 8"), ("ACL", "GENPASS", "1_6"),
    ("ACL", "GENPASS", "99999999999999999999"), ("CLIENT", "UNBLOCK", "1_0"),
    ("CLIENT", "UNBLOCK", " 1"), ("HELLO", " 3"), ("HELLO", "3_"), ("HELLO", "+3"),
])
def test_acl_subcommands_and_errors(pair, cmd) -> None:
    pair.both(*cmd)


@pytest.mark.parametrize("bits,length", [(None, 64), ("1", 1), ("5", 2), ("8", 2),
                                         ("255", 64), ("4096", 1024)])
def test_genpass_lengths(pair, bits, length) -> None:
    expected, got = pair.both("ACL", "GENPASS", *([bits] if bits else []), same=False)
    assert len(expected) == len(got) == length
    int(got, 16)


def test_cat_of_a_category_lists_the_commands_sluice_has(pair) -> None:
    oracle = pair.conns[0]
    for category in pair.both("ACL", "CAT")[1]:
        expected, got = pair.both("ACL", "CAT", category, same=False)
        for name in set(got) - set(expected):       # newer than the oracle (XACKDEL...)
            assert oracle.execute("COMMAND", "INFO", name) == [None], (category, name)


DRYRUN_CASES = [
    ("get", "k1"), ("get", "z"), ("set", "k1", "v"), ("set", "r1", "v"), ("set", "w1", "v"),
    ("set", "w1", "v", "GET"), ("get", "r1"), ("get", "w1"), ("hget", "k", "f"),
    ("lmove", "r1", "w1", "left", "right"), ("lmove", "w1", "r1", "left", "right"),
    ("mget", "k1", "k2", "z"), ("publish", "ch", "m"), ("publish", "zz", "m"),
    ("subscribe", "ch", "zz"), ("psubscribe", "ch"), ("psubscribe", "c*"),
    ("client", "id"), ("client", "kill", "id", "1"), ("select", "0"), ("select", "1"),
    ("xread", "streams", "k1", "z", "0", "0"), ("sort", "k1", "store", "z"),
    ("eval", "return 1", "1", "z"), ("zunionstore", "k1", "2", "k2", "z"),
    ("auth", "a"), ("ping",),
]


@pytest.mark.parametrize("cmd", DRYRUN_CASES, ids=lambda c: " ".join(c)[:30])
def test_dryrun(pair, cmd) -> None:
    pair.both("ACL", "SETUSER", "d1", "on", "nopass", "-@all", "+get", "+set", "+lmove",
              "+mget", "+publish", "+subscribe", "+psubscribe", "+client|id", "+select|0",
              "+xread", "+sort", "+eval", "+zunionstore", "~k*", "%R~r*",
              "%W~w*", "&ch", "&c*")
    pair.both("ACL", "DRYRUN", "d1", *cmd)
    pair.both("ACL", "SETUSER", "d2", "on", "nopass", "+@all", "~k*", "(~z* %R~r* &zz +@read)")
    pair.both("ACL", "DRYRUN", "d2", *cmd)


def _as_user(pair, user="lim"):
    pair.both("ACL", "SETUSER", user, "on", ">pw", "-@all", "+get", "+set", "+multi", "+exec",
              "+publish", "+subscribe", "+psubscribe", "+eval", "+acl|whoami", "+client|id",
              "~k*", "&ch")
    return Pair.__new__(Pair)


def test_noperm_texts_and_log(pair, servers) -> None:
    pair.both("ACL", "SETUSER", "lim", "on", ">pw", "-@all", "+get", "+set", "+multi",
              "+exec", "+publish", "+subscribe", "+psubscribe", "+eval", "+acl|whoami",
              "~k*", "&ch")
    user = Pair(*servers)
    try:
        user.both("AUTH", "lim", "pw")
        user.both("ACL", "WHOAMI")
        for cmd in [("GET", "k1"), ("GET", "z"), ("HGET", "k1", "f"), ("PUBLISH", "ch", "1"),
                    ("PUBLISH", "nope", "1"), ("EVAL", "return redis.call('get','zz')", "0"),
                    ("EVAL", "return redis.pcall('get','zz')", "0"),
                    ("EVAL", "return redis.call('hget','k','f')", "0"),
                    ("EVAL", "return redis.call('publish','zz','x')", "0"),
                    ("EVAL", "return redis.call('get','k1')", "0"),
                    ("MULTI",), ("GET", "k1"), ("GET", "z"), ("EXEC",),
                    ("AUTH", "lim", "bad")]:
            user.both(*cmd)
        user.both("SUBSCRIBE", "nope")
    finally:
        user.close()
    expected, got = pair.both("ACL", "LOG", same=False)
    assert len(got) == len(expected)
    for want, have in zip(expected, got):
        want, have = dict(zip(want[::2], want[1::2])), dict(zip(have[::2], have[1::2]))
        for field in (b"count", b"reason", b"context", b"object", b"username"):
            assert have[field] == want[field], (field, want)
        assert {b"entry-id", b"timestamp-created", b"timestamp-last-updated"} <= have.keys()
        assert b"user=" in have[b"client-info"]
    pair.both("ACL", "LOG", "2", same=False)
    # INFO's counters (Redis 7.2's; 7.0 has none): the oracle's log counts per reason
    info = pair.conns[1].execute("INFO", "stats").decode()
    counts = dict(line.split(":") for line in info.split("\r\n") if ":" in line)
    for reason, field in ((b"auth", "auth"), (b"command", "cmd"), (b"key", "key"),
                          (b"channel", "channel")):
        logged = sum(e[1] for e in expected if e[3] == reason)
        assert int(counts["acl_access_denied_" + field]) == logged, field


def test_exec_after_the_rules_changed(pair, servers) -> None:
    pair.both("ACL", "SETUSER", "lim", "on", ">pw", "-@all", "+get", "+set", "+multi",
              "+exec", "+publish", "~k*", "&ch")
    user = Pair(*servers)
    try:
        user.both("AUTH", "lim", "pw")
        for cmd in [("MULTI",), ("GET", "k1"), ("SET", "k1", "v"), ("PUBLISH", "ch", "v")]:
            user.both(*cmd)
        pair.both("ACL", "SETUSER", "lim", "-get", "resetkeys", "~j*", "resetchannels")
        user.both("EXEC")
    finally:
        user.close()
    pair.both("ACL", "LOG", "1", same=False)


def test_deleted_user_is_disconnected(pair, servers) -> None:
    pair.both("ACL", "SETUSER", "gone", "on", "nopass", "+@all", "~*")
    user = Pair(*servers)
    user.both("AUTH", "gone", "x")
    pair.both("ACL", "DELUSER", "gone")
    for conn in user.conns:
        with pytest.raises(redis.ConnectionError):
            conn.execute("PING")
    user.close()


def test_requirepass_is_the_default_users_password(pair, servers) -> None:
    pair.both("CONFIG", "SET", "requirepass", "secret")
    pair.both("ACL", "LIST")
    other = Pair(*servers)
    try:
        other.both("GET", "x")
        other.both("AUTH", "wrong")
        other.both("AUTH", "secret")
        for reply in other.both("HELLO", "2", "AUTH", "default", "secret", same=False):
            assert reply[:2] == [b"server", b"redis"]
    finally:
        other.close()
        pair.both("AUTH", "secret")
        pair.both("CONFIG", "SET", "requirepass", "")
    pair.both("ACL", "LIST")


def test_client_list_user_and_kill_user(pair, servers) -> None:
    pair.both("ACL", "SETUSER", "k", "on", "nopass", "+@all", "~*")
    user = Pair(*servers)
    try:
        user.both("AUTH", "k", "x")
        for conn in user.conns:
            assert b" user=k " in conn.execute("CLIENT", "INFO")
        pair.both("CLIENT", "KILL", "USER", "nx")
        pair.both("CLIENT", "KILL", "USER", "k")
    finally:
        user.close()


def test_subscriber_killed_when_its_channel_is_revoked(pair, servers) -> None:
    pair.both("ACL", "SETUSER", "sub", "on", "nopass", "+@all", "~*", "&news*", "&other")
    user = Pair(*servers)
    user.both("AUTH", "sub", "x")
    user.both("SUBSCRIBE", "news1")
    pair.both("ACL", "SETUSER", "sub", "resetchannels", "&other")
    for conn in user.conns:
        with pytest.raises(redis.ConnectionError):
            conn.execute("PING")
    user.close()


def test_blocked_command_rechecked_when_served(pair, servers) -> None:
    """A client blocked while its user loses the key is answered NOPERM when served
    (Redis 7.2+ runs the command again through every check); the entry stays."""
    sluice = pair.conns[1]
    sluice.execute("ACL", "SETUSER", "blk", "on", "nopass", "+@all", "~k*")
    waiter = RedisOracle("127.0.0.1", servers[1].port)
    try:
        waiter.execute("AUTH", "blk", "x")
        waiter.send("BLPOP", "k1", "0")
        sluice.execute("ACL", "SETUSER", "blk", "resetkeys", "~z*")
        sluice.execute("LPUSH", "k1", "x")
        with pytest.raises(redis.ResponseError) as err:
            waiter.read()
        assert str(err.value) == ("NOPERM this user has no permissions to access one of the "
                                  "keys used as arguments")
        assert sluice.execute("LRANGE", "k1", "0", "-1") == [b"x"]
    finally:
        waiter.close()


def test_acl_pubsub_default_and_acllog_max_len(pair, servers) -> None:
    try:
        pair.both("CONFIG", "SET", "acl-pubsub-default", "allchannels")
        pair.both("CONFIG", "GET", "acl-pubsub-default")
        pair.both("ACL", "SETUSER", "open", "(+get)")
        pair.both("ACL", "SETUSER", "open2", "reset")
        same_permissions(pair)
    finally:
        pair.both("CONFIG", "SET", "acl-pubsub-default", "resetchannels")
    pair.both("CONFIG", "SET", "acllog-max-len", "2")
    pair.both("ACL", "SETUSER", "lim", "on", "nopass", "+get", "~k*")
    user = Pair(*servers)
    try:
        user.both("AUTH", "lim", "x")
        for key in ("a", "b", "c"):
            user.both("GET", key)
    finally:
        user.close()
        expected, got = pair.both("ACL", "LOG", same=False)
        pair.both("CONFIG", "SET", "acllog-max-len", "128")
    assert [e[7] for e in got] == [e[7] for e in expected] == [b"c", b"b"]


def test_getuser_in_resp3(servers) -> None:
    replies = []
    for srv in servers:
        client = redis.Redis(port=srv.port, protocol=3)
        client.execute_command("ACL", "SETUSER", "r3", "on", ">p", "~k*", "&c", "+get",
                               "(%R~r* +@read)")
        replies.append(client.execute_command("ACL", "GETUSER", "r3"))
        client.execute_command("ACL", "DELUSER", "r3")
        client.close()
    assert replies[1] == replies[0]
