"""The preloaded C library (tests/preloaded_calls.c) the tests run servers with:
failing calls on demand, and power cuts. `build` compiles it; `PowerSupply`
drives the durable image it keeps of a data directory: cut the power, rebuild
the directory as a power cut leaves it, start afresh; `syncs` reads the log of
the sync calls the processes made there."""
from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

SOURCE = Path(__file__).with_name("preloaded_calls.c")


def build(where: Path) -> str:
    """Compiles the library into the directory `where`; its path."""
    lib = where / "preloaded_calls.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-Wall", "-o", str(lib),
                    str(SOURCE), "-ldl"], check=True)
    return str(lib)


def process_states() -> dict:
    """{pid: (state letter, parent pid)} of every process, from /proc."""
    found = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except (FileNotFoundError, ProcessLookupError, IndexError):
                continue
            found[int(name)] = (fields[0], int(fields[1]))
    return found


def descendants(pid: int) -> list:
    """pid's children, theirs, and so on (forked save and rewrite children)."""
    states = process_states()
    found, parents = [], {pid}
    while parents:
        children = [p for p, (_, ppid) in states.items() if ppid in parents]
        found += children
        parents = set(children)
    return found


def kill_and_wait(pids: list, timeout: float = 10.0) -> None:
    """SIGKILL to each, then waits until none runs (gone or a zombie)."""
    for victim in pids:
        try:
            os.kill(victim, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + timeout
    while any(process_states().get(p, ("Z",))[0] not in "ZX" for p in pids):
        assert time.monotonic() < deadline, "a killed process still runs"
        time.sleep(0.01)


@dataclass(frozen=True)
class SyncCall:
    """An fsync or fdatasync of a file or directory of the data directory, timed
    with time.monotonic()'s clock: `ended` is None when it had not returned by the
    cut (or failed); `tid` is the calling thread's id (`pid` for the main thread)."""
    began: float
    ended: Optional[float]
    pid: int
    tid: int
    path: str


class PowerSupply:
    """The durable image of `data_dir`, kept in `image_dir` by the library in every
    process started with `env()`. Names in `keep` (the server's log file) are not
    data: they survive a cut as they are."""

    def __init__(self, library: str, data_dir: str, image_dir: str,
                 keep: tuple = ("sluice.log",)) -> None:
        self.library = library
        self.data_dir = data_dir
        self.image_dir = image_dir
        self.keep = keep
        self.sync_log = image_dir.rstrip("/") + ".syncs"
        os.makedirs(image_dir, exist_ok=True)

    def env(self) -> dict:
        return {**os.environ, "LD_PRELOAD": self.library, "DURABLE_DATA": self.data_dir,
                "DURABLE_IMAGE": self.image_dir, "DURABLE_SYNC_LOG": self.sync_log}

    def syncs(self) -> list:
        """Every sync call logged so far (across cuts), in the order they began."""
        began, ended = {}, {}
        try:
            with open(self.sync_log) as fh:
                lines = fh.read().splitlines()
        except FileNotFoundError:
            return []
        for line in lines:
            if line.startswith("B "):
                _, start, pid, tid, path = line.split(" ", 4)
                began[(start, pid, tid, path)] = None
            else:
                _, start, end, pid, tid, path = line.split(" ", 5)
                ended[(start, pid, tid, path)] = int(end) / 1e9
        calls = [SyncCall(int(start) / 1e9, ended.get((start, pid, tid, path)), int(pid),
                          int(tid), path) for start, pid, tid, path in began]
        return sorted(calls, key=lambda c: c.began)

    def cut(self, pid: Optional[int]) -> None:
        """The power cut: nothing more becomes durable (a sync call from now on
        never returns), then process pid (our child, not yet reaped; None when it
        has exited) and its children die by SIGKILL."""
        with open(os.path.join(self.image_dir, "lock"), "a+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            open(os.path.join(self.image_dir, "cut"), "w").close()
        if pid is not None:
            kill_and_wait([pid] + descendants(pid))

    def restore(self) -> None:
        """Rebuilds the data directory as the cut left it, then starts a new image
        (the next server's start records the rebuilt directory as durable)."""
        image = Path(self.image_dir)
        root = (image / "root").read_text().strip()
        for name in os.listdir(self.data_dir):
            if name not in self.keep:
                path = os.path.join(self.data_dir, name)
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path)
                else:
                    os.unlink(path)
        self._rebuild(root, Path(self.data_dir), top=True)
        shutil.rmtree(self.image_dir)
        os.makedirs(self.image_dir)

    def _rebuild(self, key: str, into: Path, top: bool = False) -> None:
        """Each durably named entry of directory `key`: a file with its inode's last
        synced content (empty if it never was), a directory rebuilt alike."""
        image = Path(self.image_dir)
        listing = image / "dirs" / key
        for line in listing.read_text().splitlines() if listing.exists() else []:
            kind, child, name = line.split(" ", 2)
            if top and name in self.keep:
                continue
            if kind == "d":
                (into / name).mkdir()
                self._rebuild(child, into / name)
            else:
                content = image / "files" / child
                (into / name).write_bytes(content.read_bytes() if content.exists() else b"")

    def files(self) -> dict:
        """{relative path: size} of the data directory now (for reports)."""
        out = {}
        for base, _, names in os.walk(self.data_dir):
            for name in names:
                path = os.path.join(base, name)
                out[os.path.relpath(path, self.data_dir)] = os.path.getsize(path)
        return out
