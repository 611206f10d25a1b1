"""A generation run through the instance, as `rag-eval generate` drives it: the documents read
into a knowledge base of this run's own (nothing published), the generated cases checked, and
the list, its rejected cases and manifest written beside each other."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pandas as pd

from rag_eval_pipeline.defs.names import GENERATED_JUDGEMENT_LIST, GENERATION_JOB, TRIGGER_TAG
from rag_eval_pipeline.generation.output import survival, write_outputs
from rag_eval_pipeline.instance.lineage import load_materialization
from rag_eval_pipeline.instance.runs import cli_tags, console_logs, run_in_process


@dataclass
class GenerationReport:
    generated: pd.DataFrame
    survival: pd.DataFrame
    manifest: dict
    notes: list[str]
    run_id: str


def run_generation(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    config: dict,
    out: Path,
    documents: str,
    verbose: bool = False,
) -> GenerationReport:
    """One run of the generation job in this process (raises as the run failed); the list, its
    rejected cases and its manifest written from what the run stored."""
    result = run_in_process(
        defs.resolve_job_def(GENERATION_JOB),
        instance,
        run_config={"ops": {GENERATED_JUDGEMENT_LIST: {"config": config}}, **console_logs(verbose)},
        tags={**cli_tags(), TRIGGER_TAG: "cli"},
        raise_on_error=True,
    )
    generated = load_materialization(instance, GENERATED_JUDGEMENT_LIST, None, result.run_id)
    records = instance.fetch_materializations(dg.AssetKey(GENERATED_JUDGEMENT_LIST), limit=20).records
    record = next(r for r in records if r.run_id == result.run_id)  # this run's, whatever ran since
    metadata = record.asset_materialization.metadata
    asked = dict(metadata["asked_by_type"].value)
    notes = list(metadata["notes"].value)
    cost = generated["cost_usd"].sum(min_count=1)
    manifest = write_outputs(
        generated,
        asked,
        notes,
        out,
        documents,
        int(metadata["api_calls"].value),
        int(metadata["cache_hits"].value),
        None if pd.isna(cost) else float(cost),
    )
    return GenerationReport(generated, survival(generated, asked), manifest, notes, result.run_id)
