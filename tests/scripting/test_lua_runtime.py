"""The Lua runtime (engine.scripting) beside redis-server 7.0: every snippet runs as
`EVAL <snippet> numkeys ...` on the oracle and through ScriptRuntime into a real Engine, and
the replies (or error texts) must be identical.

Snippets the oracle cannot take, or where Sluice follows newer Redis, are kept out of the
differential lists and listed in DIFFERENCES with why.
"""
from __future__ import annotations

import hashlib
import random
import struct
import time

import hiredis
import pytest
from redis.exceptions import ResponseError as RedisResponseError

from differential import RedisOracle

ORACLE_VERSION = "7.0.15"

DIFFERENCES = {
    # redis-server 7.0.15 crashes (SIGSEGV) on a table error without an `err` field; Sluice
    # answers "ERR unknown error script: ..." instead.
    "error({foo=1})": "crashes 7.0",
    # 7.0 hands pcall(redis.call, ...) a corrupted error value (a number); we give the
    # {err=...} table, as a script wrapping redis.call in a function gets on 7.0 too.
    "pcall(redis.call, ...)": "7.0 stack bug",
    # Internal helper Redis 7.0 leaves visible in _G; Sluice has no such global.
    "__redis__err__handler": "internal name",
    # Redis 7.4 gave scripts `os` with os.clock() only (redis/redis#12971); 7.0 has no `os`.
    # Sluice follows 7.4+: test_os_clock_only checks it, the snippets leave `os` out.
    "os": "os.clock (7.4+)",
    # A Python function a script calls is a userdata, not a function: type(redis.call)
    # is 'userdata' (Redis: 'function'); needed so `return redis.call(...)` keeps its frame.
    "type(redis.call)": "userdata",
    # next, rawget, rawset and setmetatable are Lua functions in the sandbox (they see through
    # the read-only proxies): `return setmetatable(1, {})` is a tail call into them, and the
    # error then says "on =(tail call):-1" where 7.0 names the script line.
    "return setmetatable(1, {})": "tail call",
    # lupa hands Python an integral Lua number as an int, so -0.0 reaches redis.call and
    # cjson.encode as 0 (7.0: "-0").
    "-0.0": "lupa number conversion",
    # lua-cmsgpack 0.4 knows no bin/ext formats ("Bad data format in input."); the msgpack
    # package decodes bin 8/16/32 as strings.
    "cmsgpack.unpack('\\196\\3abc')": "bin formats",
}


def _normalize(reply):
    """Replies in a comparable form: error replies (raised or nested) as ('error', text)."""
    if isinstance(reply, BaseException):
        return ("error", str(reply))
    if isinstance(reply, list):
        return [_normalize(item) for item in reply]
    if isinstance(reply, bytes):
        return bytes(reply)
    return reply


class Both:
    """Runs one script on the oracle and on the runtime (with a real Engine behind it)."""

    def __init__(self, oracle: RedisOracle, engine) -> None:
        from engine.scripting import ScriptRuntime

        self.oracle = oracle
        self.engine = engine
        self.runtime = ScriptRuntime(self._call, redis_version=ORACLE_VERSION,
                                     call_resp3=self._call_resp3)
        self._resp3_ctx = engine.new_context(resp3=True)

    def _call(self, argv: list):
        return self.engine.execute(*argv)

    def _call_resp3(self, argv: list):
        return self.engine.execute_in(self._resp3_ctx, argv)

    def theirs(self, script: str, keys: tuple, args: tuple):
        try:
            return _normalize(self.oracle.execute("EVAL", script, len(keys), *keys, *args))
        except RedisResponseError as err:
            return ("error", str(err))

    def ours(self, script: str, keys: tuple, args: tuple):
        from engine import ResponseError

        body = script.encode()
        sha = hashlib.sha1(body).hexdigest()
        try:
            fn = self.runtime.compile(body)
            reply = self.runtime.run(fn, [_b(k) for k in keys], [_b(a) for a in args], sha)
            return _normalize(_over_resp2(reply))
        except ResponseError as err:
            return ("error", str(err))

    def check(self, script: str, keys: tuple = (), args: tuple = ()) -> None:
        expected = self.theirs(script, keys, args)
        assert self.ours(script, keys, args) == expected, script


def _over_resp2(reply):
    """Our reply as a RESP2 client reads it: written by the server's encoder, parsed back."""
    from engine.resp.codec import encode_reply

    reader = hiredis.Reader()
    reader.feed(encode_reply(reply))
    return reader.gets()


def _b(value) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode()


@pytest.fixture
def both(oracle, engine) -> Both:
    return Both(oracle, engine)


# -- hand-written snippets ------------------------------------------------------------------

