"""What the ports of Redis's Tcl unit tests (tests/unit/type/stream*.tcl of redis/redis)
need from a server, in the words of its test framework: `r` (a connection whose replies
are plain text), `deferred` (redis_deferring_client: send now, read later), `s` (an INFO
field), `wait_for_blocked_clients_count` and `needs` (skip when a command this branch
does not have yet is missing)."""
from __future__ import annotations

import time
from typing import Any

import pytest
import redis

from differential import RedisOracle
from engine.server.info import parse_info

BLOCK_WAIT_S = 5.0


def text(reply: Any) -> Any:
    """A reply with its bulk strings decoded (lists stay lists, nil stays None)."""
    if isinstance(reply, bytes):
        return reply.decode("utf-8", "replace")
    if isinstance(reply, list):
        return [text(item) for item in reply]
    return reply


def pairs(flat: list) -> dict:
    """A flat [field, value, ...] reply (XINFO) as a dict."""
    return dict(zip(flat[::2], flat[1::2]))


class Conn:
    """One raw RESP2 connection with Redis's full error texts, as the Tcl tests' `r`."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.raw = RedisOracle("127.0.0.1", port, socket_timeout=BLOCK_WAIT_S * 2)

    def __call__(self, *args: Any) -> Any:
        return text(self.raw.execute(*args))

    def error(self, *args: Any) -> str:
        """The error text the command replies with (fails when it succeeds)."""
        try:
            reply = self(*args)
        except redis.ResponseError as err:
            return str(err)
        raise AssertionError(f"{args!r} replied {reply!r}, not an error")

    def send(self, *args: Any) -> None:
        self.raw.send(*args)

    def read(self) -> Any:
        """The next reply; an error comes back as its text with a leading '!'."""
        try:
            return text(self.raw.read())
        except redis.ResponseError as err:
            return "!" + str(err)

    def close(self) -> None:
        self.raw.close()

    def info(self, section: str = "") -> dict:
        return parse_info(self.raw.execute("INFO", *([section] if section else [])))

    def s(self, field: str) -> str:
        return self.info()[field]

    def cmdstat(self, name: str) -> str:
        return self.info("commandstats").get("cmdstat_" + name, "")

    def errorstat(self, code: str) -> str:
        return self.info("errorstats").get("errorstat_" + code, "")

    def deferred(self, *args: Any) -> "Conn":
        """redis_deferring_client: a new connection that has sent `args`."""
        other = Conn(self.port)
        if args:
            other.send(*args)
        return other

    def blocked(self, *args: Any) -> "Conn":
        """A new connection that has sent the blocking command `args` and is blocked in
        it (the server counts one more blocked client)."""
        waiting = int(self.s("blocked_clients"))
        other = self.deferred(*args)
        self.wait_for_blocked_clients_count(waiting + 1)
        return other

    def wait_for_blocked_clients_count(self, n: int) -> None:
        deadline = time.monotonic() + BLOCK_WAIT_S
        while int(self.s("blocked_clients")) != n:
            assert time.monotonic() < deadline, f"blocked_clients never reached {n}"
            time.sleep(0.005)

    def needs(self, *commands: str) -> None:
        """Skips the test when Sluice does not have one of `commands` (SWAPDB: see
        tests/commands/test_reported_version.py's exclusions)."""
        for name in commands:
            if self("COMMAND", "INFO", name) == [None]:
                pytest.skip(reason=f"Sluice has no {name.upper()}: the Redis test needs it")
