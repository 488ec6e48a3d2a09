"""Steps on the file system. Durable ones: a new directory, a new file or a rename in
a directory survives a power cut only once that directory is fsynced (a crash of the
process alone leaves them to the kernel either way). And removals that a missing
file does not fail."""
from __future__ import annotations

import logging
import os
import tempfile
from typing import Optional

log = logging.getLogger("sluice")


def fsync_dir(path: str) -> None:
    """Makes a rename or a new file in `path` durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def make_dirs(path: str) -> None:
    """os.makedirs, durably: each directory it creates is fsynced into its parent
    (else a power cut may take the new directory and all written into it)."""
    path = os.path.abspath(path)
    if os.path.isdir(path):
        return
    parent = os.path.dirname(path)
    make_dirs(parent)
    try:
        os.mkdir(path)
    except FileExistsError:
        pass
    fsync_dir(parent)


def remove_file(path: str) -> bool:
    """Removes `path` if it is there (True if it was); any other failure is logged,
    not raised: what is removed is never needed again."""
    try:
        os.unlink(path)
        return True
    except FileNotFoundError:
        return False
    except OSError as exc:
        log.warning("Could not remove %s: %s", path, exc.strerror)
        return False


def current_umask() -> int:
    """The process umask, read without changing it when /proc allows (other threads may be
    creating files), else by setting and restoring it as redis-server does at start-up."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


def write_atomically(path: str, data: bytes, umask: Optional[int] = None) -> None:
    """Replaces `path` with `data`, whole or not at all: a temporary file beside it
    (`temp-...`, which the AOF directory's cleanup removes after a crash), fsynced, made
    0644 less the umask (the process's unless given), renamed over `path`, and the
    directory fsynced so that the rename survives a power cut; raises OSError."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="temp-" + os.path.basename(path) + ".", dir=directory)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fchmod(fd, 0o644 & ~(current_umask() if umask is None else umask))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        remove_file(tmp)
        raise
    fsync_dir(directory)


__all__ = ["current_umask", "fsync_dir", "make_dirs", "remove_file", "write_atomically"]
