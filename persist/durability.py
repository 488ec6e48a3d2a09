"""Persistence for one Engine: load the data directory on start, log effects to the
AOF, snapshots (SAVE, BGSAVE, `save` points), AOF rewrites (BGREWRITEAOF, automatic),
and the final write at close.

`Engine(dir=..., appendonly=True, appendfsync=...)` creates one. Both users drive it
the same way: `before_reply` writes what was logged (one write, fsynced with
`always`), `cron` reaps a child and starts due work (save points, scheduled and
automatic rewrites). The server's event loop calls `before_reply` once per round
(group commit) and `cron` on its timer; background work runs in forked children, as
in Redis: the child writes the snapshot or the AOF base from its copy-on-write view
of memory while the parent keeps serving. The embedded engine calls both through
`end_of_call` when a call (a command, an EXEC, a pipeline) that changed something
returns, and saves and rewrites inline: forking a host process that may run other
threads (the user's, the AOF's fsync thread) can deadlock the child on a lock one of
them held, and a child would wait to be reaped by an engine that may sit idle. With
`everysec` the AOF's thread fsyncs once a second; it never touches the keyspace.

How far the disk has the engine's writes: `fsynced_seq` is the engine's log position
(`effects_seq`) up to which the AOF is fsynced, -1 without an AOF; the callables in
`fsync_listeners` hear each change (an fsync, or the AOF turned off), from the thread
that made it (the AOF's sync thread under everysec). WAITAOF waits on these.

When persisting fails, `refusal` holds the error that write commands get instead of
running (Redis's MISCONF): after a failed background save (its fork included) while
save points are set and `stop_writes_on_bgsave_error` is on, or while writes to the
AOF fail or its last fsync failed (everysec and no; with `always` the server exits
instead). It goes back to None once a save succeeds, or the buffered AOF data is
written and an fsync succeeds; `on_refusal` hears every change.
"""
from __future__ import annotations

import logging
import math
import os
import signal
import time
import traceback
from functools import partial
from typing import Callable, Optional

from persist import recovery, redis_rdb, resp_base, snapshot
from persist.aof import AppendOnlyLog
from persist.directory_lock import DirectoryLock, die_with_parent
from persist.errors import ForeignFileError, PersistError
from persist.files import fsync_dir, make_dirs, remove_file

log = logging.getLogger("sluice")

LEGACY_DBFILENAME = "dump.rdb"     # the default snapshot name of earlier versions
DEFAULT_SAVE_POINTS = ((3600, 1), (300, 100), (60, 10000))
MB = 1024 * 1024
SNAPSHOT_FAILED = (
    "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist "
    "to disk. Commands that may modify the data set are disabled, because this instance is "
    "configured to report errors during writes if RDB snapshotting fails "
    "(stop-writes-on-bgsave-error option). Please check the Redis logs for details about the "
    "RDB error.")
AOF_WRITE_FAILED = "MISCONF Errors writing to the AOF file: %s"
REWRITE_FAILURES_BEFORE_DELAY = 3
REWRITE_DELAY_MAX_MINUTES = 60
REWRITE_FORK_FAILED = ("Can't execute an AOF background rewriting. Please check the server "
                       "logs for more information.")


class BackgroundJob:
    """A forked child writing a snapshot ("rdb") or an AOF base ("aof")."""

    __slots__ = ("kind", "pid", "started", "dirty_at_start", "path")

    def __init__(self, kind: str, pid: int, dirty: int, path: str) -> None:
        self.kind = kind
        self.pid = pid
        self.started = time.monotonic()
        self.dirty_at_start = dirty
        self.path = path


