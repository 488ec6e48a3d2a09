"""The blocked clients of one engine: every blocking command that must wait
(XREAD/XREADGROUP ... BLOCK, BLPOP & co., BZPOPMIN & co., BLMOVE, BLMPOP, BZMPOP) and
every WAITAOF whose writes are not on disk yet. One registry, shared by the server
(engine/server/blocking.py) and the embedded client (engine/api/client.py), which
differ only in how they wait (the `Waiting` they hand it).

A client that found nothing is parked (no reply yet) under each (db, key) it reads,
in FIFO order. Commands report the keys they changed (the hub's `touched`, then
`key_ready`); after every command the keys that have parked clients are served: each
parked command runs again (engine/api/session.py BlockedRead.retry), oldest first, and
is answered as soon as it is done (entries, or an error: the key went away or changed
type, the group was destroyed); the others stay parked. A timer per client answers
nil (WAITAOF: what it has reached) at its timeout; CLIENT UNBLOCK answers at once.

XREADGROUP ... CLAIM min-idle-time ... BLOCK is also served when a pending entry of
its group becomes claimable. Each such reader has a due time, the oldest delivery of
its group's PEL plus min-idle-time (engine/core/groups.pyx oldest_delivery),
recomputed whenever the PEL of one of its keys changes (the engine's effects name the
key); one timer is armed for the earliest due time across all readers. When it fires
the due readers run again in FIFO order; those that got nothing (others took the
entries) compute their next due time and keep waiting. No polling.

WAITAOF is parked with no key: the persistence's fsync listener (called by whichever
thread fsynced) has the waiting side run every parked WAITAOF again, in blocking
order; it is answered once its writes are on disk (or with its error when the AOF is
turned off), or by its timeout with what it has then.

Nothing is served while a script runs long (the hub's `busy`): the parked commands
would see its writes half done.
"""
from __future__ import annotations

from itertools import count as _count
from typing import Any, Callable, Optional, Protocol


class Timer(Protocol):
    def cancel(self) -> None: ...


class Waiting(Protocol):
    """How a side waits: the server's event loop, or the embedded client's threads
    (engine/api/client.py ThreadWaiting)."""

    def call_later(self, delay: float, callback: Callable, *args: Any) -> Timer:
        """Runs callback(*args) after `delay` seconds, on the waiting side."""

    def call_soon_threadsafe(self, callback: Callable) -> Any:
        """Runs callback() soon on the waiting side; called from another thread."""


Answer = Callable[[Any, Any, bool], None]
"""How a parked client is answered: answer(blocked_read, reply, null_array)."""


