"""One code path for the sync and the asyncio worker.

A step that talks to the server is written once, as a coroutine that awaits each client
reply through `resolve`. With an asyncio client every reply is an awaitable and the
coroutine runs on the event loop; with a sync client every reply is already a value, so
the coroutine never suspends and `run_sync` runs it to its end in the calling thread.
`then` does the same for a single call followed by a decoding step."""
from __future__ import annotations

import inspect
from typing import Any, Awaitable, Callable, Coroutine, TypeVar, Union

T = TypeVar("T")
R = TypeVar("R")
Maybe = Union[T, Awaitable[T]]


def is_async_client(client: Any) -> bool:
    """True for redis.asyncio clients (Redis, RedisCluster), whose commands are coroutines."""
    return inspect.iscoroutinefunction(getattr(client, "execute_command", None))


async def resolve(value: Maybe[T]) -> T:
    """A reply, awaited when the client is asynchronous."""
    if inspect.isawaitable(value):
        return await value
    return value


def then(value: Maybe[T], decode: Callable[[T], R]) -> Maybe[R]:
    """`decode(value)`, after awaiting `value` when it is awaitable."""
    if inspect.isawaitable(value):
        async def decoded() -> R:
            return decode(await value)
        return decoded()
    return decode(value)


def run_sync(flow: Coroutine[Any, Any, T]) -> T:
    """Runs a flow whose client calls all returned values (a sync client) to its end."""
    try:
        flow.send(None)
    except StopIteration as finished:
        return finished.value
    flow.close()
    raise TypeError("a sync run met an awaitable: use the asyncio worker for asyncio clients")


def for_client(client: Any, flow: Coroutine[Any, Any, T]) -> Maybe[T]:
    """The flow's result for a sync client, the flow itself (to await) for an asyncio one."""
    return flow if is_async_client(client) else run_sync(flow)
