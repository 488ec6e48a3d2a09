"""Lua scripts from a grammar, sent to a real sluice-server: none may take the server away.

The grammar mixes what hostile code reaches for: deep and self-referencing tables,
metatables whose __index/__newindex/__call/__tostring/__eq/__lt/__concat/__len call
redis.call or fail, coroutines (nested, yielding across pcall, resumed after death),
cjson/cmsgpack/struct/bit at their limits and with malformed input, huge string.rep and
string.format, unpack of many values, error() with every kind of value, redis.call with
odd arguments, redis.error_reply/status_reply shapes, return values of every Lua type,
and endless loops (plain, in coroutines, under pcall). Each runs as EVAL, as a function
(FUNCTION LOAD + FCALL) or as a library's load code. Each must answer within
busy-reply-threshold + slack or be stopped by SCRIPT KILL / FUNCTION KILL from a second
client. redis-server 7.0 runs the same scripts (but the endless ones) and the replies are
compared, but for the deliberate differences `DIFFERENCES` names. After the run the server
answers PING within 1 s, its log holds no Python traceback, and SAVE + kill -9 + restart
loads the data back.

Not covered: C library calls that run long without a hook (string.rep of a gigabyte
takes seconds, as in Redis); the grammar keeps them below that.

About 60 s in CI; SLUICE_FUZZ_SCALE=10 runs ten times as many scripts.
"""
from __future__ import annotations

import os
import random
import re
import socket
import time

from lua_wire import END, MARK, ask, encode
from preloaded import kill_and_wait
from raw_io import raw_socket
from servers import RedisServer, SluiceServer

SCALE = float(os.environ.get("SLUICE_FUZZ_SCALE", "1"))
SCRIPTS = int(250 * SCALE)
THRESHOLD_MS = 200
SLACK = 3.0             # seconds past the threshold a script may take to answer (shared CI)
SEED = int(os.environ.get("SLUICE_FUZZ_SEED", "29"))

# Replies that differ from redis-server 7.0 on purpose, by a marker in Sluice's reply.
DIFFERENCES = {
    b"reached lua stack limit": "a reply nests 990 levels deep in Sluice, about 8,000 in Redis",
    b"not enough memory": "Sluice's Lua heap is limited to 1 GiB; Redis's is not",
}
# scripts redis-server 7.0 itself does not survive (it crashes): Sluice must answer them
AFTER_CRASH = "redis-server lost its data when it crashed before: replies may differ"
ARGUMENT_ERROR = re.compile(rb"to '[^']*' \(|got (nil|no value)\)")
NAMING = ("a library function called through pcall: Lua names it '?', Sluice by its name "
          "(and an argument left out is nil)")
POSITION = re.compile(rb"user_\w+:\d+: |, on @user_\w+:\d+\.")
TAIL_CALL = ("a base function the sandbox wraps in Lua (string.rep, rawget, setmetatable...), "
             "tail-called with a bad argument: the error has no script position")
ADDRESS = re.compile(rb"0x[0-9a-f]+")      # tostring of a table or function
REDIS_CRASHES = "redis-server 7.0 crashed (connection lost)"


