"""The multi-part append-only file: effects in, RESP commands on disk.

    appendonlydir/
        appendonly.aof.manifest         which files, in which order (persist/manifest.py)
        appendonly.aof.3.base.sluice    the state at the last rewrite: our snapshot
                                        (persist/snapshot.py; earlier versions named it
                                        .base.snap, and manifests naming that still load),
        appendonly.aof.3.base.aof       or RESP commands with `aof-use-rdb-preamble no`
        appendonly.aof.3.incr.aof       effects since then, as RESP commands
        appendonly.aof.4.incr.aof       (a rewrite starts a new incremental file)

Writing. `feed` (an effect listener) only encodes into a buffer; `flush` writes the
buffer to the open incremental file. Who calls `flush` decides the grouping: the
server once per event-loop round, before any reply of that round is sent (so with
`always`, one fsync covers every client's writes of the round: group commit); the
embedded engine when a call (a command, an EXEC, a pipeline) returns. Fsync
policies: `always` (fdatasync in flush), `everysec` (a thread fsyncs what was
written, once a second), `no` (the OS decides).

How far the disk has it. Each fed batch of effects carries its position in the
engine's log (a sequence number, the engine's `effects_seq`); `fsynced_seq` is the
position up to which everything fed is on disk: what a write took from the buffer
and an fsync completed after (WAITAOF waits for it). `on_fsynced` hears each
advance, from the thread that fsynced (the sync thread under everysec).

A failed write (disk full, file size limit...) keeps the data buffered for the next
try and is remembered in `write_errno` until a later write gets everything out (the
owner refuses write commands meanwhile: Redis's MISCONF). A short write is cut off
again with ftruncate, so the file never ends inside a command; only if that fails
too does the partial write stay, and the rest follows it on the next try.

Rewrite (Redis 7's scheme, no rewrite buffer): `begin_rewrite` flushes, opens a new
incremental file and lists it in the manifest; from then on effects go there. The
base is written by `write_base` (in a forked child for BGREWRITEAOF, or inline) to a
temporary file; `finish_rewrite` renames it to the next base name and swaps in a
manifest naming only the new base and the files opened since; the old files become
history and are deleted after the swap. A crash at any step leaves a manifest whose
files are all present and together hold every acknowledged write.
"""
from __future__ import annotations

import errno
import logging
import os
import threading
import time
from dataclasses import dataclass
from typing import Callable, Optional

from persist.errors import PersistError
from persist.files import fsync_dir, make_dirs, remove_file
from persist.files import write_atomically
from persist.manifest import AofFile, Manifest
from persist.resp_log import LogBuffer
from persist.snapshot import EXTENSION as SNAPSHOT_EXTENSION

log = logging.getLogger("sluice")

POLICIES = ("always", "everysec", "no")
WRITE_ERROR_REPORT_EVERY = 30.0      # seconds between two log reports of failing writes
TEMP_BASE_PREFIX = "temp-rewriteaof-"


@dataclass
class RewriteJob:
    """A rewrite in progress: the base being written and the first incremental file
    that the new base does not cover."""
    temp_path: str
    first_incr: AofFile
    started: float
    pid: int = 0                     # forked child writing the base (0: inline)


