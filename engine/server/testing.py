"""Running a sluice-server as a child process (tests, benchmarks, tools).

    with ServerProcess(["--requirepass", "s3cret"]) as srv:
        r = redis.Redis(port=srv.port, password="s3cret")
        ...
    srv.returncode, srv.log_text()

The server listens on 127.0.0.1 and a free port, logs to a file in its own
temporary directory (`dir`), and is stopped with SIGTERM (escalating to SIGKILL).
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
ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    """A loopback port that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


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


class ServerProcess:
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
        self.proc: Optional[subprocess.Popen] = None
        self.returncode: Optional[int] = None
        self.logfile = os.path.join(self.dir, "sluice.log")

    @property
    def unixsocket(self) -> Optional[str]:
        if "--unixsocket" in self.args:
            return self.args[self.args.index("--unixsocket") + 1]
        return None

    def start(self) -> "ServerProcess":
        env = dict(os.environ if self.env is None else self.env)
        env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"]
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
                if _answers_ping(port, self.unixsocket if port == 0 else None):
                    self.port = port
                    return self
                time.sleep(0.05)
            self.stop()
            if self.port is not None:
                break
        raise RuntimeError("sluice-server did not start:\n" + self.log_text()
                           + (self.proc.stderr.read().decode(errors="replace")
                              if self.proc and self.proc.stderr else ""))

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10.0) -> Optional[int]:
        """Signals the server and waits; returns its exit status."""
        proc = self.proc
        if proc is None:
            return self.returncode
        stop_child(proc, sig, timeout)
        if proc.stderr is not None:
            proc.stderr.close()
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
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> "ServerProcess":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()


def raw_socket(port: int, timeout: float = 5.0) -> socket.socket:
    """A plain TCP connection to a local server, for tests that speak raw bytes."""
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(timeout)
    return s


def read_all(s: socket.socket, quiet: float) -> tuple:
    """(everything the server sends, whether it closed the connection): reads until
    it closes or stays quiet for `quiet` seconds."""
    s.settimeout(quiet)
    out = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return out, True
            out += chunk
    except socket.timeout:
        return out, False
    except ConnectionResetError:
        return out, True


def read_until_closed(s: socket.socket, limit: float = 5.0) -> bytes:
    """Everything the server sends until it closes the connection (or `limit` s)."""
    return read_all(s, limit)[0]