CONVERSIONS = [
    "return 1", "return -1", "return 0", "return 3.99", "return -3.99", "return -0.5",
    "return 1e20", "return -1e20", "return 0/0", "return 1/0", "return -1/0", "return 2^53",
    "return 2^63", "return -2^63", "return 9007199254740993", "return 'hello'", "return ''",
    "return 'a\\0b'", "return true", "return false", "return nil", "return", "return {}",
    "return {1,2,3}", "return {1,2,nil,4}", "return {nil,1}", "return {1.9,-1.9,'a',true,false}",
    "return {1,{2,{3,{4}}}}", "return {{},{{}}}", "return {ok='fine'}", "return {ok=''}",
    "return {ok=3}", "return {ok={}}", "return {err='boom'}", "return {err='-boom'}",
    "return {err='MYERR boom'}", "return {err=''}", "return {err=3}", "return {err='x', ok='y'}",
    "return {double=3.5}", "return {double=-0.25}", "return {double='3.5'}",
    "return {double=1e300}", "return {double=-0.0}", "return {double=0}",
    "return {double=tonumber('-0')}", "return {map={a=1}}", "return {set={a=true}}",
    "return {big_number='123'}", "return {1, {err='inner'}, 3}", "return {1, {ok='inner'}, 3}",
    "return {a=1, b=2}", "return {1, 2, a=3}", "return {[1]=1, [2]=2, [4]=4}",
    "return {[2]=2}", "return {'x', {ok='y'}, {err='z'}, {double=1.5}}",
    "return unpack({1,2,3})", "return 1, 2", "return (function() return 'x' end)()",
    "return coroutine.wrap(function() return 5 end)()", "return select('#', 1, 2, 3)",
    "return #'abc'", "return tostring(1e15)", "return tostring(0.1)", "return tostring(1/3)",
    "return tostring(-0.0)", "return tostring(1e100)", "return 'a' .. 1.5", "return 10 / 4",
    "return 7 % 3", "return -7 % 3", "return math.floor(-3.5)", "return math.huge",
    "return tonumber('0x10')", "return tonumber('  12  ')", "return tonumber('z', 36)",
    "return tonumber('nope')", "return string.format('%5.2f', 3.14159)",
    "return string.format('%d %s %q', 42, 'x', 'a\\nb')", "return string.rep('ab', 3, ',')",
    "return string.byte('A')", "return string.char(72, 105)", "return ('hello'):upper()",
    "return ('hello'):sub(2, -2)", "return {string.find('hello world', 'o w')}",
    "return string.gsub('hello', 'l', 'L')", "return {string.match('key:123', '(%a+):(%d+)')}",
    "return table.concat({1, 2, 3}, '-')", "local t = {3, 1, 2}; table.sort(t); return t",
    "local t = {}; table.insert(t, 'a'); table.insert(t, 1, 'b'); return t",
    "local t = {1, 2, 3}; table.remove(t, 1); return t", "return table.getn({1, 2})",
    "return math.max(1, 5, 3)", "return math.fmod(7, 3)", "return math.sqrt(16)",
    "return tostring(math.pi)", "return math.abs(-4)", "return {math.modf(3.7)}",
    "return type(collectgarbage('count'))", "return gcinfo() > 0", "return _VERSION",
    "return type(load)", "return loadstring('return 1 + 1')()",
    "return {loadstring('syntax error here')}", "return assert(1 == 1)",
    "return {pcall(function() return 1, 2 end)}", "return {xpcall(function() error('x') end, function(e) return 'handled: ' .. e end)}",
    "return {pcall(error)}", "return {pcall(error, 'msg', 0)}", "return {pcall(error, 'msg')}",
    "return {pcall(error, {code=1})}", "local ok, e = pcall(error, {code=7}); return e.code",
    "return tostring(nil)", "return tostring(true)", "return type(nil)", "return type(print)",
    "return next({})", "return type(next({a=1}))", "return rawequal('a', 'a')",
    "return rawget({5}, 1)", "local t = {}; rawset(t, 'k', 'v'); return t.k",
    "return #KEYS", "return #ARGV", "KEYS[1] = 'a'; return KEYS[1]",
    "return getmetatable('').__index == string", "return getmetatable(_G) == nil",
    "return getmetatable(string) == nil", "return type(_G)", "return _G.redis == redis",
    "return type(_G.KEYS)", "return rawget(_G, 'nonexistent')",
    "local s = 0; for k, v in pairs({a=1, b=2, c=3}) do s = s + v end; return s",
    "local s = 0; for i, v in ipairs({5, 6, 7}) do s = s + i * v end; return s",
    "local t = setmetatable({}, {__index=function() return 1 end}); return t.x",
    "local t = setmetatable({}, {__call=function(self, a) return a * 2 end}); return t(21)",
    "local n = 0; for k in pairs(string) do n = n + 1 end; return n",
    "local n = 0; for k in pairs(math) do n = n + 1 end; return n",
    "local n = 0; for k in pairs(table) do n = n + 1 end; return n",
    "local n = 0; for k in pairs(coroutine) do n = n + 1 end; return n",
]

