"""engine.resp.numbers: Redis's strict integer syntax, the one the codec, the commands and
the config parser share."""
from __future__ import annotations

from typing import Optional

import pytest

from engine.resp.numbers import strict_int


@pytest.mark.parametrize("text, value", [
    (b"0", 0), (b"-5", -5), (b"42", 42), (b"9223372036854775807", 2**63 - 1),
    (b"-9223372036854775808", -(2**63)), (b"9223372036854775808", None),
    (b"-9223372036854775809", None), (b"007", None), (b"+5", None), (b" 5", None),
    (b"-0", None), (b"-", None), (b"", None), (b"5 ", None), (b"1e3", None), (b"5\x00", None),
    (b"000000000000000000001", None), (b"99999999999999999999999", None),
])
def test_strict_int(text: bytes, value: Optional[int]) -> None:
    assert strict_int(text) == value
