"""EVAL, EVALSHA, their _RO forms and SCRIPT: the Lua runtime (engine/scripting) tied to an
engine and to the client that runs a script.

One `Scripting` per engine (Engine.scripting, made by the first script): the interpreter and
the script cache by SHA1. A script runs as one unit: the engine is single-threaded (the
server's event loop, the embedded client's lock), so nothing else runs on it meanwhile.
`redis.call` runs a command as the scripts' own client, which starts each script in the
caller's database (SELECT inside a script moves only the script): Redis's checks for a
script's command, then the road's call (engine/api/script_calls.pyx); XREAD/XREADGROUP
with BLOCK are refused, as Redis 7.0 refuses them, and the other blocking commands
answer at once, so nothing blocks. The commands count in INFO commandstats as Redis
counts them.
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
import sys
from collections.abc import Callable
from time import monotonic
from typing import TYPE_CHECKING, Any, Optional

from engine.api.script_calls import ScriptCalls
from engine.api.script_runner import Script, ScriptRunner
from engine.commands.table import COMMANDS, client_command
from engine.core.errors import ResponseError
from engine.resp.reply import OK, Status
from engine.scripting import ScriptRuntime
from engine.scripting.runtime import KILLED

if TYPE_CHECKING:  # pragma: no cover
    from engine.api.session import Session

FLUSH_OPTION = "ERR SCRIPT FLUSH only support SYNC|ASYNC option"
NOTBUSY = "NOTBUSY No scripts in execution right now."
UNKILLABLE = ("UNKILLABLE Sorry the script already executed write commands against the "
              "dataset. You can either wait the script termination or kill the server in a "
              "hard way using the SHUTDOWN NOSAVE command.")
BUSY_EVAL = ("BUSY Redis is busy running a script. You can only call SCRIPT KILL or "
             "SHUTDOWN NOSAVE.")
BUSY_FUNCTION = ("BUSY Redis is busy running a script. You can only call FUNCTION KILL or "
                 "SHUTDOWN NOSAVE.")
LOAD_TIMEOUT = b"FUNCTION LOAD timeout"
LOAD_TIME_LIMIT = 0.5
"""Seconds a library's code may run at FUNCTION LOAD (Redis's figure)."""
BAD_SHEBANG = "ERR Invalid script shebang"
SHEBANG_ENGINE = "ERR Unexpected engine in script shebang: %s"
SHEBANG_OPTION = "ERR Unknown lua shebang option: %s"
SHEBANG_FLAG = "ERR Unexpected flag in script shebang: %s"
SHEBANG_FLAGS = (b"no-writes", b"allow-oom", b"allow-stale", b"no-cluster",
                 b"allow-cross-slot-keys")


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


class _Busy:
    """A script or function running past busy-reply-threshold: what SCRIPT KILL and
    FUNCTION KILL / STATS look at."""

    __slots__ = ("session", "calls", "is_eval", "name", "command", "started", "killed")

    def __init__(self, session: "Session", calls: ScriptCalls, name: str,
                 command: Optional[list], started: float) -> None:
        self.session = session
        self.calls = calls              # .wrote: it called a write command
        self.is_eval = command is None
        self.name = name                # the sha, or the function's name
        self.command = command          # FCALL's argv
        self.started = started
        self.killed = False


class Scripting(ScriptRunner):
    """The Lua interpreter of one engine and its script cache."""

    for_functions = False       # a runner of FUNCTION's libraries (engine/api/functions.py)

    def __init__(self, engine: Any, redis_version: str) -> None:
        self.engine = engine
        self._version = redis_version
        self.scripts = {}                       # sha1 (lower-case hex) -> compiled Script
        self._sha_of: dict[bytes, bytes] = {}   # script body -> its sha1, for those cached
        self._ctx = engine.new_context(0, False)
        self._calls = ScriptCalls(self._ctx)
        self._started = 0.0
        self._name = ""
        self._command = None
        self._busy = None
        self._load_deadline: Optional[float] = None
        self.runtime = self._new_runtime()

    @classmethod
    def of(cls, engine: Any, redis_version: str) -> "Scripting":
        """The engine's scripting, made on first use."""
        scripting = engine.scripting
        if scripting is None:
            scripting = engine.scripting = engine.keyspace.scripting = cls(engine, redis_version)
        return scripting

    def _new_runtime(self) -> ScriptRuntime:
        return ScriptRuntime(self._calls.call, redis_version=self._version,
                             call_resp3=self._call_resp3,
                             is_command=lambda name: name.lower() in COMMANDS,
                             for_functions=self.for_functions, tick=self._tick)

    # the cache ----------------------------------------------------------------------

    def load(self, body: bytes) -> bytes:
        """Compiles the script into the cache (once); its sha1 (remembered by body, so
        that a cached EVAL finds its script without hashing it again)."""
        sha = self._sha_of.get(body)
        if sha is None:
            sha = sha1hex(body)
            if sha not in self.scripts:
                start, flags = shebang(body)
                self.scripts[sha] = Script(self.runtime.compile(body[start:]), flags)
            self._sha_of[body] = sha
        return sha

    def flush(self) -> None:
        """Forgets every script, with a fresh interpreter (globals and all), as Redis does."""
        self.scripts = {}
        self._sha_of = {}
        self.runtime = self._new_runtime()

    # memory ---------------------------------------------------------------------------

    def vm_bytes(self) -> int:
        """The Lua heap of its interpreter, compiled scripts included (INFO's
        used_memory_vm_eval)."""
        return self.runtime.lua.get_memory_used(total=True) or 0

    def cache_bytes(self) -> int:
        """What the script cache holds outside the Lua heap: each script's body, its
        sha1 and handle, and the two dicts that find them (MEMORY STATS lua.caches)."""
        return (sys.getsizeof(self.scripts) + sys.getsizeof(self._sha_of)
                + sum(sys.getsizeof(body) + sys.getsizeof(sha)
                      for body, sha in self._sha_of.items())
                + sum(sys.getsizeof(script) for script in self.scripts.values()))

    # long scripts -----------------------------------------------------------------------

    def _tick(self) -> Optional[bytes]:
        """The count hook (every HOOK_COUNT Lua instructions): past busy-reply-threshold
        the script is busy, and the clients' hub serves the others (they get BUSY)
        until it ends. The error that stops it: KILLED once killed, LOAD_TIMEOUT when a
        library's code runs past LOAD_TIME_LIMIT."""
        if self._load_deadline is not None:
            return LOAD_TIMEOUT if monotonic() > self._load_deadline else None
        busy = self._busy
        if busy is None:
            session = self._calls.session
            if session is None:
                return None
            hub = session.hub
            if monotonic() - self._started < hub.busy_threshold:
                return None
            busy = self._busy = _Busy(session, self._calls, self._name, self._command,
                                      self._started)
            log.warning("Slow script detected: still in execution after %d milliseconds. "
                        "You can try killing the script using the %s command.",
                        (monotonic() - busy.started) * 1000,
                        "SCRIPT KILL" if busy.is_eval else "FUNCTION KILL")
            hub.busy_caller = session
            hub.busy = BUSY_EVAL if busy.is_eval else BUSY_FUNCTION
        elif busy.killed:
            return KILLED
        busy.session.hub.while_busy()
        return KILLED if busy.killed else None

    def load_library(self, body: bytes, register: Callable) -> None:
        """Runs a library's code (FUNCTION LOAD) under LOAD_TIME_LIMIT: past it, the
        count hook stops it with Redis's timeout error."""
        self._load_deadline = monotonic() + LOAD_TIME_LIMIT
        try:
            self.runtime.load_library(body, register)
        finally:
            self._load_deadline = None
            self.runtime.rearm()

    def _busy_over(self) -> None:
        busy, self._busy = self._busy, None
        hub = busy.session.hub
        hub.busy = hub.busy_caller = None
        if busy.killed:
            self.runtime.rearm()
        hub.busy_over()

    def _call_resp3(self, argv: list) -> Any:
        """redis.call after redis.setresp(3): the replies in RESP3's types."""
        ctx = self._ctx
        ctx.resp3 = True
        try:
            return self._calls.call(argv)
        finally:
            ctx.resp3 = False


