"""Sluice from data pipelines: PySpark sources and sinks (`pipeline.spark`).

Everything here is a client of a Sluice (or Redis) server, or a reader of
Sluice's files through `persist`: it never reaches into engine internals."""
