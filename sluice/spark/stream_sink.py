"""Writing a DataFrame to streams (format `sluice`, batch and streaming): each row
becomes one XADD, sent in pipelined chunks from the executors.

Columns (names case-insensitive; the plan is checked on the driver, so a wrong
schema, an unreachable server, a refused password or a fixed `stream` option naming
a key of another type fails before any task runs):

    stream  the target stream (string). Option `stream` names one fixed stream
            instead and then wins: a `stream` column is ignored, so a DataFrame
            read from one stream copies to another as it is. One of the two must
            be there.
    id      optional explicit entry IDs (string); null or "*" lets the server pick.
    fields  optional map<string,string> or map<string,binary>: the entry's fields.
            Without it, every other column is a field named after the column:
            strings as they are, binary as bytes, numbers, booleans, dates and
            timestamps in Arrow's text form (1.5, 9 for 9.0, true, 2024-01-02,
            2024-01-02 03:04:05.000000+0000 in the session's time zone); nulls
            are left out. Nested types are refused (turn them into text first,
            e.g. with to_json).
    ms, seq ignored: the `sluice` reader's schema repeats the ID in them, so its
            DataFrames write back unchanged.

Options: `url`, `cluster` (connection.py), `stream`, `batchSize` (XADDs per
pipelined round trip, default 1000), `maxLen` (trim each stream to about that many
entries as it is written) with `approximateTrim` (default true: MAXLEN ~, which
lets the server trim whole nodes; false: exact MAXLEN = n), `skipExistingIds`;
`idempotent` (default true), `idempotencyKey`, `producerId`, `idmpDuration`,
`idmpMaxSize` (idempotence.py).
Save mode append only, and output mode append: a stream only grows, so mode
overwrite and output mode complete (which replace what was written) are refused;
Spark itself offers Python sinks no update mode (write such results with foreachBatch).
Unknown option names and output modes other than append are refused at save() and
start() (driver_checks), the rest when Spark makes the writer.

Guarantees. Each task writes its rows in order, chunk by chunk; a server error
stops the task (and the job) with the server's message, the stream and the row's
ID. Chunks sent before it stay written: a stream has no transactions across round
trips. Rows with server-chosen IDs are written with XADD ... IDMP (idempotence.py),
so when Spark retries a task, runs a speculative copy or replays a micro-batch after
a failure, the rows already added are not added again: exactly once within the
IDMP window. With `idempotent=false` (servers without IDMP: Redis before 8.6) the
sink is at least once: such rows are appended again. With an `id` column and
`skipExistingIds=true`, an XADD that the server refuses because the stream already
holds that ID (or a later one) counts as already written, so a replay writes nothing
twice: exactly once per ID, provided each stream's IDs increase in the order the
rows are written.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator, List, Mapping, Optional, Sequence, Union

import pyarrow as pa
import pyarrow.compute as pc
import redis
from redis.cluster import RedisCluster
from pyspark.sql.datasource import DataSourceArrowWriter, DataSourceStreamArrowWriter, WriterCommitMessage
from pyspark.sql.types import (ArrayType, BinaryType, MapType, StringType, StructType,
                               UserDefinedType)

from sluice.spark.connection import CONNECTION_OPTIONS, ServerAddress, server_address
from sluice.spark.idempotence import (IDEMPOTENCE_OPTIONS, Idempotence, RowNames,
                                      check_idempotence, plan_idempotence)
from sluice.spark.options import OptionError, bool_option, check_names, int_option, text_option
from sluice.spark.stream_catalog import check_stream_key

if TYPE_CHECKING:
    from sluice.spark.connection import Client

log = logging.getLogger("sluice.spark")

DEFAULT_BATCH_SIZE = 1000
STALE_ID_ERROR = "The ID specified in XADD is equal or smaller than the target stream top item"
IGNORED_COLUMNS = ("ms", "seq")
# checkpointLocation, queryName: a streaming query's own options (writeStream.queryName()
# is one too), which Spark hands the sink with the rest.
WRITE_OPTIONS = (*CONNECTION_OPTIONS, *IDEMPOTENCE_OPTIONS, "stream", "batchSize", "maxLen",
                 "approximateTrim", "skipExistingIds", "checkpointLocation", "queryName")


class SinkError(RuntimeError):
    """A row cannot be written, or the server refused it; the message names the
    stream and the row's ID."""


@dataclass
class WriteCounts(WriterCommitMessage):
    """What one task wrote: entries added, and explicit IDs found already written."""

    entries: int = 0
    skipped: int = 0


