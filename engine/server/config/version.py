"""Who the server says it is: the program name and version that --version, the fatal start-up
report and INFO show, kept in one place so that they always agree."""
from __future__ import annotations

from engine.api.session import SERVER_VERSION

PROGRAM_NAME = "sluice-server"


def _version() -> str:
    try:
        from importlib.metadata import version  # noqa: PLC0415
        return version("sluice")
    except Exception:  # noqa: BLE001 - not installed as a distribution: the source tree's version
        return "0.1.0"


VERSION = _version()


def version_text() -> str:
    """redis-server --version's line: `v=` is the Redis version HELLO and INFO report
    (tools read it to know what the server has); Sluice's own version follows."""
    return (f"Sluice server v={SERVER_VERSION.decode()} sha=00000000:0 malloc=libc bits=64 "
            f"build=0 sluice={VERSION}")
