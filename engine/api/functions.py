"""FUNCTION and FCALL/FCALL_RO: libraries of Lua functions, as Redis 7.0 keeps them.

One `Functions` per engine (Engine.functions, made on first use) holds the libraries by
name and their functions by name (function names are case-insensitive, library names are
not). Functions live in a Lua interpreter of their own, as in Redis (SCRIPT FLUSH leaves
them alone), run by a `FunctionRunner`: EVAL's `Scripting` class, so FCALL takes EVAL's run
path (the caller's session, the MULTI/EXEC bracket of its effects, the refusals of
redis.call, and whatever watches a running script).

FUNCTION is a command of the engine layer: the AOF replays FUNCTION LOAD/DELETE/FLUSH/
RESTORE as the commands themselves (the effect of each is the command, as Redis
propagates it), and the embedded Engine runs them. FCALL runs in the session, like EVAL.
Persistence keeps the libraries' code through Engine.function_codes and
Engine.restore_function_codes, without knowing what it holds.
"""
from __future__ import annotations

import re
import sys
from time import monotonic
from typing import TYPE_CHECKING, Any, Optional

from lupa.lua51 import lua_type

from engine.api.script_runner import Script, keys_and_args
from engine.api.scripts import BUSY_EVAL, SHEBANG_FLAGS, Scripting, kill_script, running_script
from engine.commands.table import client_command, command
from engine.formats.dump_payload import BodyReader, PayloadError, check, encode_string, frame
from engine.core.errors import OOM, ResponseError
from engine.core.glob import match
from engine.resp.reply import OK, Status
from engine.scripting.errors import LuaRaise

if TYPE_CHECKING:  # pragma: no cover
    from engine.api.session import Session

ENGINE_NAME = b"LUA"
FUNCTION_OPCODE = 245          # RDB_OPCODE_FUNCTION2: one library's code follows
PRE_GA_OPCODE = 246            # RDB_OPCODE_FUNCTION_PRE_GA (7.0 release candidates)
VALID_NAME = re.compile(rb"[A-Za-z0-9_]+")

BAD_NAME = ("ERR Library names can only contain letters, numbers, or underscores(_) and "
            "must be at least one character long")
FUNCTION_NOT_FOUND = "ERR Function not found"
BAD_NUMKEYS = "ERR Bad number of keys provided"
PAYLOAD_WRONG = "ERR DUMP payload version or checksum are wrong"
BAD_POLICY = ("ERR Wrong restore policy given, value should be either FLUSH, APPEND or "
              "REPLACE.")
FLUSH_OPTION = "ERR FUNCTION FLUSH only supports SYNC|ASYNC option"
SYNTAX_OF = "ERR unknown subcommand or wrong number of arguments for '%s'. Try FUNCTION HELP."

# redis.register_function's errors (raised in the library's code)
REGISTER_ARITY = b"ERR wrong number of arguments to redis.register_function"
SINGLE_NOT_TABLE = (b"ERR calling redis.register_function with a single argument is only "
                    b"applicable to Lua table (representing named arguments).")
NAME_NOT_STRING = b"ERR first argument to redis.register_function must be a string"
CALLBACK_NOT_FUNCTION = b"ERR second argument to redis.register_function must be a function"
KEY_NOT_STRING = b"ERR named argument key given to redis.register_function is not a string"
NAMED = {
    b"function_name": (b"string", b"ERR function_name argument given to "
                                  b"redis.register_function must be a string"),
    b"description": (b"string", b"ERR description argument given to redis.register_function "
                                b"must be a string"),
    b"callback": (b"function", b"ERR callback argument given to redis.register_function "
                               b"must be a function"),
    b"flags": (b"table", b"ERR flags argument to redis.register_function must be a table "
                         b"representing function flags"),
}
UNKNOWN_ARGUMENT = b"ERR unknown argument given to redis.register_function"
NO_NAME = b"ERR redis.register_function must get a function name argument"
NO_CALLBACK = b"ERR redis.register_function must get a callback argument"
UNKNOWN_FLAG = b"ERR unknown flag given"
DUPLICATE_IN_LIBRARY = b"ERR Function already exists in the library"


class Function:
    """A registered function: its entry (what the runner runs), flags, description and
    the library that registered it."""

    __slots__ = ("name", "library", "entry", "flags", "description", "script")

    def __init__(self, name: bytes, library: bytes, entry: Any, flags: frozenset,
                 description: Optional[bytes]) -> None:
        self.name = name
        self.library = library
        self.entry = entry
        self.flags = flags
        self.description = description
        self.script = Script(entry, flags)      # the read-only rules of a shebang script