ERRORS = [
    "error('boom')", "error('boom', 0)", "error('boom', 2)", "error(12)", "error()", "error(nil)",
    "error(true)", "error({err='TABLEERR x'})", "error({err='lowercase x'})",
    "local x = nil\nx.y = 1", "return \n  nosuchvar", "local t = {}\nt[nil] = 1",
    "return 1 + {}", "return #nil", "return ('x'):bad()", "return nil .. 'x'",
    "local function f() error('deep') end\nlocal function g() f() end\ng()",
    "local function f() error('deep', 2) end\n\nf()",
    "x = 1", "function f() end", "return x", "return _G.x", "_G.x = 1", "rawset(_G, 'x', 1)",
    "local s = string; s.x = 1; return 1", "string.x = 1", "cjson.x = 1", "redis.x = 1",
    "redis.call = nil", "KEYS = 1", "math.pi = 3", "bit.band = nil", "setmetatable(_G, nil)",
    "return io", "return loadfile", "return dofile", "return require",
    "return module", "return debug", "return print", "return getfenv", "return setfenv",
    "return newproxy", "return package",
    "retur", "return (", "return 'unfinished", "local = 1", "for i = 1 do end",
    "return 1 +", "\n\nreturn }", "local t = {1, 2,, 3}",
    "local a = assert(false, 'assertion message')", "assert(nil)", "assert(false)",
    "return string.rep()", "return ('x'):rep(nil)", "return math.floor('a')",
    "return tostring()", "return table.concat({{}})", "setmetatable(1, {})", "rawget(1, 2)",
    "next({}, 'nokey')",
    "error(string.rep('x', 300))",
    # chunks compiled by a script stay in the sandbox; bytecode is refused
    "return loadstring('return io')()", "return loadstring('return type(redis)')()",
    "return {loadstring(string.dump(function() return 1 end))}",
    "return {pcall(loadstring(string.dump(function() return 1 end)))}",
    "local f, e = loadstring(string.dump(function() return 1 end)); return e",
    "local f, e = loadstring(string.dump(function() return 1 end), 'named'); return e",
    "local f = loadstring('x = 1'); return {pcall(f)}",
    "local parts = {'return ', '5'}; local i = 0; return load(function() i = i + 1; return parts[i] end)()",
    "return {load(function() return string.dump(function() end) end)}",
    "getmetatable('').__index = nil; return 1", "getmetatable('').x = 1; return 1",
    "getmetatable(_G).__index = nil; return 1", "return type(getmetatable(_G).__index)",
]

