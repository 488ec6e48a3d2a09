"""Who the server says it is: the program name and version that --version, the fatal start-up
report and INFO show, kept in one place so that they always agree."""
from __future__ import annotations

PROGRAM_NAME = "sluice-server"


def _version() -> str:
    try:
        from importlib.metadata import version  # noqa: PLC0415
        return version("sluice")
    except Exception:  # noqa: BLE001 - not installed as a distribution: the source tree's version
        return "0.1.0"


VERSION = _version()


def version_text() -> str:
    return f"Sluice server v={VERSION} (Redis 7.0 compatible RESP server)"
