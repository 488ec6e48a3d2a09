"""A script's verbatim strings beside redis-server 7.0, byte for byte: the RESP3
verbatim replies redis.call hands a script under redis.setresp(3) (CLIENT INFO,
CLIENT LIST, INFO, LATENCY DOCTOR) and `{verbatim_string={format=..., string=...}}`
tables a script returns, to RESP2 and RESP3 clients (a bulk string for RESP2; the
format cut or padded to three bytes, as Redis writes it)."""
from __future__ import annotations

import re

import pytest

from lua_wire import ask
from raw_io import raw_socket
from servers import RedisServer, SluiceServer

SCRIPTS = [
    "return redis.call('client', 'info')",
    "redis.setresp(3) return redis.call('client', 'info')",
    "redis.setresp(3) return {redis.call('client', 'info')}",
    "redis.setresp(3) local r = redis.call('client', 'list') "
    "return {type(r), r.verbatim_string and r.verbatim_string.format or 'none'}",
    "redis.setresp(3) local r = redis.call('info', 'server') return type(r) .. ':' .. "
    "r.verbatim_string.format",
    "redis.setresp(3) local r = redis.call('info', 'keyspace') "
    "return {r.verbatim_string.format, type(r.verbatim_string.string)}",
    "redis.setresp(3) return redis.call('info', 'nosuchsection')",
    "return redis.call('info', 'nosuchsection')",
    "redis.setresp(3) return redis.call('latency', 'doctor')",
    "return redis.call('latency', 'doctor')",
    "return {verbatim_string={format='txt', string='abc'}}",
    "redis.setresp(3) return {verbatim_string={format='mkd', string='abc'}}",
    "return {verbatim_string={format='m', string='abc'}}",
    "return {verbatim_string={format='markdown', string='a\\0b'}}",
    "return {verbatim_string={format='', string=''}}",
    "return {verbatim_string={format=1, string='x'}}",
    "return {verbatim_string={format='txt', string=5}}",
    "return {verbatim_string={format='txt'}, 'elem'}",
    "return {{verbatim_string={format='txt', string='in'}}, {double=1.5}}",
    "return {err='x', verbatim_string={format='txt', string='abc'}}",
    "return {map={a={verbatim_string={format='txt', string='v'}}}}",
]


@pytest.fixture(scope="module")
def ports():
    with SluiceServer() as sluice, RedisServer() as oracle:
        yield {"sluice": sluice.port, "redis": oracle.port}


def masked(reply: bytes) -> bytes:
    """A reply with what differs between two servers' clients masked (ids, addresses,
    ages, buffer sizes)."""
    reply = re.sub(rb"id=\d+ addr=\S+ laddr=\S+ fd=\d+", b"ID", reply)
    reply = re.sub(rb"age=\d+ idle=\d+", b"AGE", reply)
    return re.sub(rb"qbuf=\d+ .*? tot-mem=\d+", b"MEM", reply)


def run(port: int, protocol: int, script: str) -> bytes:
    with raw_socket(port, 10.0) as sock:
        if protocol == 3:
            ask(sock, "HELLO", "3")
        reply = ask(sock, "EVAL", script, 0)
    return masked(reply)


@pytest.mark.parametrize("protocol", [2, 3])
@pytest.mark.parametrize("script", SCRIPTS)
def test_verbatim_replies_match_redis(ports, protocol: int, script: str) -> None:
    got = {name: run(port, protocol, script) for name, port in ports.items()}
    assert got["sluice"] == got["redis"]


def test_a_script_verbatim_string_is_typed_for_resp3(ports) -> None:
    assert run(ports["sluice"], 3, "return {verbatim_string={format='m', string='abc'}}") \
        == b"=7\r\nm  :abc\r\n"
    assert run(ports["sluice"], 2, "return {verbatim_string={format='m', string='abc'}}") \
        == b"$3\r\nabc\r\n"