REDIS_API = [
    "return redis.call('ping')", "return redis.call('PING', 'hello')",
    "return redis.call('set', 'a', 'b')", "return {redis.call('set', 'a', 'b')}",
    "return redis.call('set', 'a', 'b').ok", "return type(redis.call('set', 'a', 'b'))",
    "return redis.call('get', 'nokey')", "return type(redis.call('get', 'nokey'))",
    "return {1, redis.call('get', 'nokey'), 3}", "redis.call('set', 'k', 'v'); return redis.call('get', 'k')",
    "return redis.call('incr', 'n')", "redis.call('incr', 'n'); return redis.call('incrby', 'n', 10)",
    "return redis.call('incrby', 'n', 2.5)", "return redis.call('incr', 'n', 'x')",
    "redis.call('set', 'sk', 'abc'); return redis.call('incr', 'sk')",
    "redis.call('set', 'sk', 'abc'); return redis.pcall('incr', 'sk')",
    "redis.call('set', 'sk', 'abc'); local r = redis.pcall('incr', 'sk'); return type(r) .. r.err",
    "redis.call('set', 'sk', 'abc'); local ok, e = pcall(function() return redis.call('incr', 'sk') end); return {tostring(ok), type(e), e.err}",
    "redis.call('set', 'sk', 'abc'); local ok, e = pcall(function() return redis.call('incr', 'sk') end); error(e)",
    "redis.call('set', 'sk', 'abc'); local r = redis.pcall('incr', 'sk'); return r",
    "return redis.call('nosuch')", "return redis.pcall('nosuch')", "return redis.call('NOSUCH', 'x')",
    "return redis.call()", "return redis.pcall()", "return redis.call({})",
    "return redis.call('set', {}, 1)", "return redis.call('set', 'k', true)",
    "return redis.call('set', 'k', nil)", "return redis.call('get', 'k', nil, 'x')",
    "return redis.call('set', 'fk')", "return redis.call('get')",
    "return redis.call('xadd', 's', '1-1', 'f', 'v')",
    "redis.call('xadd', 's', '1-1', 'f', 'v'); redis.call('xadd', 's', '2-1', 'g', 'w', 'h', 'x'); return redis.call('xrange', 's', '-', '+')",
    "redis.call('xadd', 's', '1-1', 'f', 'v'); return redis.call('xlen', 's')",
    "redis.call('xadd', 's', '1-1', 'f', 'v'); return redis.call('xadd', 's', '1-1', 'f', 'v')",
    "redis.call('xadd', 's', '5-1', 'f', 'v'); return redis.call('xrange', 's', '-', '+')[1][2][2]",
    "return redis.call('xlen', 'nostream')", "redis.call('set', 'x', 1); return redis.call('xlen', 'x')",
    "return redis.call('exists', 'a', 'b')", "redis.call('set', 'a', 1); return redis.call('del', 'a', 'b')",
    "redis.call('set', 'a', 1); return redis.call('type', 'a')", "return redis.call('type', 'none')",
    "redis.call('set', 'a', 1); redis.call('set', 'b', 2); return redis.call('mget', 'a', 'nokey', 'b')",
    "redis.call('set', 'a', 'x'); error('after write')",
    "return redis.call('echo', 'a\\0b')",
    "return redis.sha1hex('abc')", "return redis.sha1hex('')", "return redis.sha1hex(123)",
    "return redis.sha1hex()", "return redis.sha1hex('a', 'b')", "return redis.sha1hex({})",
    "return redis.REDIS_VERSION .. ' ' .. redis.REDIS_VERSION_NUM",
    "return {redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING, redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL}",
    "return redis.log(redis.LOG_WARNING, 'hi', 'there')", "return redis.log(redis.LOG_DEBUG, 1, 2)",
    "return redis.log()", "return redis.log(99, 'x')", "return redis.log('x')", "return redis.log(-1, 'x')",
    "return redis.set_repl(redis.REPL_ALL)", "return redis.set_repl(redis.REPL_NONE)",
    "return redis.set_repl(99)", "return redis.set_repl()", "return redis.replicate_commands()",
    "return redis.breakpoint()", "return redis.debug('x')",
    "return redis.setresp(2)", "return redis.setresp(3)", "return redis.setresp(4)", "return redis.setresp()",
    "redis.setresp(3); return redis.call('get', 'nokey')",
    "redis.setresp(3); return type(redis.call('get', 'nokey'))",
    "redis.setresp(3); return redis.call('set', 'a', 'b')",
    "redis.setresp(3); redis.call('set', 'a', 'b'); return redis.call('get', 'a')",
    "redis.setresp(3); return redis.call('incr', 'n')",
    "return redis.error_reply('boom')", "return redis.error_reply('-boom x')",
    "return redis.error_reply('')", "return redis.error_reply('boom').err",
    "return redis.error_reply('-boom').err", "return redis.error_reply()", "return redis.error_reply(1)",
    "return redis.status_reply('x')", "return redis.status_reply('x').ok", "return redis.status_reply(1)",
    "return redis.status_reply()", "return redis.log('x', 'y')", "return redis.log('1', 'y')",
    "return redis.setresp('3')", "return redis.set_repl('1')", "return redis.set_repl(1.5)",
    "return redis.sha1hex(nil)", "return redis.setresp(2.5)", "return redis.acl_check_cmd('GET')",
    "return redis.acl_check_cmd(1)",
    "redis.setresp(3); redis.call('xadd', 's', '1-1', 'f', 'v'); local r = redis.call('xinfo', 'stream', 's'); return {type(r.map), r.map.length}",
    "redis.call('xadd', 's', '1-1', 'f', 'v'); local r = redis.call('xinfo', 'stream', 's'); return {type(r), r[1], r[2]}",
    "local t = {} for k, v in pairs(redis) do t[#t+1] = k end table.sort(t) return t",
    "local t = {} for k, v in pairs(_G) do if k ~= '__redis__err__handler' and k ~= 'os' then t[#t+1] = k end end table.sort(t) return t",
    "local t = {} for k, v in pairs(cjson) do t[#t+1] = k end table.sort(t) return t",
    "local t = {} for k, v in pairs(bit) do t[#t+1] = k end table.sort(t) return t",
    "local t = {} for k, v in pairs(struct) do t[#t+1] = k end table.sort(t) return t",
    "local t = {} for k, v in pairs(cmsgpack) do t[#t+1] = k end table.sort(t) return t",
    "local t = {} for k, v in pairs(math) do t[#t+1] = k end table.sort(t) return t",
    "local t = {} for k, v in pairs(string) do t[#t+1] = k end table.sort(t) return t",
    "local t = {} for k, v in pairs(table) do t[#t+1] = k end table.sort(t) return t",
    "return {type(cjson), type(bit), type(struct), type(cmsgpack), type(redis), type(cjson.null)}",
    "math.randomseed(0); return math.random(1, 1000000)",
    "math.randomseed(42); return {math.random(100), math.random(100), math.random(5, 10)}",
    "math.randomseed(7); return tostring(math.random())",
    "math.randomseed(-3); return math.random(1000)", "math.randomseed(1); return math.random(0)",
    "math.randomseed(1); return math.random(3, 1)", "return math.random(1, 2, 3)",
    "math.randomseed(2^40); return math.random(1000)", "return math.random('x')",
    "return math.random(1, {})", "math.randomseed('5'); return math.random('10')",
    "return math.randomseed('x')", "return math.randomseed()", "math.randomseed(3.9); return math.random(7.9)",
]

KEYS_AND_ARGS = [
    ("return {KEYS[1], KEYS[2], ARGV[1], ARGV[2]}", ("k1", "k2"), ("a1", "a2")),
    ("return #KEYS + #ARGV * 10", ("a", "b", "c"), ("x",)),
    ("return redis.call('set', KEYS[1], ARGV[1])", ("k",), ("v",)),
    ("redis.call('set', KEYS[1], ARGV[1]); return redis.call('get', KEYS[1])", ("k",), ("v",)),
    ("return redis.call('incrby', KEYS[1], ARGV[1])", ("k",), ("5",)),
    ("return tonumber(ARGV[1]) + 1", (), ("41",)),
    ("return ARGV[3]", (), ("a", "b")),
    ("return redis.call('xadd', KEYS[1], ARGV[1], 'f', ARGV[2])", ("s",), ("7-7", "v")),
]

NUMBER_ARGS = ["100", "1.5", "0.1", "1e15", "1e16", "123456789012345678", "1e21", "1e-5", "0.0001",
               "1/0", "-1/0", "0/0", "2^53", "1.5e300", "5e-324", "12345.678",
               "1.123456789012345678", "-42", "2^63", "-2^63", "2^64", "1e17", "99999999999999999"]

