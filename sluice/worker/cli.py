"""`sluice-worker`: the reliable consumer in one command, for trying the library out
and for running handlers that need no program of their own.

    sluice-worker myapp.tasks:handle --stream orders --group billing --url redis://localhost:6379/0

Every WorkerConfig and RecoveryConfig setting is a flag, built from the dataclasses'
own fields and defaults, so the command cannot drift from the library."""
from __future__ import annotations

import argparse
import dataclasses
import importlib
import logging
import os
import socket
import sys
import typing
from typing import Any, Optional, Sequence
from urllib.parse import unquote, urlsplit, urlunsplit

import redis
from redis.cluster import RedisCluster
from redis.exceptions import RedisClusterException

from sluice.worker.config import ConfigError, RecoveryConfig, WorkerConfig
from sluice.worker.worker import Handler, Worker

log = logging.getLogger("sluice.worker.cli")

EXIT_STOPPED, EXIT_FAILED, EXIT_USAGE, EXIT_UNREACHABLE = 0, 1, 2, 3
EXIT_CODES = f"""exit status:
  {EXIT_STOPPED}  stopped by SIGTERM or SIGINT (Ctrl-C) after a graceful shutdown: reading
     stopped, in-flight handlers got --shutdown-timeout, the rest was requeued
  {EXIT_FAILED}  the worker failed while running (the log says why)
  {EXIT_USAGE}  usage error: a bad flag, settings that cannot work, a handler that cannot
     be imported
  {EXIT_UNREACHABLE}  the server could not be reached (or refused the login) at start"""

# The fields the command line sets apart from the per-setting flags.
_NAMED = {"stream", "group", "consumer", "recovery"}
# What each setting's flag says; the default comes from the dataclass.
_HELP = {
    "concurrency": "handlers running at once, as threads",
    "lock_ttl": "seconds a lock lives without renewal; a dead worker's tasks wait this long",
    "heartbeat_interval": "seconds between lock renewals (default: lock-ttl / 2)",
    "block": "XREADGROUP BLOCK in seconds; also how fast a stop is noticed",
    "shutdown_timeout": "seconds in-flight handlers get on SIGTERM before their tasks are requeued",
    "reconciliation_interval": "seconds between periodic recovery scans (one also runs at start)",
    "min_idle_time": "seconds a pending entry must idle before a scan considers it "
                     "(at least 2 x lock-ttl)",
    "batch_size": "most entries one scan requeues",
    "max_retries": "requeues before an entry goes to the dead-letter stream",
    "dlq_stream": "dead-letter stream (default: the stream's name in braces then ':dlq', e.g. "
                  "'{orders}:dlq' for stream orders: the braces keep it in the stream's Redis "
                  "Cluster slot; '' for none: dropped and logged)",
    "field_prefix": "prefix of the library's fields (_retry_count, _original_id, _last_error)",
    "scan_jitter": "scan interval jitter, as a fraction of it",
    "keyspace_listener": "requeue at once on lock-key expired events (the fast path)",
    "retry_backoff": "when a failed task is requeued: immediate, fixed (--retry-delay), "
                     "exponential (--retry-delay doubled per retry up to --retry-delay-max) or "
                     "lock (once its lock expires)",
    "retry_delay": "seconds before a failed task's retry (the first, with exponential)",
    "retry_delay_max": "the longest exponential retry delay, in seconds",
    "idle_consumer_timeout": "scans remove the group's consumers that have nothing pending and "
                             "read nothing for this many seconds (XGROUP DELCONSUMER)",
    "metrics_port": "serve Prometheus /metrics on this port (0: any free one; default: not served)",
    "metrics_host": "the address /metrics listens on",
}
_METAVARS = {float: "SECONDS", int: "N", str: "TEXT"}


def _flag_type(owner: type, name: str) -> type:
    """What a setting's flag parses: its annotation, Optional[X] read as X."""
    hint = typing.get_type_hints(owner)[name]
    if typing.get_origin(hint) is typing.Union:
        [hint] = [arg for arg in typing.get_args(hint) if arg is not type(None)]
    return hint


def setting_fields() -> list[tuple[str, dataclasses.Field]]:
    """("worker" | "recovery", field) of every setting that has its own flag."""
    return ([("worker", f) for f in dataclasses.fields(WorkerConfig) if f.name not in _NAMED]
            + [("recovery", f) for f in dataclasses.fields(RecoveryConfig)])