class Library:
    __slots__ = ("name", "code", "functions")

    def __init__(self, name: bytes, code: bytes) -> None:
        self.name = name
        self.code = code
        self.functions: dict[bytes, Function] = {}      # name -> function


def library_metadata(code: bytes) -> tuple[bytes, int]:
    """The library name of a `#!lua name=<name>` first line, and where the Lua code starts
    (that line's end, so that line numbers stay), with Redis's errors."""
    if not code.startswith(b"#!"):
        raise ResponseError("ERR Missing library metadata")
    end = code.find(b"\n")
    if end < 0:
        raise ResponseError("ERR Invalid library metadata")
    parts = code[:end].split()
    name = None
    for part in parts[1:]:
        if part[:5].lower() != b"name=":
            raise ResponseError("ERR Invalid metadata value given: "
                                + part.decode("utf-8", "replace"))
        if name is not None:
            raise ResponseError(
                "ERR Invalid metadata value, name argument was given multiple times")
        name = part[5:]
    if name is None:
        raise ResponseError("ERR Library name was not given")
    if not VALID_NAME.fullmatch(name):
        raise ResponseError(BAD_NAME)
    engine = parts[0][2:]
    if engine.upper() != ENGINE_NAME:
        raise ResponseError(f"ERR Engine '{engine.decode('utf-8', 'replace')}' not found")
    return name, end


class FunctionRunner(Scripting):
    """EVAL's runner with a Lua state of its own, whose `redis` is that of functions."""

    for_functions = True


