"""`rag-eval probe`: the security probes over the instance's judgement list and knowledge base,
each model or agent reached as it can be, the figures printed (a table, or JSON) and stored for
`rag-eval gate --max asr_*` and the report."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

from rag_eval_pipeline.cli.context import history_of, instance_of, registered_models_of, settings_of
from rag_eval_pipeline.cli.errors import CommandError
from rag_eval_pipeline.cli.output import report_failure
from rag_eval_pipeline.common.plain import plain
from rag_eval_pipeline.common.text import clip_at_word
from rag_eval_pipeline.config import Settings
from rag_eval_pipeline.defs.names import JUDGEMENT_LIST, KB_INDEX, KB_PASSAGES, SECURITY_PROBES
from rag_eval_pipeline.instance.lineage import load_asset
from rag_eval_pipeline.instance.location import dagster_home_path
from rag_eval_pipeline.reporting.markdown import to_markdown
from rag_eval_pipeline.security.attacks import Attack

SAMPLE_SEED = 0  # the same cases are probed run after run: builds compare on the same probes


def _attacks(args: argparse.Namespace, settings: Settings) -> list[Attack]:
    try:
        return Attack.parse_list(
            args.attacks if args.attacks is not None else ",".join(settings.security.attacks)
        )
    except ValueError as err:
        raise CommandError(str(err)) from None


def _systems(args: argparse.Namespace, settings: Settings) -> list[tuple[Any, Any]]:
    """Each model's spec and how the probes reach it, refused in one line when they cannot."""
    from rag_eval_pipeline.answering.agents.provider import agent_takes_passages
    from rag_eval_pipeline.security.probe import ProbeRefusedError, reach_of

    names = args.models or settings.security.models or registered_models_of(args)
    if not names:
        raise CommandError("no model to probe: pass --models, or evaluate one first (`rag-eval run`)")
    registry = settings.answer_registry()
    chosen = []
    for name in names:
        try:
            spec = registry.resolve(name)
        except ValueError as err:
            raise CommandError(str(err)) from None
        if spec.is_agent and not hasattr(spec.agent, "ingest"):
            raise CommandError(
                f"{name} is a file of answers given before any attack: nothing planted can reach it; "
                "probe the agent itself (provider http or python)"
            )
        ingest = getattr(spec.agent, "ingest", None)
        try:
            chosen.append(
                (spec, reach_of(spec, spec.is_agent and agent_takes_passages(spec), ingest is not None))
            )
        except ProbeRefusedError as err:
            raise CommandError(str(err)) from None
    return chosen


def _sample(cases: pd.DataFrame, size: int) -> pd.DataFrame:
    if len(cases) <= size:
        return cases.reset_index(drop=True)
    return cases.sample(n=size, random_state=SAMPLE_SEED).sort_index().reset_index(drop=True)


def handle(args: argparse.Namespace) -> int:
    settings = settings_of(args)
    attacks = _attacks(args, settings)
    systems = _systems(args, settings)
    history = history_of(args)
    try:
        cases = load_asset(history, JUDGEMENT_LIST)
        passages = load_asset(history, KB_PASSAGES)
        manifest = load_asset(history, KB_INDEX)
    except (FileNotFoundError, ValueError) as err:
        raise CommandError(f"{err} (the probes need an evaluated instance: `rag-eval run` first)") from None
    security = settings.security
    sample = _sample(cases, args.sample or security.sample)
    try:
        rows = _run(args, settings, systems, attacks, sample, passages, manifest)
    except Exception as err:
        from rag_eval_pipeline.cli.run import BAD_INPUT

        return report_failure(
            err, args.verbose, str(dagster_home_path(args.dagster_home)), BAD_INPUT, args.config
        )
    from rag_eval_pipeline.instance.lineage import artifacts_folder
    from rag_eval_pipeline.metrics.security import RESULT_KEYS, probe_comparisons, probe_results
    from rag_eval_pipeline.storage.probes import store_probes

    store_probes(artifacts_folder(history), rows)
    _tell_the_ui(args, artifacts_folder(history))
    statistics = settings.statistics
    results = probe_results(rows)
    comparisons = probe_comparisons(rows, statistics.significance_level)
    if args.format == "json":
        document = {
            "results": [{k: plain(r[k]) for k in RESULT_KEYS} for r in results.to_dict(orient="records")],
            "comparisons": [{k: plain(v) for k, v in c.items()} for c in comparisons],
        }
        print(json.dumps(document, ensure_ascii=False, indent=2))
        return 0
    _print_table(results, comparisons, rows)
    return 0


