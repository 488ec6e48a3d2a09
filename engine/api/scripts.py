"""EVAL, EVALSHA, their _RO forms and SCRIPT: the Lua runtime (engine/scripting) tied to an
engine and to the client that runs a script.

One `Scripting` per engine (Engine.scripting, made by the first script): the interpreter and
the script cache by SHA1. A script runs as one unit: the engine is single-threaded (the
server's event loop, the embedded client's lock), so nothing else runs on it meanwhile.
`redis.call` takes the one road in, `process_command`, with the calling client's session
and a command context of the script's own (SELECT inside a script moves only the script);
XREAD/XREADGROUP with BLOCK are refused, as Redis 7.0 refuses them, so nothing blocks.
The script's writes reach the effect listeners (the AOF) bracketed by MULTI ... EXEC, as
EXEC's do; a script that wrote nothing logs nothing, one that failed half-way keeps (and
logs) what it wrote.

Long scripts: the runtime's count hook calls `_tick` every 100k Lua instructions. Past
the hub's `busy_threshold` (busy-reply-threshold) the script is busy: `hub.busy` holds
the BUSY text process_command answers with, and `hub.while_busy()` lets the server serve
its other clients (engine/server/busy.py). `kill_script` (SCRIPT KILL, FUNCTION KILL)
stops a script or function that has not called a write command.
"""
from __future__ import annotations

import hashlib
import logging
from time import monotonic
from typing import TYPE_CHECKING, Any, Optional

from engine.commands.dispatch import check
from engine.commands.table import COMMANDS
from engine.core.errors import NOT_INTEGER, ResponseError
from engine.resp.numbers import strict_int
from engine.resp.reply import OK, Status
from engine.scripting import ScriptRuntime

if TYPE_CHECKING:  # pragma: no cover
    from engine.api.session import Session

NOSCRIPT = "NOSCRIPT No matching script. Please use EVAL."
NEGATIVE_KEYS = "ERR Number of keys can't be negative"
TOO_MANY_KEYS = "ERR Number of keys can't be greater than number of args"
NOT_FROM_SCRIPT = "ERR This Redis command is not allowed from script"
WRITE_IN_READONLY = "ERR Write commands are not allowed from read-only scripts."
FLUSH_OPTION = "ERR SCRIPT FLUSH only support SYNC|ASYNC option"
NOTBUSY = "NOTBUSY No scripts in execution right now."
UNKILLABLE = ("UNKILLABLE Sorry the script already executed write commands against the "
              "dataset. You can either wait the script termination or kill the server in a "
              "hard way using the SHUTDOWN NOSAVE command.")
BUSY_EVAL = ("BUSY Redis is busy running a script. You can only call SCRIPT KILL or "
             "SHUTDOWN NOSAVE.")
BUSY_FUNCTION = ("BUSY Redis is busy running a script. You can only call FUNCTION KILL or "
                 "SHUTDOWN NOSAVE.")
BLOCK_REFUSED = "ERR %s command is not allowed with BLOCK option from scripts"
WRITE_FLAG_IN_RO = "ERR Can not execute a script with write flag using *_ro command."
BAD_SHEBANG = "ERR Invalid script shebang"
SHEBANG_ENGINE = "ERR Unexpected engine in script shebang: %s"
SHEBANG_OPTION = "ERR Unknown lua shebang option: %s"
SHEBANG_FLAG = "ERR Unexpected flag in script shebang: %s"
SHEBANG_FLAGS = (b"no-writes", b"allow-oom", b"allow-stale", b"no-cluster",
                 b"allow-cross-slot-keys")


class Script:
    """A compiled script of the cache; `flags` are its shebang's (None: no shebang, it
    may write unless run by EVAL_RO/EVALSHA_RO)."""

    __slots__ = ("fn", "flags")

    def __init__(self, fn: Any, flags: Optional[frozenset]) -> None:
        self.fn = fn
        self.flags = flags

    def readonly(self, by_ro_command: bool) -> bool:
        """Whether its writes are refused, or raises: a shebang script that may write
        cannot run through the _RO commands."""
        if self.flags is None:
            return by_ro_command
        no_writes = b"no-writes" in self.flags
        if by_ro_command and not no_writes:
            raise ResponseError(WRITE_FLAG_IN_RO)
        return no_writes