CJSON = [
    "return cjson.encode({1, 2, 3})", "return cjson.encode({})", "return cjson.encode({a=1})",
    "return cjson.encode('str')", "return cjson.encode(1.5)", "return cjson.encode(nil)",
    "return cjson.encode(true)", "return cjson.encode(cjson.null)", "return cjson.encode({1, nil, 3})",
    "return cjson.encode({[1]=1, [2]=2, [20]=3})", "return cjson.encode({[1]=1, [5]=5})",
    "return cjson.encode({[11]=1})", "return cjson.encode({[0]=1})", "return cjson.encode({[1.5]=1})",
    "return cjson.encode({[true]=1})", "return cjson.encode(function() end)",
    "return cjson.encode(0/0)", "return cjson.encode(1/0)", "return cjson.encode(1/3)",
    "return cjson.encode(123456789012345678)", "return cjson.encode(1e15)",
    "return cjson.encode(0.1)", "return cjson.encode(100)", "return cjson.encode(1e-7)",
    "return cjson.encode('a\"b\\\\c/d\\n\\r\\t\\b\\f\\0\\1\\31\\127\\128\\255')",
    "return cjson.encode({{{{}}}})", "return cjson.encode({a={b={c={1,2}}}})",
    "return cjson.encode({cjson.null, cjson.null})", "return cjson.encode()",
    "return cjson.encode(1, 2)", "local t = {} t[1] = t return pcall(cjson.encode, t)",
    "return cjson.decode('[1,2,3]')[2]", "return cjson.decode('{\"a\":[1,{\"b\":2}]}').a[2].b",
    "return cjson.decode('\"x\"')", "return cjson.decode('1.5')", "return cjson.decode('-0')",
    "return tostring(cjson.decode('1e400'))", "return cjson.decode('true')", "return cjson.decode('false')",
    "return cjson.decode('null') == cjson.null", "return type(cjson.decode('null'))",
    "return cjson.decode('[]')", "return cjson.decode('{}')", "return #cjson.decode('[1,null,3]')",
    "return cjson.decode('\"\\\\u00e9\\\\u4e2d\\\\ud83d\\\\ude00\"')",
    "return cjson.decode('\"a\\\\nb\\\\/c\"')", "return cjson.decode('  [1]  ')[1]",
    "return cjson.decode('')", "return cjson.decode('[1,2')", "return cjson.decode('[1 2]')",
    "return cjson.decode('{1:2}')", "return cjson.decode('{\"a\" 1}')", "return cjson.decode('{\"a\":1,}')",
    "return cjson.decode('[1,]')", "return cjson.decode('x')", "return cjson.decode('[1] x')",
    "return cjson.decode('\"abc')", "return cjson.decode('\"\\\\x\"')", "return cjson.decode('\"\\\\u12\"')",
    "return cjson.decode('tru')", "return cjson.decode('01')", "return cjson.decode('0x10')",
    "return cjson.decode('-')", "return cjson.decode('1.')", "return cjson.decode(']')",
    "return cjson.decode('}')", "return cjson.decode(':')", "return cjson.decode(',')",
    "return cjson.decode(12)", "return cjson.decode()", "return cjson.decode({})",
    "return cjson.decode(string.rep('[', 1001) .. string.rep(']', 1001))",
    "return cjson.encode(cjson.decode('{\"k\":[1,2.5,\"s\",true,false,null,{}]}'))",
    "return {pcall(cjson.decode, '{')}", "return {pcall(cjson.encode, {[true]=1})}",
    "return cjson.encode_keep_buffer(true)", "return {cjson.encode_sparse_array()}",
    "return cjson.encode_number_precision()", "return cjson.encode_max_depth()",
    "return cjson.decode_max_depth()", "return cjson.encode_invalid_numbers()",
    "return cjson.decode_invalid_numbers()", "return cjson._NAME", "return cjson._VERSION",
    "return cjson.new().encode({1})",
    "return cjson.encode({alpha=1, beta=2, gamma={x=1,y=2,z=3}, delta='d', k0=1, k1=2, k2=3})",
    "local t = {} for i = 1, 50 do t['key' .. i] = i end return cjson.encode(t)", "local c = cjson.new(); c.encode_max_depth(2); return {pcall(c.encode, {{{1}}})}",
    "local c = cjson.new(); c.encode_number_precision(3); return c.encode(1/3)",
]