class Grammar:
    """Random Lua source: `script()` is a whole script's body."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def pick(self, *options):
        choice = self.rng.choice(options)
        return choice() if callable(choice) else choice

    def number(self) -> str:
        return self.pick("0", "-1", "1.5", "2^53", "2^63", "-2^63", "1/0", "-(1/0)", "0/0",
                         "1e308", "3", "-7.25", str(self.rng.randint(-10**6, 10**6)))

    def string(self) -> str:
        return self.pick("'a'", "''", "'\\0x\\255'", "string.rep('x', 10)", "'12'",
                         "string.rep('ab', 1000)", "'{\"a\":1}'", "'\\145\\145\\1'")

    def scalar(self) -> str:
        return self.pick(self.number, self.string, "nil", "true", "false")

    def table(self, depth: int) -> str:
        if depth > 2:
            return "{}"
        return self.pick(
            lambda: "{" + ", ".join(self.value(depth + 1) for _ in range(self.rng.randint(0, 4))) + "}",
            lambda: "{err=" + self.string() + "}", lambda: "{ok=" + self.string() + "}",
            lambda: "{double=" + self.number() + "}", "{err={}}", "{ok=1}",
            lambda: "{" + self.value(depth + 1) + ", nil, " + self.value(depth + 1) + "}",
            lambda: "{a=" + self.value(depth + 1) + ", [1]=" + self.value(depth + 1) + "}",
            lambda: "(function() local t={} local c=t for i=1,%d do c[1]={%s} c=c[1] end "
                    "return t end)()" % (self.rng.choice([5, 100, 900, 985, 3000]),
                                         self.pick("", "'x'")),
            "(function() local t={} t[1]=t return t end)()",
            "(function() local t={'a'} t[2]=t return t end)()",
            lambda: self.metatable(depth))

    def metatable(self, depth: int) -> str:
        event = self.pick("__index", "__newindex", "__call", "__tostring", "__eq", "__lt",
                          "__concat", "__len", "__le", "__unm")
        body = self.pick("return redis.call('incr', 'mt')", "error('meta')",
                         "error({err='META'})", "return 1", "return nil",
                         "return redis.call('nosuch')", "return {}")
        return "setmetatable({%s}, {%s=function(...) %s end})" % (
            self.pick("", "1, 2", "err='x'", "ok='y'"), event, body)

    def library_call(self) -> str:
        return self.pick(
            lambda: "cjson.encode(" + self.value(1) + ")",
            lambda: "cjson.decode(" + self.pick(self.string, "'[1,2,{\"a\":null}]'", "'[1,'",
                                                "'{\"a\" 1}'", "string.rep('[', 9000)",
                                                "string.rep('[', 500) .. string.rep(']', 500)",
                                                "'\\\"\\\\u12'", "'[1e999]'", "'nan'") + ")",
            lambda: "cjson.encode_max_depth(" + self.pick("1", "100000000", "2147483647", "0",
                                                           "-1", "'x'") + ")",
            lambda: "cjson.decode_max_depth(" + self.pick("1", "100000000", "2147483647") + ")",
            lambda: "cmsgpack.pack(" + self.value(1) + ")",
            lambda: "cmsgpack.unpack(" + self.pick(self.string, "string.rep('\\145', 1000) .. '\\1'",
                                                   "'\\220\\255\\255'", "'\\193'", "''") + ")",
            lambda: "cmsgpack.unpack(cmsgpack.pack(" + self.value(1) + "))",
            lambda: "struct.pack(" + self.pick("'>I4'", "'<i8'", "'s'", "'c0'", "'!4i2'",
                                              "'x'", "'z'", "'f'", "'c99999999'") + ", "
                    + self.scalar() + ")",
            lambda: "struct.unpack(" + self.pick("'>I4'", "'i8'", "'c0'", "'s'", "'z'", "'c4'",
                                                "'!8d'") + ", " + self.string() + ")",
            lambda: "bit.band(" + self.number() + ", " + self.number() + ")",
            lambda: "bit.tohex(" + self.number() + ", " + self.pick("-8", "100", "0") + ")",
            lambda: "bit.lshift(" + self.number() + ", " + self.number() + ")",
            lambda: "redis.sha1hex(" + self.scalar() + ")",
            # (not past 2^27 repeats: string.rep builds in C, where no hook runs, and a result
            # near the heap's limit holds the server for seconds; see the module docstring)
            lambda: "string.rep('x', " + self.pick("2^31", "-1", "2^20", "2^27") + ")",
            lambda: "string.format('" + self.pick("%99999d", "%5.2f", "%q", "%s%s", "%c",
                                                  "%d") + "', " + self.scalar() + ")",
            lambda: "#table.concat({string.rep('y', 2^20), string.rep('z', 2^20)}, "
                    + self.string() + ")",
            lambda: "#{unpack((function() local t={} for i=1,%d do t[i]=i end return t end)())}"
                    % self.rng.choice([10, 7999, 8000, 100000]),
            lambda: "select('#', unpack({1, 2, 3}, 1, " + self.pick("3", "1e6", "-5", "2^31") + "))",
            lambda: "tostring(" + self.value(1) + ")",
            lambda: "tonumber(" + self.scalar() + ")",
            lambda: "loadstring(" + self.pick("'return 1'", "'x ='", "string.dump(print)",
                                              "'\\27Lua'") + ")",
            lambda: "rawget(_G, " + self.pick("'os'", "'io'", "'debug'", "'getfenv'", "'KEYS'") + ")",
            lambda: self.pick("getfenv", "setfenv", "os.exit", "io", "debug.sethook",
                              "dofile", "require", "newproxy", "os.execute", "_G.x"),
            lambda: "redis.call(" + self.call_args() + ")",
            lambda: "redis.pcall(" + self.call_args() + ")",
            lambda: "redis.error_reply(" + self.pick(self.scalar, "", "'a', 'b'") + ")",
            lambda: "redis.status_reply(" + self.pick(self.scalar, "", "{}") + ")",
            lambda: "redis.setresp(" + self.pick("2", "3", "4", "'x'") + ")",
            lambda: "redis.log(redis.LOG_NOTICE, " + self.scalar() + ")",
            lambda: "{pcall(error, " + self.value(1) + ")}",
            lambda: "{xpcall(function() error(" + self.value(1) + ") end, function(e) return "
                    + self.pick("e", "redis.call('incr', 'xp')", "error('again')", "{e}") + " end)}",
            lambda: "select(2, pcall(" + self.pick("error", "redis.call", "cjson.decode",
                                                  "setmetatable") + "))",
            lambda: "(function() local function f(n) if n == 0 then return 0 end "
                    "return pcall(f, n - 1) end return f(%d) end)()" % self.rng.choice([10, 150, 250, 10000]),
            lambda: "(function() local function f(n) return f(n + 1) + 1 end return f(1) end)()",
            lambda: self.coroutine())

    def call_args(self) -> str:
        return self.pick("'ping'", "", "'get'", "'set', 'k', " + self.scalar(), "'set', 'k', {}",
                         "'nosuch'", "'get', 'k', 'extra'", "'incr', 'k'", "'lpush', 'l', 1, 2.5",
                         "'eval', 'return 1', 0", "'get', nil", "'hset', 'h', 'f', " + self.scalar(),
                         "'xadd', 's', '*', 'f', 'v'", "'incrbyfloat', 'f', " + self.number(),
                         "'del', 'l'", "'lrange', 'l', 0, -1", "'blpop', 'l', 0",
                         "'set', 'big', string.rep('v', 10000)", "1", "{}",
                         "'lpush', 'u', unpack((function() local t={} for i=1,%d do t[i]=i end "
                         "return t end)())" % self.rng.choice([10, 1000]))

    def coroutine(self) -> str:
        return self.pick(
            lambda: "coroutine.wrap(function() coroutine.yield(" + self.value(1) + ") end)()",
            lambda: "{coroutine.resume(coroutine.create(function() error(" + self.value(1) + ") end))}",
            "(function() local f = coroutine.wrap(function() end) f() return f() end)()",
            "(function() local co = coroutine.create(function() end) coroutine.resume(co) "
            "return {coroutine.resume(co)} end)()",
            "coroutine.wrap(function() return pcall(coroutine.yield, 1) end)()",
            "coroutine.wrap(function() return coroutine.wrap(function() "
            "return coroutine.wrap(function() return redis.call('incr', 'co') end)() end)() end)()",
            "{coroutine.resume(coroutine.running())}", "coroutine.status(coroutine.create(print))",
            "coroutine.yield(1)")

    def value(self, depth: int = 0) -> str:
        if depth > 3:
            return self.scalar()
        return self.pick(self.scalar, lambda: self.table(depth), self.library_call,
                         lambda: self.library_call())

    def statement(self) -> str:
        return self.pick(
            lambda: "local v = " + self.value(),
            lambda: "pcall(function() return " + self.value() + " end)",
            lambda: "redis.call('set', 'last', tostring(" + self.value(2) + "))",
            lambda: "x = " + self.value(),
            lambda: "local t = " + self.table(1) + " t.k = 1",
            lambda: "local t = " + self.metatable(1) + " local _ = t.x, t(), tostring(t), "
                    "#t, t .. 'a', t == t, -t",
            lambda: "error(" + self.value(2) + ")")

    def script(self) -> str:
        lines = [self.statement() for _ in range(self.rng.randint(0, 3))]
        lines.append("return " + self.value())
        return "\n".join(lines)

    def endless(self) -> str:
        """A script that never ends by itself (and writes nothing: SCRIPT KILL stops it)."""
        return self.pick(
            "while true do end",
            "coroutine.wrap(function() while true do end end)()",
            "while true do pcall(function() while true do end end) end",
            "local co = coroutine.create(function() while true do coroutine.yield() end end)\n"
            "while true do coroutine.resume(co) end",
            "while true do pcall(coroutine.wrap(function() local t = {} while true do "
            "t[#t % 1000 + 1] = {} end end)) end",
            "local t = setmetatable({}, {__index = function(t, k) return t[k + 1] end}) "
            "while true do pcall(function() return t[1] end) end",
            "xpcall(function() while true do end end, function(e) while true do end end)")


class Session:
    """A sluice-server (or redis-server) and the client that sends the scripts."""

    def __init__(self, server) -> None:
        self.server = server
        self.sock = raw_socket(server.port, 60)

    def send(self, *argv, budget: float) -> bytes:
        """The reply, or None when none came within `budget` seconds."""
        self.sock.sendall(encode(*argv) + encode(MARK))
        self.sock.settimeout(budget)
        data = b""
        try:
            while not data.endswith(END):
                chunk = self.sock.recv(1 << 20)
                if not chunk:
                    raise ConnectionError("closed")
                data += chunk
        except socket.timeout:
            return None, data
        return data[:-len(END)], b""

    def finish(self, partial: bytes) -> bytes:
        """After a kill: the rest of the stopped script's reply."""
        self.sock.settimeout(60)
        data = partial
        while not data.endswith(END):
            chunk = self.sock.recv(1 << 20)
            assert chunk, "the server closed the connection after a kill"
            data += chunk
        return data[:-len(END)]


