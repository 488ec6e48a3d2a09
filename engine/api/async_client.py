"""A redis.asyncio client whose commands run in an in-process Engine.

    from engine import AsyncEmbeddedRedis
    r = AsyncEmbeddedRedis(decode_responses=True)          # or AsyncEmbeddedRedis(engine=e)
    await r.xadd("jobs", {"task": "resize"})
    await r.xreadgroup("workers", "w1", {"jobs": ">"}, count=10, block=1000)

It wraps an EmbeddedRedis (engine/api/client.py) on the same engine and arguments:
the same sessions, replies, errors and response callbacks. A command runs in the
engine at once, on the event loop's thread (the engine holds no I/O, it answers at
once); an XREAD/XREADGROUP with BLOCK waits in a worker thread, so the loop keeps
running while it waits and other clients' writes wake it. Scripts (register_script:
EVALSHA, then EVAL) work as with redis.asyncio.Redis.

Not available, beside what EmbeddedRedis lacks: pipelines and MULTI/EXEC (use the
sync `client.sync.pipeline()`), and the per-client response callbacks of
set_response_callback (the wrapped client's own are used)."""
from __future__ import annotations

import asyncio
from typing import Any, Optional

from redis.asyncio import ConnectionPool, Redis

from engine.api.client import EmbeddedRedis
from engine.commands.table import COMMANDS
from engine.api.embedded import Engine

__all__ = ["AsyncEmbeddedRedis"]

_BLOCK_OPTION = frozenset({"XREAD", "XREADGROUP"})     # block only with a BLOCK argument
_ENCODER_ARGS = ("encoding", "encoding_errors", "decode_responses")


def _may_block(args: tuple) -> bool:
    """A blocking command (the table's `blocking` flag: BLPOP...), an XREAD/XREADGROUP
    only with a BLOCK argument."""
    name = (args[0].decode() if isinstance(args[0], bytes) else str(args[0])).upper()
    if name not in _BLOCK_OPTION:
        record = COMMANDS.get(name.lower().encode())
        return record is not None and "blocking" in record.flags
    return any(isinstance(a, (str, bytes)) and a.upper() in ("BLOCK", b"BLOCK") for a in args[1:])


class _NoConnection:
    """The connection class of the async client's pool, which is there for its encoder
    only: every command goes through the wrapped EmbeddedRedis."""

    def __init__(self, **kwargs: Any) -> None:
        raise NotImplementedError("AsyncEmbeddedRedis runs single commands only: no pipelines, "
                                  "MULTI/EXEC or pub/sub (use its `sync` EmbeddedRedis for those)")


class AsyncEmbeddedRedis(Redis):
    """redis.asyncio.Redis running on an in-process Engine: construct it instead of
    redis.asyncio.Redis. Takes EmbeddedRedis's arguments; `sync` is the wrapped
    EmbeddedRedis, `engine` the engine."""

    def __init__(self, engine: Optional[Engine] = None, **kwargs: Any) -> None:
        self.sync = EmbeddedRedis(engine, **kwargs)
        encoder = {k: kwargs[k] for k in _ENCODER_ARGS if k in kwargs}
        super().__init__(connection_pool=ConnectionPool(connection_class=_NoConnection, **encoder))

    @property
    def engine(self) -> Engine:
        return self.sync.engine

    def __repr__(self) -> str:
        return f"<{type(self).__name__}(engine={hex(id(self.engine))})>"

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        if _may_block(args):
            return await asyncio.to_thread(self.sync.execute_command, *args, **options)
        return self.sync.execute_command(*args, **options)

    async def aclose(self, close_connection_pool: Optional[bool] = None) -> None:
        self.sync.close()
        await super().aclose(close_connection_pool)