def running_script(engine: Any) -> Optional[_Busy]:
    """The script or function running long on `engine` now (in EVAL's interpreter or
    in FUNCTION's), or None."""
    functions = engine.functions
    for scripting in (engine.scripting, functions.runner if functions is not None else None):
        if scripting is not None and scripting._busy is not None:
            return scripting._busy
    return None


def kill_script(engine: Any, is_eval: bool) -> None:
    """SCRIPT KILL (is_eval) or FUNCTION KILL: the running script or function stops at
    its next count hook. Raises Redis's refusals: none runs, it has written, or the
    other kind runs (SCRIPT KILL of a function, FUNCTION KILL of a script)."""
    busy = running_script(engine)
    if busy is None:
        raise ResponseError(NOTBUSY)
    if busy.calls.wrote:
        raise ResponseError(UNKILLABLE)
    if busy.is_eval != is_eval:
        raise ResponseError(BUSY_FUNCTION if is_eval else BUSY_EVAL)
    busy.killed = True


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

    @client_command("eval")
    def cmd_eval(self, argv: list) -> Any:
        return (self.engine.scripting or self._scripting()).eval(self, argv, False, False)

    @client_command("evalsha")
    def cmd_evalsha(self, argv: list) -> Any:
        return (self.engine.scripting or self._scripting()).eval(self, argv, True, False)

    @client_command("eval_ro")
    def cmd_eval_ro(self, argv: list) -> Any:
        return (self.engine.scripting or self._scripting()).eval(self, argv, False, True)

    @client_command("evalsha_ro")
    def cmd_evalsha_ro(self, argv: list) -> Any:
        return (self.engine.scripting or self._scripting()).eval(self, argv, True, True)

    @client_command("script|load")
    def script_load(self, argv: list) -> bytes:
        return self._scripting().load(argv[2])

    @client_command("script|exists")
    def script_exists(self, argv: list) -> list:
        scripts = self.engine.scripting.scripts if self.engine.scripting is not None else {}
        return [1 if sha.lower() in scripts else 0 for sha in argv[2:]]

    @client_command("script|flush")
    def script_flush(self, argv: list) -> Status:
        if len(argv) > 3 or (len(argv) == 3 and argv[2].lower() not in (b"sync", b"async")):
            raise ResponseError(FLUSH_OPTION)
        if self.engine.scripting is not None:
            self.engine.scripting.flush()
        return OK

    @client_command("script|kill")
    def script_kill(self, argv: list) -> Any:
        """Other clients are served while a script runs long (the server's busy state),
        so SCRIPT KILL can reach a running script."""
        kill_script(self.engine, True)
        return OK

    @client_command("script|help")
    def script_help(self, argv: list) -> list:
        return [Status(line.encode()) for line in SCRIPT_HELP]
