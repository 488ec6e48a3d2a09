"""The Sluice formats' options checked in the user's own process, before Spark plans
anything, so that a bad option is an OptionError of one line at load(), save() or start().

Spark runs a Python data source's code only in Python worker processes: at load() it
asks one for the schema (an error there reaches the user inside Spark's
PYTHON_DATA_SOURCE_ERROR text, after a traceback), the reader itself is made only when
a query runs, and writeStream.start() runs none of it at all (an output mode the sink
cannot take fails the query at its first micro-batch, after start() returned). So
`register(spark)` wraps the four PySpark calls that hand a format to the JVM -
DataFrameReader.load, DataStreamReader.load, DataFrameWriter.save and
DataStreamWriter.start - with a check that runs for the Sluice formats only: the
format and the options set so far are read from the JVM reader or writer, the call's
own arguments added. Everything checked here is checked again where Spark uses it."""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Mapping, Optional

from py4j.protocol import Py4JError
from pyspark.sql.readwriter import DataFrameReader, DataFrameWriter
from pyspark.sql.streaming.readwriter import DataStreamReader, DataStreamWriter

from sluice.spark.read_options import read_options
from sluice.spark.snapshot_source import snapshot_options
from sluice.spark.stream_sink import check_output_mode, check_sink_options

CHECKED = "_sluice_checked"


def _format(jvm_object: Any, arguments: Mapping[str, Any]) -> Optional[str]:
    """The format the call reads or writes; None when this Spark's JVM reader or writer
    does not tell (then Spark's own checks, in its workers, are all there is)."""
    try:
        return arguments.get("format") or jvm_object.source()
    except Py4JError:
        return None


def _jvm_options(jvm_object: Any) -> dict:
    """The options set so far on a JVM reader or writer (its CaseInsensitiveMap)."""
    pairs = jvm_object.extraOptions().originalMap().iterator()
    options = {}
    while pairs.hasNext():
        pair = pairs.next()
        options[pair._1()] = pair._2()
    return options


def _given(jvm_object: Any, arguments: Mapping[str, Any]) -> dict:
    """The options the call will hand the format: those set before it, its **options
    (PySpark's own spelling of values: booleans as true/false) and its path."""
    options = _jvm_options(jvm_object)
    for name, value in arguments.get("options", {}).items():
        if value is not None:
            options[name] = str(value).lower() if isinstance(value, bool) else str(value)
    if isinstance(arguments.get("path"), str):
        options["path"] = arguments["path"]
    return options


def _check_read(jvm_object: Any, arguments: Mapping[str, Any]) -> None:
    source = _format(jvm_object, arguments)
    if source == "sluice":
        read_options(_given(jvm_object, arguments))
    elif source == "sluice-snapshot":
        snapshot_options(_given(jvm_object, arguments))


def _check_save(jvm_object: Any, arguments: Mapping[str, Any]) -> None:
    if _format(jvm_object, arguments) == "sluice":
        check_sink_options(_given(jvm_object, arguments))


def _check_start(jvm_object: Any, arguments: Mapping[str, Any]) -> None:
    if _format(jvm_object, arguments) == "sluice":
        check_sink_options(_given(jvm_object, arguments))
        check_output_mode(arguments.get("outputMode") or str(jvm_object.outputMode()))


def _wrap(cls: type, method: str, jvm_attribute: str, check: Callable[[Any, Mapping[str, Any]], None]) -> None:
    original = getattr(cls, method)
    if getattr(original, CHECKED, False):
        return
    signature = inspect.signature(original)

    @functools.wraps(original)
    def checked(self: Any, *args: Any, **kwargs: Any) -> Any:
        check(getattr(self, jvm_attribute), signature.bind(self, *args, **kwargs).arguments)
        return original(self, *args, **kwargs)

    setattr(checked, CHECKED, True)
    setattr(cls, method, checked)


def install() -> None:
    """Wraps the four calls, once per process."""
    _wrap(DataFrameReader, "load", "_jreader", _check_read)
    _wrap(DataStreamReader, "load", "_jreader", _check_read)
    _wrap(DataFrameWriter, "save", "_jwrite", _check_save)
    _wrap(DataStreamWriter, "start", "_jwrite", _check_start)