def killed(session: Session, partial: bytes, kill: str) -> bytes:
    """Stops the running script from a second client; its client's reply."""
    with raw_socket(session.server.port, 30) as killer:
        answer = ask(killer, kill, "KILL")
    assert answer == b"+OK\r\n", answer
    return session.finish(partial)


def run_on_sluice(sluice: Session, grammar: Grammar, rng: random.Random, n: int) -> list:
    """(kind, request, reply) for each script; kills what runs past its time."""
    budget = THRESHOLD_MS / 1000 + SLACK
    out = []
    for i in range(n):
        roll = rng.random()
        endless = roll < 0.04
        body = grammar.endless() if endless else grammar.script()
        if rng.random() < 0.7:
            kind, request, kill = "eval", (("EVAL", body, 0),), "SCRIPT"
        elif rng.random() < 0.8:
            library = f"#!lua name=fz{i}\nredis.register_function('fz{i}', function(KEYS, ARGV)\n{body}\nend)"
            load = ("FUNCTION", "LOAD", "REPLACE", library)
            reply, _ = sluice.send(*load, budget=budget)
            assert reply is not None and reply.startswith(b"$"), (library, reply)
            kind, request, kill = "fcall", ("FCALL", f"fz{i}", 0), "FUNCTION"
            request = (load, request)
        else:
            library = f"#!lua name=top{i}\n{body}\nredis.register_function('top{i}', function() end)"
            kind, request, kill = "load", (("FUNCTION", "LOAD", "REPLACE", library),), None
        start = time.monotonic()
        reply, partial = sluice.send(*request[-1], budget=budget)
        if reply is None:
            assert kill is not None, f"FUNCTION LOAD did not time out: {body}"
            try:
                reply = killed(sluice, partial, kill)
            except (OSError, AssertionError) as exc:
                raise AssertionError(f"{kind} not stopped by {kill} KILL: {body!r}") from exc
        elif endless and kind != "load":
            raise AssertionError(f"an endless script answered: {body!r} -> {reply[:200]!r}")
        assert time.monotonic() - start < 120
        out.append((kind, request, reply, endless))
    return out


