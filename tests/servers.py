"""The one way tests start servers: RedisServer (Debian's redis-server, the oracle) and
SluiceServer (our sluice-server), each on a free loopback port unless told one, logging
to a file in a directory of the test run. When a server does not start, the error holds
the tail of its log; when a test fails, its report holds the log tails of the servers
that ran during it (conftest.py's pytest_runtest_makereport).

    with RedisServer(ORACLE_FLAGS, workdir=tmp_path) as srv:
        redis.Redis(port=srv.port).xadd(...)
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Callable, Optional, Sequence

import pytest
import redis

from examples.processes import ChildServer, ServerProcess, free_port, listens_on

ROOT = Path(__file__).resolve().parents[1]      # the project's checkout
READY_TIMEOUT_S = 10.0
START_ATTEMPTS = 3          # a free port may be taken before the server binds it
LOG_TAIL_CHARS = 4000

# redis-server as the differential oracle: nothing on disk, loopback only, quiet logs.
ORACLE_FLAGS = ("--save", "", "--appendonly", "no", "--protected-mode", "yes",
                "--loglevel", "warning")

# Set by conftest for the session: where servers started without a workdir keep theirs.
tmp_path_factory: Optional[pytest.TempPathFactory] = None

# Servers started and not yet reported on (see servers_seen_since).
_started: list = []


def checkout_env(**extra: str) -> dict:
    """os.environ with this checkout first on PYTHONPATH (and `extra` set): a child
    Python process runs this tree's sluice, engine and examples, not an installed copy."""
    return dict(os.environ, **extra,
                PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def log_tail(path: str | os.PathLike, limit: int = LOG_TAIL_CHARS) -> str:
    """The end of a log file ("" when there is none yet)."""
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return ""
    return text if len(text) <= limit else "...\n" + text[-limit:]


def fresh_dir(name: str) -> Path:
    """A new directory of this test run (kept by pytest for the last runs)."""
    if tmp_path_factory is not None:
        return tmp_path_factory.mktemp(name)
    return Path(tempfile.mkdtemp(prefix=name + "-"))


def redis_server_binary() -> str:
    """Path of redis-server: a failure in CI (the oracle is mandatory there), a skip elsewhere."""
    binary = shutil.which("redis-server")
    if binary:
        return binary
    if os.environ.get("CI") == "true":
        pytest.fail("CI=true but redis-server is not installed: the differential oracle is required "
                    "in CI (install it with `make oracle` or apt-get install redis-server)", pytrace=False)
    pytest.skip(reason="redis-server (the differential oracle) is not installed; `make test` installs it")


needs_redis = pytest.mark.skipif(shutil.which("redis-server") is None and os.environ.get("CI") != "true",
                                 reason="redis-server is not installed (`make oracle`)")
"""Marks a test (or, as `pytestmark`, a module) that starts redis-server: skipped where
it is not installed, except in CI, where the oracle is mandatory (the start fails)."""


def wait_for_ping(client: redis.Redis, proc: subprocess.Popen, log: Callable[[], str] = lambda: "") -> None:
    """Returns once the server answers PING through `client` (so its TLS settings are
    checked too; a server that wants a password counts as up) from the port `proc` listens
    on (not another server's that took the port first); kills it and fails, with its log,
    when it exits or does not answer within READY_TIMEOUT_S."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    port = client.connection_pool.connection_kwargs["port"]
    while True:
        try:
            try:
                client.ping()
            except redis.AuthenticationError:
                pass
            if listens_on(proc.pid, port):
                return
            raise redis.ConnectionError(f"port {port} is another process's")
        except redis.ConnectionError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                proc.wait()
                raise ServerDidNotStart(f"the server did not answer PING:\n{log()}") from None
            time.sleep(0.05)


class ServerDidNotStart(RuntimeError):
    """A server exited or did not answer in time; the message ends with its log's tail."""


def servers_seen_since(start: float) -> list:
    """(name, log tail) of the servers running at `start` (time.time()) or started since,
    for a failure report; forgets those stopped before it."""
    _started[:] = [s for s in _started if s.stopped_at is None or s.stopped_at >= start]
    return [(f"{type(s).__name__} on port {s.port} ({s.logfile})", log_tail(s.logfile))
            for s in _started]


class _Tracked(ChildServer):
    """A server that servers_seen_since knows of from its start to its stop."""

    stopped_at: Optional[float] = None

    def track(self) -> None:
        self.stopped_at = None
        if self not in _started:
            _started.append(self)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10.0) -> Optional[int]:
        if self.proc is not None:
            self.stopped_at = time.time()
        return super().stop(sig, timeout)


