"""Answer models are partitions: comparing models is a backfill with recorded lineage."""

import dagster as dg

ANSWER_MODEL_PARTITIONS = "answer_model"

answer_model_partitions = dg.DynamicPartitionsDefinition(name=ANSWER_MODEL_PARTITIONS)
