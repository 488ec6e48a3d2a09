"""Cases of Redis's own tests/unit/acl.tcl, as sequences run on redis-server 7.0 and
sluice-server side by side: every reply (and error text) must be the same. `admin`
is a connection as the default user, `user` a second connection that authenticates."""
from __future__ import annotations

import pytest

from test_acl_differential import Pair, pair, servers  # noqa: F401  (fixtures)

H4 = "34344e4d60718c9d0cb5bcf4bc43a7e69aa35c85c48d3ce5fd62e1e5d2c9d84f"   # "passwd4"

CASES = {
    "Connections start with the default user": [("user", "ACL", "WHOAMI")],
    "Usernames can not contain spaces or null characters": [
        ("admin", "ACL", "SETUSER", "a a")],
    "New users start disabled": [
        ("admin", "ACL", "SETUSER", "newuser", ">passwd1"),
        ("user", "AUTH", "newuser", "passwd1")],
    "Enabling the user allows the login": [
        ("admin", "ACL", "SETUSER", "newuser", "on", ">passwd1", "+acl"),
        ("user", "AUTH", "newuser", "passwd1"), ("user", "ACL", "WHOAMI")],
    "Only the set of correct passwords work": [
        ("admin", "ACL", "SETUSER", "newuser", "on", ">passwd1", ">passwd2"),
        ("user", "AUTH", "newuser", "passwd1"), ("user", "AUTH", "newuser", "passwd2"),
        ("user", "AUTH", "newuser", "passwd3")],
    "It is possible to remove passwords from the set of valid ones": [
        ("admin", "ACL", "SETUSER", "newuser", "on", ">passwd1", ">passwd2", "<passwd1"),
        ("user", "AUTH", "newuser", "passwd1"), ("user", "AUTH", "newuser", "passwd2")],
    "Test password hashes can be added": [
        ("admin", "ACL", "SETUSER", "newuser", "on", "#" + H4),
        ("user", "AUTH", "newuser", "passwd4")],
    "Test password hashes validate input": [
        ("admin", "ACL", "SETUSER", "newuser", "#" + H4[:-1]),
        ("admin", "ACL", "SETUSER", "newuser", "#" + H4 + "q")],
    "ACL GETUSER returns the password hash correctly": [
        ("admin", "ACL", "SETUSER", "newuser", "on", "#" + H4, "nopass", "#" + H4),
        ("admin", "ACL", "GETUSER", "newuser")],
    "Test hashed passwords removal": [
        ("admin", "ACL", "SETUSER", "newuser", "on", "#" + H4, "!" + H4),
        ("admin", "ACL", "GETUSER", "newuser")],
    "By default users are not able to access any command": [
        ("admin", "ACL", "SETUSER", "psuser", "on", ">pspass"),
        ("user", "AUTH", "psuser", "pspass"), ("user", "SET", "foo", "bar")],
    "By default users are not able to access any key": [
        ("admin", "ACL", "SETUSER", "psuser", "on", ">pspass", "+set"),
        ("user", "AUTH", "psuser", "pspass"), ("user", "SET", "foo", "bar")],
    "It's possible to allow the access of a subset of keys": [
        ("admin", "ACL", "SETUSER", "psuser", "on", ">pspass", "allcommands", "~foo:*",
         "~bar:*"),
        ("user", "AUTH", "psuser", "pspass"), ("user", "SET", "foo:1", "a"),
        ("user", "SET", "bar:2", "b"), ("user", "SET", "zap:3", "c")],
    "By default, only default user is able to publish to any channel": [
        ("admin", "ACL", "SETUSER", "psuser", "on", ">pspass", "+acl", "+client",
         "+@pubsub"),
        ("user", "AUTH", "psuser", "pspass"), ("user", "PUBLISH", "foo", "bar"),
        ("user", "SPUBLISH", "foo", "bar"), ("user", "SUBSCRIBE", "foo")],
    "It's possible to allow publishing to a subset of channels": [
        ("admin", "ACL", "SETUSER", "psuser", "on", ">pspass", "resetchannels", "&foo:1",
         "&bar:*", "+@pubsub"),
        ("admin", "ACL", "LIST"),
        ("user", "AUTH", "psuser", "pspass"), ("user", "PUBLISH", "foo:1", "a"),
        ("user", "PUBLISH", "bar:2", "b"), ("user", "PUBLISH", "zap:3", "c")],
    "In transaction queue publish/subscribe/psubscribe to unauthorized channel will fail": [
        ("admin", "ACL", "SETUSER", "psuser", "on", ">pspass", "+multi", "+discard",
         "+publish", "+subscribe", "+psubscribe", "&foo:1"),
        ("user", "AUTH", "psuser", "pspass"), ("user", "MULTI"),
        ("user", "PUBLISH", "foo:1", "a"), ("user", "PUBLISH", "notexits", "b"),
        ("user", "DISCARD"), ("user", "MULTI"), ("user", "SUBSCRIBE", "notexits"),
        ("user", "DISCARD"), ("user", "MULTI"), ("user", "PSUBSCRIBE", "notexits:*"),
        ("user", "DISCARD")],
    "It's possible to allow subscribing to a subset of channel patterns": [
        ("admin", "ACL", "SETUSER", "psuser", "on", ">pspass", "resetchannels", "&foo:1",
         "&bar:*", "+psubscribe", "+punsubscribe"),
        ("user", "AUTH", "psuser", "pspass"), ("user", "PSUBSCRIBE", "bar:*"),
        ("user", "PSUBSCRIBE", "bar:2"), ("user", "PUNSUBSCRIBE")],
    "Users can be configured to authenticate with any password": [
        ("admin", "ACL", "SETUSER", "newuser", "on", "nopass", "+acl"),
        ("user", "AUTH", "newuser", "zipzapblabla"), ("user", "ACL", "WHOAMI")],
    "ACLs can exclude single commands": [
        ("admin", "ACL", "SETUSER", "newuser", "on", "nopass", "allcommands", "allkeys",
         "-ping"),
        ("user", "AUTH", "newuser", "x"), ("user", "INCR", "mycounter"), ("user", "PING")],
    "ACLs can include or exclude whole classes of commands": [
        ("admin", "ACL", "SETUSER", "newuser", "on", "nopass", "allkeys", "-@all", "+@set",
         "+acl"),
        ("user", "AUTH", "newuser", "x"), ("user", "SADD", "myset", "a"),
        ("user", "SET", "foo", "bar")],
    "ACLs can include single subcommands": [
        ("admin", "ACL", "SETUSER", "newuser", "on", "nopass", "allkeys", "-@all",
         "+client|id", "+client|setname"),
        ("user", "AUTH", "newuser", "x"), ("user", "CLIENT", "SETNAME", "foo"),
        ("user", "CLIENT", "KILL", "type", "pubsub")],
    "ACLs can exclude single subcommands, case 1": [
        ("admin", "ACL", "SETUSER", "newuser", "on", "nopass", "allkeys", "+@all",
         "-client|kill"),
        ("user", "AUTH", "newuser", "x"), ("user", "CLIENT", "SETNAME", "foo"),
        ("user", "CLIENT", "KILL", "type", "pubsub")],
    "ACLs cannot include a subcommand with a specific arg": [
        ("admin", "ACL", "SETUSER", "newuser", "+config|get|appendonly")],
    "ACLs cannot exclude or include a container commands with a specific arg": [
        ("admin", "ACL", "SETUSER", "newuser", "+config|get"),
        ("admin", "ACL", "SETUSER", "newuser", "+config|asdf"),
        ("admin", "ACL", "SETUSER", "newuser", "-config|asdf")],
    "ACLs including of a type includes also subcommands": [
        ("admin", "ACL", "SETUSER", "newuser", "on", "nopass", "allkeys", "-@all", "+del",
         "+acl", "+@stream"),
        ("admin", "XADD", "key", "1-1", "field", "value"),
        ("user", "AUTH", "newuser", "x"), ("user", "DEL", "key"),
        ("user", "XINFO", "STREAM", "key")],
    "ACLs can block SELECT of all but a specific DB": [
        ("admin", "ACL", "SETUSER", "newuser", "on", "nopass", "allkeys", "-@all", "+acl",
         "+select|0"),
        ("user", "AUTH", "newuser", "x"), ("user", "SELECT", "0"), ("user", "SELECT", "1")],
    "ACL LOG can distinguish the transaction context (1)": [
        ("admin", "ACL", "SETUSER", "antirez", "on", ">foo", "-@all", "+multi", "+exec",
         "~object:*"),
        ("admin", "ACL", "LOG", "RESET"),
        ("user", "AUTH", "antirez", "foo"), ("user", "MULTI"),
        ("user", "INCR", "object:1234"), ("user", "EXEC")],
    "ACL LOG can accept a numerical argument to show less entries": [
        ("admin", "ACL", "SETUSER", "antirez", "on", ">foo", "+set", "~object:*"),
        ("user", "AUTH", "antirez", "foo"), ("user", "INCR", "foo"), ("user", "INCR", "foo"),
        ("user", "INCR", "foo"), ("user", "INCR", "foo")],
    "When default user is off, new connections are not authenticated": [
        ("admin", "ACL", "SETUSER", "default", "off"), ("user", "PING"),
        ("admin", "ACL", "SETUSER", "default", "on")],
    "When default user has no command permission, hello command still works": [
        ("admin", "ACL", "SETUSER", "secure-user", ">supass", "on", "+@all"),
        ("admin", "ACL", "SETUSER", "default", "-@all"),
        ("user", "HELLO", "2", "AUTH", "secure-user", "supass"),
        ("user", "ACL", "WHOAMI"),
        ("user", "ACL", "SETUSER", "default", "+@all")],
    "Delete a user that the client doesn't use": [
        ("admin", "ACL", "SETUSER", "not_used", "on", ">passwd"),
        ("admin", "ACL", "DELUSER", "not_used"), ("admin", "PING")],
    "ACL GENPASS command failed test": [
        ("admin", "ACL", "GENPASS", "-236"), ("admin", "ACL", "GENPASS", "5000")],
    "Default user can not be removed": [("admin", "ACL", "DELUSER", "default")],
    "ACL load non-existing configured ACL file": [("admin", "ACL", "LOAD")],
}


def _shown(reply):
    """A reply as compared: HELLO's server version (7.0.15 / 7.2.16) and client id apart."""
    if isinstance(reply, list) and reply[:2] == [b"server", b"redis"]:
        return reply[:2] + reply[4:7] + reply[8:]
    return reply


@pytest.mark.parametrize("name", sorted(CASES))
def test_acl_tcl_case(pair, servers, name) -> None:  # noqa: F811  (fixtures)
    user = Pair(*servers)
    try:
        for who, *cmd in CASES[name]:
            conns = pair if who == "admin" else user
            expected, got = conns.both(*cmd, same=False)
            assert _shown(got) == _shown(expected), (name, cmd)
        logs = pair.both("ACL", "LOG", "2", same=False)
        for want, have in zip(*logs):
            keep = (b"count", b"reason", b"context", b"object", b"username")
            assert {k: v for k, v in zip(have[::2], have[1::2]) if k in keep} == \
                   {k: v for k, v in zip(want[::2], want[1::2]) if k in keep}, name
    finally:
        user.close()
