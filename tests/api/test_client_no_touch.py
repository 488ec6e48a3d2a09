"""CLIENT NO-TOUCH (Redis 7.2, engine/api/session.py Session.call): a client in that
mode reads keys without changing their access times (OBJECT IDLETIME) - in its
commands, its transactions and its scripts - except through TOUCH; other clients
still touch them; OFF and RESET end the mode. (7.0, the oracle, lacks the command.)"""
from __future__ import annotations

import pytest

from engine import Engine, ManualClock, ResponseError
from engine.api.session import Hub, Session

T0 = 1_700_000_000_000


def idle(session: Session, key: bytes) -> int:
    return session.call([b"OBJECT", b"IDLETIME", key])


def test_no_touch_reads_leave_idle_times():
    clock = ManualClock(T0)
    hub = Hub(Engine(clock))
    other, quiet = Session(hub), Session(hub)
    other.call([b"SET", b"k", b"v"])
    other.call([b"XADD", b"s", b"1-1", b"f", b"v"])
    assert quiet.call([b"CLIENT", b"NO-TOUCH", b"ON"]) == b"OK"
    clock.advance(10_000)
    assert quiet.call([b"GET", b"k"]) == b"v"
    assert quiet.call([b"XRANGE", b"s", b"-", b"+"]) == [[b"1-1", [b"f", b"v"]]]
    quiet.call([b"MULTI"])
    quiet.call([b"GET", b"k"])
    quiet.call([b"EXEC"])
    assert quiet.call([b"EVAL", b"return redis.call('get', KEYS[1])", b"1", b"k"]) == b"v"
    assert (idle(quiet, b"k"), idle(quiet, b"s")) == (10, 10)
    assert quiet.call([b"TOUCH", b"k"]) == 1                 # TOUCH still touches
    assert idle(quiet, b"k") == 0
    clock.advance(5_000)
    other.call([b"GET", b"k"])                               # other clients touch
    assert idle(quiet, b"k") == 0
    clock.advance(5_000)
    assert quiet.call([b"CLIENT", b"NO-TOUCH", b"off"]) == b"OK"
    quiet.call([b"GET", b"k"])
    assert idle(quiet, b"k") == 0
    quiet.call([b"CLIENT", b"NO-TOUCH", b"ON"])
    quiet.call([b"RESET"])
    clock.advance(5_000)
    quiet.call([b"GET", b"k"])
    assert idle(quiet, b"k") == 0


@pytest.mark.parametrize("argv, error", [
    ([b"CLIENT", b"NO-TOUCH", b"maybe"], "ERR syntax error"),
    ([b"CLIENT", b"NO-TOUCH"], "ERR wrong number of arguments for 'client|no-touch' command"),
    ([b"CLIENT", b"NO-TOUCH", b"on", b"off"],
     "ERR wrong number of arguments for 'client|no-touch' command"),
])
def test_no_touch_errors(argv, error):
    with pytest.raises(ResponseError) as err:
        Session(Hub(Engine())).call(argv)
    assert str(err.value) == error