def shebang(body: bytes) -> tuple[int, Optional[frozenset]]:
    """`#!lua [flags=a,b]` on a script's first line: where the Lua code starts (the line's
    end, so line numbers stay) and the flags; (0, None) without a shebang."""
    if not body.startswith(b"#!"):
        return 0, None
    end = body.find(b"\n")
    if end < 0:
        raise ResponseError(BAD_SHEBANG)
    words = body[:end].split()
    if words[0] != b"#!lua":
        raise ResponseError(SHEBANG_ENGINE % words[0].decode("utf-8", "replace"))
    flags: set = set()
    for word in words[1:]:
        if not word.startswith(b"flags="):
            raise ResponseError(SHEBANG_OPTION % word.decode("utf-8", "replace"))
        for flag in word[6:].split(b",") if word[6:] else ():
            if flag not in SHEBANG_FLAGS:
                raise ResponseError(SHEBANG_FLAG % flag.decode("utf-8", "replace"))
            flags.add(flag)
    return end, frozenset(flags)


def sha1hex(body: bytes) -> bytes:
    return hashlib.sha1(body).hexdigest().encode()


log = logging.getLogger("sluice")


class _Caller:
    """The client whose script runs now, whether the script may write, and what SCRIPT
    KILL / FUNCTION KILL look at: whether it is an EVAL (or an FCALL), whether it has
    called a write command (then it cannot be killed), whether it runs long (`busy`)."""

    __slots__ = ("session", "readonly", "is_eval", "name", "command", "started", "wrote",
                 "killed", "busy")

    def __init__(self, session: "Session", readonly: bool, is_eval: bool, name: str,
                 command: Optional[list]) -> None:
        self.session = session
        self.readonly = readonly
        self.is_eval = is_eval
        self.name = name                # the sha, or the function's name
        self.command = command          # FCALL's argv (FUNCTION STATS shows it)
        self.started = monotonic()
        self.wrote = self.killed = self.busy = False


