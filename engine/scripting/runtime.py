"""One Lua 5.1 interpreter per engine, sandboxed as Redis 7 sets its scripting up.

The command layer compiles a script once (`compile`), then runs it per call (`run`) with its
KEYS and ARGV; `redis.call` inside it goes to the `call` callable the runtime was given.
"""
from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from typing import Any

from lupa.lua51 import LuaRuntime

from engine.core.errors import ResponseError
from engine.scripting import bitop, cjson, cmsgpack, lstruct, wide_call
from engine.scripting.convert import LuaToReply, ReplyToLua, format_number_arg, lua_tointeger
from engine.scripting.errors import LuaRaise, ScriptFailure
from engine.scripting.random48 import Random48
from engine.scripting.redis_call import NO_ARGUMENTS, RedisCall
from engine.scripting.script_run import run_script
from engine.scripting.sandbox import HOOK_COUNT, SANDBOX_SOURCE

Call = Callable[[list], Any]
"""argv (a list of bytes) -> the command's reply; raises ResponseError."""

LOG_LEVELS = (logging.DEBUG, logging.DEBUG, logging.INFO, logging.WARNING)   # redis.LOG_*
REPL_FLAGS = {"REPL_NONE": 0, "REPL_AOF": 1, "REPL_SLAVE": 2, "REPL_REPLICA": 2, "REPL_ALL": 3}
BAD_ARGUMENT = b"ERR Lua redis lib command arguments must be strings or integers"
WRONG_ARGUMENTS = b"ERR wrong number or type of arguments"
LUA_MAX_MEMORY = 1 << 30
"""Bytes the Lua heap of one interpreter may hold (Redis's has no limit): a script that
needs more fails with Lua's "not enough memory", and what it held is collected."""
KILLED = b"Script killed by user with SCRIPT KILL..."   # FUNCTION KILL's too, as in Redis 7

log = logging.getLogger("sluice.scripting")


def version_number(version: str) -> int:
    major, minor, patch = (int(part) for part in version.split("."))
    return (major << 16) | (minor << 8) | patch


