"""Blocked commands (XREAD/XREADGROUP ... BLOCK, BLPOP & co.) on the event loop.

A reader that found nothing (with BLOCK) is parked (no reply yet) under each (db, key)
it reads, in FIFO order. Commands report the keys they changed (the engine's
`touched`); after every command the keys that have parked readers are served: each
reader's command runs again (engine/api/session.py BlockedRead.retry), oldest first, and
is answered as soon as it yields entries (or an error: the stream or the group went
away); the others stay parked. A per-reader loop timer answers nil at the timeout.

XREADGROUP ... CLAIM min-idle-time ... BLOCK is also served when a pending entry of
its group becomes claimable. Each such reader has a due time, the oldest delivery of
its group's PEL plus min-idle-time (engine/core/groups.pyx oldest_delivery), recomputed
whenever the PEL of one of its keys changes (the engine's effects name the key);
a single loop timer is armed for the earliest due time across all readers. When it
fires, the due readers run again in FIFO order; those that got nothing (others took
the entries) compute their next due time and keep waiting. No polling.

WAITAOF that must wait (its writes not yet fsynced, or replicas asked for) is parked
with no key: the persistence's fsync listener (called by whichever thread fsynced,
the AOF's sync thread under everysec) has the loop run every such waiter's command
again, in blocking order; it is answered once its writes are on disk (or with its
error when the AOF is turned off), or by its timeout timer with what it has then.
"""
from __future__ import annotations

from itertools import count as _count
from typing import TYPE_CHECKING, Optional

from engine.api.session import BlockedRead, Hub

if TYPE_CHECKING:  # pragma: no cover
    from engine.server.server import Server


class ServerBlockedRead(BlockedRead):
    """A BlockedRead with the server's bookkeeping: its connection, timeout timer,
    FIFO sequence number and CLAIM due time."""

    __slots__ = ("conn", "timer", "seq", "due", "skip_due")