class Scripting:
    """The Lua interpreter of one engine and its script cache."""

    for_functions = False       # a runner of FUNCTION's libraries (engine/api/functions.py)

    def __init__(self, engine: Any, redis_version: str) -> None:
        self.engine = engine
        self._version = redis_version
        self.scripts: dict[bytes, Script] = {}  # sha1 (lower-case hex) -> compiled script
        self._caller: Optional[_Caller] = None
        self.runtime = self._new_runtime()

    @classmethod
    def of(cls, engine: Any, redis_version: str) -> "Scripting":
        """The engine's scripting, made on first use."""
        scripting = engine.scripting
        if scripting is None:
            scripting = engine.scripting = cls(engine, redis_version)
        return scripting

    def _new_runtime(self) -> ScriptRuntime:
        return ScriptRuntime(lambda argv: self._call(argv, False), redis_version=self._version,
                             call_resp3=lambda argv: self._call(argv, True),
                             is_command=lambda name: name.lower() in COMMANDS,
                             for_functions=self.for_functions, tick=self._tick)

    # the cache ----------------------------------------------------------------------

    def load(self, body: bytes) -> bytes:
        """Compiles the script into the cache (once); its sha1."""
        sha = sha1hex(body)
        if sha not in self.scripts:
            start, flags = shebang(body)
            self.scripts[sha] = Script(self.runtime.compile(body[start:]), flags)
        return sha

    def flush(self) -> None:
        """Forgets every script, with a fresh interpreter (globals and all), as Redis does."""
        self.scripts = {}
        self.runtime = self._new_runtime()

    # running --------------------------------------------------------------------------

    def eval(self, session: "Session", argv: list, by_sha: bool, readonly: bool) -> Any:
        """EVAL / EVALSHA (and _RO) script numkeys key... arg...: the script's reply."""
        keys, args = keys_and_args(argv, NOT_INTEGER)
        if by_sha:
            sha = argv[1].lower()
            script = self.scripts.get(sha)
            if script is None:
                raise ResponseError(NOSCRIPT)
        else:
            sha = self.load(argv[1])
            script = self.scripts[sha]
        return self._run(session, script.fn, sha.decode(), keys, args,
                         script.readonly(readonly))

    def _run(self, session: "Session", fn: Any, sha: str, keys: list, args: list,
             readonly: bool, command: Optional[list] = None) -> Any:
        """Runs a script (`command` None) or a function (FCALL's argv)."""
        engine = self.engine
        hub = session.hub
        own = session.ctx
        ctx = engine.new_context(own.db.index, False)
        ctx.tracking = hub.tracking
        saved = (session.channels, session.patterns, session.cmd_name)
        # the caller's subscriptions do not apply to the script's commands (a RESP3
        # subscriber may run scripts)
        session.ctx, session.channels, session.patterns = ctx, {}, {}
        caller = self._caller = _Caller(session, readonly, command is None, sha, command)
        engine.transaction_begin()
        try:
            return self.runtime.run(fn, keys, args, sha)
        finally:
            try:
                engine.transaction_end(ctx.db.index)
            finally:
                self._caller = None
                if caller.busy:
                    self._busy_over(caller)
                session.ctx = own
                session.channels, session.patterns, session.cmd_name = saved
                session.null_array = session.rejected = False   # (the script ran)
                if hub.tracking:
                    own.tracking = True

    # long scripts -----------------------------------------------------------------------

    def _tick(self) -> bool:
        """The count hook (every HOOK_COUNT Lua instructions): past busy-reply-threshold
        the script is busy, and the clients' hub serves the others (they get BUSY)
        until it ends. True: it was killed."""
        caller = self._caller
        if caller is None:
            return False
        if caller.killed:
            return True
        hub = caller.session.hub
        if not caller.busy:
            if monotonic() - caller.started < hub.busy_threshold:
                return False
            caller.busy = True
            log.warning("Slow script detected: still in execution after %d milliseconds. "
                        "You can try killing the script using the %s command.",
                        (monotonic() - caller.started) * 1000,
                        "SCRIPT KILL" if caller.is_eval else "FUNCTION KILL")
            hub.busy_caller = caller.session
            hub.busy = BUSY_EVAL if caller.is_eval else BUSY_FUNCTION
        hub.while_busy()
        return caller.killed

    def _busy_over(self, caller: _Caller) -> None:
        hub = caller.session.hub
        hub.busy = hub.busy_caller = None
        if caller.killed:
            self.runtime.rearm()
        hub.busy_over()

    def _call(self, argv: list, resp3: bool) -> Any:
        """redis.call/pcall: Redis's refusals for scripts, then the one road in."""
        caller = self._caller
        session = caller.session
        record = COMMANDS.get(argv[0].lower())
        if record is not None:
            spec = check(record, argv)
            if "noscript" in spec.flags or "noscript" in record.flags:
                raise ResponseError(NOT_FROM_SCRIPT)
            if caller.readonly and (spec.write or "may_replicate" in spec.flags):
                raise ResponseError(WRITE_IN_READONLY)
            if "blocking" in spec.flags and _blocks(argv):
                raise ResponseError(BLOCK_REFUSED % spec.name)
            if spec.write:
                caller.wrote = True
        session.ctx.resp3 = resp3
        return session.call(argv)           # process_command


def keys_and_args(argv: list, not_a_count: str) -> tuple[list, list]:
    """The keys and arguments of `<command> <script> numkeys key... arg...` (EVAL,
    FCALL), with Redis's errors (`not_a_count`: when numkeys is not an integer)."""
    numkeys = strict_int(argv[2])
    if numkeys is None:
        raise ResponseError(not_a_count)
    if numkeys > len(argv) - 3:
        raise ResponseError(TOO_MANY_KEYS)
    if numkeys < 0:
        raise ResponseError(NEGATIVE_KEYS)
    return argv[3:3 + numkeys], argv[3 + numkeys:]


