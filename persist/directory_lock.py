"""One owner per data directory.

The server or an embedded Engine holds an exclusive `flock` on `<dir>/sluice.lock`
for as long as it has the directory open, and every tool that writes there takes the
same lock first. Without it, a tool could rewrite the AOF under a running server:
the new manifest would no longer name the file the server goes on appending to, and
its later, acknowledged writes would be gone at the next start.

The lock, not the file, is the truth: the kernel drops a flock when its holder dies
(kill -9 included), so a lock file left behind blocks nobody. The holder writes its
pid into the file only so that a refusal can name it.

A forked child (BGSAVE, BGREWRITEAOF, or a fork of the user's) closes its copy of
the lock's file at once: closing a copy does not unlock, and the lock lives exactly
as long as its owner, so a refusal never names a dead process. `die_with_parent`
ends a writing child together with its parent, so no orphan goes on writing into a
directory a new owner has taken.
"""
from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import signal
import time
import weakref
from typing import Optional

from persist.errors import PersistError

LOCK_NAME = "sluice.lock"
_PR_SET_PDEATHSIG = 1          # linux/prctl.h
# Looked up now, in the parent: a forked child of a threaded process must not dlopen.
_prctl = getattr(ctypes.CDLL(None, use_errno=True), "prctl", None)
_PID_READ_TRIES = 20           # a new holder writes its pid just after locking


class DirectoryInUse(PersistError):
    """Another process (or another Engine of this one) owns the data directory."""

    def __init__(self, directory: str, pid: Optional[int], lock_path: str) -> None:
        self.directory = directory
        self.pid = pid
        self.lock_path = lock_path
        holder = f"process {pid}" if pid else "another process"
        super().__init__(f"data directory {directory} is in use by {holder} "
                         f"(lock file {lock_path})")


_held: "weakref.WeakSet[DirectoryLock]" = weakref.WeakSet()


class DirectoryLock:
    """The exclusive lock on one data directory (see the module docstring)."""

    def __init__(self, directory: str) -> None:
        self.dir = os.path.abspath(directory)
        self.path = os.path.join(self.dir, LOCK_NAME)
        self._fd = -1
        self._owner = 0                  # the pid that took it

    def acquire(self) -> "DirectoryLock":
        """Takes the lock without waiting; DirectoryInUse names the holder, and a
        PersistError says why the lock file cannot be used."""
        if self._fd >= 0:
            return self
        fd = self._open()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            try:
                if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                    raise DirectoryInUse(self.dir, _holder_pid(fd), self.path) from None
                raise self._unusable(exc) from None
            finally:
                os.close(fd)
        line = b"%d\n" % os.getpid()
        try:
            os.pwrite(fd, line, 0)            # then cut: never an empty file to read
            os.ftruncate(fd, len(line))
        except OSError:
            pass                  # opened read-only: locked all the same, without the pid
        self._fd, self._owner = fd, os.getpid()
        _held.add(self)
        return self

    def _open(self) -> int:
        """The lock file, created if need be; read-only where the directory is (a
        read-only fd locks as well)."""
        try:
            try:
                return os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            except OSError as exc:
                if exc.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
                    raise
                return os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError as exc:
            raise self._unusable(exc) from None

    def _unusable(self, exc: OSError) -> PersistError:
        return PersistError(f"cannot lock the data directory {self.dir}: {self.path}: "
                            f"{exc.strerror}")

    def release(self) -> None:
        """Unlocks (only in the process that took it)."""
        fd, self._fd = self._fd, -1
        _held.discard(self)
        if fd < 0:
            return
        try:
            if os.getpid() == self._owner:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def _drop_copy(self) -> None:
        """In a forked child: close the inherited copy, which leaves the parent's
        lock in place."""
        fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)

    def __enter__(self) -> "DirectoryLock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def _forked_child() -> None:
    for lock in list(_held):
        lock._drop_copy()
    _held.clear()


os.register_at_fork(after_in_child=_forked_child)


def _holder_pid(fd: int) -> Optional[int]:
    """The pid the holder wrote (None if it cannot be read)."""
    for _ in range(_PID_READ_TRIES):
        text = os.pread(fd, 32, 0).split(b"\n")[0]
        if text.isdigit():
            return int(text)
        time.sleep(0.005)
    return None


def die_with_parent(parent: int) -> None:
    """In a forked child: be killed when `parent` dies (Linux's PR_SET_PDEATHSIG), and
    exit at once if it already has."""
    if _prctl is not None:
        _prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


__all__ = ["DirectoryLock", "DirectoryInUse", "die_with_parent", "LOCK_NAME"]
