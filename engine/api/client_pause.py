"""CLIENT PAUSE timeout [WRITE|ALL] and CLIENT UNPAUSE, as Redis 7 pauses its clients.

While a pause lasts, the road (engine/api/road.pyx `_checked`, reached because the
hub's `paused` bit takes every command off the fast branch) asks `postpones` whether a
command must wait: under ALL every command of a client, under WRITE those that may
write or replicate (write and may_replicate commands, such as PUBLISH and PFCOUNT;
EVAL, EVALSHA and FCALL unless their script or function declares `no-writes`; EXEC of
a queue holding one). Checks that come first still answer at once (arity, NOAUTH...).
A MONITOR client is never paused (Redis treats it as a replica).

A command that must wait is not run: the client is parked as a `Postponed` in the
hub's registry of blocked clients (counted in blocked_clients, `b` in CLIENT LIST, not
unblocked by CLIENT UNBLOCK) and its command runs again from the start, every check
included, when the pause ends (its timer on the waiting side, or CLIENT UNPAUSE), in
the order the clients were paused. A second pause keeps the more restrictive mode and
the later end. Nothing is evicted and no key expires while paused: a due key reads as
absent but stays (its removal, `expired` event and count come after the pause).
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from engine.api.scripts import shebang
from engine.core.errors import ResponseError

PAUSE_WRITE = 1
PAUSE_ALL = 2
MODE_ERROR = "ERR CLIENT PAUSE mode must be WRITE or ALL"
SCRIPT_COMMANDS = (b"eval", b"evalsha", b"fcall")


class Postponed:
    """A client whose command waits for the pause to end: parked in the registry of
    blocked clients (engine/api/blocked_clients.py) under no key, without a timeout."""

    __slots__ = ("session", "where", "timeout_ms", "on_fsync", "claim_min_idle",
                 "answer", "timer", "seq", "due", "skip_due", "__weakref__")

    def __init__(self, session: Any) -> None:
        self.session = session
        self.where = ()
        self.timeout_ms = 0
        self.on_fsync = False
        self.claim_min_idle = -1
        self.answer = None
        self.timer = None


class ClientPause:
    """The pause of one hub's clients (see the module docstring)."""

    def __init__(self, hub: Any) -> None:
        self.hub = hub
        self.mode = 0                   # 0, PAUSE_WRITE or PAUSE_ALL
        self.end_ms = 0                 # when it ends, on the engine's clock
        self.postponed: list = []       # the parked clients, in the order they came
        self._timer = None

    def pause(self, timeout_ms: int, mode: int) -> None:
        """CLIENT PAUSE: the more restrictive mode and the later end of this pause and
        one still in force."""
        now = self.hub.engine.clock.now_ms()
        end = now + timeout_ms
        if self.mode:
            mode = max(mode, self.mode)
            end = max(end, self.end_ms)
        self.mode, self.end_ms = mode, end
        self._hold_expiry(True)
        if self._timer is not None:
            self._timer.cancel()
        waiting = self.hub.blocked_clients.waiting
        self._timer = (waiting.call_later(max(0, end - now) / 1000.0, self._timed_out)
                       if waiting is not None else None)

    def unpause(self) -> None:
        """The pause ends (CLIENT UNPAUSE, or its time is up): the postponed commands run
        again, oldest first."""
        self.mode = 0
        self._hold_expiry(False)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        postponed, self.postponed = self.postponed, []
        blocked_clients = self.hub.blocked_clients
        for waiter in postponed:
            blocked_clients.answer(waiter, None)

    def _hold_expiry(self, paused: bool) -> None:
        """Paused or not: due keys read as absent but stay while paused."""
        self.hub.paused = paused
        for db in self.hub.engine.keyspace.databases:
            db.expiry_held = paused

    def _timed_out(self) -> None:
        self._timer = None
        if self.mode and self.hub.engine.clock.now_ms() >= self.end_ms:
            self.unpause()
            self.hub.blocked_clients.after_serving()
        elif self.mode:                 # the clock is behind the loop's timer: wait on
            self.pause(0, self.mode)

    def remaining_ms(self) -> int:
        return max(0, self.end_ms - self.hub.engine.clock.now_ms()) if self.mode else 0

    def postpones(self, client: Any, record: Any, argv: list) -> bool:
        """Whether the command of `client` must wait for the pause to end."""
        if self.hub.engine.clock.now_ms() >= self.end_ms:
            self.unpause()
            return False
        if client.monitor:
            return False
        if self.mode == PAUSE_ALL:
            return True
        if record.aborts_exec and client.multi is not None:
            return any(self._may_write(client, queued, queued_argv)
                       for queued_argv, queued in client.multi)
        return self._may_write(client, record, argv)

    def postpone(self, session: Any, answer: Callable[[Any, Any, bool], None]) -> Postponed:
        """Parks `session`, whose command must wait; `answer` is called when the pause
        ends."""
        waiter = Postponed(session)
        self.hub.blocked_clients.park(waiter, answer)
        self.postponed.append(waiter)
        return waiter

    def _may_write(self, client: Any, record: Any, argv: list) -> bool:
        if argv[0].lower() in SCRIPT_COMMANDS:
            flags = self._script_flags(client, argv)
            return flags is None or b"no-writes" not in flags
        return record.write or "may_replicate" in record.flags

    def _script_flags(self, client: Any, argv: list) -> Optional[frozenset]:
        """The declared flags of the script or function argv runs (None: none declared,
        or not known yet: it may write)."""
        engine = self.hub.engine
        name = argv[0].lower()
        if name == b"eval":
            try:
                return shebang(argv[1])[1]
            except ResponseError:
                return None
        if name == b"evalsha":
            script = engine.scripting.scripts.get(argv[1].lower()) \
                if engine.scripting is not None else None
            return script.flags if script is not None else None
        functions = engine.functions
        fn = functions.functions.get(argv[1].lower()) if functions is not None else None
        return fn.flags if fn is not None else None


def pause_mode(argv: list) -> int:
    """The mode of CLIENT PAUSE timeout [WRITE|ALL] (ALL by default)."""
    if len(argv) < 4:
        return PAUSE_ALL
    mode = argv[3].lower()
    if mode == b"all":
        return PAUSE_ALL
    if mode == b"write":
        return PAUSE_WRITE
    raise ResponseError(MODE_ERROR)
