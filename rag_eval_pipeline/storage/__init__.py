"""How artifacts are kept on disk, without Dagster: atomic writes, one format per value type, the
knowledge-base snapshots and every materialization's own file."""