def run_on_redis(redis_server, requests: list) -> list:
    """redis-server 7.0's replies to the same requests (None for the endless ones, and
    REDIS_CRASHES where it died: it is started again)."""
    replies = []
    session = Session(redis_server)
    for kind, request, _, endless in requests:
        if endless:
            replies.append(None)
            continue
        try:
            for argv in request:
                reply, _ = session.send(*argv, budget=60)
        except (ConnectionError, OSError):
            replies.append(REDIS_CRASHES)
            redis_server.close()
            redis_server.start()
            session = Session(redis_server)
            continue
        replies.append(reply)
    return replies


def mismatches(requests: list, redis_replies: list) -> list:
    """(request, Sluice's reply, Redis's reply, reason) of each reply that differs."""
    out = []
    crashed = False
    for (kind, request, reply, _), theirs in zip(requests, redis_replies):
        if theirs is None or (theirs != REDIS_CRASHES
                              and ADDRESS.sub(b"0x?", theirs) == ADDRESS.sub(b"0x?", reply)):
            continue
        reason = next((why for marker, why in DIFFERENCES.items() if marker in reply), None)
        if theirs == REDIS_CRASHES:
            reason = REDIS_CRASHES
            crashed = True
        elif reason is None and crashed:
            reason = AFTER_CRASH
        elif reason is None and ARGUMENT_ERROR.sub(b"", theirs) == ARGUMENT_ERROR.sub(b"", reply):
            reason = NAMING
        elif reason is None and POSITION.sub(b"", theirs) == POSITION.sub(b"", reply):
            reason = TAIL_CALL
        out.append((request, reply[:300], theirs[:300] if isinstance(theirs, bytes) else theirs,
                    reason))
    return out