class Functions:
    """The libraries of one engine and the interpreter their functions run in."""

    def __init__(self, engine: Any, redis_version: str) -> None:
        self.runner = FunctionRunner(engine, redis_version)
        self.libraries: dict[bytes, Library] = {}
        self.functions: dict[bytes, Function] = {}         # lower-case name -> function

    # -- making libraries ------------------------------------------------------------

    def compile(self, code: bytes) -> Library:
        """A library from its code, its functions registered (not yet installed)."""
        name, start = library_metadata(code)
        library = Library(name, code)
        runtime = self.runner.runtime

        def register(*args: Any) -> None:
            fn_name, callback, flags, description = _registration(args)
            if not VALID_NAME.fullmatch(fn_name):
                raise LuaRaise(BAD_NAME.encode())
            if fn_name in library.functions:
                raise LuaRaise(DUPLICATE_IN_LIBRARY)
            library.functions[fn_name] = Function(fn_name, name, runtime.function_entry(callback),
                                              flags, description)
        self.runner.load_library(code[start:], register)
        if not library.functions:
            raise ResponseError("ERR No functions registered")
        return library

    def _check_collisions(self, libraries: list, replaced: set) -> None:
        """Refuses a function whose name (in any case) a function of another library
        has: one that stays, or one of the libraries coming in. (Within a library only
        the exact name must be new, as in Redis 7.0.)"""
        incoming: dict[bytes, Function] = {}
        for library in libraries:
            for fn in library.functions.values():
                key = fn.name.lower()
                other = incoming.get(key)
                if other is None:
                    other = self.functions.get(key)
                    if other is not None and other.library in replaced:
                        other = None
                if other is not None and other.library != fn.library:
                    raise ResponseError(f"ERR Function {fn.name.decode('utf-8', 'replace')} "
                                        "already exists")
            for fn in library.functions.values():
                incoming.setdefault(fn.name.lower(), fn)

    def _install(self, library: Library) -> None:
        old = self.libraries.pop(library.name, None)
        if old is not None:
            for name in old.functions:
                self.functions.pop(name.lower(), None)
        self.libraries[library.name] = library
        for name, fn in library.functions.items():
            self.functions.setdefault(name.lower(), fn)     # (the first of names that differ in case)

    def load(self, code: bytes, replace: bool) -> bytes:
        """FUNCTION LOAD: the library's name."""
        name, _ = library_metadata(code)
        if name in self.libraries and not replace:
            raise ResponseError(f"ERR Library '{name.decode('utf-8', 'replace')}' already exists")
        library = self.compile(code)
        self._check_collisions([library], {name})
        self._install(library)
        return name

    def delete(self, name: bytes) -> None:
        library = self.libraries.pop(name, None)
        if library is None:
            raise ResponseError("ERR Library not found")
        for name in library.functions:
            self.functions.pop(name.lower(), None)

    def flush(self) -> None:
        self.libraries = {}
        self.functions = {}

    def cache_bytes(self) -> int:
        """What the libraries hold outside the Lua heap: their code and names, their
        functions' names, descriptions and handles, and the dicts that find them
        (MEMORY STATS functions.caches)."""
        total = sys.getsizeof(self.libraries) + sys.getsizeof(self.functions)
        for library in self.libraries.values():
            total += (sys.getsizeof(library) + sys.getsizeof(library.name)
                      + sys.getsizeof(library.code) + sys.getsizeof(library.functions))
            for fn in library.functions.values():
                total += (sys.getsizeof(fn) + sys.getsizeof(fn.name) + sys.getsizeof(fn.script)
                          + (sys.getsizeof(fn.description) if fn.description is not None else 0))
        return total

    # -- dump and restore --------------------------------------------------------------

    def codes(self) -> list:
        return [library.code for library in self.libraries.values()]

    def dump(self) -> bytes:
        return frame(b"".join(bytes((FUNCTION_OPCODE,)) + encode_string(code)
                              for code in self.codes()))

    def restore(self, payload: bytes, policy: bytes) -> None:
        """FUNCTION RESTORE: the payload's libraries (checked among themselves first),
        then the policy: FLUSH the others, APPEND (a name taken aborts) or REPLACE."""
        try:
            check(payload)
        except PayloadError:
            raise ResponseError(PAYLOAD_WRONG) from None
        reader = BodyReader(payload)
        incoming: dict[bytes, Library] = {}
        while not reader.at_end():
            opcode = reader.byte() if not reader.at_end() else None
            if opcode == PRE_GA_OPCODE:
                code = _pre_ga_code(reader)
            elif opcode == FUNCTION_OPCODE:
                code = _read(reader.string, "library payload")
            else:
                raise ResponseError("ERR given type is not a function")
            library = self.compile(code)
            if library.name in incoming:
                raise ResponseError(
                    f"ERR Library '{library.name.decode('utf-8', 'replace')}' already exists")
            incoming[library.name] = library
        if policy == b"append":
            for name in incoming:
                if name in self.libraries:
                    raise ResponseError(
                        f"ERR Library {name.decode('utf-8', 'replace')} already exists")
        replaced = set(self.libraries) if policy == b"flush" else set(incoming)
        self._check_collisions(list(incoming.values()), replaced)
        if policy == b"flush":
            self.flush()
        for library in incoming.values():
            self._install(library)

    # -- FCALL --------------------------------------------------------------------------

    def fcall(self, session: "Session", argv: list, readonly: bool) -> Any:
        """FCALL / FCALL_RO function numkeys key... arg...: the function's reply."""
        fn = self.functions.get(argv[1].lower())
        if fn is None:
            raise ResponseError(FUNCTION_NOT_FOUND)
        keys, args = keys_and_args(argv, BAD_NUMKEYS)
        if fn.script.refused_for_memory(self.runner.engine):
            raise ResponseError(OOM)
        return self.runner.run(session, fn.entry, fn.name.decode("utf-8", "replace"), keys,
                                args, fn.script.readonly(readonly), argv)


def _read(read: Any, what: str) -> Any:
    try:
        return read()
    except PayloadError:
        raise ResponseError(f"ERR Failed loading {what}") from None


def _pre_ga_code(reader: BodyReader) -> bytes:
    """A library in the format of 7.0's release candidates (name, engine, optional
    description, code), as the code of the `#!` form."""
    name = _read(reader.string, "library name")
    engine = _read(reader.string, "engine name")
    if _read(reader.length, "library description indicator"):
        _read(reader.string, "library description")
    blob = _read(reader.string, "library blob")
    return b"#!" + engine + b" name=" + name + b"\n" + blob


