"""The example pipeline (`make pipeline-demo`): page views into an `events` stream
(`generator`), a Structured Streaming job that totals them per key per event-time
window into a `totals` stream (`totals_job`), a consumer group that prints the totals
(`consumer`), and `demo`, which runs them all against a fresh Sluice server and checks
that the counts of every stage agree."""
