"""Code a client sends cannot take the server away: nesting that would recurse without
bound (cjson, cmsgpack, a script's return value), tables read through their metatables,
as compared with redis-server 7.0 where it survives the same script."""
from __future__ import annotations

import re

import pytest

from engine.api.functions import FUNCTION_OPCODE
from engine.formats.dump_payload import frame
from lua_wire import ask_once
from servers import RedisServer, SluiceServer

DEEP_ENCODE = ("cjson.encode_max_depth(100000000) local t={} local c=t "
               "for i=1,30000 do c[1]={} c=c[1] end return cjson.encode(t)")

# scripts whose replies are the same on both servers
SAME_AS_REDIS = [
    DEEP_ENCODE,
    "return cjson.encode_max_depth(2147483647)",
    "local t={} local c=t for i=1,3000 do c[1]={} c=c[1] end return #cjson.encode(t)",
    "cjson.decode_max_depth(100000000) "
    "return type(cjson.decode(string.rep('[',30000)..string.rep(']',30000)))",
    "return type(cjson.decode(string.rep('[',3000)..string.rep(']',3000)))",
    "cjson.decode_max_depth(1000) return cjson.decode(string.rep('[',1001)..string.rep(']',1001))",
    "cjson.encode_max_depth(5) local t={} local c=t for i=1,30 do c[1]={} c=c[1] end "
    "return cjson.encode(t)",
    "cjson.decode_max_depth(3) return cjson.decode('[[{\"a\":[1]}]]')",
    "return cjson.encode(cjson.decode('{\"a\":[1,2,{\"b\":null}],\"c\":\"x\"}'))",
    "return cjson.decode('[1,2')", "return cjson.decode('{\"a\" 1}')",
    "return cjson.decode('{1:2}')", "return cjson.decode('[1 2]')",
    "return cjson.decode('{\"a\":1 \"b\"}')", "return cjson.decode('{\"a\":1,}')",
    "return cjson.decode('[1,]')", "return cjson.decode('[]')", "return cjson.decode('  ')",
    "return cjson.decode('[1,{\"a\":[true,false,null,\"x\\\\u0041\"]}] x')",
    "return cjson.encode({1,2,{a={}},'x'})", "return cjson.encode({[{}]=1})",
    "local t={} t[1]=t t[2]='a' return #cjson.encode(t)",
    # a script's reply: read raw, as Redis reads it, however deep
    "local t={} local c=t for i=1,500 do c[1]={} c=c[1] end return t",
    "return setmetatable({1,2}, {__index=function(t,k) return redis.call('set','x','y') end})",
    "return redis.call('exists','x')",
    "return _G",
    "return setmetatable({}, {__index=function(t,k) error('boom') end})",
]


def replies(server_class, scripts: list) -> list:
    with server_class(["--save", ""]) as server:
        out = [ask_once(server.port, "EVAL", script, 0) for script in scripts]
        if server_class is SluiceServer:
            assert "Traceback" not in server.log_text()
            assert ask_once(server.port, "PING") == b"+PONG\r\n"
    return out


def test_nesting_and_metatables_answer_as_redis_does():
    sluice = replies(SluiceServer, SAME_AS_REDIS)
    redis = replies(RedisServer, SAME_AS_REDIS)
    assert [(s, a) for s, a, b in zip(SAME_AS_REDIS, sluice, redis) if a != b] == []
    assert sluice[0].startswith(b"-ERR user_script:1: Cannot serialise, excessive nesting (7998)")



@pytest.mark.parametrize("script", ["local t={} t[1]=t return t",
                                    "local t={} t[1]=t t[2]='a' return t",
                                    "local t={} local c=t for i=1,5000 do c[1]={} c=c[1] end "
                                    "return t"])
