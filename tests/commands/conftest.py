"""Fixtures of the ports of Redis's Tcl unit tests (test_redis8_stream*.py): one
sluice-server per module, and `r`, the connection each ported test starts with."""
from __future__ import annotations

from typing import Iterator

import pytest

from redis_units import Conn
from servers import SluiceServer


@pytest.fixture(scope="module")
def sluice() -> Iterator[SluiceServer]:
    with SluiceServer() as srv:
        yield srv


@pytest.fixture
def r(sluice: SluiceServer) -> Iterator[Conn]:
    """A connection to the emptied server whose stream nodes hold 100 entries, as
    Redis's test suite configures them; closed when the test ends."""
    conn = Conn(sluice.port)
    conn("FLUSHALL")
    conn("CONFIG", "SET", "stream-node-max-entries", "100")
    yield conn
    conn.close()
