"""math.random as Redis replaces it: a 48-bit linear congruential generator (the rand48
family) that every script shares; Redis 7 no longer reseeds it per call, so only a
math.randomseed in the script makes its numbers repeatable."""
from __future__ import annotations

import math
from typing import Any

from engine.scripting.convert import lua_tointeger, lua_type_name
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
            bounds = [lua_tointeger(a) for a in args]
            for position, (arg, bound) in enumerate(zip(args, bounds), 1):
                if bound is None:
                    raise LuaRaise(f"bad argument #{position} to 'random' (number expected, "
                                   f"got {lua_type_name(arg)})".encode())
            low, high = (1, bounds[0]) if len(bounds) == 1 else bounds
            position = len(bounds)
            if low > high:
                raise LuaRaise(f"bad argument #{position} to 'random' (interval is empty)".encode())
            return math.floor(r * (high - low + 1)) + low
        return random

    def lua_randomseed(self):
        def randomseed(*args: Any) -> Any:
            seed = lua_tointeger(args[0]) if args else None
            if seed is None:
                got = lua_type_name(args[0]) if args else "no value"
                raise LuaRaise(f"bad argument #1 to 'randomseed' (number expected, got {got})".encode())
            self.seed(seed)
            return None
        return randomseed