@dataclass(frozen=True)
class SinkPlan:
    """Which column plays which part, and how to send; checked on the driver, then
    pickled to every task."""

    address: ServerAddress
    stream: Optional[str]                  # the fixed stream (option), else None
    stream_column: Optional[str]
    id_column: Optional[str]
    fields_column: Optional[str]           # a map column holding the fields
    field_columns: tuple = ()              # else: these columns are the fields
    batch_size: int = DEFAULT_BATCH_SIZE
    trim: tuple = ()                       # XADD's MAXLEN arguments, or ()
    skip_existing_ids: bool = False
    idempotence: Optional[Idempotence] = None


def check_sink_options(options: Mapping[str, str]) -> None:
    """The options alone, before any schema is known (on the driver at save() and
    start()): names, and values that need no column."""
    check_names(options, WRITE_OPTIONS, "writing format sluice")
    server_address(options)
    int_option(options, "batchSize", DEFAULT_BATCH_SIZE)
    int_option(options, "maxLen", None, minimum=0)
    bool_option(options, "approximateTrim", True)
    bool_option(options, "skipExistingIds", False)
    bool_option(options, "idempotent", True)
    int_option(options, "idmpDuration", 1)
    int_option(options, "idmpMaxSize", 1)


def check_output_mode(mode: str) -> None:
    """Append only, refused when the query starts: complete would replace what earlier
    micro-batches wrote, and Spark offers a Python sink no update mode."""
    mode = mode.lower()
    if mode == "complete":
        raise OptionError(StreamStreamWriter.overwrite_refusal)
    if mode != "append":
        raise OptionError(f"format sluice takes output mode append, not {mode}: Spark writes "
                          f"update results to a Python sink only through foreachBatch")


def plan_sink(options: Mapping[str, str], schema: StructType, streaming: bool = False) -> SinkPlan:
    """The plan for writing rows of `schema` (in a streaming query, or a batch write);
    OptionError (one sentence) when the options or the schema cannot be written."""
    check_sink_options(options)
    columns = {f.name.lower(): f for f in schema.fields}
    if len(columns) != len(schema.fields):
        raise OptionError("the DataFrame has two columns whose names differ only in case; "
                          "rename one before writing to a stream")
    stream = text_option(options, "stream")
    stream_col = columns.get("stream")
    if stream is None and stream_col is None:
        raise OptionError("writing to format sluice needs option stream (one target stream) "
                          "or a string column named stream (a stream per row)")
    if stream is None:
        _require_text(stream_col, "stream")
    id_col = columns.get("id")
    if id_col is not None:
        _require_text(id_col, "id")
    fields_col = columns.get("fields")
    idempotence = plan_idempotence(options, columns, streaming)
    taken = {"stream", "id", "fields"} | set(IGNORED_COLUMNS)
    if fields_col is not None and idempotence is not None and idempotence.key_column is not None:
        taken.add(idempotence.key_column.lower())      # a key beside fields is not written
    others = [f for name, f in columns.items() if name not in taken]
    if fields_col is not None:
        if not (isinstance(fields_col.dataType, MapType)
                and isinstance(fields_col.dataType.keyType, StringType)
                and isinstance(fields_col.dataType.valueType, (StringType, BinaryType))):
            raise OptionError(f"column fields must be map<string,string> or map<string,binary>, "
                              f"not {fields_col.dataType.simpleString()}")
        if others:
            raise OptionError(f"with a fields column, the other columns "
                              f"({', '.join(f.name for f in others)}) would be lost: drop them "
                              f"or put them into fields")
    else:
        if not others:
            raise OptionError("the DataFrame has no column to write as a field: add a fields "
                              "map column or other columns")
        for f in others:
            if isinstance(f.dataType, (ArrayType, MapType, StructType, UserDefinedType)) \
                    or f.dataType.typeName() == "variant":
                raise OptionError(f"column {f.name} has type {f.dataType.simpleString()}, which has "
                                  f"no field form: turn it into a string first (e.g. to_json)")
    max_len = int_option(options, "maxLen", None, minimum=0)
    trim: tuple = ()
    if max_len is not None:
        trim = ("MAXLEN", "~" if bool_option(options, "approximateTrim", True) else "=", str(max_len))
    skip = bool_option(options, "skipExistingIds", False)
    if skip and id_col is None:
        raise OptionError("option skipExistingIds needs an id column: without explicit IDs "
                          "the server picks new ones and nothing is ever found written")
    return SinkPlan(
        address=server_address(options),
        stream=stream,
        stream_column=None if stream is not None else stream_col.name,
        id_column=id_col.name if id_col is not None else None,
        fields_column=fields_col.name if fields_col is not None else None,
        field_columns=tuple(f.name for f in others) if fields_col is None else (),
        batch_size=int_option(options, "batchSize", DEFAULT_BATCH_SIZE),
        trim=trim,
        skip_existing_ids=skip,
        idempotence=idempotence,
    )


