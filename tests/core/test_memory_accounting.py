"""used_memory (INFO's figure) counts what stored data holds and gives it back."""
from engine import Engine


def test_strings_and_streams_are_counted_and_released():
    e = Engine()
    base = e.used_memory()
    for i in range(1000):
        e.execute("SET", f"key:{i}", "x" * 100)
    strings = e.used_memory() - base
    assert 1000 * 133 < strings < 1000 * 400
    for i in range(1000):
        e.execute("XADD", "s", f"{i + 1}-0", "field", f"value-{i}")
    e.execute("XGROUP", "CREATE", "s", "g", "0")
    e.execute("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    assert e.used_memory() - base > strings + 1000 * 80   # entries plus three PEL trees
    e.execute("SET", "key:0", "short")                   # overwrite: old value released
    assert e.used_memory() - base < strings + 1000 * 200
    e.execute("FLUSHALL")
    assert e.used_memory() == base
