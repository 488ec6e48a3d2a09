"""`sluice-server [config-file] [--directive value ...] [-]`: the server's entry point.

Reads the configuration like redis-server (engine/server/config/), changes to
`dir`, sets up logging (Redis's line format, `loglevel`, `logfile`), runs the server on
uvloop (asyncio's loop if uvloop is missing) and exits 0 on SIGTERM/SIGINT or SHUTDOWN
after closing the listeners and the clients.

`pidfile` is written once the server owns everything it needs: the data directory's
lock (taken while loading) and its listening sockets. Redis 7.0 likewise binds its
ports before it writes the file; a start refused for a resource another process holds
(the directory, the port) must leave that process's pid file as it is.
"""
from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
import time
from typing import Optional, Sequence

from engine.server.config.command_line import usage
from engine.server.config.errors import ConfigError
from engine.server.config.server_config import ServerConfig
from engine.server.config.version import VERSION, version_text

log = logging.getLogger("sluice")

_LEVEL_CHARS = {logging.DEBUG: ".", 15: "-", logging.INFO: "*", logging.WARNING: "#",
                logging.ERROR: "#", logging.CRITICAL: "#"}


class RedisFormatter(logging.Formatter):
    """`pid:M 21 Nov 2026 10:00:00.123 * message`, like redis-server's log lines."""

    def __init__(self, role: str = "M") -> None:
        super().__init__()
        self.role = role

    def format(self, record: logging.LogRecord) -> str:
        t = time.localtime(record.created)
        stamp = time.strftime("%d %b %Y %H:%M:%S", t) + ".%03d" % int(record.msecs)
        text = record.getMessage()
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return "%d:%s %s %s %s" % (os.getpid(), self.role, stamp,
                                   _LEVEL_CHARS.get(record.levelno, "*"), text)


def setup_logging(cfg: ServerConfig) -> None:
    from engine.server.server import set_log_level
    logging.addLevelName(15, "VERBOSE")
    for handler in list(log.handlers):
        log.removeHandler(handler)
    if cfg.logfile:
        handler: logging.Handler = logging.FileHandler(cfg.logfile)
    else:
        handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(RedisFormatter())
    log.addHandler(handler)
    log.propagate = False
    set_log_level(cfg.loglevel)


def new_event_loop() -> asyncio.AbstractEventLoop:
    """uvloop's loop when installed, else asyncio's."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is a dependency
        log.warning("uvloop is not installed: using asyncio's event loop (slower)")
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


class PidFile:
    """The `pidfile` of this run: removed at exit only if this run wrote it."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.written = False

    def write(self) -> None:
        if not self.path:
            return
        try:
            with open(self.path, "w") as f:
                f.write("%d\n" % os.getpid())
            self.written = True
        except OSError as exc:
            log.warning("Failed to write PID file: %s", exc.strerror)

    def remove(self) -> None:
        if not self.written:
            return
        log.info("Removing the pid file.")
        try:
            os.unlink(self.path)
        except OSError:
            pass


async def _run(server, pidfile: PidFile) -> None:
    from engine.server.server import ListenError
    loop = asyncio.get_running_loop()

    def report(loop, context) -> None:
        log.error("Unexpected error in the event loop: %s", context.get("message"),
                  exc_info=context.get("exception"))
    loop.set_exception_handler(report)
    try:
        await server.start(bound=pidfile.write)
    except ListenError as exc:
        log.warning("%s", exc)
        log.warning("Failed listening on port %d (%s), aborting.",
                    server.cfg.port if exc.port is None else exc.port, exc.kind)
        server.exit_code = 1
        return
    for sig, name in ((signal.SIGTERM, "SIGTERM"), (signal.SIGINT, "SIGINT")):
        try:
            loop.add_signal_handler(sig, server.request_shutdown, name)
        except (NotImplementedError, RuntimeError):  # pragma: no cover - not on this OS
            pass
    await server.wait_closed()


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The console script. Returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    cfg = ServerConfig()
    try:
        cmdline = cfg.apply_args(args)
    except ConfigError as err:
        sys.stderr.write(err.report())
        return 1
    if cmdline.action == "version":
        print(version_text())
        return 0
    if cmdline.action == "help":
        sys.stderr.write(usage())
        return 1
    try:
        os.chdir(cfg.dir)
    except OSError as exc:
        sys.stderr.write(f"Can't chdir to '{cfg.dir}': {exc.strerror}\n")
        return 1
    setup_logging(cfg)
    log.warning("oO0OoO0OoO0Oo Sluice is starting oO0OoO0OoO0Oo")
    log.warning("Sluice version=%s, bits=64, pid=%d, just started", VERSION, os.getpid())
    if cmdline.config_file:
        log.warning("Configuration loaded")
    else:
        log.warning("Warning: no config file specified, using the default config. In order "
                    "to specify a config file use %s /path/to/sluice.conf",
                    "sluice-server")
    from engine.server.server import Server
    from engine.server.tls import FAILED_TO_CONFIGURE, TlsConfigError
    from persist import DirectoryInUse, PersistError
    from engine.api.acl.user_rules import RuleError
    loop = new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        server = Server(cfg)
    except DirectoryInUse as exc:
        # Fatal, as a bad configuration: in the log and on stderr.
        log.warning("Fatal error, can't start: %s", exc)
        if cfg.logfile:
            sys.stderr.write(f"Fatal error, can't start: {exc}\n")
        loop.close()
        return 1
    except TlsConfigError as exc:
        log.warning("%s", exc)
        log.warning("%s", FAILED_TO_CONFIGURE)
        loop.close()
        return 1
    except PersistError as exc:
        log.warning("Could not load the data directory: %s", exc)
        loop.close()
        return 1
    except RuleError as exc:            # the ACL's users (aclfile, `user` lines)
        log.warning("%s", exc)
        loop.close()
        return 1
    log.info("Running mode=standalone, port=%d.", cfg.port)
    log.warning("Server initialized")
    pidfile = PidFile(cfg.pidfile)
    server.exit_hooks.append(pidfile.remove)
    try:
        loop.run_until_complete(_run(server, pidfile))
    finally:
        try:
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()
        pidfile.remove()
    if server.exit_code == 0:
        log.warning("Sluice is now ready to exit, bye bye...")
    return server.exit_code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