class RedisServer(_Tracked):
    """A redis-server child process: `args` after --port/--bind 127.0.0.1/--dir/--daemonize
    no (or, with args_only, exactly `args`, for tests of redis-server's own argument
    parsing: `port` is then only where to ping). stdout and stderr go to `logfile`."""

    def __init__(self, args: Sequence[str] = (), *, workdir: Optional[str | os.PathLike] = None,
                 port: Optional[int] = None, port_option: str = "--port",
                 config_file: Optional[str | os.PathLike] = None, args_only: bool = False,
                 client_options: Optional[dict] = None, stdin: Optional[bytes] = None,
                 preexec_fn: Optional[Callable[[], None]] = None, env: Optional[dict] = None,
                 close_signal: int = signal.SIGTERM) -> None:
        """port_option: "--tls-port" for a server speaking TLS only (give "--port", "0"
        in args and the TLS settings in client_options, used to wait for its PING).
        close_signal: SIGKILL for a server that could not save on its way out."""
        self.args = list(args)
        self.dir = str(workdir if workdir is not None else fresh_dir("redis"))
        self.port = port
        self._fixed_port = port is not None
        self.port_option = port_option
        self.config_file = config_file
        self.args_only = args_only
        self.client_options = client_options or {}
        self.stdin = stdin
        self.preexec_fn = preexec_fn
        self.env = env
        self.close_signal = close_signal
        self.logfile = os.path.join(self.dir, f"redis-{time.monotonic_ns()}.log")

    def argv(self) -> list:
        if self.args_only:
            return [redis_server_binary(), *self.args]
        return [redis_server_binary(), *([str(self.config_file)] if self.config_file else []),
                self.port_option, str(self.port), "--bind", "127.0.0.1", "--dir", self.dir,
                "--daemonize", "no", *self.args]

    def try_start(self) -> Optional[str]:
        """None once the server answers PING; its output if it exits first (a
        configuration it refuses). Fails the test if it does neither in time."""
        if self.port is None:
            self.port = free_port()
        self.track()
        with open(self.logfile, "ab") as log:       # the child keeps its own descriptor
            self.proc = subprocess.Popen(
                self.argv(), stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL if self.stdin is None else subprocess.PIPE,
                preexec_fn=self.preexec_fn, env=self.env)
        if self.stdin is not None:
            self.proc.stdin.write(self.stdin)
            self.proc.stdin.close()
        client = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=1.0,
                             **self.client_options)
        try:
            wait_for_ping(client, self.proc, self.log_tail)
        except ServerDidNotStart:
            if self.proc.returncode is not None and self.proc.returncode >= 0:
                self.stop()
                return self.log_text()
            raise ServerDidNotStart(f"redis-server {self.argv()} neither started nor exited:\n"
                                    + self.log_tail()) from None
        finally:
            client.close()
        return None

    def start(self) -> "RedisServer":
        for _ in range(START_ATTEMPTS):
            output = self.try_start()
            if output is None:
                return self
            if self._fixed_port or "Address already in use" not in output:
                break
            self.port = None
        raise ServerDidNotStart(f"redis-server {self.argv()} exited:\n" + self.log_tail())

    def client(self, **options) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, **{**self.client_options, **options})

    def log_tail(self) -> str:
        return log_tail(self.logfile)

    def close(self) -> None:
        self.stop(self.close_signal)


class SluiceServer(_Tracked, ServerProcess):
    """examples.processes's ServerProcess, kept in a directory of the test run when
    given none, and named in the report of a test that fails while it runs."""

    def __init__(self, args: Sequence[str] = (), *, workdir: Optional[str | os.PathLike] = None,
                 **options) -> None:
        super().__init__(args, workdir=str(workdir if workdir is not None else fresh_dir("sluice")),
                         **options)

    def start(self) -> "SluiceServer":
        self.track()
        try:
            return super().start()
        except RuntimeError as exc:
            raise ServerDidNotStart(str(exc)) from None


SERVER_KINDS = {"redis": RedisServer, "sluice": SluiceServer}
"""The two servers by name, for tests run against either (`pytest.mark.parametrize("kind", SERVER_KINDS)`)."""


def server_of_kind(kind: str, args: Sequence[str] = (), **options) -> _Tracked:
    """A server of `kind` ("redis" or "sluice"), not started, that keeps nothing on disk."""
    return SERVER_KINDS[kind](["--save", "", "--appendonly", "no", *args], **options)


def tls_server(kind: str, certs, args: Sequence[str] = (), **options) -> _Tracked:
    """A server of `kind` with a plain port (`port`) and a TLS port (`tls_port`) using
    `certs` (tests/tls_certs.py's TestCerts); `args` come after the TLS ones, so they may
    change them (`--tls-auth-clients no`, `--port 0` with `--unixsocket` for TLS only)."""
    tls_port = free_port()
    srv = server_of_kind(kind, ["--tls-port", str(tls_port), *certs.server_args(), *args],
                         **options)
    srv.tls_port = tls_port
    return srv
