"""Format `sluice`: Sluice (or Redis, or a Redis Cluster) streams as a Spark data source.

    spark.read.format("sluice").option("url", "redis://host:6379").option("streams", "a,b").load()
    spark.readStream.format("sluice").option("streamPattern", "events:*").load()
    df.write.format("sluice").option("stream", "totals").save()

Reading options (names are case-insensitive):
- `url` (redis://[:password@]host:port/db, rediss:// for TLS), `cluster` (true: a Redis Cluster);
- `streams` (a comma list) or `streamPattern` (a glob; keys of type stream found with SCAN,
  on every primary of a cluster); a listed stream that does not exist reads as empty;
- `startingOffsets`: earliest (default), latest, or JSON {"stream": "ID" | "earliest" |
  "latest" | -2 | -1}; reading starts after the ID, as XREAD does;
- `endingOffsets` (batch): latest (default) or JSON {"stream": "ID" | "latest" | -1}; the
  ID itself is read, as XRANGE does; "latest" is fixed when the DataFrame's read is planned;
- `minPartitions` (default one range per stream), `pageSize` (XRANGE COUNT, 10000),
  `decode` (true: fields as map<string,string>);
- `failOnDataLoss` (default true): entries that were trimmed or deleted before they were
  read (after a streaming query's checkpoint, or between planning a read and its task)
  fail the query with a message naming the stream; false: a warning, and the read goes on;
- streaming: `maxEntriesPerTrigger`, `commitGroup` (a consumer group moved to each
  processed offset, so XINFO GROUPS shows the lag).
An unknown option name is refused, naming the closest known one; `driver_checks` runs
these checks in the user's process at load(), save() and start().
Reading is planned in `batch_reader` and `stream_reader`; writing lives in `stream_sink`."""
from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql.datasource import DataSource

from sluice.spark.arrow_entries import entry_schema
from sluice.spark.options import bool_option
from sluice.spark.read_options import read_options

if TYPE_CHECKING:
    from pyspark.sql.datasource import (DataSourceReader, DataSourceStreamReader,
                                        DataSourceStreamWriter, DataSourceWriter)
    from pyspark.sql.types import StructType


class SluiceDataSource(DataSource):
    """Entries of streams (schema `stream, id, ms, seq, fields`) read over RESP with
    XRANGE, and rows written with XADD."""

    @classmethod
    def name(cls) -> str:
        return "sluice"

    def schema(self) -> str:
        return entry_schema(bool_option(self.options, "decode", False))

    def reader(self, schema: "StructType") -> "DataSourceReader":
        from sluice.spark.batch_reader import SluiceBatchReader

        return SluiceBatchReader(read_options(self.options))

    def streamReader(self, schema: "StructType") -> "DataSourceStreamReader":
        from sluice.spark.stream_reader import SluiceStreamReader

        return SluiceStreamReader(read_options(self.options))

    def writer(self, schema: "StructType", overwrite: bool) -> "DataSourceWriter":
        from sluice.spark.stream_sink import StreamBatchWriter

        return StreamBatchWriter(self.options, schema, overwrite)

    def streamWriter(self, schema: "StructType", overwrite: bool) -> "DataSourceStreamWriter":
        from sluice.spark.stream_sink import StreamStreamWriter

        return StreamStreamWriter(self.options, schema, overwrite)