def running_script(engine: Any) -> Optional[_Caller]:
    """The script or function running on `engine` now (in EVAL's interpreter or in
    FUNCTION's), or None."""
    functions = engine.functions
    for scripting in (engine.scripting, functions.runner if functions is not None else None):
        if scripting is not None and scripting._caller is not None:
            return scripting._caller
    return None


def kill_script(engine: Any, is_eval: bool) -> None:
    """SCRIPT KILL (is_eval) or FUNCTION KILL: the running script or function stops at
    its next count hook. Raises Redis's refusals: none runs, it has written, or the
    other kind runs (SCRIPT KILL of a function, FUNCTION KILL of a script)."""
    caller = running_script(engine)
    if caller is None:
        raise ResponseError(NOTBUSY)
    if caller.wrote:
        raise ResponseError(UNKILLABLE)
    if caller.is_eval != is_eval:
        raise ResponseError(BUSY_FUNCTION if is_eval else BUSY_EVAL)
    caller.killed = True


def _blocks(argv: list) -> bool:
    """Whether XREAD/XREADGROUP's options (before STREAMS) ask to block."""
    for arg in argv[1:]:
        word = arg.lower()
        if word == b"block":
            return True
        if word == b"streams":
            return False
    return False


SCRIPT_HELP = (
    "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DEBUG (YES|SYNC|NO)",
    "    Set the debug mode for subsequent scripts executed.",
    "EXISTS <sha1> [<sha1> ...]",
    "    Return information about the existence of the scripts in the script cache.",
    "FLUSH [ASYNC|SYNC]",
    "    Flush the Lua scripts cache. Very dangerous on replicas.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the scripts cache.",
    "    * SYNC: Synchronously flush the scripts cache.",
    "KILL",
    "    Kill the currently executing Lua script.",
    "LOAD <script>",
    "    Load a script into the scripts cache without executing it.",
    "HELP",
    "    Prints this help.",
)


class ScriptCommands:
    """The Session's methods of EVAL & co. and SCRIPT (a mixin of engine/api/session.py's
    Session: they are records of the `session` layer)."""

    engine: Any
    version: str        # what redis.REDIS_VERSION says (the version HELLO reports)

    def _scripting(self) -> Scripting:
        return Scripting.of(self.engine, self.version)

    def cmd_eval(self, argv: list) -> Any:
        return self._scripting().eval(self, argv, False, False)

    def cmd_evalsha(self, argv: list) -> Any:
        return self._scripting().eval(self, argv, True, False)

    def cmd_eval_ro(self, argv: list) -> Any:
        return self._scripting().eval(self, argv, False, True)

    def cmd_evalsha_ro(self, argv: list) -> Any:
        return self._scripting().eval(self, argv, True, True)

    def script_load(self, argv: list) -> bytes:
        return self._scripting().load(argv[2])

    def script_exists(self, argv: list) -> list:
        scripts = self.engine.scripting.scripts if self.engine.scripting is not None else {}
        return [1 if sha.lower() in scripts else 0 for sha in argv[2:]]

    def script_flush(self, argv: list) -> Status:
        if len(argv) > 3 or (len(argv) == 3 and argv[2].lower() not in (b"sync", b"async")):
            raise ResponseError(FLUSH_OPTION)
        if self.engine.scripting is not None:
            self.engine.scripting.flush()
        return OK

    def script_kill(self, argv: list) -> Any:
        """Other clients are served while a script runs long (the server's busy state),
        so SCRIPT KILL can reach a running script."""
        kill_script(self.engine, True)
        return OK

    def script_help(self, argv: list) -> list:
        return [Status(line.encode()) for line in SCRIPT_HELP]