class AppendOnlyLog:
    """See the module docstring. Not thread-safe beyond its own sync thread."""

    def __init__(self, directory: str, *, dirname: str = "appendonlydir",
                 filename: str = "appendonly.aof", fsync: str = "everysec",
                 snapshot_base: bool = True) -> None:
        if fsync not in POLICIES:
            raise ValueError(f"appendfsync must be one of {POLICIES}")
        self.dir = os.path.join(directory, dirname)
        self.filename = filename
        self.fsync = fsync
        self.snapshot_base = snapshot_base
        self.buf = LogBuffer()
        self.manifest: Optional[Manifest] = None
        self.fd = -1
        self.lock = threading.Lock()      # one writer at a time (caller vs sync thread)
        self.unsynced = False             # written since the last fsync
        self.unwritten = b""              # taken from buf, not yet written (write error)
        self.write_errno = 0              # why the last write failed; 0: it succeeded
        self.fsync_errno = 0              # why the last fsync failed; 0: it succeeded
        self._error_reported = -WRITE_ERROR_REPORT_EVERY
        self.base_size = 0                # base + incr bytes right after the last rewrite
        self.size = 0                     # base + incr bytes now
        self.rewrite: Optional[RewriteJob] = None
        self._base_seq = 0                # highest base seq of an earlier log (see open)
        self.rewrites = 0
        self.last_rewrite_ok = True
        self.last_rewrite_seconds = -1
        self.last_fsync = time.monotonic()
        self.delayed_fsyncs = 0
        self.fed_seq = 0                  # log position of the last batch fed
        self.written_seq = 0              # ... of the last batch written to the file
        self.fsynced_seq = 0              # ... of the last batch an fsync covered
        self.on_fsynced: Optional[Callable[[], None]] = None
        self._thread: Optional[threading.Thread] = None
        self._stop = threading.Event()

    @property
    def manifest_path(self) -> str:
        return os.path.join(self.dir, self.filename + ".manifest")

    def path_of(self, f: AofFile) -> str:
        return os.path.join(self.dir, f.name)

    # -- opening -----------------------------------------------------------------------

    def read_manifest(self) -> Optional[Manifest]:
        """The manifest on disk, or None when there is no AOF yet."""
        try:
            with open(self.manifest_path, "rb") as fh:
                data = fh.read()
        except FileNotFoundError:
            return None
        return Manifest.parse(data, self.manifest_path)

    def open(self, manifest: Optional[Manifest], write_base: Callable, seq: int = 0) -> None:
        """Starts appending. `manifest` is what recovery loaded (None: no AOF yet, so
        a base is written from the current state first, as Redis does on start);
        `write_base(fileobj)` writes the engine's state in the base format; `seq` is
        the engine's log position now, which the files opened hold."""
        self.fed_seq = self.written_seq = self.fsynced_seq = seq
        make_dirs(self.dir)
        self._remove_temp_files()
        if manifest is None:
            # Files of an earlier log (AOF turned off and on again) become history:
            # sequence numbers go on from theirs, and they go once the new base is in.
            try:
                stale = self.read_manifest()
            except PersistError:
                stale = None
            self.manifest = Manifest()
            if stale is not None:
                self.manifest.history = [AofFile(f.name, f.seq, "h")
                                         for f in stale.files() + stale.history]
                self.manifest.base = None
                self._base_seq = max([f.seq for f in stale.files() + stale.history] + [0])
            job = self.begin_rewrite()
            with open(job.temp_path, "wb") as fh:
                write_base(fh)
                fh.flush()
                os.fsync(fh.fileno())
            self.finish_rewrite(ok=True)
            self.rewrites = 0              # the initial base is not a rewrite (INFO)
        else:
            self.manifest = manifest
            self._delete_history()
            if not manifest.incrs:
                self._open_new_incr()
            else:
                self.fd = os.open(self.path_of(manifest.incrs[-1]),
                                  os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            self.size = self._files_size()
            self.base_size = self.size
        if self.fsync == "everysec":
            self._start_sync_thread()

    def _files_size(self) -> int:
        total = 0
        for f in self.manifest.files():
            try:
                total += os.path.getsize(self.path_of(f))
            except OSError:
                pass
        return total

    def _open_new_incr(self) -> AofFile:
        """Creates the next incremental file, lists it in the manifest, makes it the
        one appended to. The manifest is persisted before anything goes there."""
        seq = max([self.manifest.last_incr_seq, self._base_seq]
                  + [f.seq for f in self.manifest.history]) + 1
        incr = AofFile(f"{self.filename}.{seq}.incr.aof", seq, "i")
        fd = os.open(self.path_of(incr), os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_TRUNC,
                     0o644)
        os.fsync(fd)
        self.manifest.incrs.append(incr)
        write_atomically(self.manifest_path, self.manifest.render())
        if self.fd >= 0:
            os.close(self.fd)
        self.fd = fd
        self.buf.db = -1                  # the new file starts with a SELECT
        return incr

    # -- writing -----------------------------------------------------------------------

    def feed(self, db: int, effects: list, seq: int) -> None:
        """Encodes a command's effects, at log position `seq` (nothing is written
        yet). The position is set after the bytes are in: a write that takes them
        before then claims one position less, never one more."""
        self.buf.append_effects(db, effects)
        self.fed_seq = seq

    def drop_buffered(self) -> None:
        """Forgets what was fed since the last write (the next write starts with a
        SELECT)."""
        self.buf.take()
        self.buf.db = -1

    def pending(self) -> int:
        return len(self.buf) + len(self.unwritten)

    def flush(self, sync: Optional[bool] = None) -> None:
        """Writes what is buffered; fsyncs too with `always` (or sync=True).
        Raises OSError when the write fails (the data stays buffered for a retry)."""
        if sync is None:
            sync = self.fsync == "always"
        with self.lock:
            self._write_locked()
            if not (sync and self.unsynced):
                return
            self._fsync(self.fd)
            self.unsynced = False
            self.last_fsync = time.monotonic()
            advanced = self._synced_to(self.written_seq)
        if advanced:
            self._tell_fsynced()

    @property
    def last_errno(self) -> int:
        """Why the log cannot be trusted now (a failed write, else a failed fsync);
        0 when both succeeded last."""
        return self.write_errno or self.fsync_errno

    def _fsync(self, fd: int) -> None:
        """fdatasync, remembering whether it failed (a failed fsync may have lost
        written data, as Redis assumes: writes are refused until one succeeds)."""
        try:
            os.fdatasync(fd)
        except OSError as exc:
            self.fsync_errno = exc.errno or errno.EIO
            raise
        self.fsync_errno = 0

    def _synced_to(self, seq: int) -> bool:
        """An fsync covered everything up to `seq` (lock held): True if that is
        further than before."""
        if seq <= self.fsynced_seq:
            return False
        self.fsynced_seq = seq
        return True

    def _tell_fsynced(self) -> None:
        if self.on_fsynced is not None:
            self.on_fsynced()

    def _write_locked(self) -> None:
        seq = self.fed_seq                # read first: the data taken holds at least it
        data = self.unwritten + self.buf.take() if self.unwritten else self.buf.take()
        self.unwritten = b""
        if not data:
            return
        written = 0
        try:
            written = os.write(self.fd, data)
            if written < len(data):              # rare: a view saves copying the rest
                view = memoryview(data)
                while written < len(data):
                    written += os.write(self.fd, view[written:])
        except OSError as exc:
            code = self._write_failed(data, written, exc)
            raise OSError(code, os.strerror(code)) from exc
        finally:
            self.unsynced = True
        self.size += written
        self.written_seq = seq
        if self.write_errno:
            self.write_errno = 0
            log.warning("AOF write error looks solved, Redis can write again.")

    def _write_failed(self, data: bytes, written: int, exc: OSError) -> int:
        """Keeps what did not reach the file for the next try; returns the errno to
        report (a short write counts as a full disk, as Redis reports it)."""
        now = time.monotonic()
        report = now - self._error_reported > WRITE_ERROR_REPORT_EVERY
        if report:
            self._error_reported = now
        if not written:
            if report:
                log.warning("Error writing to the AOF file: %s", exc.strerror)
            self.unwritten = data
            self.write_errno = exc.errno or errno.EIO
            return self.write_errno
        if report:
            log.warning("Short write while writing to the AOF file: (nwritten=%d, "
                        "expected=%d)", written, len(data))
        try:
            os.ftruncate(self.fd, os.fstat(self.fd).st_size - written)
            self.unwritten = data
        except OSError as trunc:
            if report:
                log.warning("Could not remove short write from the append-only file. The "
                            "AOF may not load the next time the server starts. "
                            "ftruncate: %s", trunc.strerror)
            self.size += written
            self.unwritten = data[written:]
        self.write_errno = errno.ENOSPC
        return self.write_errno

    def _start_sync_thread(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._sync_loop, name="aof-fsync", daemon=True)
        self._thread.start()

    def _sync_loop(self) -> None:
        """Once a second: write what is buffered (what a failed write left, when
        nothing else writes soon) and fsync what was written. The fsync runs outside
        the lock, so the event loop's writes do not wait for the disk; on a duplicate
        of the descriptor, which a rewrite starting meanwhile may close (the file was
        fsynced before that, and the number may already name another file)."""
        while not self._stop.wait(1.0):
            with self.lock:
                try:
                    self._write_locked()
                except OSError:
                    pass                  # reported; the data waits for the next try
                fd = -1
                seq = self.written_seq
                if self.unsynced and self.fd >= 0:
                    try:
                        fd = os.dup(self.fd)
                        self.unsynced = False
                    except OSError:
                        pass              # no descriptor left: try again in a second
            if fd < 0:
                continue
            started = time.monotonic()
            failing = self.fsync_errno
            try:
                self._fsync(fd)
            except OSError as exc:
                if not failing:              # once per failure, as Redis logs it
                    log.warning("Fail to fsync the AOF file: %s", exc.strerror)
                with self.lock:
                    self.unsynced = True     # try again in a second
                continue
            finally:
                os.close(fd)
            self.last_fsync = started
            with self.lock:
                advanced = self._synced_to(seq)
            if advanced:
                self._tell_fsynced()

    def set_policy(self, policy: str) -> None:
        """Switches the fsync policy; what was written so far is fsynced first."""
        if policy not in POLICIES:
            raise ValueError(f"appendfsync must be one of {POLICIES}")
        self._stop_sync_thread()
        try:
            self.flush(sync=True)
        except OSError:
            pass                          # a failing write stays buffered for the next try
        self.fsync = policy
        if policy == "everysec":
            self._start_sync_thread()

    def in_sync_thread(self) -> bool:
        """True when called from the sync thread itself (which may hold the lock)."""
        return self._thread is threading.current_thread()

    def _stop_sync_thread(self) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None

    def close(self) -> None:
        """Final write and fsync; stops the sync thread."""
        self._stop_sync_thread()
        if self.fd >= 0:
            try:
                self.flush(sync=True)
            finally:
                os.close(self.fd)
                self.fd = -1

    # -- rewrite -----------------------------------------------------------------------

    def begin_rewrite(self) -> RewriteJob:
        """Flushes, starts a new incremental file; the caller writes the base (from
        the state as of now) to job.temp_path, then calls finish_rewrite."""
        if self.rewrite is not None:
            raise RuntimeError("a rewrite is already in progress")
        if self.fd >= 0:
            self.flush(sync=True)
        incr = self._open_new_incr()
        temp = os.path.join(self.dir, f"{TEMP_BASE_PREFIX}{os.getpid()}-{incr.seq}.tmp")
        self.rewrite = RewriteJob(temp, incr, time.monotonic())
        return self.rewrite

    def finish_rewrite(self, ok: bool) -> None:
        """Installs the new base (ok) or drops it. The manifest swap is the commit."""
        job, self.rewrite = self.rewrite, None
        if job is None:
            return
        self.last_rewrite_seconds = int(time.monotonic() - job.started)
        if not ok:
            self.last_rewrite_ok = False
            remove_file(job.temp_path)
            return
        m = self.manifest
        seq = max(m.base.seq if m.base else 0, self._base_seq) + 1
        ext = SNAPSHOT_EXTENSION if self.snapshot_base else "aof"
        base = AofFile(f"{self.filename}.{seq}.base.{ext}", seq, "b")
        os.replace(job.temp_path, self.path_of(base))
        fsync_dir(self.dir)
        keep = m.incrs.index(job.first_incr)
        old = ([m.base] if m.base else []) + m.incrs[:keep]
        new = Manifest(base=base, incrs=m.incrs[keep:],
                       history=m.history + [AofFile(f.name, f.seq, "h") for f in old])
        write_atomically(self.manifest_path, new.render())
        self.manifest = new
        self._delete_history()
        self.rewrites += 1
        self.last_rewrite_ok = True
        self.size = self._files_size()
        self.base_size = self.size

    def _delete_history(self) -> None:
        """Removes files the manifest marks as history, then drops them from it."""
        m = self.manifest
        if not m.history:
            return
        for f in m.history:
            remove_file(self.path_of(f))
        m.history = []
        write_atomically(self.manifest_path, m.render())

    def _remove_temp_files(self) -> None:
        """Leftovers of a rewrite that a crash interrupted."""
        try:
            names = os.listdir(self.dir)
        except FileNotFoundError:
            return
        for name in names:
            if name.startswith(TEMP_BASE_PREFIX) or name.startswith("temp-"):
                remove_file(os.path.join(self.dir, name))

    def rewrite_due(self, percentage: int, min_size: int) -> bool:
        """auto-aof-rewrite-percentage / -min-size say a rewrite should start."""
        if not percentage or self.rewrite is not None or self.size < min_size:
            return False
        base = self.base_size or 1
        return (self.size - base) * 100 // base >= percentage


def base_file(directory: str) -> Optional[str]:
    """The base file of the AOF in data directory `directory` (default names), or None
    when it has no AOF or its AOF no base."""
    aof = AppendOnlyLog(directory)
    manifest = aof.read_manifest()
    if manifest is None or manifest.base is None:
        return None
    return aof.path_of(manifest.base)


__all__ = ["AppendOnlyLog", "RewriteJob", "POLICIES", "base_file"]