class ServerHub(Hub):
    """The sessions of the server: WATCH (Hub), blocked readers, password."""

    def __init__(self, server: "Server") -> None:
        super().__init__(server.engine, track=True)
        self.server = server
        self.loop = None
        self.blocked: dict = {}       # (db, key) -> [ServerBlockedRead] in blocking order
        self.ready: dict = {}         # (db, key) changed since the last serve (ordered set)
        self.blocked_count = 0        # readers parked
        self.blocked_with_timeout = 0
        self.claimers: dict = {}      # ServerBlockedRead -> due ms or None (CLAIM readers)
        self.claim_keys: dict = {}    # (db, key) -> CLAIM readers parked on it
        self._claim_timer = None
        self._claim_at: Optional[int] = None
        self._seq = _count()
        self._serving = False
        self.fsync_waiters: dict = {}  # parked WAITAOFs, in blocking order (an ordered set)

    # parking and unparking

    def while_busy(self) -> None:
        self.server.busy_script().serve()

    def busy_over(self) -> None:
        self.server.busy_script_over()

    def key_ready(self, db: int, key: bytes) -> None:
        self.ready[(db, key)] = None

    def events(self, db: int, events: list) -> None:
        self.server.on_events(db, events)

    def park(self, br: ServerBlockedRead, conn) -> None:
        br.conn = conn
        br.seq = next(self._seq)
        br.due = None
        br.skip_due = None
        blocked = self.blocked
        for where in br.where:
            readers = blocked.get(where)
            if readers is None:
                blocked[where] = [br]
            else:
                readers.append(br)
        self.blocked_count += 1
        if br.timeout_ms:
            self.blocked_with_timeout += 1
            br.timer = self.loop.call_later(br.timeout_ms / 1000.0, self._timed_out, br)
        else:
            br.timer = None
        if br.on_fsync:
            self.fsync_waiters[br] = None
        if br.claim_min_idle >= 0:
            if not self.claim_keys:
                # PEL changes reach CLAIM readers through the effects of commands.
                self.server.engine.add_effect_listener(self.on_effects)
            for where in br.where:
                self.claim_keys[where] = self.claim_keys.get(where, 0) + 1
            self.schedule_claim(br)

    def unpark(self, br: ServerBlockedRead) -> None:
        """Forgets a parked reader (answered, timed out, or its client went away)."""
        if br.conn is None:
            return
        br.conn = None
        blocked = self.blocked
        for where in br.where:
            readers = blocked.get(where)
            if readers is not None:
                try:
                    readers.remove(br)
                except ValueError:
                    pass
                if not readers:
                    del blocked[where]
        self.blocked_count -= 1
        if br.timer is not None:
            br.timer.cancel()
            br.timer = None
            self.blocked_with_timeout -= 1
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
                self.server.engine.remove_effect_listener(self.on_effects)
            self._arm_claim_timer()

    def answer(self, br: ServerBlockedRead, reply, null_array: bool = False) -> None:
        conn = br.conn
        self.unpark(br)
        if conn is not None:
            conn.answer_blocked(br, reply, null_array)

    def _timed_out(self, br: ServerBlockedRead) -> None:
        br.timer = None
        if br.conn is not None:
            self.blocked_with_timeout -= 1
            self.answer(br, br.timeout_reply(), True)

    def unblock_client(self, br: ServerBlockedRead, error: Optional[str]) -> None:
        """CLIENT UNBLOCK: nil (TIMEOUT) or an UNBLOCKED error."""
        from engine.core.errors import ResponseError
        if error is None:
            self.answer(br, br.timeout_reply(), True)
        else:
            self.answer(br, ResponseError(error))

    # serving

    def serve_ready(self) -> None:
        """Runs the readers parked on keys that changed, oldest first (not while a
        script is busy: they would see its writes half done)."""
        if self._serving or self.busy is not None:
            return
        self._serving = True
        try:
            while self.ready:
                ready, self.ready = self.ready, {}
                for where in ready:
                    readers = self.blocked.get(where)
                    if not readers:
                        continue
                    for br in list(readers):
                        if br.conn is None:
                            continue
                        self._retry(br)
        finally:
            self._serving = False

    def _retry(self, br: ServerBlockedRead) -> None:
        done, reply = br.retry()
        if done:
            self.answer(br, reply, br.session.ctx.null_array)
        elif br.claim_min_idle >= 0:
            self.schedule_claim(br)

    # WAITAOF

    def fsynced(self) -> None:
        """The persistence's fsync listener (any thread): parked WAITAOFs look again,
        on the loop."""
        loop = self.loop
        if self.fsync_waiters and loop is not None:
            try:
                loop.call_soon_threadsafe(self.serve_fsync_waiters)
            except RuntimeError:
                pass                # the loop is closed: the server has stopped

    def serve_fsync_waiters(self) -> None:
        for br in list(self.fsync_waiters):
            if br.conn is not None:
                self._retry(br)
        self.server.flush_pending()

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
                    for br in self.blocked.get(where, ()):
                        if br.claim_min_idle >= 0:
                            self.schedule_claim(br)

    def schedule_claim(self, br: ServerBlockedRead) -> None:
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
            delay = max(0.0, (earliest - self.engine.clock.now_ms()) / 1000.0)
            self._claim_timer = self.loop.call_later(delay, self._claim_fire)

    def _claim_fire(self) -> None:
        self._claim_timer = None
        self._claim_at = None
        now = self.engine.clock.now_ms()
        due = sorted((br for br, at in self.claimers.items() if at is not None and at <= now),
                     key=lambda br: br.seq)
        for br in due:
            if br.conn is None or br.due is None or br.due > now:
                continue        # answered, or an earlier reader's claim moved its due time
            done, reply = br.retry()
            if done:
                self.answer(br, reply, br.session.ctx.null_array)
            else:
                br.skip_due = br.due
                self.schedule_claim(br)
        self.serve_ready()
        self._arm_claim_timer()
        self.server.flush_pending()