CMSGPACK = [
    "return cmsgpack.pack(1)", "return cmsgpack.pack(-1)", "return cmsgpack.pack(127, 128, 255, 256)",
    "return cmsgpack.pack(65535, 65536, 2^32 - 1, 2^32, 2^53)", "return cmsgpack.pack(-32, -33, -128, -129)",
    "return cmsgpack.pack(-32768, -32769, -2^31, -2^31 - 1, -2^53)", "return cmsgpack.pack(1.5, 0.1, -2.25)",
    "return cmsgpack.pack(1/0, -1/0)", "return cmsgpack.pack(1e300)", "return cmsgpack.pack('')",
    "return cmsgpack.pack('abc')", "return cmsgpack.pack(string.rep('x', 31), string.rep('y', 32))",
    "return cmsgpack.pack(string.rep('z', 300))", "return cmsgpack.pack(string.rep('z', 70000))",
    "return cmsgpack.pack(true, false, nil)", "return cmsgpack.pack({})", "return cmsgpack.pack({1, 2, 3})",
    "return cmsgpack.pack({a=1})", "return cmsgpack.pack({1, nil, 3})", "return cmsgpack.pack({[2]=1})",
    "local t = {} for i = 1, 20 do t[i] = i end return cmsgpack.pack(t)",
    "local t = {} for i = 1, 70000 do t[i] = 1 end return #cmsgpack.pack(t)",
    "return cmsgpack.pack({{{{{{{{{{{{{{{{{{1}}}}}}}}}}}}}}}}}})", "return cmsgpack.pack(function() end)",
    "return cmsgpack.pack()", "return {cmsgpack.unpack(cmsgpack.pack(1, 'a', {1, 2}, true))}",
    "return cmsgpack.unpack(cmsgpack.pack({a={b='c'}})).a.b", "return cmsgpack.unpack(cmsgpack.pack(-2^40))",
    "return tostring(cmsgpack.unpack(cmsgpack.pack(1.5)))", "return cmsgpack.unpack('\\192')",
    "return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3))}", "return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 1)}",
    "return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2)}", "return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 5)}",
    "return cmsgpack.unpack('\\145')", "return cmsgpack.unpack('\\193')", "return {cmsgpack.unpack('')}",
    "return cmsgpack.unpack('\\217\\5ab')",
]

STRUCT = [
    "return struct.pack('>i', 5)", "return struct.pack('<i', -5)", "return struct.pack('>I2', 513)",
    "return struct.pack('bBhH', -1, 255, -2, 65535)", "return struct.pack('>lL', -1, 1)",
    "return struct.pack('>d', 1.5)", "return struct.pack('<f', 0.5)", "return struct.pack('c3', 'abcdef')",
    "return struct.pack('c0', 'abcdef')", "return struct.pack('s', 'hi')", "return struct.pack('>!4 b i', 1, 2)",
    "return struct.pack('xb', 1)", "return struct.pack('> i3', 70000)", "return struct.pack('i', 3.7)",
    "return struct.pack('i', 'x')", "return struct.pack('z', 1)", "return struct.pack('c5', 'ab')",
    "return struct.pack('i40', 1)", "return struct.pack('i')", "return struct.pack()",
    "return {struct.unpack('>i', struct.pack('>i', -123456))}", "return {struct.unpack('<hH', '\\255\\255\\255\\255')}",
    "return {struct.unpack('c3', 'abcdef')}", "return {struct.unpack('s', 'ab\\0cd')}",
    "return {struct.unpack('bc0', '\\3xyzw')}", "return {struct.unpack('>i', 'ab')}",
    "return {struct.unpack('i', struct.pack('ii', 1, 2), 5)}", "return {struct.unpack('>d', struct.pack('>d', 0.1))}",
    "return {struct.unpack('s', 'abc')}", "return struct.size('i')", "return struct.size('>!4 b i d')",
    "return struct.size('c10')", "return struct.size('s')", "return struct.size('bhlLiIfdT')",
    "return {struct.unpack('>I8', struct.pack('>I8', 2^40))}",
]

BIT = [
    "return bit.tobit(0xffffffff)", "return bit.tobit(2^32 + 1)", "return bit.tobit(1.5)",
    "return bit.tobit(2.5)", "return bit.tobit(-1.5)", "return bit.tohex(255)", "return bit.tohex(-1)",
    "return bit.tohex(255, 2)", "return bit.tohex(255, -4)", "return bit.tohex(255, 0)",
    "return bit.tohex(255, 20)", "return bit.bnot(0)", "return bit.band(0xff, 0x0f, 0x3)",
    "return bit.bor(1, 2, 4, 8)", "return bit.bxor(5, 3)", "return bit.lshift(1, 31)",
    "return bit.lshift(1, 32)", "return bit.rshift(-1, 28)", "return bit.arshift(-256, 4)",
    "return bit.rol(0x12345678, 8)", "return bit.ror(0x12345678, 8)", "return bit.bswap(0x12345678)",
    "return bit.band()", "return bit.band('a')", "return bit.band('12', 10)", "return bit.tobit(nil)",
    "return bit.tobit(2^52)", "return bit.tobit(-2^31)", "return bit.lshift(3, -1)",
]


def _generated_bit_snippets(rng: random.Random, count: int) -> list[str]:
    values = [0, 1, -1, 2**31 - 1, -2**31, 2**32 - 1, 0x12345678, 0.5, 1.5, -2.5, 2**40 + 7]
    ops = ["band", "bor", "bxor"]
    out = []
    for _ in range(count):
        a = rng.choice(values + [rng.randint(-2**33, 2**33)])
        b = rng.choice(values + [rng.randint(-2**33, 2**33)])
        n = rng.randint(0, 40)
        out.append(f"return {{bit.{rng.choice(ops)}({a!r}, {b!r}), bit.lshift({a!r}, {n}), "
                   f"bit.rshift({a!r}, {n}), bit.arshift({a!r}, {n}), bit.rol({a!r}, {n}), "
                   f"bit.ror({a!r}, {n}), bit.tohex({a!r}, {rng.randint(-9, 9)}), bit.bnot({b!r}), "
                   f"bit.bswap({b!r})}}")
    return out


