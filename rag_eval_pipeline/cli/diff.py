"""`rag-eval diff A B` and `rag-eval baseline`: which cases got worse between two evaluations,
and the named runs a pull request is compared with."""

from __future__ import annotations

import argparse
from datetime import datetime, timezone
from pathlib import Path

from rag_eval_pipeline.cli.context import history_of, settings_of
from rag_eval_pipeline.cli.errors import CommandError
from rag_eval_pipeline.defs.evaluations import (
    EvaluationNotFoundError,
    Pinned,
    baseline_refusal,
    baselines,
    load_evaluation,
    pin,
)
from rag_eval_pipeline.metrics.diff import DiffSpec, diff_evaluations
from rag_eval_pipeline.reporting.diff import FORMATS
from rag_eval_pipeline.storage.baselines import Baseline, BaselineError


def _pinned(instance, name: str, other: Pinned | None = None) -> Pinned:
    try:
        return pin(instance, name, other)
    except (EvaluationNotFoundError, BaselineError) as err:
        raise CommandError(str(err)) from None


def _loaded(instance, pinned: Pinned):
    try:
        return load_evaluation(instance, pinned)
    except (EvaluationNotFoundError, FileNotFoundError, ValueError) as err:
        raise CommandError(str(err)) from None


def handle_diff(args: argparse.Namespace) -> int:
    settings = settings_of(args)
    instance = history_of(args)  # a local home's files where they answer: no Dagster
    before_pin = _pinned(instance, args.before) if args.before != "current" else None
    after_pin = _pinned(instance, args.after, before_pin)
    if before_pin is None:  # `diff current main`: current is the other side's model
        before_pin = _pinned(instance, args.before, after_pin)
    before, after = _loaded(instance, before_pin), _loaded(instance, after_pin)
    for pinned, other in ((before_pin, after), (after_pin, before)):
        refusal = baseline_refusal(pinned.baseline, other) if pinned.baseline is not None else None
        if refusal:
            raise CommandError(refusal)
    diff = diff_evaluations(before, after, DiffSpec.of(settings.statistics, args.min_cases, args.min_effect))
    written = FORMATS[args.format](diff)
    print(written)
    if args.output:
        try:
            Path(args.output).write_text(written + "\n")
        except OSError as err:
            raise CommandError(
                f"cannot write {args.output}: {err.strerror or err}: give a writable path"
            ) from None
    if args.fail_on_regression and not diff.significant_regressions().empty:
        return 1
    return 0


def handle_baseline_set(args: argparse.Namespace) -> int:
    settings_of(args)
    instance = history_of(args)
    if args.name in (instance.registered_models() or []):
        raise CommandError(
            f"'{args.name}' is an answer model here: a baseline of that name would hide it; choose "
            "another name (main, release-1.2)"
        )
    pinned = _pinned(instance, args.run)
    evaluation = _loaded(instance, pinned)
    baseline = Baseline(
        name=args.name,
        model=pinned.model,
        run_id=pinned.run_id,
        judgement_list=evaluation.judgement_list,
        judges=tuple(evaluation.judges()),
        set_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
    )
    try:
        baselines(instance).set(baseline)
    except BaselineError as err:
        raise CommandError(str(err)) from None
    print(
        f"baseline {baseline.name}: run {baseline.run_id[:8]} of {baseline.model} (judgement list "
        f"{baseline.judgement_list or 'unknown'}; judges {', '.join(baseline.judges)}); compare with "
        f"`rag-eval diff {baseline.name} current`"
    )
    return 0


def handle_baseline_list(args: argparse.Namespace) -> int:
    settings_of(args)
    try:
        pinned = baselines(history_of(args)).all()
    except BaselineError as err:
        raise CommandError(str(err)) from None
    if not pinned:
        print("no baselines: pin one with `rag-eval baseline set NAME RUN`")
    for b in pinned.values():
        fields = [b.name, b.model, b.run_id, b.judgement_list or "unknown", ", ".join(b.judges), b.set_at]
        print("\t".join(fields))
    return 0


def handle_baseline_remove(args: argparse.Namespace) -> int:
    settings_of(args)
    try:
        removed = baselines(history_of(args)).remove(args.name)
    except BaselineError as err:
        raise CommandError(str(err)) from None
    if not removed:
        raise CommandError(f"no baseline {args.name} here: `rag-eval baseline list` names them")
    print(f"baseline {args.name} removed")
    return 0