def check_target(plan: SinkPlan) -> None:
    """On the driver: the server answers and accepts the credentials (ServerError naming
    option url), and the fixed stream, if any, is a stream or absent (StreamKeyError
    naming option stream). A stream column's keys are found out row by row: a key of
    another type is refused by the server, which stops the write with its message."""
    client = plan.address.connect()
    try:
        if plan.stream is not None:
            check_stream_key(client, plan.stream, "stream")
        if plan.idempotence is not None:
            check_idempotence(client, plan.address.shown)
    finally:
        client.close()


def _require_text(column, role: str) -> None:
    if not isinstance(column.dataType, StringType):
        raise OptionError(f"column {column.name} ({role}) must be a string, "
                          f"not {column.dataType.simpleString()}")


# -- executors: rows to XADDs --------------------------------------------------------

def _text_column(array: pa.Array) -> list:
    """A field column's values: bytes for binary, str otherwise (None stays None)."""
    if pa.types.is_binary(array.type) or pa.types.is_large_binary(array.type) \
            or pa.types.is_string(array.type) or pa.types.is_large_string(array.type):
        return array.to_pylist()
    return pc.cast(array, pa.string()).to_pylist()


def _batch_fields(plan: SinkPlan, batch: pa.RecordBatch) -> list:
    """[field, value, field, value, ...] of each row of the batch, nulls left out."""
    if plan.fields_column is not None:
        return [[item for pair in (pairs or ()) if pair[1] is not None for item in pair]
                for pairs in batch.column(plan.fields_column).to_pylist()]
    names = plan.field_columns
    columns = [_text_column(batch.column(name)) for name in names]
    return [[item for name, value in zip(names, values) if value is not None
             for item in (name, value)]
            for values in zip(*columns)]


def _batch_commands(plan: SinkPlan, batch: pa.RecordBatch) -> Iterator[tuple]:
    """(stream, id, fields, idempotencyKey value) of each row; SinkError for a row that
    cannot be an entry."""
    rows = batch.num_rows
    streams = (batch.column(plan.stream_column).to_pylist() if plan.stream_column
               else [plan.stream] * rows)
    ids = batch.column(plan.id_column).to_pylist() if plan.id_column else [None] * rows
    key_column = plan.idempotence.key_column if plan.idempotence is not None else None
    keys = batch.column(key_column).to_pylist() if key_column else [None] * rows
    for stream, entry_id, fields, key in zip(streams, ids, _batch_fields(plan, batch), keys):
        entry_id = entry_id or "*"
        if key_column is not None and key is None and entry_id == "*":
            raise SinkError(f"a row for stream {stream!r} has no idempotency key: column "
                            f"{key_column} (option idempotencyKey) is null")
        if stream is None:
            raise SinkError(f"a row (id {entry_id}) has no stream: column "
                            f"{plan.stream_column} is null")
        if not fields:
            raise SinkError(f"a row for stream {stream!r} (id {entry_id}) has no non-null "
                            f"field, and an entry needs at least one")
        yield stream, entry_id, fields, key


def _bulk(value: Union[str, bytes]) -> bytes:
    data = value.encode() if isinstance(value, str) else value
    return b"$%d\r\n%s\r\n" % (len(data), data)


def _packed(command: tuple) -> bytes:
    """One command in RESP."""
    return b"*%d\r\n" % len(command) + b"".join(map(_bulk, command))


def _round_trip(client: "Client", commands: List[tuple]) -> list:
    """Sends the commands at once and returns every reply, a refused command's error in
    its place. A single server gets them packed here (redis-py's pipeline costs about a
    third more per XADD); a cluster's go through redis-py's cluster pipeline, which sends
    each to the node that holds its key."""
    if isinstance(client, RedisCluster):
        pipe = client.pipeline(transaction=False)
        for command in commands:
            pipe.execute_command(*command)
        return pipe.execute(raise_on_error=False)
    connection = client.connection_pool.get_connection()
    try:
        connection.send_packed_command([b"".join(map(_packed, commands))])
        replies: list = []
        for _ in commands:
            try:
                replies.append(connection.read_response(disable_decoding=True))
            except redis.ResponseError as exc:
                replies.append(exc)
        return replies
    except BaseException:
        connection.disconnect()            # replies may be left unread on it
        raise
    finally:
        client.connection_pool.release(connection)