def _registration(args: tuple) -> tuple[bytes, Any, frozenset, Optional[bytes]]:
    """redis.register_function's arguments: (name, callback) or one table of named
    arguments; (name, callback, flags, description) with Redis's errors."""
    if not 1 <= len(args) <= 2:
        raise LuaRaise(REGISTER_ARITY)
    if len(args) == 2:
        name, callback = args
        name = _lua_string(name)
        if name is None:
            raise LuaRaise(NAME_NOT_STRING)
        if lua_type(callback) != "function":
            raise LuaRaise(CALLBACK_NOT_FUNCTION)
        return name, callback, frozenset(), None
    table = args[0]
    if lua_type(table) != "table":
        raise LuaRaise(SINGLE_NOT_TABLE)
    named: dict = {}
    for key, value in table.items():
        key = _lua_string(key)
        if key is None:
            raise LuaRaise(KEY_NOT_STRING)
        rule = NAMED.get(key)
        if rule is None:
            raise LuaRaise(UNKNOWN_ARGUMENT)
        kind, error = rule
        if kind == b"string":
            value = _lua_string(value)
            if value is None:
                raise LuaRaise(error)
        elif lua_type(value) != kind.decode():
            raise LuaRaise(error)
        named[key] = value
    if b"function_name" not in named:
        raise LuaRaise(NO_NAME)
    if b"callback" not in named:
        raise LuaRaise(NO_CALLBACK)
    flags = set()
    for flag in named[b"flags"].values() if b"flags" in named else ():
        if type(flag) is not bytes or flag not in SHEBANG_FLAGS:
            raise LuaRaise(UNKNOWN_FLAG)
        flags.add(flag)
    return named[b"function_name"], named[b"callback"], frozenset(flags), \
        named.get(b"description")


def _lua_string(value: Any) -> Optional[bytes]:
    """A Lua string, or a number as Lua turns it into one (%.14g); None otherwise."""
    if type(value) is bytes:
        return value
    if type(value) in (int, float):
        return b"%.14g" % value
    return None


# -- the FUNCTION command (engine layer) ----------------------------------------------------

FUNCTION_HELP = (
    "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "LOAD [REPLACE] <FUNCTION CODE>",
    "    Create a new library with the given library name and code.",
    "DELETE <LIBRARY NAME>",
    "    Delete the given library.",
    "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
    "    Return general information on all the libraries:",
    "    * Library name",
    "    * The engine used to run the Library",
    "    * Library description",
    "    * Functions list",
    "    * Library code (if WITHCODE is given)",
    "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
    "STATS",
    "    Return information about the current function running:",
    "    * Function name",
    "    * Command used to run the function",
    "    * Duration in MS that the function is running",
    "    If no function is running, return nil",
    "    In addition, returns a list of available engines.",
    "KILL",
    "    Kill the current running function.",
    "FLUSH [ASYNC|SYNC]",
    "    Delete all the libraries.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the libraries.",
    "    * SYNC: Synchronously flush the libraries.",
    "DUMP",
    "    Return a serialized payload representing the current libraries, can be restored "
    "using FUNCTION RESTORE command",
    "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
    "    Restore the libraries represented by the given payload, it is possible to give a "
    "restore policy to",
    "    control how to handle existing libraries (default APPEND):",
    "    * FLUSH: delete all existing libraries.",
    "    * APPEND: appends the restored libraries to the existing libraries. On collision, "
    "abort.",
    "    * REPLACE: appends the restored libraries to the existing libraries, On collision, "
    "replace the old",
    "      libraries with the new libraries (notice that even on this option there is a "
    "chance of failure",
    "      in case of functions name collision with another library).",
    "HELP",
    "    Prints this help.",
)


def engine_functions(engine: Any) -> Functions:
    """The engine's functions, made on first use (redis.REDIS_VERSION: the version
    sessions report)."""
    functions = engine.functions
    if functions is None:
        from engine.api.session import Session      # (session imports this module)
        functions = engine.functions = engine.keyspace.functions = Functions(engine,
                                                                             Session.version)
    return functions


def _functions(ctx: Any) -> Functions:
    return engine_functions(ctx.engine)


def _changed(ctx: Any, argv: list) -> None:
    """The command changed the libraries: it is its own effect, as Redis propagates it."""
    ctx.dirty += 1
    if ctx.logging:
        ctx.effects.append(list(argv))


@command("function|load")
def function_load(ctx, argv):
    replace = False
    for option in argv[2:-1]:
        if option.lower() != b"replace":
            raise ResponseError("ERR Unknown option given: "
                                + option.decode("utf-8", "replace"))
        replace = True
    name = _functions(ctx).load(argv[-1], replace)
    _changed(ctx, argv)
    return name


@command("function|delete")
def function_delete(ctx, argv):
    _functions(ctx).delete(argv[2])
    _changed(ctx, argv)
    return OK


