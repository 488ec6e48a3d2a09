"""math.random as Redis replaces it: a 48-bit linear congruential generator (the rand48
family) that every script shares; Redis 7 no longer reseeds it per call, so only a
math.randomseed in the script makes its numbers repeatable."""
from __future__ import annotations

import math
from typing import Any

from engine.scripting.errors import LuaRaise

MULTIPLIER = 0x5DEECE66D
INCREMENT = 0xB
MASK = (1 << 48) - 1
INITIAL_STATE = 0x1234ABCD330E      # rand48's state before any seed
RANGE = 2**31 - 1


class Random48:
    def __init__(self) -> None:
        self.state = INITIAL_STATE

    def seed(self, seed: int) -> None:
        self.state = ((seed & 0xFFFFFFFF) << 16) | 0x330E

    def next_fraction(self) -> float:
        self.state = (MULTIPLIER * self.state + INCREMENT) & MASK
        return ((self.state >> 17) % RANGE) / RANGE

    def lua_random(self):
        def random(*args: Any) -> Any:
            r = self.next_fraction()
            if not args:
                return r
            if len(args) > 2:
                raise LuaRaise(b"wrong number of arguments")
            if not all(type(a) in (int, float) for a in args):
                raise LuaRaise(f"bad argument #{_first_bad(args)} to 'random' (number expected)".encode())
            if len(args) == 1:
                low, high, position = 1, int(args[0]), 1
            else:
                low, high, position = int(args[0]), int(args[1]), 2
            if low > high:
                raise LuaRaise(f"bad argument #{position} to 'random' (interval is empty)".encode())
            return math.floor(r * (high - low + 1)) + low
        return random

    def lua_randomseed(self):
        def randomseed(*args: Any) -> Any:
            if not args or type(args[0]) not in (int, float):
                raise LuaRaise(b"bad argument #1 to 'randomseed' (number expected, got no value)")
            self.seed(int(args[0]))
            return None
        return randomseed


def _first_bad(args: tuple) -> int:
    return next(i for i, a in enumerate(args, 1) if type(a) not in (int, float))