class _ChunkSender:
    """XADDs queued and sent every `batch_size` rows in one round trip."""

    def __init__(self, plan: SinkPlan, client: "Client") -> None:
        self.plan = plan
        self.client = client
        self.commands: List[tuple] = []
        self.ids: List[str] = []               # each command's entry ID, for messages
        self.counts = WriteCounts()
        self.names = RowNames(plan.idempotence) if plan.idempotence is not None else None

    def add(self, stream: str, entry_id: str, fields: list, key: Optional[object] = None) -> None:
        idmp: tuple = ()
        if self.names is not None and entry_id == "*":    # IDMP takes server-chosen IDs only
            self.names.prepare(self.client, stream)
            idmp = ("IDMP", *self.names.name(key))
        self.commands.append(("XADD", stream, *idmp, *self.plan.trim, entry_id, *fields))
        self.ids.append(entry_id)
        if len(self.commands) >= self.plan.batch_size:
            self.send()

    def send(self) -> None:
        """One round trip; SinkError with the server's message for the first refused
        XADD (the others of the chunk have been applied: no transaction)."""
        if not self.commands:
            return
        commands, self.commands, ids, self.ids = self.commands, [], self.ids, []
        for command, entry_id, reply in zip(commands, ids, _round_trip(self.client, commands)):
            stream = command[1]
            if not isinstance(reply, Exception):
                self.counts.entries += 1
            elif self.plan.skip_existing_ids and entry_id != "*" and STALE_ID_ERROR in str(reply):
                self.counts.skipped += 1
            else:
                where = f"stream {stream!r}" + (f" (id {entry_id})" if entry_id != "*" else "")
                raise SinkError(f"the server at {self.plan.address.shown} refused XADD to "
                                f"{where}: {reply}") from None


def write_batches(plan: SinkPlan, batches: Iterator[pa.RecordBatch]) -> WriteCounts:
    """Writes every row of the batches in order (one task's share); the one writing
    core of both writers."""
    client = plan.address.connect()
    try:
        sender = _ChunkSender(plan, client)
        for batch in batches:
            for row in _batch_commands(plan, batch):
                sender.add(*row)
        sender.send()
        return sender.counts
    except redis.RedisError as exc:
        raise SinkError(f"writing to the server at {plan.address.shown} failed: {exc}") from None
    finally:
        client.close()


def _report_abort(messages: Sequence[Optional[WriteCounts]], what: str) -> None:
    written = sum(m.entries for m in messages if m is not None)
    log.warning("%s failed; %d entries written by its finished tasks stay in their streams "
                "(a stream cannot take entries back)", what, written)


class _XaddWriter:
    """What both writers share: the plan, made (and checked) on the driver when Spark
    creates the writer, and each task's write."""

    overwrite_refusal = ""
    streaming = False

    def __init__(self, options: Mapping[str, str], schema: StructType, overwrite: bool = False) -> None:
        if overwrite:
            raise OptionError(self.overwrite_refusal)
        self.plan = plan_sink(options, schema, self.streaming)
        check_target(self.plan)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriteCounts:
        return write_batches(self.plan, iterator)


class StreamBatchWriter(_XaddWriter, DataSourceArrowWriter):
    """`df.write.format("sluice")`: each task XADDs its partition (Arrow batches in)."""

    overwrite_refusal = ("format sluice cannot overwrite: a stream only grows; write with mode "
                         "append (delete the streams first to replace them)")

    def abort(self, messages: List[Optional[WriteCounts]]) -> None:
        _report_abort(messages, "the write")


class StreamStreamWriter(_XaddWriter, DataSourceStreamArrowWriter):
    """`df.writeStream.format("sluice")`: each micro-batch's tasks XADD their rows."""

    streaming = True

    overwrite_refusal = ("format sluice cannot replace what earlier micro-batches wrote (output "
                         "mode complete): a stream only grows; use output mode append, or "
                         "foreachBatch to write each batch's result")

    def abort(self, messages: List[Optional[WriteCounts]], batchId: int) -> None:
        _report_abort(messages, f"micro-batch {batchId}")


__all__ = ["StreamBatchWriter", "StreamStreamWriter", "SinkError", "SinkPlan", "WriteCounts",
           "check_output_mode", "check_sink_options", "check_target", "plan_sink", "write_batches"]
