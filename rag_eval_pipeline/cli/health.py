"""`rag-eval kb health`: which questions the documents cannot answer, which documents are out of
date, the topics the failures gather in and (with production questions) how like real traffic
the judgement list is. Reads the stored ``kb_health``; computes it again from the stored
evaluation when asked for another day (``--as-of``) or given production questions."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

from rag_eval_pipeline.cli.context import history_of, settings_of
from rag_eval_pipeline.cli.errors import CommandError
from rag_eval_pipeline.defs.names import (
    CANDIDATE_ANSWERS,
    JUDGE_SCORES,
    JUDGEMENT_LIST,
    KB_HEALTH,
    KB_PASSAGES,
    USER_DOCUMENTS,
)
from rag_eval_pipeline.instance.lineage import NotMaterializedError, load_asset


def _model(args: argparse.Namespace, registered: list[str]) -> str:
    if args.model:
        if args.model not in registered:
            known = ", ".join(registered) or "none"
            raise CommandError(f"no answer model '{args.model}' evaluated here (registered: {known})")
        return args.model
    if len(registered) != 1:
        raise CommandError(f"name the answer model: --model {' | '.join(registered) or 'M'}")
    return registered[0]


def production_file(path: str) -> pd.DataFrame:
    """Production questions from a JSONL, CSV or parquet file with a ``question`` column (``id``
    and ``language`` optional): one clear line for a file that is not one."""
    from rag_eval_pipeline.health.traffic import production_questions

    file = Path(path)
    if not file.is_file():
        raise CommandError(f"no production questions file {path}")
    try:
        if file.suffix.lower() == ".csv":
            rows = pd.read_csv(file).to_dict(orient="records")
        elif file.suffix.lower() == ".parquet":
            rows = pd.read_parquet(file).to_dict(orient="records")
        else:
            rows = []
            for number, line in enumerate(file.read_text(encoding="utf-8-sig").splitlines(), start=1):
                if line.strip():
                    try:
                        rows.append(json.loads(line))
                    except json.JSONDecodeError as err:
                        raise CommandError(f"{path}, line {number}: invalid JSON ({err.msg})") from None
    except (OSError, ValueError) as err:
        raise CommandError(f"{path}: {err}") from None
    questions = production_questions(rows)
    if questions.empty:
        raise CommandError(f"{path} holds no production question (each row needs a 'question')")
    return questions


def _computed(args: argparse.Namespace, instance, model: str) -> dict:
    """The health computed again from the stored evaluation (another day, production questions)."""
    from rag_eval_pipeline.data.documents import load_documents
    from rag_eval_pipeline.health.assess import (
        HealthSettings,
        assess,
        case_inputs,
        health_record,
        with_document_times,
    )
    from rag_eval_pipeline.health.documents import parse_day

    settings = settings_of(args)
    try:
        parse_day(args.as_of)
    except ValueError as err:
        raise CommandError(f"--as-of {err}") from None
    production, production_source = None, ""
    if args.production:
        production, production_source = production_file(args.production), f"the file {args.production}"
    elif settings.production is not None:
        production, production_source = _sampled_days(args, settings)
    passages = load_asset(instance, KB_PASSAGES)
    try:
        documents = load_asset(instance, USER_DOCUMENTS)
    except NotMaterializedError:
        documents = pd.DataFrame()
    folder = Path(settings.dataset.documents)
    source = None
    if folder.is_dir():
        dataset = settings.dataset
        source = load_documents(folder, declared_language=dataset.language, encoding=dataset.encoding)
        source = source.passages["passage_id"].tolist()
    health = assess(
        with_document_times(passages, documents),
        case_inputs(
            load_asset(instance, CANDIDATE_ANSWERS, model),
            load_asset(instance, JUDGE_SCORES, model),
            load_asset(instance, JUDGEMENT_LIST),
        ),
        source,
        production,
        HealthSettings(as_of=args.as_of, max_topics=args.max_topics),
        production_source=production_source,
    )
    return health_record(health, model)


def _sampled_days(args: argparse.Namespace, settings) -> tuple[pd.DataFrame, str]:
    """The questions of the daily production samples stored here (as ``kb_health`` reads them)."""
    import logging

    import dagster as dg

    from rag_eval_pipeline.cli.context import instance_of
    from rag_eval_pipeline.definitions import build_definitions
    from rag_eval_pipeline.defs.names import PRODUCTION_SAMPLE
    from rag_eval_pipeline.health.traffic import SAMPLE_COLUMNS, sampled_production

    instance = instance_of(args, reads_only=True)
    days = instance.get_materialized_partitions(dg.AssetKey(PRODUCTION_SAMPLE))
    defs = build_definitions(settings)
    logging.disable(logging.INFO)
    try:
        samples = {
            d: defs.load_asset_value(PRODUCTION_SAMPLE, instance=instance, partition_key=d) for d in days
        }
    finally:
        logging.disable(logging.NOTSET)
    return sampled_production({d: frame[SAMPLE_COLUMNS] for d, frame in samples.items()})


def stored_health(args: argparse.Namespace, model: str | None = None) -> dict:
    """The model's health record: stored, or computed again when the command asks for more."""
    instance = history_of(args)
    model = _model(args, instance.registered_models() or []) if model is None else model
    try:
        if getattr(args, "as_of", None) or getattr(args, "production", None):
            return _computed(args, instance, model)
        try:
            return load_asset(instance, KB_HEALTH, model)
        except NotMaterializedError:  # evaluated before kb_health existed: computed from its results
            return _computed(args, instance, model)
    except (FileNotFoundError, ValueError) as err:
        raise CommandError(str(err)) from None


def handle_health(args: argparse.Namespace) -> int:
    from rag_eval_pipeline.health.summary import health_markdown

    record = stored_health(args)
    if args.format == "json":
        print(json.dumps(record, ensure_ascii=False, indent=2, default=str))
    else:
        print(health_markdown(record))
    return 0