class BlockedClients:
    """The parked clients of one hub (engine/api/session.py Hub), their timers and
    the order they are served in."""

    def __init__(self, hub) -> None:
        self.hub = hub
        self.waiting: Optional[Waiting] = None   # set by the side before anyone parks
        self.after_serving: Callable[[], None] = _nothing   # the server sends replies
        self.by_key: dict = {}         # (db, key) -> [BlockedRead] in blocking order
        self.ready: dict = {}          # (db, key) changed since the last serve (ordered set)
        self.count = 0                 # clients parked
        self.with_timeout = 0          # of which with a timeout
        self.claimers: dict = {}       # BlockedRead -> due ms or None (CLAIM readers)
        self.claim_keys: dict = {}     # (db, key) -> CLAIM readers parked on it
        self.fsync_waiters: dict = {}  # parked WAITAOFs, in blocking order (an ordered set)
        self._claim_timer: Optional[Timer] = None
        self._claim_at: Optional[int] = None
        self._seq = _count()
        self._serving = False

    # parking and unparking

    def park(self, br, answer: Answer) -> None:
        """Parks a blocked command until `answer` is called with its reply."""
        br.answer = answer
        br.seq = next(self._seq)
        br.due = None
        br.skip_due = None
        by_key = self.by_key
        for where in br.where:
            readers = by_key.get(where)
            if readers is None:
                by_key[where] = [br]
            else:
                readers.append(br)
        self.count += 1
        if br.timeout_ms:
            self.with_timeout += 1
            br.timer = self.waiting.call_later(br.timeout_ms / 1000.0, self._timed_out, br)
        else:
            br.timer = None
        if br.on_fsync:
            self.fsync_waiters[br] = None
        if br.claim_min_idle >= 0:
            if not self.claim_keys:
                # PEL changes reach CLAIM readers through the effects of commands.
                self.hub.engine.add_effect_listener(self.on_effects)
            for where in br.where:
                self.claim_keys[where] = self.claim_keys.get(where, 0) + 1
            self.schedule_claim(br)

    def unpark(self, br) -> None:
        """Forgets a parked client (answered, timed out, or gone away)."""
        if br.answer is None:
            return
        br.answer = None
        by_key = self.by_key
        for where in br.where:
            readers = by_key.get(where)
            if readers is not None:
                try:
                    readers.remove(br)
                except ValueError:
                    pass
                if not readers:
                    del by_key[where]
        self.count -= 1
        if br.timer is not None:
            br.timer.cancel()
            br.timer = None
            self.with_timeout -= 1
        if br.on_fsync:
            self.fsync_waiters.pop(br, None)
        if br.claim_min_idle >= 0:
            self.claimers.pop(br, None)
            for where in br.where:
                left = self.claim_keys.get(where, 1) - 1
                if left:
                    self.claim_keys[where] = left
                else:
                    self.claim_keys.pop(where, None)
            if not self.claim_keys:
                self.hub.engine.remove_effect_listener(self.on_effects)
            self._arm_claim_timer()

    def answer(self, br, reply, null_array: bool = False) -> None:
        answer = br.answer
        self.unpark(br)
        if answer is not None:
            answer(br, reply, null_array)

    def _timed_out(self, br) -> None:
        br.timer = None
        if br.answer is not None:
            self.with_timeout -= 1
            self.answer(br, br.timeout_reply(), True)

    def unblock(self, br, error: Optional[str]) -> None:
        """CLIENT UNBLOCK: nil (TIMEOUT; WAITAOF: what it has reached) or an
        UNBLOCKED error."""
        from engine.core.errors import ResponseError
        if error is None:
            self.answer(br, br.timeout_reply(), True)
        else:
            self.answer(br, ResponseError(error))

    # serving

    def key_ready(self, db: int, key: bytes) -> None:
        self.ready[(db, key)] = None

    def serve_ready(self) -> None:
        """Runs the clients parked on keys that changed, oldest first."""
        if self._serving or self.hub.busy is not None:
            return
        self._serving = True
        try:
            ready = self.ready
            while ready:
                keys = list(ready)
                ready.clear()
                for where in keys:
                    readers = self.by_key.get(where)
                    if not readers:
                        continue
                    for br in list(readers):
                        if br.answer is not None:
                            self._retry(br)
        finally:
            self._serving = False

    def _retry(self, br) -> None:
        done, reply = br.retry()
        if done:
            self.answer(br, reply, br.session.ctx.null_array)
        elif br.claim_min_idle >= 0:
            self.schedule_claim(br)

    # WAITAOF

    def fsynced(self) -> None:
        """The persistence's fsync listener (any thread): parked WAITAOFs look again,
        on the waiting side."""
        waiting = self.waiting
        if self.fsync_waiters and waiting is not None:
            try:
                waiting.call_soon_threadsafe(self.serve_fsync_waiters)
            except RuntimeError:
                pass                # the loop is closed: the server has stopped

    def serve_fsync_waiters(self) -> None:
        for br in list(self.fsync_waiters):
            if br.answer is not None:
                self._retry(br)
        self.after_serving()

    # XREADGROUP ... CLAIM ... BLOCK

    def on_effects(self, db: int, effects: list) -> None:
        """Effects of a command: a change to the PEL of a key with CLAIM readers
        moves their due time."""
        claim_keys = self.claim_keys
        seen = set()
        for effect in effects:
            for key in effect[1:3]:
                where = (db, key)
                if where in claim_keys and where not in seen:
                    seen.add(where)
                    for br in self.by_key.get(where, ()):
                        if br.claim_min_idle >= 0:
                            self.schedule_claim(br)

    def schedule_claim(self, br) -> None:
        due = br.claim_due()
        if due is not None and due == br.skip_due:
            due = None              # it woke for this and got nothing: wait for a change
        br.due = due
        self.claimers[br] = due
        self._arm_claim_timer()

    def _arm_claim_timer(self) -> None:
        earliest = None
        for due in self.claimers.values():
            if due is not None and (earliest is None or due < earliest):
                earliest = due
        if earliest == self._claim_at:
            return
        if self._claim_timer is not None:
            self._claim_timer.cancel()
            self._claim_timer = None
        self._claim_at = earliest
        if earliest is not None:
            delay = max(0.0, (earliest - self.hub.engine.clock.now_ms()) / 1000.0)
            self._claim_timer = self.waiting.call_later(delay, self._claim_fire)

    def _claim_fire(self) -> None:
        self._claim_timer = None
        self._claim_at = None
        now = self.hub.engine.clock.now_ms()
        due = sorted((br for br, at in self.claimers.items() if at is not None and at <= now),
                     key=lambda br: br.seq)
        for br in due:
            if br.answer is None or br.due is None or br.due > now:
                continue        # answered, or an earlier reader's claim moved its due time
            done, reply = br.retry()
            if done:
                self.answer(br, reply, br.session.ctx.null_array)
            else:
                br.skip_due = br.due
                self.schedule_claim(br)
        self.serve_ready()
        self._arm_claim_timer()
        self.after_serving()


def _nothing() -> None:
    pass