def _lua_literal(value) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"[{_lua_literal(k)}]={_lua_literal(v)}"
                               for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "{" + ", ".join(_lua_literal(v) for v in value) + "}"
    if isinstance(value, str):
        return "'" + "".join(c if c.isalnum() else "\\%d" % ord(c) for c in value) + "'"
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)


def _random_value(rng: random.Random, depth: int = 0):
    kind = rng.randrange(8 if depth < 3 else 5)
    if kind == 0:
        return rng.randint(-10**6, 10**6)
    if kind == 1:
        return rng.choice([0.5, -1.25, 1e10, 3.14159265358979, 1e-3, 2**53, 123456.789])
    if kind == 2:
        return "".join(rng.choice("ab\"\\/\n\x01é ") for _ in range(rng.randint(0, 6)))
    if kind == 3:
        return rng.choice([True, False])
    if kind == 4:
        return "cjson.null"
    if kind == 5:
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    # several keys: the object's key order is Lua's table order on both sides
    return {f"k{i}": _random_value(rng, depth + 1) for i in range(rng.randint(1, 4))}


def _literal(value) -> str:
    if value == "cjson.null":
        return "cjson.null"
    if isinstance(value, list):
        return "{" + ", ".join(_literal(v) for v in value) + "}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={_literal(v)}" for k, v in value.items()) + "}"
    return _lua_literal(value)


def _value_snippets(rng: random.Random, count: int, null: str, make) -> list[str]:
    """`count` scripts, each made by make(literal) from a random nested Lua value (with
    `null` standing for cjson.null where the library has no such value)."""
    return [make(_literal(_random_value(rng)).replace("cjson.null", null)) for _ in range(count)]


def _generated_struct_snippets(rng: random.Random, count: int) -> list[str]:
    letters = {"b": (-128, 127), "B": (0, 255), "h": (-32768, 32767), "H": (0, 65535),
               "i": (-2**31, 2**31 - 1), "I": (0, 2**32 - 1), "l": (-2**53, 2**53),
               "i2": (-32768, 32767), "I3": (0, 2**24 - 1)}
    out = []
    for _ in range(count):
        chosen = rng.sample(sorted(letters), rng.randint(1, 4))
        fmt = rng.choice(["<", ">", "", "!4", ">!8"]) + "".join(chosen)
        values = [rng.randint(*letters[c]) for c in chosen]
        args = ", ".join(str(v) for v in values)
        out.append(f"local p = struct.pack('{fmt}', {args}); "
                   f"return {{p, struct.size('{fmt}'), struct.unpack('{fmt}', p)}}")
    return out


RNG = random.Random(15)
GENERATED = (
    _generated_bit_snippets(RNG, 40) + _generated_struct_snippets(RNG, 40)
    + _value_snippets(RNG, 60, "cjson.null", lambda v: f"local s = cjson.encode({v}); "
                      "return {s, cjson.encode(cjson.decode(s))}")
    + _value_snippets(RNG, 40, "false", lambda v: f"local p = cmsgpack.pack({v}); "
                      "return {p, cmsgpack.pack(cmsgpack.unpack(p))}")
    + _value_snippets(RNG, 40, "nil", lambda v: f"return {v}"))


SNIPPETS = [pytest.param(script, id=f"{group}-{index}")
            for group, scripts in (("conversions", CONVERSIONS), ("errors", ERRORS),
                                   ("redis", REDIS_API), ("cjson", CJSON), ("cmsgpack", CMSGPACK),
                                   ("struct", STRUCT), ("bit", BIT), ("generated", GENERATED))
            for index, script in enumerate(scripts)]


@pytest.mark.parametrize("script", SNIPPETS)
def test_snippet(both: Both, script: str) -> None:
    both.check(script)


@pytest.mark.parametrize("script,keys,args", KEYS_AND_ARGS)
def test_keys_and_args(both: Both, script: str, keys: tuple, args: tuple) -> None:
    both.check(script, keys, args)


@pytest.mark.parametrize("number", NUMBER_ARGS)
def test_number_arguments(both: Both, number: str) -> None:
    both.check(f"redis.call('set', 'fk', {number}); return redis.call('get', 'fk')")


# -- what the oracle cannot show ------------------------------------------------------------

def test_table_error_without_err_field(engine) -> None:
    """7.0 crashes on it (DIFFERENCES); Sluice answers with an error reply."""
    from engine import ResponseError
    from engine.scripting import ScriptRuntime

    runtime = ScriptRuntime(lambda argv: engine.execute(*argv), redis_version=ORACLE_VERSION)
    with pytest.raises(ResponseError, match=r"^ERR unknown error script: x, on @user_script:1\.$"):
        runtime.run(runtime.compile(b"error({foo=1})"), [], [], "x")


def test_bytecode_refused(both: Both) -> None:
    """EVAL of precompiled Lua fails to compile, as on Redis (which parses it as text)."""
    bytecode = both.oracle.execute("EVAL", "return string.dump(function() return 1 end)", 0)
    from engine import ResponseError

    with pytest.raises(RedisResponseError) as theirs:
        both.oracle.execute("EVAL", bytecode, 0)
    with pytest.raises(ResponseError) as ours:
        both.runtime.compile(bytecode)
    assert str(ours.value) == str(theirs.value)


