"""Connections from Spark's driver and executors to the server that holds the streams:
Sluice, Redis, or a Redis Cluster, chosen by the `url`, `cluster` and `user` options.
The URL carries the credentials (`redis://user:password@host`) and, for TLS
(`rediss://`), redis-py's `ssl_*` options as its query (`?ssl_ca_certs=ca.pem&
ssl_certfile=client.pem&ssl_keyfile=client.key`); `user` names the ACL user when the
URL has only a password (`rediss://:password@host`).

The address travels to executors inside the pickled reader or writer; each task opens
its own client from it (redis-py clients do not pickle)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional, Union
from urllib.parse import unquote, urlsplit, urlunsplit

import redis
from redis.cluster import RedisCluster

from sluice.spark.options import OptionError, bool_option, text_option

DEFAULT_URL = "redis://127.0.0.1:6379/0"
Client = Union[redis.Redis, RedisCluster]


class ServerError(RuntimeError):
    """The server cannot be reached or refused us; the message says which and where."""


@dataclass(frozen=True)
class ServerAddress:
    """Where the streams live: a redis:// or rediss:// URL, and whether it names a
    node of a Redis Cluster."""

    url: str
    cluster: bool = False
    user: Optional[str] = None

    @property
    def shown(self) -> str:
        """The URL without its password, for messages and logs."""
        parts = urlsplit(self.url)
        if parts.password is None:
            return self.url
        user = parts.username or ""
        host = parts.hostname or ""
        netloc = f"{user}:***@{host}" + (f":{parts.port}" if parts.port else "")
        return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))

    def connect(self) -> Client:
        """A new client (one per task); raises ServerError if the server is unreachable
        or refuses the credentials."""
        user = {"username": self.user} if self.user else {}
        try:
            if self.cluster:
                client: Client = RedisCluster.from_url(self.url, **user)
            else:
                client = redis.Redis.from_url(self.url, **user)
            client.ping()
        except redis.AuthenticationError as exc:
            raise ServerError(f"the server at {self.shown} (option url) refused the "
                              f"credentials: {exc}") from None
        except redis.ResponseError as exc:
            if str(exc).startswith(("NOAUTH", "WRONGPASS")):
                raise ServerError(f"the server at {self.shown} (option url) refused the "
                                  f"credentials: {exc}") from None
            raise ServerError(f"the server at {self.shown} (option url) answered: {exc}") from None
        except (redis.ConnectionError, redis.TimeoutError, redis.RedisClusterException) as exc:
            raise ServerError(f"cannot reach the server at {self.shown} (option url): {exc}") from None
        return client


CONNECTION_OPTIONS = ("url", "cluster", "user")


def server_address(options: Mapping[str, str]) -> ServerAddress:
    """The server named by the `url`, `cluster` and `user` options."""
    url = text_option(options, "url", DEFAULT_URL)
    scheme = urlsplit(url).scheme
    if scheme not in ("redis", "rediss", "unix"):
        raise OptionError(f"option url must start with redis://, rediss:// or unix://, not {url!r}")
    try:
        urlsplit(url).port
    except ValueError:
        raise OptionError(f"option url has an invalid port: {url!r}") from None
    user = text_option(options, "user")
    in_url = urlsplit(url).username
    if user and in_url and unquote(in_url) != user:
        raise OptionError(f"option user {user!r} differs from the user of option url "
                          f"{unquote(in_url)!r}: give it once")
    return ServerAddress(url, bool_option(options, "cluster", False), user)