@command("function|flush")
def function_flush(ctx, argv):
    if len(argv) > 3:
        raise ResponseError(SYNTAX_OF % argv[1].decode("utf-8", "replace"))
    if len(argv) == 3 and argv[2].lower() not in (b"sync", b"async"):
        raise ResponseError(FLUSH_OPTION)
    if ctx.engine.functions is not None:
        ctx.engine.functions.flush()
    _changed(ctx, argv)
    return OK


@command("function|list")
def function_list(ctx, argv):
    with_code = False
    pattern = None
    i = 2
    while i < len(argv):
        word = argv[i].lower()
        if word == b"withcode" and not with_code:
            with_code = True
        elif word == b"libraryname" and pattern is None:
            if i == len(argv) - 1:
                raise ResponseError("ERR library name argument was not given")
            i += 1
            pattern = argv[i]
        else:
            raise ResponseError("ERR Unknown argument " + argv[i].decode("utf-8", "replace"))
        i += 1
    functions = ctx.engine.functions
    out = []
    for library in functions.libraries.values() if functions is not None else ():
        if pattern is not None and not match(pattern, library.name, True):
            continue
        entry = [b"library_name", library.name, b"engine", ENGINE_NAME,
                 b"functions", [_function_entry(fn, ctx.resp3)
                                for fn in library.functions.values()]]
        if with_code:
            entry += [b"library_code", library.code]
        out.append(_map(entry, ctx.resp3))
    return out


def _map(fields: list, resp3: bool) -> Any:
    """Alternating names and values: a map in RESP3, the flat array in RESP2."""
    return dict(zip(fields[::2], fields[1::2])) if resp3 else fields


def _function_entry(fn: Function, resp3: bool) -> Any:
    flags = [Status(flag) for flag in SHEBANG_FLAGS if flag in fn.flags]
    return _map([b"name", fn.name, b"description", fn.description,
                 b"flags", set(flags) if resp3 else flags], resp3)


@command("function|dump")
def function_dump(ctx, argv):
    functions = ctx.engine.functions
    return functions.dump() if functions is not None else frame(b"")


@command("function|restore")
def function_restore(ctx, argv):
    policy = b"append"
    if len(argv) > 4:
        raise ResponseError(SYNTAX_OF % argv[1].decode("utf-8", "replace"))
    if len(argv) == 4:
        policy = argv[3].lower()
        if policy not in (b"flush", b"append", b"replace"):
            raise ResponseError(BAD_POLICY)
    _functions(ctx).restore(argv[2], policy)
    _changed(ctx, argv)
    return OK


@command("function|stats")
def function_stats(ctx, argv):
    functions = ctx.engine.functions
    libraries = len(functions.libraries) if functions is not None else 0
    count = sum(len(library.functions) for library in functions.libraries.values()) \
        if functions is not None else 0
    resp3 = ctx.resp3
    counts = _map([b"libraries_count", libraries, b"functions_count", count], resp3)
    return _map([b"running_script", _running_function(ctx.engine, resp3),
                 b"engines", _map([ENGINE_NAME, counts], resp3)], resp3)


def _running_function(engine: Any, resp3: bool) -> Any:
    """FUNCTION STATS's running_script: the function running long (a script running
    long: BUSY, as in Redis 7.0), or None."""
    caller = running_script(engine)
    if caller is None:
        return None
    if caller.is_eval:
        raise ResponseError(BUSY_EVAL)
    return _map([b"name", caller.name.encode(), b"command", caller.command,
                 b"duration_ms", int((monotonic() - caller.started) * 1000)], resp3)


@command("function|kill")
def function_kill(ctx, argv):
    """Reaches a function running long: the server serves other clients meanwhile (see
    engine/api/scripts.py)."""
    kill_script(ctx.engine, False)
    return OK


@command("function|help")
def function_help(ctx, argv):
    return [Status(line.encode()) for line in FUNCTION_HELP]


class FunctionCommands:
    """The Session's methods of FCALL and FCALL_RO (a mixin of engine/api/session.py's
    Session: they are records of the `session` layer)."""

    engine: Any

    @client_command("fcall")
    def cmd_fcall(self, argv: list) -> Any:
        return engine_functions(self.engine).fcall(self, argv, False)

    @client_command("fcall_ro")
    def cmd_fcall_ro(self, argv: list) -> Any:
        return engine_functions(self.engine).fcall(self, argv, True)
