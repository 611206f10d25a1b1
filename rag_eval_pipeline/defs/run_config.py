"""Run configs, built in one place for the CLI, the schedules and the sensors."""

from collections.abc import Sequence
from typing import Any

from rag_eval_pipeline.defs.names import CASE_SHARD_SCORES, HOTPOTQA_RAW, JUDGE_SCORES


def knowledge_base_run_config(
    source: str | None = None,
    sample_size: int | None = None,
    selection: str | None = None,
    seed: int | None = None,
) -> dict[str, Any]:
    """Overrides of the configuration file's HotpotQA sample for one knowledge-base run (only
    what was given; nothing given: the file's sample)."""
    config = {"source": source, "sample_size": sample_size, "selection": selection, "seed": seed}
    config = {k: v for k, v in config.items() if v is not None}
    return {"ops": {HOTPOTQA_RAW: {"config": config}}} if config else {}


def evaluation_run_config(
    judges: Sequence[str] | None, judge_repeats: int | None = None, jury: str | None = None
) -> dict[str, Any]:
    """The judges of one evaluation run, how often each LLM judge scores a case and its jury
    (each None: the configuration file's), recorded in the run's config."""
    given = {"judges": list(judges) if judges else None, "judge_repeats": judge_repeats, "jury": jury}
    config = {k: v for k, v in given.items() if v is not None}
    return {"ops": {JUDGE_SCORES: {"config": config}}} if config else {}


def shard_run_config(evaluation_config: dict[str, Any]) -> dict[str, Any]:
    """The same judges for a model's case shards as for its own run: their calls must be the ones
    that run asks its cache for."""
    config = evaluation_config.get("ops", {}).get(JUDGE_SCORES, {}).get("config")
    return {"ops": {CASE_SHARD_SCORES: {"config": config}}} if config else {}
