"""Reading a data source's options (Spark hands them over as strings), each bad value
refused with one sentence that names the option."""
from __future__ import annotations

import difflib
from typing import Iterable, Mapping, Optional


class OptionError(ValueError):
    """A data source option is missing or malformed; the message names the option."""


def check_names(options: Mapping[str, str], known: Iterable[str], what: str) -> None:
    """Refuses an option that `what` does not take (Spark would pass it on unread, so a
    misspelt name would silently change nothing), naming the closest known name."""
    names = {name.lower(): name for name in known}
    for given in options:
        if given.lower() in names:
            continue
        close = difflib.get_close_matches(given.lower(), list(names), n=1, cutoff=0.6)
        hint = (f"did you mean '{names[close[0]]}'?" if close
                else f"{what} takes {', '.join(sorted(names.values(), key=str.lower))}")
        raise OptionError(f"unknown option '{given}'; {hint}")


def _lookup(options: Mapping[str, str], name: str) -> Optional[str]:
    """Spark's option names are case-insensitive."""
    if name in options:
        return options[name]
    lowered = name.lower()
    for key, value in options.items():
        if key.lower() == lowered:
            return value
    return None


def text_option(options: Mapping[str, str], name: str, default: Optional[str] = None) -> Optional[str]:
    """The option's value, or `default` when it is absent or blank."""
    value = _lookup(options, name)
    if value is None or not value.strip():
        return default
    return value.strip()


def bool_option(options: Mapping[str, str], name: str, default: bool) -> bool:
    """true/false (any case); anything else is refused."""
    value = text_option(options, name)
    if value is None:
        return default
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise OptionError(f"option {name} must be true or false, not {value!r}")


def int_option(options: Mapping[str, str], name: str, default: Optional[int], minimum: int = 1) -> Optional[int]:
    """An integer of at least `minimum`; anything else is refused."""
    value = text_option(options, name)
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        raise OptionError(f"option {name} must be an integer, not {value!r}") from None
    if number < minimum:
        raise OptionError(f"option {name} must be at least {minimum}, not {number}")
    return number