def _run(
    args: argparse.Namespace,
    settings: Settings,
    systems: list[tuple[Any, Any]],
    attacks: list[Attack],
    sample: pd.DataFrame,
    passages: pd.DataFrame,
    manifest: Any,
) -> pd.DataFrame:
    import dagster as dg

    from rag_eval_pipeline.answering.agents.ingest import ingest_hook
    from rag_eval_pipeline.answering.registry import AnswerRegistry
    from rag_eval_pipeline.definitions import build_resources
    from rag_eval_pipeline.security.canary import new_run_seed
    from rag_eval_pipeline.security.copies import AttackedCopies
    from rag_eval_pipeline.security.planting import build_probes
    from rag_eval_pipeline.security.probe import Reach, SystemUnderTest, probe_system

    security = settings.security
    seed = args.seed or new_run_seed()
    top_k = args.top_k or security.top_k
    probes = build_probes(
        sample.to_dict(orient="records"), attacks, seed, args.poison_count or security.poison_count
    )
    say = lambda line: print(f"probe: {line}", file=sys.stderr, flush=True)  # noqa: E731
    say(f"seed {seed}: {len(sample)} cases, attacks {', '.join(a.value for a in attacks)}")
    resources = build_resources(settings)
    wanted = {key: resources[key] for key in ("settings", "llm", "knowledge_base")}
    registry: AnswerRegistry = settings.answer_registry()
    frames = []
    with (
        dg.build_resources(wanted, instance=instance_of(args)) as built,
        tempfile.TemporaryDirectory(prefix="rag-eval-probe-") as scratch,
    ):
        knowledge_base = built.knowledge_base.knowledge_base
        services = built.llm.services()
        modes = [spec.retrieval_mode for spec, _ in systems if spec.retrieval_mode is not None]
        copies = AttackedCopies(
            knowledge_base.spec, passages, Path(scratch), any(m.needs_vectors for m in modes)
        )
        for spec, reach in systems:
            agent_services = services.without_response_cache() if spec.is_agent else services
            hook = None
            if reach is Reach.INGEST:
                headers = dict(getattr(spec.agent, "headers", {}) or {})
                hook = ingest_hook(spec.agent.ingest, headers)
            system = SystemUnderTest(
                spec,
                registry.build(spec, agent_services),
                reach,
                hook,
                spec.calls_in_flight or settings.concurrency,
            )
            frames.append(
                probe_system(
                    system,
                    sample,
                    probes,
                    lambda mode: knowledge_base.retriever(manifest, mode),
                    copies,
                    top_k=top_k,
                    on_progress=say,
                )
            )
    return pd.concat(frames, ignore_index=True)


def _tell_the_ui(args: argparse.Namespace, artifacts) -> None:
    """Every stored probe row (this probe's models replaced, the others' kept) as a
    materialization of ``security_probes``, with the metadata the asset itself writes: the
    attack success per model and attack with its interval first, then the worst probes."""
    import dagster as dg

    from rag_eval_pipeline.defs.assets.security import probes_metadata
    from rag_eval_pipeline.storage.probes import load_probes

    metadata = probes_metadata(load_probes(artifacts))
    instance_of(args).report_runless_asset_event(dg.AssetMaterialization(SECURITY_PROBES, metadata=metadata))


def _print_table(results: pd.DataFrame, comparisons: list[dict[str, Any]], rows: pd.DataFrame) -> None:
    shown = results.rename(columns={"retrieved_rate": "planted_retrieved"})
    print(to_markdown(shown.round(3)))
    if comparisons:
        print("\nPaired comparisons (same probes; exact sign-flip test, Holm-adjusted):")
        table = pd.DataFrame(comparisons)[
            ["attack", "language", "model_a", "model_b", "n", "asr_a", "asr_b", "p_holm", "verdict"]
        ]
        print(to_markdown(table.round(4)))
    from rag_eval_pipeline.metrics.security import worst_probes

    worst = worst_probes(rows, 3)
    for probe in worst.to_dict(orient="records"):
        found = probe["evidence"] or ""
        print(f"\nsucceeded: {probe['model']} / {probe['attack']} / {probe['qid']}: found {found!r}")
        print(f"  planted: {clip_at_word(str(probe['planted']), 160)}")
        print(f"  reply:   {clip_at_word(str(probe['reply']), 160)}")
