"""Durable steps on the file system: a new directory, a new file or a rename in a
directory survives a power cut only once that directory is fsynced (a crash of the
process alone leaves them to the kernel either way)."""
from __future__ import annotations

import os


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


__all__ = ["fsync_dir", "make_dirs"]