def _default(f: dataclasses.Field) -> Any:
    return f.default_factory() if f.default is dataclasses.MISSING else f.default


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="sluice-worker", description=__doc__.split("\n\n")[0], epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("handler", metavar="MODULE:FUNCTION",
                    help="the handler, called with each sluice.worker.Task; an exception "
                         "leaves the task for a retry")
    ap.add_argument("--stream", required=True, help="the stream to consume")
    ap.add_argument("--group", required=True, help="the consumer group (created if missing)")
    ap.add_argument("--consumer", default=f"{socket.gethostname()}-{os.getpid()}",
                    help="this worker's consumer name (default: HOST-PID)")
    ap.add_argument("--url", default="redis://127.0.0.1:6379/0",
                    help="redis://, rediss:// (TLS) or unix:// URL of the server (default: %(default)s)")
    ap.add_argument("--user", help="the ACL user to connect as when the URL names none "
                                   "(its password in the URL: rediss://:PASSWORD@host)")
    ap.add_argument("--cluster", action="store_true",
                    help="the URL names a node of a Redis Cluster (RedisCluster client)")
    ap.add_argument("--raw", action="store_true",
                    help="hand the handler bytes (default: fields decoded as UTF-8 strings)")
    ap.add_argument("--path", action="append", default=[], metavar="DIR",
                    help="import handlers from DIR too (repeatable; the current directory always is)")
    ap.add_argument("--log-level", default="INFO", type=str.upper,
                    choices=["DEBUG", "INFO", "WARNING", "ERROR"], help="(default: %(default)s)")
    for part, f in setting_fields():
        default = _default(f)
        flag = "--" + f.name.replace("_", "-")
        help_text = _HELP.get(f.name, f"{part} setting {f.name}")
        if isinstance(default, bool):
            ap.add_argument(flag, dest=f.name, default=default, action=argparse.BooleanOptionalAction,
                            help=help_text)
            continue
        kind = _flag_type(WorkerConfig if part == "worker" else RecoveryConfig, f.name)
        shown = "" if default is None else " (default: %(default)s)"
        ap.add_argument(flag, dest=f.name, type=kind, default=default, metavar=_METAVARS.get(kind, "VALUE"),
                        help=help_text + shown)
    return ap


def config_from(args: argparse.Namespace) -> WorkerConfig:
    """The settings the flags give; ConfigError when they cannot work."""
    chosen: dict[str, dict[str, Any]] = {"worker": {}, "recovery": {}}
    for part, f in setting_fields():
        chosen[part][f.name] = getattr(args, f.name)
    return WorkerConfig(args.stream, args.group, args.consumer,
                        recovery=RecoveryConfig(**chosen["recovery"]), **chosen["worker"])


def load_handler(spec: str, paths: Sequence[str] = ()) -> Handler:
    """The callable `module:function` names (dotted attributes allowed after the colon);
    ValueError with the reason when there is none."""
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise ValueError(f"handler {spec!r} is not MODULE:FUNCTION (e.g. myapp.tasks:handle)")
    for directory in [os.getcwd(), *paths][::-1]:
        if directory not in sys.path:
            sys.path.insert(0, directory)
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as error:
        raise ValueError(f"cannot import module {module_name!r}: {error}") from error
    for name in attribute.split("."):
        try:
            target = getattr(target, name)
        except AttributeError:
            raise ValueError(f"module {module_name!r} has no {attribute!r}") from None
    if not callable(target):
        raise ValueError(f"{spec} is a {type(target).__name__}, not a callable")
    return target


def make_client(url: str, cluster: bool, decode: bool, user: Optional[str] = None) -> Any:
    """A redis-py client for `url` (a RedisCluster with `cluster`, which asks the node for
    the cluster's layout at once), as `user` when given. The URL carries the password and,
    for rediss://, redis-py's ssl_* options as its query (?ssl_ca_certs=ca.pem&...)."""
    options: dict[str, Any] = {"decode_responses": decode}
    if user:
        options["username"] = user
    if cluster:
        return RedisCluster.from_url(url, **options)
    return redis.Redis.from_url(url, **options)


def check_user(url: str, user: Optional[str]) -> None:
    """ValueError when --user and the URL's user name differ."""
    in_url = urlsplit(url).username
    if user and in_url and unquote(in_url) != user:
        raise ValueError(f"--user {user!r} differs from the URL's user {unquote(in_url)!r}: "
                         "give it once")


def shown_url(url: str) -> str:
    """The URL without its password, for the log."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname + (f":{parts.port}" if parts.port else "")
    user = f"{parts.username}:***@" if parts.username else ":***@"
    return urlunsplit(parts._replace(netloc=user + host))


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    logging.basicConfig(level=args.log_level, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        config = config_from(args)
        handler = load_handler(args.handler, args.path)
        redis.connection.parse_url(args.url)        # a bad URL is a usage error
        check_user(args.url, args.user)
    except (ConfigError, ValueError) as error:
        ap.error(str(error))
    try:
        client = make_client(args.url, args.cluster, decode=not args.raw,
                             user=args.user)        # a cluster client connects
        client.ping()
    except (redis.RedisError, RedisClusterException) as error:
        log.error("cannot reach %s: %s", shown_url(args.url), error)
        return EXIT_UNREACHABLE
    worker = Worker(client, config, handler)
    log.info("consuming %s (group %s) as %s on %s, %d handler threads; dead letters go to %s",
             config.stream, config.group, config.consumer, shown_url(args.url), config.concurrency,
             repr(config.dlq) if config.dlq else "nowhere (dropped and logged)")
    try:
        worker.run()
    except Exception:  # noqa: BLE001 - whatever stopped the worker, said once, with its exit status
        log.exception("the worker failed")
        return EXIT_FAILED
    finally:
        client.close()
    log.info("stopped: %s", " ".join(f"{k}={v}" for k, v in worker.stats.snapshot().items()))
    return EXIT_STOPPED


if __name__ == "__main__":
    sys.exit(main())
