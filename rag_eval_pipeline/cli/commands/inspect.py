"""`explain`, `worst` and `gate`: reading one model's stored scores."""

from __future__ import annotations

from rag_eval_pipeline.cli.arguments import positive, share_or_zero
from rag_eval_pipeline.cli.commands import Commands, Handler
from rag_eval_pipeline.cli.options import add_bound, add_model, add_thresholds


def explain_command(commands: Commands) -> None:
    explain = commands.add_parser(
        "explain",
        help="the lineage of one case's scores",
        description="""The question, ground truth, retrieved passages (gold marked), the answer, each judge's
        scores and rationales, prompt versions, model ids, index version and the Dagster runs that produced
        each step.""",
    )
    explain.add_argument("qid", help="question id")
    add_model(explain)
    explain.add_argument(
        "--run",
        metavar="RUN_ID",
        help="the case as this Dagster run scored it (each materialization's files are kept), "
        "not as the latest did",
    )
    explain.set_defaults(handler=Handler("inspect", "handle_explain"))


def worst_command(commands: Commands) -> None:
    worst = commands.add_parser("worst", help="the lowest-scoring cases of a model")
    add_model(worst)
    worst.add_argument("--metric", default="correctness")
    worst.add_argument("--judge", help="judge id (default: the first judge with the metric)")
    worst.add_argument("-n", type=positive, default=10, help="how many cases (default 10)")
    worst.set_defaults(handler=Handler("inspect", "handle_worst"))


def gate_command(commands: Commands) -> None:
    gate = commands.add_parser(
        "gate",
        help="fail (exit 1) when a metric is below its threshold: for CI pipelines",
        description="""Reads the model's metric_summary and compares overall means with thresholds. Exit 0:
        all pass; 1: a metric is below its threshold, not measured, or stale; 2: no summary.""",
    )
    add_model(
        gate,
        "answer-model partition, or an agent version's sessions: trajectories:VERSION (traced), "
        "simulation:VERSION (simulated)",
    )
    add_thresholds(
        gate,
        "e.g. faithfulness=0.7, JUDGE/METRIC=VALUE, or tag:TAG/METRIC=VALUE (also type: and "
        "level:) for one group of cases; repeatable (default: the configuration file's thresholds)",
    )
    gate.add_argument(
        "--max",
        dest="maxima",
        action="append",
        metavar="METRIC=VALUE",
        help="a maximum: a per-case budget (latency_p95_s=2, cost_per_case_usd=0.01; also "
        "latency_p50_s, latency_max_s, cost_max_usd; tag:TAG/ etc. for one group; default: the "
        "file's budgets) or a metric better lower (asr_injection=0.05 from `rag-eval probe`, "
        "error_rate=0.02); repeatable",
    )
    gate.add_argument("--judge", help="apply bare metrics to this judge only")
    add_bound(
        gate,
        "what must clear each --min threshold: the mean (default), or the lower end of its "
        "95%% interval (a release gate: 0.32 on 25 cases does not clear 0.30)",
    )
    gate.add_argument(
        "--min-n",
        type=positive,
        help="fewest scored cases a gate may pass on; fewer: 'too few cases to conclude', exit 1 "
        "(default: statistics.min_cases of the configuration file, else 10)",
    )
    gate.add_argument(
        "--max-error-rate",
        type=share_or_zero,
        help="the largest share of failed answer calls the gate allows (default: max_error_rate of "
        "the configuration file, else 0: any failure fails it)",
    )
    gate.add_argument(
        "--judgement-list",
        metavar="VERSION",
        help="the judgement list's version the results must be on (a pinned regression set: `rag-eval "
        "run` and `production promote` print it); another list fails the gate",
    )
    gate.set_defaults(handler=Handler("inspect", "handle_gate"))
