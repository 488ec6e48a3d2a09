"""The commands that recreate a collection (engine/formats/rewrite.pyx): batches of 64
elements, as Redis's AOF rewrite, and a replay that gives the value back."""
import math

import pytest

from engine.core.hash_value import HashValue
from engine.core.list_value import ListValue
from engine.core.set_value import SetValue
from engine.core.sorted_set import SortedSetValue
from engine.formats.rewrite import recreate_commands


def test_commands_carry_64_elements_each():
    cmds = recreate_commands(b"k", ListValue([b"%d" % i for i in range(130)]))
    assert [len(c) - 2 for c in cmds] == [64, 64, 2] and cmds[0][:3] == [b"RPUSH", b"k", b"0"]
    cmds = recreate_commands(b"h", HashValue({b"f%d" % i: b"v" for i in range(65)}))
    assert [len(c) - 2 for c in cmds] == [128, 2] and cmds[0][0] == b"HSET"
    assert recreate_commands(b"s", SetValue([b"a"])) == [[b"SADD", b"s", b"a"]]
    cmds = recreate_commands(b"k", SortedSetValue.from_pairs(
        [(float(i), b"m%d" % i) for i in range(130)]))
    assert [len(c) for c in cmds] == [2 + 128, 2 + 128, 2 + 4]
    assert cmds[0][2:4] == [b"0.0", b"m0"]


@pytest.mark.parametrize("size", [10, 500])
def test_a_sorted_set_replays_to_itself(size):
    value = SortedSetValue(0, 0)
    for i in range(size):
        value.add(b"m%d" % i, (-1) ** i * i / 7 if i % 5 else math.inf * (-1) ** i)
    replayed = SortedSetValue(0, 0)
    for command in recreate_commands(b"k", value):
        for j in range(2, len(command), 2):
            replayed.add(command[j + 1], float(command[j]))
    assert list(replayed) == list(value)


def test_only_collections_are_recreated():
    with pytest.raises(TypeError):
        recreate_commands(b"k", b"a string")