def test_os_clock_only(engine) -> None:
    """As in Redis 7.4+: `os` holds clock() and nothing else, read-only."""
    from engine import ResponseError
    from engine.scripting import ScriptRuntime

    runtime = ScriptRuntime(lambda argv: engine.execute(*argv), redis_version=ORACLE_VERSION)

    def run(script: bytes):
        return runtime.run(runtime.compile(script), [], [], "x")

    assert run(b"local t = {} for k in pairs(os) do t[#t+1] = k end return t") == [b"clock"]
    assert run(b"return type(os.clock())") == b"number"
    with pytest.raises(ResponseError, match=r"attempt to call field 'execute' \(a nil value\)"):
        run(b"return os.execute('true')")
    with pytest.raises(ResponseError, match="Attempt to modify a readonly table"):
        run(b"os.exit = 1")


def test_python_objects_stay_closed(engine) -> None:
    """A script cannot reach the Python behind the library functions."""
    from engine import ResponseError
    from engine.scripting import ScriptRuntime

    runtime = ScriptRuntime(lambda argv: engine.execute(*argv), redis_version=ORACLE_VERSION)
    with pytest.raises(ResponseError, match="AttributeError"):
        runtime.run(runtime.compile(b"return cjson.encode.__globals__"), [], [], "x")
    # redis.call is a Lua C function, as in Redis: nothing to index
    for script in (b"return redis.call.__class__", b"return tostring(redis.call.__call__)"):
        with pytest.raises(ResponseError, match="attempt to index field 'call' "
                                                r"\(a function value\)"):
            runtime.run(runtime.compile(script), [], [], "x")


def test_writes_before_an_error_stay(engine) -> None:
    from engine import ResponseError
    from engine.scripting import ScriptRuntime

    runtime = ScriptRuntime(lambda argv: engine.execute(*argv), redis_version=ORACLE_VERSION)
    with pytest.raises(ResponseError):
        runtime.run(runtime.compile(b"redis.call('set', 'a', '1'); error('x')"), [], [], "x")
    assert engine.execute("GET", "a") == b"1"


def test_resp3_script_replies(engine) -> None:
    """Booleans follow the script's protocol (redis.setresp), as 7.0 converts them;
    map and double tables keep their type (the client's protocol writes them)."""
    from engine.scripting import ScriptRuntime

    runtime = ScriptRuntime(lambda argv: engine.execute(*argv), redis_version=ORACLE_VERSION)

    def run(script: bytes):
        return runtime.run(runtime.compile(script), [], [], "x")

    assert run(b"redis.setresp(3); return {true, false}") == [True, False]
    assert run(b"return {true, false}") == [1, None]
    assert run(b"return {map={a=1}}") == {b"a": 1}
    assert run(b"return {double=2.5}") == 2.5


def test_incr_loop_rate(engine) -> None:
    """100,000 redis.call INCRs through the runtime into Engine.execute: reports the rate
    (no bound asserted: timings on shared machines are noise); the count must be exact."""
    from engine.scripting import ScriptRuntime

    runtime = ScriptRuntime(lambda argv: engine.execute(*argv), redis_version=ORACLE_VERSION)
    fn = runtime.compile(b"for i = 1, 100000 do redis.call('INCR', KEYS[1]) end "
                         b"return redis.call('GET', KEYS[1])")
    started = time.perf_counter()
    assert runtime.run(fn, [b"counter"], [], "x") == b"100000"
    elapsed = time.perf_counter() - started
    print(f"\n100000 redis.call('INCR') in {elapsed:.2f}s: {100000 / elapsed:,.0f} calls/s")


def test_struct_matches_python_struct() -> None:
    """The struct library's fixed-size letters agree with Python's struct (standard sizes)."""
    from engine.scripting import lstruct

    assert lstruct.pack(b"<iHd", -5, 7, 0.25) == struct.pack("<iHd", -5, 7, 0.25)
    assert lstruct.unpack(b">hI", struct.pack(">hI", -2, 9)) == (-2, 9, 7)


def test_a_big_heap_left_by_one_script_is_not_the_next_ones_garbage(engine) -> None:
    """Lua 5.1 collects only when the heap has doubled since the last cycle, and never
    when an allocation fails: the garbage of a script that held most of the heap would
    make the next script run out of memory. It is collected when the first ends."""
    from engine.scripting import ScriptRuntime

    limit = 64 << 20
    runtime = ScriptRuntime(lambda argv: engine.execute(*argv), redis_version=ORACLE_VERSION,
                            max_memory=limit)
    hold = runtime.compile(b"local t = {} for i = 1, 45000 do t[i] = string.rep('x', 1000) .. i "
                           b"end return #t")
    churn = runtime.compile(b"local n = 0 for i = 1, 36000 do n = n + #(string.rep('y', 1000) .. i) "
                            b"end return n")
    assert runtime.run(hold, [], [], "x") == 45000
    assert runtime.lua.get_memory_used() < limit // 4
    assert runtime.run(churn, [], [], "x") > 36_000_000
