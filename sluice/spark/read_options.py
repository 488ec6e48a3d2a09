"""The reading options of format `sluice`, checked once on the driver so that a bad
value fails before any task runs, with one sentence naming the option."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional, Tuple

from sluice.spark.connection import CONNECTION_OPTIONS, ServerAddress, server_address
from sluice.spark.offsets import EARLIEST, LATEST, OffsetSpec, offset_spec
from sluice.spark.options import OptionError, bool_option, check_names, int_option, text_option

DEFAULT_PAGE_SIZE = 10_000
READ_OPTIONS = (*CONNECTION_OPTIONS, "streams", "streamPattern", "startingOffsets", "endingOffsets",
                "minPartitions", "pageSize", "decode", "failOnDataLoss", "maxEntriesPerTrigger",
                "commitGroup")


@dataclass(frozen=True)
class ReadOptions:
    """Everything a reader needs; picklable, so it travels to executors."""

    address: ServerAddress
    streams: Optional[Tuple[str, ...]]
    pattern: Optional[str]
    starting: OffsetSpec
    ending: OffsetSpec
    min_partitions: Optional[int]
    page_size: int
    decode: bool
    max_entries_per_trigger: Optional[int]
    commit_group: Optional[str]
    fail_on_data_loss: bool

    @property
    def streams_option(self) -> str:
        """The option that chose the streams, for messages."""
        return "streams" if self.streams is not None else "streamPattern"


def _stream_choice(options: Mapping[str, str]) -> Tuple[Optional[Tuple[str, ...]], Optional[str]]:
    """Exactly one of `streams` (a comma list) and `streamPattern` (a glob)."""
    listed = text_option(options, "streams")
    pattern = text_option(options, "streamPattern")
    if listed is not None and pattern is not None:
        raise OptionError("options streams and streamPattern exclude each other: give only one")
    if pattern is not None:
        return None, pattern
    if listed is None:
        raise OptionError("option streams (a comma list of stream keys) or streamPattern "
                          "(a glob such as events:*) is required")
    names = tuple(dict.fromkeys(name.strip() for name in listed.split(",") if name.strip()))
    if not names:
        raise OptionError(f"option streams names no stream: {listed!r}")
    return names, None


def read_options(options: Mapping[str, str]) -> ReadOptions:
    """Parses and checks every reading option."""
    check_names(options, READ_OPTIONS, "reading format sluice")
    streams, pattern = _stream_choice(options)
    starting = offset_spec("startingOffsets", text_option(options, "startingOffsets"), EARLIEST,
                           (EARLIEST, LATEST))
    ending = offset_spec("endingOffsets", text_option(options, "endingOffsets"), LATEST, (LATEST,))
    for option, spec in (("startingOffsets", starting), ("endingOffsets", ending)):
        spec.check_streams(option, streams, pattern)
    return ReadOptions(
        address=server_address(options),
        streams=streams,
        pattern=pattern,
        starting=starting,
        ending=ending,
        min_partitions=int_option(options, "minPartitions", None),
        page_size=int_option(options, "pageSize", DEFAULT_PAGE_SIZE),
        decode=bool_option(options, "decode", False),
        max_entries_per_trigger=int_option(options, "maxEntriesPerTrigger", None),
        commit_group=text_option(options, "commitGroup"),
        fail_on_data_loss=bool_option(options, "failOnDataLoss", True),
    )
