"""Running a sluice-server as a child process (the example pipeline, benchmarks, tests).

    with ServerProcess(["--requirepass", "s3cret"]) as srv:
        r = redis.Redis(port=srv.port, password="s3cret")
        ...
    srv.returncode, srv.log_text()

The server listens on 127.0.0.1 and a free port, logs to a file in its own
temporary directory (`dir`), and is stopped with SIGTERM (escalating to SIGKILL).
It runs as `python -m engine.server` in its own process: nothing here imports the
engine, so the demo stays a client of it (and tests/servers.py builds on this).
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Optional, Sequence

STARTUP_TIMEOUT_S = 15.0
LOG_TAIL_CHARS = 4000      # of the log, in the error when the server does not start
_ROOT = Path(__file__).resolve().parents[1]   # the child imports this tree's engine


def free_port() -> int:
    """A loopback port that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _listening_inodes(port: int) -> Optional[set]:
    """Inodes of the TCP sockets listening on `port` (Linux's /proc/net), None without it."""
    inodes = set()
    found = False
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        found = True
        for line in lines:
            fields = line.split()
            if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:  # 0A: LISTEN
                inodes.add(fields[9])
    return inodes if found else None


def listens_on(pid: int, port: int) -> bool:
    """Whether process `pid` holds the socket listening on `port`: a PONG alone may come
    from another server that took the port between free_port() and this one's bind (the
    child then exits, and its caller would have talked to a stranger). True where /proc
    cannot tell."""
    inodes = _listening_inodes(port)
    if inodes is None:
        return True
    try:
        descriptors = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in descriptors:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:[") and target[8:-1] in inodes:
            return True
    return False


def _answers_ping(port: int, unix: Optional[str] = None) -> bool:
    try:
        if unix:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(1.0)
            s.connect(unix)
        else:
            s = socket.create_connection(("127.0.0.1", port), timeout=1.0)
        with s:
            s.sendall(b"*1\r\n$4\r\nPING\r\n")
            data = b""
            while not data.endswith(b"\r\n"):
                chunk = s.recv(1024)
                if not chunk:
                    return False
                data += chunk
            return data.startswith(b"+PONG") or data.startswith(b"-NOAUTH")
    except OSError:
        return False


def stop_child(proc: subprocess.Popen, sig: int = signal.SIGTERM, timeout: float = 10.0) -> None:
    """Signals a child still running and waits for it, killing it past `timeout`."""
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


class ChildServer:
    """What any server run as a child process has: its process while it runs, its exit
    status once stopped, a log file; used in a `with` block, it is closed at the end.
    Subclasses start it and set proc, port and logfile."""

    proc: Optional[subprocess.Popen] = None
    returncode: Optional[int] = None
    port: Optional[int] = None
    logfile: str = ""

    def start(self) -> "ChildServer":
        raise NotImplementedError

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10.0) -> Optional[int]:
        """Signals the server and waits; returns its exit status."""
        proc = self.proc
        if proc is None:
            return self.returncode
        stop_child(proc, sig, timeout)
        for pipe in (proc.stdin, proc.stderr):
            if pipe is not None:
                pipe.close()
        self.returncode = proc.returncode
        self.proc = None
        return self.returncode

    def log_text(self) -> str:
        try:
            return Path(self.logfile).read_text(errors="replace")
        except OSError:
            return ""

    def close(self) -> None:
        self.stop()

    def __enter__(self) -> "ChildServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()


class ServerProcess(ChildServer):
    """A sluice-server child process (see the module docstring)."""

    def __init__(self, args: Sequence[str] = (), *, port: Optional[int] = None,
                 workdir: Optional[str] = None, loglevel: str = "verbose",
                 env: Optional[dict] = None,
                 preexec_fn: Optional[Callable[[], None]] = None,
                 config_file: Optional[str] = None) -> None:
        """preexec_fn runs in the child before the server starts (resource limits);
        config_file is read first (and is what CONFIG REWRITE writes)."""
        self.args = list(args)
        self.config_file = config_file
        self.port = port
        self._tmp = None
        if workdir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="sluice-")
            workdir = self._tmp.name
        self.dir = workdir
        self.loglevel = loglevel
        self.env = env
        self.preexec_fn = preexec_fn
        self.stderr_text = ""       # what a run that exited at startup wrote to stderr
        self.logfile = os.path.join(self.dir, "sluice.log")

    @property
    def unixsocket(self) -> Optional[str]:
        if "--unixsocket" in self.args:
            return self.args[self.args.index("--unixsocket") + 1]
        return None

    def start(self) -> "ServerProcess":
        env = dict(os.environ if self.env is None else self.env)
        env["PYTHONPATH"] = str(_ROOT) + (os.pathsep + env["PYTHONPATH"]
                                         if env.get("PYTHONPATH") else "")
        for _ in range(3):
            port = self.port if self.port is not None else free_port()
            argv = [sys.executable, "-m", "engine.server",
                    *([self.config_file] if self.config_file else []), "--port", str(port),
                    "--bind", "127.0.0.1", "--dir", self.dir, "--logfile", self.logfile,
                    "--loglevel", self.loglevel, *self.args]
            self.proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                         preexec_fn=self.preexec_fn)
            deadline = time.monotonic() + STARTUP_TIMEOUT_S
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    break
                if _answers_ping(port, self.unixsocket if port == 0 else None) and (
                        port == 0 or listens_on(self.proc.pid, port)):
                    self.port = port
                    return self
                time.sleep(0.05)
            if self.proc.poll() is not None:        # exited: its stderr says why
                self.stderr_text = self.proc.stderr.read().decode(errors="replace")
            self.stop()
            if self.port is not None:
                break
        raise RuntimeError("sluice-server did not start:\n" + self.log_text()[-LOG_TAIL_CHARS:]
                           + self.stderr_text)

    def close(self) -> None:
        self.stop()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
