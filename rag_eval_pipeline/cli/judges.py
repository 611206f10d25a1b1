"""`rag-eval judges align JUDGE`: a STRICT judge's prompt with few-shot examples from the labelled
cases where it and people disagreed (the training half), both prompts scored on the held-out half,
and the candidate adopted as a new prompt version only when it agrees with people better there."""

from __future__ import annotations

import argparse
from pathlib import Path

from rag_eval_pipeline.cli.context import instance_of, settings_of
from rag_eval_pipeline.cli.errors import CommandError
from rag_eval_pipeline.cli.output import report_failure


def handle_align(args: argparse.Namespace) -> int:
    import dagster as dg
    import pandas as pd

    from rag_eval_pipeline.definitions import llm_resource
    from rag_eval_pipeline.defs.names import CANDIDATE_ANSWERS, HUMAN_LABELS, JUDGE_SCORES, JUDGEMENT_LIST
    from rag_eval_pipeline.instance.lineage import NotMaterializedError, load_asset
    from rag_eval_pipeline.judges.alignment import BASE, PromptStore
    from rag_eval_pipeline.judges.alignment_run import AlignmentInputs, align_judge
    from rag_eval_pipeline.judges.registry import JudgeRegistry, UnknownJudgeError
    from rag_eval_pipeline.reporting.markdown import to_markdown

    settings = settings_of(args)
    registry = JudgeRegistry(settings.custom_metrics, settings.abstention())
    try:
        spec = registry.resolve(args.judge)
    except UnknownJudgeError as err:
        raise CommandError(str(err)) from None
    if spec.kind != "strict":
        raise CommandError(
            f"{args.judge} is a {spec.kind} judge: `judges align` aligns STRICT judges (an LLM name such "
            "as claude-sonnet-4-6, or strict:<LLM>)"
        )
    instance = instance_of(args, reads_only=True)
    try:
        labels = load_asset(instance, HUMAN_LABELS)
        labels = labels[labels["metric"] == args.metric]
        if labels.empty:
            raise CommandError(
                f"no {args.metric} labels yet: `rag-eval review export`, label, then `rag-eval review import`"
            )
        models = sorted(set(labels["answer_model"]))
        inputs = AlignmentInputs(
            labels,
            {m: load_asset(instance, JUDGE_SCORES, m) for m in models},
            {m: load_asset(instance, CANDIDATE_ANSWERS, m) for m in models},
            load_asset(instance, JUDGEMENT_LIST),
        )
    except (FileNotFoundError, NotMaterializedError) as err:
        raise CommandError(str(err)) from None
    missing = llm_resource(settings).missing(spec.endpoint)  # type: ignore[arg-type]
    if missing:
        raise CommandError(f"{args.judge} needs {missing}")
    store = PromptStore(Path(instance.storage_directory()))
    current = store.chosen(spec.judge_id)
    try:
        with dg.build_resources({"llm": llm_resource(settings)}, instance=instance) as resources:
            services = resources.llm.services()
            result = align_judge(inputs, spec, registry, services, args.metric, args.examples, current)
    except Exception as err:
        return report_failure(err, args.verbose, instance.root_directory, (ValueError,), args.config)
    print(result.basis)
    print(to_markdown(pd.DataFrame(result.table)))
    if result.adopted is not None:
        store.adopt(result.adopted)
        print(
            f"adopted: {args.judge} now scores with prompt version {result.adopted.version} (its held-out "
            f"kappa is higher); later runs record it as prompt_version. The former stays selectable: "
            f"judge_prompts: {{{args.judge}: {BASE if current is None else current.version}}} in the "
            "configuration file"
        )
    else:
        print(
            "not adopted: the candidate does not agree with people better on the held-out half; "
            f"{args.judge} keeps {result.current}"
        )
    return 0
