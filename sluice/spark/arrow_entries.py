"""Stream entries as Arrow record batches with the `sluice` format's schema.

Shared by every reader (XRANGE over RESP, snapshot files): they hand over one stream's
entries as redis-py returns them and get back a `pyarrow.RecordBatch` that Spark takes
as it is. The columns are built from whole lists at once (no per-row Python tuples for
Spark to convert), which is what keeps a Spark read close to a bare XRANGE loop."""
from __future__ import annotations

from itertools import accumulate, chain
from typing import List, Mapping, Sequence, Tuple, Union

import pyarrow as pa
import pyarrow.compute as pc

ENTRY_SCHEMA_DDL = "stream string, id string, ms long, seq long, fields map<string,binary>"
DECODED_ENTRY_SCHEMA_DDL = "stream string, id string, ms long, seq long, fields map<string,string>"

# One entry as redis-py gives it: the ID and its fields, either parsed into a dict or as
# the server's flat [field, value, field, value, ...] list (which keeps repeated fields).
Fields = Union[Mapping[bytes, bytes], Sequence[bytes]]
Entry = Tuple[Union[bytes, str], Fields]


def entry_schema(decode: bool) -> str:
    """The Spark schema (DDL) of the entries: field values as binary, or as strings when
    option `decode` is true."""
    return DECODED_ENTRY_SCHEMA_DDL if decode else ENTRY_SCHEMA_DDL


def arrow_entry_schema(decode: bool) -> pa.Schema:
    """The Arrow schema Spark expects for `entry_schema(decode)`, field for field (Spark
    refuses a batch whose schema differs in any name, type or nullability)."""
    value_type = pa.string() if decode else pa.binary()
    fields_type = pa.map_(pa.field("key", pa.string(), nullable=False),
                          pa.field("value", value_type, nullable=True))
    return pa.schema([
        pa.field("stream", pa.string()),
        pa.field("id", pa.string()),
        pa.field("ms", pa.int64()),
        pa.field("seq", pa.int64()),
        pa.field("fields", fields_type),
    ])


def _text_array(values: List[Union[bytes, str]]) -> pa.Array:
    """UTF-8 text from the server's bytes; bytes that are not UTF-8 are shown with the
    replacement character rather than failing the whole read."""
    try:
        return pa.array(values, pa.binary()).cast(pa.string())
    except pa.ArrowInvalid:
        return pa.array([v.decode("utf-8", "replace") if isinstance(v, bytes) else v for v in values],
                        pa.string())


def _flat_fields(entries: Sequence[Entry]) -> List[Sequence[bytes]]:
    """Each entry's [field, value, ...], whichever form redis-py returned (one form per
    page, so it is checked once)."""
    if isinstance(entries[0][1], Mapping):
        return [list(chain.from_iterable(entry[1].items())) for entry in entries]
    return [entry[1] for entry in entries]


class EntryBatchBuilder:
    """Builds record batches of entries for one `decode` mode."""

    def __init__(self, decode: bool) -> None:
        self.decode = decode
        self.schema = arrow_entry_schema(decode)

    def build(self, stream: Union[bytes, str], entries: Sequence[Entry]) -> pa.RecordBatch:
        """One record batch holding `entries` of `stream`, in the order given."""
        count = len(entries)
        if count == 0:
            return pa.RecordBatch.from_pylist([], schema=self.schema)
        ids = _text_array([entry[0] for entry in entries])
        parts = pc.split_pattern(ids, "-", max_splits=1)
        ms = pc.cast(pc.list_element(parts, 0), pa.int64())
        seq = pc.cast(pc.list_element(parts, 1), pa.int64())
        flats = _flat_fields(entries)
        offsets = list(accumulate(map(len, flats), initial=0))
        flat_all = list(chain.from_iterable(flats))
        keys = _text_array(flat_all[0::2])
        raw_values = flat_all[1::2]
        values = _text_array(raw_values) if self.decode else pa.array(raw_values, pa.binary())
        fields = pa.MapArray.from_arrays(pc.divide(pa.array(offsets, pa.int32()), 2), keys, values,
                                         type=self.schema.field("fields").type)
        name = stream.decode("utf-8", "replace") if isinstance(stream, bytes) else stream
        streams = pa.repeat(pa.scalar(name, pa.string()), count)
        return pa.RecordBatch.from_arrays([streams, ids, ms, seq, fields], schema=self.schema)