class ScriptRuntime:
    """The interpreter, its sandboxed globals and the bridge to the engine's commands."""

    def __init__(self, call: Call, *, redis_version: str, call_resp3: Call | None = None,
                 is_command: Callable[[bytes], bool] | None = None,
                 for_functions: bool = False,
                 tick: Callable[[], bytes | None] | None = None,
                 max_memory: int = LUA_MAX_MEMORY) -> None:
        """for_functions: the runtime of FUNCTION's libraries, whose `redis` lacks what
        only EVAL's has (replicate_commands, breakpoint, debug), as in Redis.
        tick: called every HOOK_COUNT Lua instructions (in coroutines too); a text
        (bytes) stops the running script with that error (KILLED: Redis's "Script
        killed by user").
        max_memory: the Lua heap's limit in bytes."""
        call_resp3 = call_resp3 or call
        # what every `redis` has, also that of a library's load (load_library)
        self._constants = {
            b"REDIS_VERSION": redis_version.encode(),
            b"REDIS_VERSION_NUM": version_number(redis_version),
            b"LOG_DEBUG": 0, b"LOG_VERBOSE": 1, b"LOG_NOTICE": 2, b"LOG_WARNING": 3}
        self._is_command = is_command
        self.resp3 = False          # redis.setresp(3) in the running script
        self._random = Random48()
        self.collect_above = max_memory // 4    # heap bytes a script may leave behind
        lua = self.lua = LuaRuntime(encoding=None, unpack_returned_tuples=True,
                                    max_memory=max_memory,
                                    register_eval=False, register_builtins=False,
                                    attribute_filter=_no_attributes)
        table = lua.table_from
        self._table = table
        self._to_lua = ReplyToLua(lua)
        self.lua_to_reply = LuaToReply(lua).convert
        api = self._reply_errors
        wide = lua.eval("package.loadlib")(wide_call.__file__.encode(), wide_call.OPENER)
        if not callable(wide):
            raise ImportError(f"cannot load {wide_call.__file__}: {wide!r}")
        redis_call = RedisCall(self, call, call_resp3, False)
        redis_pcall = RedisCall(self, call, call_resp3, True)
        redis = {
            b"call": wide(redis_call, redis_call.packed),
            b"pcall": wide(redis_pcall, redis_pcall.packed),
            b"error_reply": self._error_reply, b"status_reply": self._status_reply,
            b"sha1hex": api(self._sha1hex), b"log": api(self._log),
            b"setresp": api(self._setresp), b"set_repl": api(self._set_repl),
            b"acl_check_cmd": api(self._acl_check_cmd),
            **self._constants,
            **{name.encode(): flag for name, flag in REPL_FLAGS.items()},
        }
        if not for_functions:
            redis.update({b"replicate_commands": lambda *a: True,
                          b"breakpoint": lambda *a: False, b"debug": lambda *a: None})
        libraries = {name.encode(): self._c_library(module.library)
                     for name, module in (("bit", bitop), ("cjson", cjson),
                                          ("cmsgpack", cmsgpack), ("struct", lstruct))}
        hooks = table({
            b"error_value": _error_value, b"set_where": self._set_where,
            b"random": self._located(self._random.lua_random()),
            b"randomseed": self._located(self._random.lua_randomseed()),
            b"redis": table(redis), b"libraries": table(libraries),
            b"tick": tick, b"hook_count": HOOK_COUNT,
        })
        # the chunk's name marks its frames as ours (the error handler skips them)
        setup = lua.eval("function(src) return loadstring(src, '=sluice') end")(
            SANDBOX_SOURCE.encode())
        (self._compile, self._run, self._run_tables, self._load_library, self._entry,
         self.rearm) = setup(hooks)

    def _set_where(self, where: Any) -> None:
        self._where = where

    def _c_library(self, make: Callable) -> Any:
        """A library table whose functions fail as C library functions do (cjson.new makes
        another, with settings of its own)."""
        functions, constants = make(self.lua)
        located = {name: self._located(f) for name, f in functions.items()}
        if make is cjson.library:
            located[b"new"] = lambda *args: self._c_library(make)
        return self._table({**located, **constants})

    def _located(self, f: Callable) -> Callable:
        """f's failures carry the caller's position, as luaL_error puts it in front."""
        def run(*args: Any) -> Any:
            try:
                return f(*args)
            except LuaRaise as failure:
                if type(failure.value) is bytes:
                    failure.value = self._where() + failure.value
                raise
        return run

    def _reply_errors(self, f: Callable) -> Callable:
        """f's failures as Redis raises its own: an {err=...} table."""
        def run(*args: Any) -> Any:
            try:
                return f(*args)
            except LuaRaise as failure:
                failure.value = self._table({b"err": failure.value})
                raise
        return run

    # -- compiling and running -------------------------------------------------------------

    def compile(self, body: bytes, name: bytes = b"@user_script") -> Any:
        """The script as a Lua function; a syntax error raises Redis's compile error."""
        compiled = self._compile(body, name)
        if type(compiled) is tuple:         # (nil, message)
            raise ResponseError("ERR Error compiling script (new function): "
                                + compiled[1].decode("utf-8", "surrogateescape"))
        return compiled

    def load_library(self, body: bytes, register: Callable) -> None:
        """Runs a library's code (FUNCTION LOAD) with the load API, where
        redis.register_function calls `register(*args)` (which raises LuaRaise with
        an error text); raises ResponseError with Redis's texts when the code does not
        compile or fails."""
        redis = {b"register_function": self._reply_errors(register),
                 b"log": self._reply_errors(self._log), **self._constants}
        result = self._load_library(body, b"@user_function", self._table(redis))
        if result[0] is True:
            return
        if result[0] is None:
            raise ResponseError("ERR Error compiling function: "
                                + result[1].decode("utf-8", "surrogateescape"))
        failure = self.failure(result[1])
        raise ResponseError(f"ERR Error registering functions: {failure.message}")

    def failure(self, err: Any) -> ScriptFailure:
        """What the error handler made of a failed run; a message it never saw (Lua runs
        no handler when memory runs out) comes with the heap collected."""
        if type(err) is bytes:
            self.lua.gccollect()
        return ScriptFailure.from_lua(err)

    def function_entry(self, callback: Any) -> Any:
        """A registered function as `run` runs it (keys and args as its parameters)."""
        return self._entry(callback)

    def run(self, fn: Any, keys: list, args: list, name: str) -> Any:
        """Runs a compiled script with its KEYS and ARGV: its reply, or raises
        ResponseError with the text Redis prints (`name`: the sha or the function)."""
        return run_script(self, fn, keys, args, name)

    # -- what scripts call -----------------------------------------------------------------

    def numbers_formatted(self, args: tuple) -> list:
        """redis.call's arguments with numbers spelled as Redis spells them; other
        types raise (redis_call.pyx runs redis.call)."""
        argv = []
        for arg in args:
            t = type(arg)
            if t is bytes:
                argv.append(arg)
            elif t is int or t is float:
                argv.append(format_number_arg(arg))
            else:
                raise LuaRaise(BAD_ARGUMENT)
        return argv

    def reply_to_lua(self, reply: Any, resp3: bool) -> Any:
        """A command's reply as the Lua value redis.call returns."""
        return self._to_lua.convert(reply, resp3)

    def _error_reply(self, *args: Any) -> Any:
        if len(args) != 1 or type(args[0]) is not bytes:
            return self._table({b"err": WRONG_ARGUMENTS})
        return self._table({b"err": error_code_text(args[0])})

    def _status_reply(self, *args: Any) -> Any:
        if len(args) != 1 or type(args[0]) is not bytes:
            return self._table({b"err": WRONG_ARGUMENTS})
        return self._table({b"ok": args[0]})

    def _sha1hex(self, *args: Any) -> Any:
        if len(args) != 1:
            raise LuaRaise(b"ERR wrong number of arguments")
        data = args[0]
        if type(data) is not bytes:
            data = format_lua_tostring(data)
        return hashlib.sha1(data).hexdigest().encode()

    def _log(self, *args: Any) -> Any:
        if len(args) < 2:
            raise LuaRaise(b"ERR redis.log() requires two arguments or more.")
        level = lua_tointeger(args[0])
        if level is None:
            raise LuaRaise(b"ERR First argument must be a number (log level).")
        if not 0 <= level <= 3:
            raise LuaRaise(b"ERR Invalid debug level.")
        words = [format_lua_tostring(a) if type(a) is not bytes else a for a in args[1:]]
        log.log(LOG_LEVELS[level], "%s", b" ".join(words).decode("utf-8", "replace"))
        return None

    def _setresp(self, *args: Any) -> Any:
        if len(args) != 1:
            raise LuaRaise(b"ERR redis.setresp() requires one argument.")
        version = lua_tointeger(args[0])
        if version not in (2, 3):
            raise LuaRaise(b"ERR RESP version must be 2 or 3.")
        self.resp3 = version == 3
        return None

    def _set_repl(self, *args: Any) -> Any:
        if len(args) != 1:
            raise LuaRaise(b"ERR redis.set_repl() requires two arguments.")
        flags = lua_tointeger(args[0])
        if flags is None or flags & ~3:
            raise LuaRaise(b"ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, "
                           b"REPL_ALL or REPL_NONE.")
        return None

    def _acl_check_cmd(self, *args: Any) -> Any:
        if not args:
            raise LuaRaise(NO_ARGUMENTS)
        name = args[0]
        if type(name) is not bytes or (self._is_command and not self._is_command(name)):
            raise LuaRaise(b"ERR Invalid command passed to redis.acl_check_cmd()")
        return True


def error_code_text(msg: bytes) -> bytes:
    """An error text as redis.error_reply stores it: a leading dash goes, and a text
    whose first word is not followed by a space (no code) gets ERR ("a b" keeps code a)."""
    if msg[:1] == b"-":
        msg = msg[1:]
    if b" " in msg:
        return msg
    return b"ERR " + msg


def format_lua_tostring(value: Any) -> bytes:
    """What lua_tolstring gives for a number (%.14g); other non-strings give nothing."""
    if type(value) in (int, float):
        return b"%.14g" % value
    return b""


def _no_attributes(obj: Any, name: Any, is_setting: bool) -> Any:
    """Scripts get no way into the Python objects behind the library functions."""
    raise AttributeError(name)


def _error_value(err: Any) -> Any:
    """The Lua error a Python function meant to raise (other exceptions are our bugs: they
    surface as an error text instead of a crash)."""
    if isinstance(err, LuaRaise):
        return err.value
    if isinstance(err, BaseException):
        return f"{type(err).__name__}: {err}".encode()
    return err
