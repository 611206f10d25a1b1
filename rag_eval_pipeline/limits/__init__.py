"""Every limit on how much runs at once, in one place:

- ``in_flight``: at most N calls of one stage in flight in a process (``concurrency:`` of a
  model, an agent or a judge);
- ``slot_files``: at most N calls to one provider across every run of one machine (the
  ``llm_limits:`` of the configuration, on a SQLite instance);
- ``pools``: the same limits across every machine of a deployment, as slots of the Dagster
  instance's concurrency pools (a PostgreSQL instance);
- ``partition_lock``: one evaluation of an answer-model partition at a time.

Pure: the Dagster glue (``defs/resources``) passes the run's instance and storage folder."""