def test_fuzz_lua_scripts_never_take_the_server_away():
    rng = random.Random(SEED)
    grammar = Grammar(rng)
    args = ["--save", "", "--appendonly", "yes", "--busy-reply-threshold", str(THRESHOLD_MS)]
    with SluiceServer(args) as server:
        session = Session(server)
        requests = run_on_sluice(session, grammar, rng, SCRIPTS)
        start = time.monotonic()
        with raw_socket(server.port, 1.0) as probe:
            assert ask(probe, "PING", timeout=1.0) == b"+PONG\r\n"
        assert time.monotonic() - start < 1.0
        assert "Traceback" not in server.log_text()
        keys = ask(session.sock, "DBSIZE")
        assert ask(session.sock, "SAVE") == b"+OK\r\n"
        kill_and_wait([server.proc.pid])
        server.start()
        with raw_socket(server.port, 30) as after:
            assert ask(after, "DBSIZE") == keys
            assert ask(after, "PING") == b"+PONG\r\n"
        assert "Traceback" not in server.log_text()
    with RedisServer(["--save", ""]) as oracle:
        redis_replies = run_on_redis(oracle, requests)
    found = mismatches(requests, redis_replies)
    unexplained = [m for m in found if m[3] is None]
    for request, ours, theirs, reason in found:
        print(f"{request[-1]!r}\n  sluice: {ours!r}\n  redis:  {theirs!r}\n  reason: {reason}")
    print(f"{len(requests)} scripts; {sum(r[3] for r in requests)} endless (killed or timed "
          f"out); {len(found)} replies differ from redis-server 7.0, "
          f"{len(unexplained)} without a reason")
    assert unexplained == []
