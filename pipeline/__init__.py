"""Sluice from data pipelines: PySpark sources and sinks (`pipeline.spark`), the
reliable-consumer worker library (`pipeline.worker`) and the example pipeline
(`pipeline.examples`).

Everything here is a client of a Sluice (or Redis) server, or a reader of
Sluice's files through `persist`: it never reaches into engine internals."""