class Durability:
    """See the module docstring."""

    def __init__(self, engine, directory: str, *, appendonly: bool = False,
                 appendfsync: str = "everysec", dbfilename: str = snapshot.DEFAULT_FILENAME,
                 appenddirname: str = "appendonlydir", appendfilename: str = "appendonly.aof",
                 aof_use_rdb_preamble: bool = True, aof_load_truncated: bool = True,
                 save: Optional[list] = None, auto_aof_rewrite_percentage: int = 100,
                 auto_aof_rewrite_min_size: int = 64 * MB,
                 stop_writes_on_bgsave_error: bool = True, embedded: bool = True) -> None:
        self.engine = engine
        self.dir = os.path.abspath(directory)
        self.appendonly = appendonly
        self.appendfsync = appendfsync
        self.dbfilename = dbfilename
        self.appenddirname = appenddirname
        self.appendfilename = appendfilename
        self.aof_use_rdb_preamble = aof_use_rdb_preamble
        self.aof_load_truncated = aof_load_truncated
        self._save_dirty_floor = 0           # see _save_point_due
        self._save_time_floor = math.inf
        self.save_points = list(DEFAULT_SAVE_POINTS if save is None else save)
        self.auto_aof_rewrite_percentage = auto_aof_rewrite_percentage
        self.auto_aof_rewrite_min_size = auto_aof_rewrite_min_size
        self.stop_writes_on_bgsave_error = stop_writes_on_bgsave_error
        self.embedded = embedded
        self.aof: Optional[AppendOnlyLog] = None
        self._dirty_at_save = 0              # engine.dirty when the last save began
        self.lastsave = int(time.time())
        self.last_save_attempt = 0.0
        self.rdb_saves = 0
        self.rdb_last_bgsave_ok = True
        self.rdb_last_bgsave_seconds = -1
        self.rewrite_scheduled = False
        self.bgsave_scheduled = False
        self.child: Optional[BackgroundJob] = None
        self.load_report: Optional[recovery.LoadReport] = None
        self.loaded_from = ""
        self.refusal: Optional[str] = None
        self.on_refusal: Optional[Callable[[Optional[str]], None]] = None
        self.fsync_listeners: list = []   # see the module docstring
        self.rewrite_failures = 0         # consecutive failed rewrites (see _rewrite_held)
        self._rewrite_delay = 0           # minutes automatic rewrites wait after the last
        self._rewrite_resume = 0.0        # when they may start again (time.time())
        self.closed = False
        make_dirs(self.dir)
        self.dir_lock = DirectoryLock(self.dir)   # held from start() to close()

    # -- start -------------------------------------------------------------------------

    def start(self) -> None:
        """Locks the directory (DirectoryInUse if another owner has it), loads it,
        then starts logging (the engine's listener)."""
        self.dir_lock.acquire()
        try:
            self._remove_leftover_temps()
            self.load()
            self._dirty_at_save = self.engine.dirty     # what loading did is on disk
            if self.appendonly:
                self._open_aof(self.loaded_manifest)
        except BaseException:
            self.dir_lock.release()
            raise
        self._listen()

    def _listen(self) -> None:
        """Effects are needed for the AOF only; without a listener commands skip
        building them."""
        wanted = self.aof is not None
        listening = self.on_effects in self.engine.effect_listeners
        if wanted and not listening:
            self.engine.add_effect_listener(self.on_effects)
        elif listening and not wanted:
            self.engine.remove_effect_listener(self.on_effects)

    @property
    def save_points(self) -> list:
        """[(seconds, changes), ...]: save when both have passed since the last save."""
        return self._save_points

    @save_points.setter
    def save_points(self, points: list) -> None:
        self._save_points = points
        self._save_dirty_floor = 0

    @property
    def dirty(self) -> int:
        """Changes since the last successful save began (save points, INFO)."""
        return self.engine.dirty - self._dirty_at_save

    def load(self) -> None:
        """AOF when appendonly is on and one exists, else the snapshot if present."""
        self.loaded_manifest = None
        started = time.monotonic()
        if self.appendonly:
            aof = self._new_aof()
            manifest = aof.read_manifest()
            if manifest is not None:
                self.load_report = recovery.load_aof(
                    self.engine, aof, manifest, load_truncated=self.aof_load_truncated)
                self.loaded_manifest = manifest
                self.loaded_from = "aof"
                log.info("DB loaded from append only file: %.3f seconds",
                         time.monotonic() - started)
                return
        path = self.snapshot_path
        if not os.path.exists(path) and self.dbfilename == snapshot.DEFAULT_FILENAME:
            self._adopt_legacy_snapshot()
        if os.path.exists(path):
            info = snapshot.load_snapshot(self.engine, path)
            self.loaded_from = "snapshot"
            log.info("Done loading snapshot, keys loaded: %d", info.get("keys", 0))
            log.info("DB loaded from disk: %.3f seconds", time.monotonic() - started)

    def _remove_leftover_temps(self) -> None:
        """Snapshots a crash interrupted before their rename (the AOF's own
        temporaries are its business): dead weight that only grows. The lock just
        taken says nobody writes them any more."""
        names = [self.dbfilename]
        if self.dbfilename == snapshot.DEFAULT_FILENAME:
            names.append(LEGACY_DBFILENAME)
        for name in snapshot.remove_leftover_temps(self.dir, names):
            log.warning("Removed %s, the temporary file of a snapshot that was "
                        "interrupted", name)

    def _adopt_legacy_snapshot(self) -> None:
        """Earlier versions named the snapshot dump.rdb by default: such a file (our
        magic) is renamed to the default name, so that it loads and is not left
        behind, stale, under a name that says RDB. Any other dump.rdb (a real RDB
        file) stays untouched, and the log says why it is not loaded."""
        legacy = os.path.join(self.dir, LEGACY_DBFILENAME)
        if snapshot.is_snapshot(legacy):
            os.replace(legacy, self.snapshot_path)
            fsync_dir(self.dir)
            log.warning("Renamed %s to %s: it is a Sluice snapshot, not RDB (earlier "
                        "versions gave it that name)", LEGACY_DBFILENAME, self.dbfilename)
            return
        try:
            redis_rdb.refuse_rdb(legacy, "a Sluice snapshot")
        except ForeignFileError as exc:
            log.warning("%s. Starting without it.", exc)
        else:
            if os.path.exists(legacy):
                log.warning("%s is neither a Sluice snapshot nor a Redis RDB file: starting "
                            "without it", legacy)

    @property
    def logging(self) -> bool:
        """An AOF is open: the server holds a round's replies until its log is written."""
        return self.aof is not None

    @property
    def fsync_failing(self) -> bool:
        """The AOF's writes get through but its last fsync failed (the reason the server
        names when appendfsync always makes it stop)."""
        aof = self.aof
        return aof is not None and bool(aof.fsync_errno) and not aof.write_errno

    @property
    def fsynced_seq(self) -> int:
        """The engine's log position up to which the AOF is on disk; -1 without one."""
        aof = self.aof
        return -1 if aof is None else aof.fsynced_seq

    @property
    def snapshot_path(self) -> str:
        return os.path.join(self.dir, self.dbfilename)

    def _new_aof(self) -> AppendOnlyLog:
        return AppendOnlyLog(self.dir, dirname=self.appenddirname, filename=self.appendfilename,
                             fsync=self.appendfsync, snapshot_base=self.aof_use_rdb_preamble)

    def _open_aof(self, manifest) -> None:
        aof = self._new_aof()
        if manifest is None:
            log.info("Creating AOF base file %s.1.base on server start", self.appendfilename)
        aof.open(manifest, self.write_base, self.engine.effects_seq)
        # the list, not this object: the sync thread holds the log, and through a
        # method of ours would hold the engine (which then is never dropped unclosed)
        aof.on_fsynced = partial(_tell, self.fsync_listeners)
        self.aof = aof

    def write_base(self, fileobj) -> None:
        """The engine's state in the AOF base format chosen by aof-use-rdb-preamble."""
        if self.aof_use_rdb_preamble:
            snapshot.write_snapshot_file(self.engine, fileobj)
        else:
            resp_base.write_resp_base(self.engine, fileobj)

    # -- logging -----------------------------------------------------------------------

    def on_effects(self, db: int, effects: list) -> None:
        """Effect listener: log the change (written by the next before_reply)."""
        aof = self.aof
        if aof is not None:
            aof.feed(db, effects, self.engine.effects_seq)

    def end_of_call(self) -> None:
        """Embedded: a call that changed something returns. Its effects go to the OS
        (and with `always` to the disk), then the timer's work runs, with the
        keyspace consistent. Raises OSError when writing the AOF or a due snapshot
        fails (the command ran; its effects stay buffered for the next try).

        Every write call comes here: cron runs only when a few comparisons say it
        may have work (a child, a refusal or an AOF error to recheck, work
        scheduled, a save point's floors reached, the AOF past its minimum rewrite
        size), so that the common call costs little more than its write."""
        self.before_reply()
        aof = self.aof
        if (self.child is None and self.refusal is None and not self.rewrite_scheduled
                and not self.bgsave_scheduled
                and self.engine.dirty < self._save_dirty_floor
                and time.time() <= self._save_time_floor
                and (aof is None or (not aof.last_errno
                                     and aof.size < self.auto_aof_rewrite_min_size))):
            return
        self.cron()

    def before_reply(self) -> None:
        """Once per server event-loop round, before replies go out (or at the end
        of an embedded call): write (and with `always` fsync) what this round
        logged, or what an earlier failed write left behind. Raises OSError on a
        failed write (the data stays buffered)."""
        aof = self.aof
        if aof is not None and aof.pending():
            try:
                aof.flush()
            finally:
                if aof.last_errno or self.refusal is not None:
                    self.update_refusal()

    def drop_unwritten_round(self) -> None:
        """Forgets what this round logged and has not written (SHUTDOWN NOSAVE inside a
        long script: its writes, and the round's commands that were never answered).
        What earlier writes left behind stays."""
        if self.aof is not None:
            self.aof.drop_buffered()

    def update_refusal(self) -> None:
        """Recomputes `refusal` from the persistence state (the snapshot's error
        first, as Redis checks it first) and tells `on_refusal` when it changed."""
        aof = self.aof
        if (self.stop_writes_on_bgsave_error and self.save_points
                and not self.rdb_last_bgsave_ok):
            text = SNAPSHOT_FAILED
        elif aof is not None and aof.last_errno:
            text = AOF_WRITE_FAILED % os.strerror(aof.last_errno)
        else:
            text = None
        if text != self.refusal:
            self.refusal = text
            if self.on_refusal is not None:
                self.on_refusal(text)

    # -- snapshots ---------------------------------------------------------------------

    def save(self) -> None:
        """SAVE: a snapshot written in the foreground."""
        if self.child is not None and self.child.kind == "rdb":
            raise PersistError("Background save already in progress")
        snapshot.write_snapshot(self.engine, self.snapshot_path)
        self._saved(self.engine.dirty)

    def flushed_all(self) -> None:
        """FLUSHALL ran: with save points configured, the emptied keyspace is
        snapshotted at once, as Redis does (a running snapshot of the old data is
        stopped first), so the change counter starts again from it. A failing
        write is logged, not raised: the keys are gone either way."""
        if not self.save_points:
            return
        if self.child is not None and self.child.kind == "rdb":
            try:
                os.kill(self.child.pid, signal.SIGUSR1)
            except ProcessLookupError:
                pass
            self._reap(block=True)
        try:
            snapshot.write_snapshot(self.engine, self.snapshot_path)
        except OSError as exc:
            log.warning("Write error saving DB on disk: %s", exc.strerror)
            return
        self._saved(self.engine.dirty, counted=False)     # rdb_saves: SAVE, BGSAVE only

    def _saved(self, dirty_at_start: int, counted: bool = True) -> None:
        self._dirty_at_save = dirty_at_start
        self.lastsave = int(time.time())
        self._save_dirty_floor = 0
        self.rdb_saves += counted
        self.rdb_last_bgsave_ok = True
        self.update_refusal()

    def _bgsave_failed(self) -> None:
        self.rdb_last_bgsave_ok = False
        self._save_dirty_floor = 0
        self.update_refusal()

    def bgsave(self, schedule: bool = False) -> str:
        """BGSAVE: the reply's status text; PersistError with Redis's error text."""
        if self.child is not None and self.child.kind == "rdb":
            raise PersistError("Background save already in progress")
        if self.child is not None or self.engine.in_transaction:
            if schedule or self.engine.in_transaction:
                self.bgsave_scheduled = True
                return "Background saving scheduled"
            raise PersistError("Another child process is active (AOF?): can't BGSAVE right "
                               "now. Use BGSAVE SCHEDULE in order to schedule a BGSAVE "
                               "whenever possible.")
        self._start_bgsave()
        return "Background saving started"

    def _start_bgsave(self) -> None:
        self.last_save_attempt = time.monotonic()
        dirty = self.engine.dirty
        if self.embedded:
            started = time.monotonic()
            try:
                snapshot.write_snapshot(self.engine, self.snapshot_path)
            except OSError:
                self._bgsave_failed()
                raise
            self.rdb_last_bgsave_seconds = int(time.monotonic() - started)
            self._saved(dirty)
            return
        path = self.snapshot_path
        try:
            pid = _fork(lambda: snapshot.write_snapshot(self.engine, path),
                        "Write error saving DB on disk")
        except OSError as exc:
            log.warning("Can't save in background: fork: %s", exc.strerror)
            self._bgsave_failed()
            raise PersistError("") from None     # Redis answers a bare ERR
        self.child = BackgroundJob("rdb", pid, dirty, path)
        log.info("Background saving started by pid %d", pid)

    # -- AOF rewrite -------------------------------------------------------------------

    def bgrewriteaof(self) -> str:
        """BGREWRITEAOF: the reply's status text; PersistError on refusal."""
        if self.child is not None and self.child.kind == "aof":
            raise PersistError("Background append only file rewriting already in progress")
        if self.child is not None or self.engine.in_transaction:
            self.rewrite_scheduled = True
            return "Background append only file rewriting scheduled"
        self._start_rewrite()
        return "Background append only file rewriting started"

    def _start_rewrite(self) -> None:
        self.rewrite_scheduled = False
        if self.aof is None:
            # AOF off: write a fresh directory (base + empty incremental) and close it.
            aof = self._new_aof()
            aof.fsync = "no"
            aof.open(None, self.write_base)
            aof.close()
            return
        job = self.aof.begin_rewrite()
        if self.embedded:
            ok = False
            try:
                with open(job.temp_path, "wb") as fh:
                    self.write_base(fh)
                    fh.flush()
                    os.fsync(fh.fileno())
                ok = True
            finally:
                self.aof.finish_rewrite(ok)
            return
        path = job.temp_path

        def child() -> None:
            with open(path, "wb") as fh:
                self.write_base(fh)
                fh.flush()
                os.fsync(fh.fileno())
        try:
            job.pid = _fork(child, "Write error writing append only file on disk")
        except OSError as exc:
            log.warning("Can't rewrite append only file in background: fork: %s",
                        exc.strerror)
            self.aof.finish_rewrite(False)
            self.rewrite_failures += 1
            raise PersistError(REWRITE_FORK_FAILED) from None
        self.child = BackgroundJob("aof", job.pid, self.engine.dirty, path)
        log.info("Background append only file rewriting started by pid %d", job.pid)

    # -- the server's timer ------------------------------------------------------------

    def cron(self) -> None:
        """Reaps a finished child; starts scheduled or due background work. A new
        AOF file is not started while writes to the current one fail (the data
        waiting for it predates the rewrite)."""
        if self.child is not None:
            self._reap()
        self.update_refusal()                # the sync thread may have written
        if self.child is not None:
            return
        try:
            self._start_due_work()
        except PersistError:
            pass                     # a failed fork: logged, and in the status fields

    def _start_due_work(self) -> None:
        aof = self.aof
        writable = aof is None or not aof.write_errno
        if self.rewrite_scheduled and writable:
            self._start_rewrite()
        elif self.bgsave_scheduled:
            self.bgsave_scheduled = False
            self._start_bgsave()
        elif self._save_point_due():
            self._start_bgsave()
        elif aof is not None and writable and aof.rewrite_due(
                self.auto_aof_rewrite_percentage, self.auto_aof_rewrite_min_size) \
                and not self._rewrite_held():
            log.info("Starting automatic rewriting of AOF on %d%% growth",
                     self.auto_aof_rewrite_percentage)
            self._start_rewrite()

    def _rewrite_held(self) -> bool:
        """Automatic rewrites wait after REWRITE_FAILURES_BEFORE_DELAY failures in a
        row, 1 minute, then twice as long after each further failure, up to an hour
        (as Redis 7 does): each attempt starts a new incremental file, and a failing
        disk or fork must not start one every cron tick. BGREWRITEAOF is not held."""
        if self.rewrite_failures < REWRITE_FAILURES_BEFORE_DELAY:
            self._rewrite_delay, self._rewrite_resume = 0, 0.0
            return False
        if self._rewrite_resume:
            if time.time() < self._rewrite_resume:
                return True
            self._rewrite_resume = 0.0
            return False
        self._rewrite_delay = min(self._rewrite_delay * 2 or 1, REWRITE_DELAY_MAX_MINUTES)
        self._rewrite_resume = time.time() + 60 * self._rewrite_delay
        log.warning("Background AOF rewrite has repeatedly failed and triggered the limit, "
                    "will retry in %d minutes", self._rewrite_delay)
        return True

    def _save_point_due(self) -> bool:
        """Whether a save point has passed. When none has, it leaves the floors that
        end_of_call compares with: no save point can pass before engine.dirty
        reaches `_save_dirty_floor` (a point's changes not yet made) or the clock
        `_save_time_floor` (a point whose changes are made but not its seconds).
        Any change of the last save or the points sets the dirty floor to 0,
        which brings the next call here."""
        # After a failed save, wait 5 s before trying again (as Redis does).
        if not self.rdb_last_bgsave_ok and time.monotonic() - self.last_save_attempt < 5:
            return False
        dirty = self.dirty
        elapsed = time.time() - self.lastsave
        more_changes = seconds_left = math.inf
        for seconds, changes in self.save_points:
            if dirty < changes:
                more_changes = min(more_changes, changes)
            elif elapsed > seconds:
                return True
            else:
                seconds_left = min(seconds_left, seconds)
        if self.rdb_last_bgsave_ok:
            self._save_dirty_floor = self._dirty_at_save + more_changes
            self._save_time_floor = self.lastsave + seconds_left
        return False

    def _reap(self, block: bool = False) -> None:
        """The child's end, if it is over (`block`: waits for it)."""
        job = self.child
        try:
            pid, status = os.waitpid(job.pid, 0 if block else os.WNOHANG)
        except ChildProcessError:
            pid, status = job.pid, 1 << 8
        if pid == 0:
            return
        self.child = None
        ok = os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        seconds = int(time.monotonic() - job.started)
        if job.kind == "rdb":
            self.rdb_last_bgsave_seconds = seconds
            if ok:
                self._saved(job.dirty_at_start)
                log.info("Background saving terminated with success")
            elif os.WIFSIGNALED(status):
                log.warning("Background saving terminated by signal %d", os.WTERMSIG(status))
                remove_file(snapshot.temp_path(job.path, job.pid))    # it could not clean up
                # SIGUSR1 is how a save is stopped on purpose: not a failure.
                if os.WTERMSIG(status) != signal.SIGUSR1:
                    self._bgsave_failed()
            else:
                log.warning("Background saving error")
                self._bgsave_failed()
        else:
            self.aof.finish_rewrite(ok)
            if ok:
                log.info("Background AOF rewrite terminated with success")
                self.rewrite_failures = 0
            else:
                log.warning("Background AOF rewrite terminated with error")
                self.rewrite_failures += 1

    # -- shutdown and configuration ----------------------------------------------------

    def can_close_here(self) -> bool:
        """False in the AOF's fsync thread: a garbage collection there may finalize
        an engine while that thread holds the AOF's lock (closing would wait for it
        forever). The thread goes on fsyncing what was written."""
        return self.aof is None or not self.aof.in_sync_thread()

    def close(self, save: Optional[bool] = None) -> None:
        """Stops a running child, writes a last snapshot when `save` (None: when save
        points are configured, as Redis's SHUTDOWN), fsyncs and closes the AOF (even
        when the snapshot fails), then unlocks the directory. Closing again does
        nothing."""
        if self.closed:
            return
        self.closed = True
        if self.child is not None:
            try:
                os.kill(self.child.pid, signal.SIGUSR1)
                os.waitpid(self.child.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
            if self.child.kind == "aof":
                self.aof.finish_rewrite(False)
            self.child = None
        if save is None:
            save = bool(self.save_points)
        try:
            if save:
                self.save()
        finally:
            if self.aof is not None:
                self._close_aof()
            self.dir_lock.release()

    def _close_aof(self) -> None:
        """The AOF's last write and fsync. If writing still fails, what was buffered
        is lost (reported), as when Redis stops logging; no refusal is left."""
        aof, self.aof = self.aof, None
        lost = aof.pending()
        try:
            aof.close()
        except OSError as exc:
            log.warning("Closing the AOF with %d bytes that could not be written: %s",
                        lost, exc.strerror)
        self.update_refusal()
        _tell(self.fsync_listeners)

    def set_appendonly(self, on: bool) -> None:
        """CONFIG SET appendonly: on writes a base of the current state first (a new
        log: an earlier write error is forgotten)."""
        if on and self.aof is None:
            self.appendonly = True
            self._open_aof(None)
            self._listen()
        elif not on and self.aof is not None:
            self.appendonly = False
            self._close_aof()
            self._listen()

    def set_appendfsync(self, policy: str) -> None:
        """CONFIG SET appendfsync: the sync thread runs only under everysec."""
        self.appendfsync = policy
        aof = self.aof
        if aof is not None and aof.fsync != policy:
            aof.set_policy(policy)

    def info(self) -> dict:
        """INFO persistence fields."""
        aof = self.aof
        child = self.child
        now = time.monotonic()
        return {
            "rdb_changes_since_last_save": self.dirty,
            "rdb_bgsave_in_progress": int(child is not None and child.kind == "rdb"),
            "rdb_last_save_time": self.lastsave,
            "rdb_last_bgsave_status": "ok" if self.rdb_last_bgsave_ok else "err",
            "rdb_last_bgsave_time_sec": self.rdb_last_bgsave_seconds,
            "rdb_current_bgsave_time_sec": int(now - child.started)
            if child is not None and child.kind == "rdb" else -1,
            "rdb_saves": self.rdb_saves,
            "aof_enabled": int(aof is not None),
            "aof_rewrite_in_progress": int(child is not None and child.kind == "aof"),
            "aof_rewrite_scheduled": int(self.rewrite_scheduled),
            "aof_last_rewrite_time_sec": aof.last_rewrite_seconds if aof else -1,
            "aof_current_rewrite_time_sec": int(now - child.started)
            if child is not None and child.kind == "aof" else -1,
            "aof_last_bgrewrite_status": "ok" if aof is None or aof.last_rewrite_ok else "err",
            "aof_rewrites": aof.rewrites if aof else 0,
            "aof_last_write_status": "ok" if aof is None or not aof.last_errno else "err",
            **({"aof_current_size": aof.size, "aof_base_size": aof.base_size,
                "aof_pending_rewrite": int(self.rewrite_scheduled),
                "aof_buffer_length": aof.pending(),
                "aof_pending_bio_fsync": 0,
                "aof_delayed_fsync": aof.delayed_fsyncs} if aof else {}),
        }


def _tell(listeners: list) -> None:
    """Calls each fsync listener (see the module docstring)."""
    for listener in list(listeners):
        listener()


def _fork(work: Callable[[], None], failure: str) -> int:
    """Runs `work` in a forked child that exits with 0 on success, 1 on error. A
    failed write is one log line (`failure`: the reason), as Redis logs it; anything
    else is a bug and logs its traceback."""
    parent = os.getpid()
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        die_with_parent(parent)
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGUSR1, signal.SIG_DFL)
        work()
        code = 0
    except OSError as exc:
        log.warning("%s: %s", failure, exc.strerror or exc)
    except BaseException:  # noqa: BLE001 - reported, then the child exits
        log.error("%s:\n%s", failure, traceback.format_exc())
    finally:
        logging.shutdown()
        os._exit(code)


__all__ = ["Durability", "DEFAULT_SAVE_POINTS"]