def test_a_reply_nested_past_the_limit_ends_in_redis_stack_error(script):
    """Redis nests to its Lua stack's end (about 8,000 levels), Sluice to 990: the part
    beyond is Redis's error, not an internal one (or a crash)."""
    [reply] = replies(SluiceServer, [script])
    leading = re.match(rb"(\*\d+\r\n)*", reply).group()
    assert leading.count(b"*") == 990
    assert reply[len(leading):].startswith(b"-ERR reached lua stack limit\r\n")


def test_cmsgpack_unpacks_deep_data_without_recursion():
    """msgpack's own reader stops at 1,024 levels (Redis's has no such limit: a deliberate
    difference, with lua-cmsgpack's error); below it the data unpacks whole."""
    [deep, deeper] = replies(SluiceServer, [
        "return #cmsgpack.unpack(string.rep('\\145', 1000) .. '\\1')",
        "return #cmsgpack.unpack(string.rep('\\145', 1030) .. '\\1')"])
    assert deep == b":1\r\n"
    assert deeper.startswith(b"-ERR user_script:1: Bad data format in input.")


MANY_ARGS = ("local t = {} for i=1,%d do t[i] = i end "
             "redis.call('rpush', 'l', unpack(t)) return redis.call('llen', 'l')")


def test_redis_call_with_thousands_of_unpacked_arguments():
    """Redis's own test unit: redis.call takes as many arguments as a Lua 5.1 C function
    can (lupa alone would stop a Python callable at 7,997); past 7,999 values `unpack`
    refuses, with Redis's error; tail calls keep their error positions."""
    scripts = [MANY_ARGS % n for n in (7999, 8000)] + [
        "return redis.call('llen', 'l')", "return redis.call('incr', 'l')",
        "local t = {} for i=1,7999 do t[i] = i end return redis.pcall('incr', unpack(t))",
        "return redis.pcall('lpush', 'l', unpack({1, 2, nil, 3}))"]
    sluice = replies(SluiceServer, scripts)
    assert sluice == replies(RedisServer, scripts)
    assert sluice[0] == b":7999\r\n"


def rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def test_a_script_out_of_lua_memory_fails_cleanly_and_gives_the_memory_back():
    """The Lua heap has a limit (LUA_MAX_MEMORY): past it the script fails with Lua's
    "not enough memory" (redis-server 7.0, whose heap has none, takes all the machine
    has), the heap is collected and the server goes on."""
    with SluiceServer(["--save", ""]) as server:
        assert ask_once(server.port, "SET", "k", "v") == b"+OK\r\n"
        before = rss_bytes(server.proc.pid)
        reply = ask_once(server.port, "EVAL", "local s = string.rep('x', 2^29) "
                                              "return #(s .. s .. s)", 0, timeout=120)
        assert reply.startswith(b"-ERR not enough memory script: ")
        assert rss_bytes(server.proc.pid) < before + (200 << 20)
        assert ask_once(server.port, "EVAL", "return redis.call('get', 'k')", 0) == b"$1\r\nv\r\n"
        assert "Traceback" not in server.log_text()


def lzf_library_payload(claimed_length: int) -> bytes:
    """FUNCTION DUMP's framing around one library whose LZF string claims a length."""
    data = b"\x01abc"
    return frame(bytes([FUNCTION_OPCODE, 0xC3, len(data), 0x81])
                 + claimed_length.to_bytes(8, "big") + data)


def test_function_restore_checks_an_lzf_length_before_allocating_it():
    payloads = [lzf_library_payload(n) for n in (2**62, 2**40, 10**6)]
    seen = {}
    for server_class in (RedisServer, SluiceServer):
        with server_class(["--save", ""]) as server:
            seen[server_class] = [ask_once(server.port, "FUNCTION", "RESTORE", p) for p in payloads]
            assert ask_once(server.port, "PING") == b"+PONG\r\n"
    assert seen[SluiceServer] == seen[RedisServer]
    assert seen[SluiceServer] == [b"-ERR Failed loading library payload\r\n"] * 3

