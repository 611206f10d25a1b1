"""Every command's arguments, and nothing else: parsing (``--help``, a wrong flag) imports no
command's dependencies, so it answers at once. Each command names its handler by module, imported
only when the command runs."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from dataclasses import dataclass

from rag_eval_pipeline.answering.spec import DEFAULT_MODELS
from rag_eval_pipeline.cli.arguments import comma_list, day, non_negative, positive, share, share_or_zero
from rag_eval_pipeline.generation.spec import DEFAULT_CASES, DEFAULT_GENERATOR, DEFAULT_MAX_DOCUMENT_SHARE
from rag_eval_pipeline.metrics.bounds import Bound
from rag_eval_pipeline.metrics.reference import REFERENCE_JUDGE_ID
from rag_eval_pipeline.review.strategy import Strategy

# without stored models, `rag-eval plan` assumes two models differ on this share of cases
ASSUMED_DISCORDANCE = 0.3


@dataclass(frozen=True)
class Handler:
    """A command's handler: ``handle`` in ``rag_eval_pipeline.cli.<module>``, imported when run."""

    module: str
    function: str

    def load(self) -> Callable[[argparse.Namespace], int]:
        return getattr(importlib.import_module(f"rag_eval_pipeline.cli.{self.module}"), self.function)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rag-eval", description="Evaluate RAG answer models and agents with a Dagster asset graph."
    )
    parser.add_argument(
        "--dagster-home", help="Dagster instance folder (default: $DAGSTER_HOME, else ./.dagster_home)"
    )
    parser.add_argument(
        "--config", help="configuration file (default: $RAG_EVAL_CONFIG, else ./rag_eval.yaml if present)"
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for register in (
        _run,
        _inspect,
        _diff,
        _plan,
        _models,
        _agents,
        _titles,
        _images,
        _review,
        _judges,
        _production,
        _knowledge_base,
        _trajectories,
        _simulate,
        _generate,
        _ui,
        _report,
        _worker,
        _init,
        _probe,
    ):
        register(commands)
    return parser


def _run(commands: argparse._SubParsersAction) -> None:
    """`run`, and `backfill` (the same options, the models' partitions given to the daemon)."""
    options = _evaluation_options()
    shards = argparse.ArgumentParser(add_help=False)
    shards.add_argument(
        "--shards",
        type=positive,
        default=1,
        metavar="N",
        help="with a backfill on Celery workers: split each model's cases into N shards that N "
        "runs answer and judge at once; the model's own run then summarizes them all (default 1)",
    )
    run = commands.add_parser(
        "run",
        parents=[options, shards],
        help="register models and materialize the whole graph, then print the comparison",
        description="Register the answer-model partitions, materialize every asset through the "
        "Dagster instance (the runs show in the UI), and print the model comparison.",
    )
    run.add_argument(
        "--backfill",
        action="store_true",
        help="submit the models' partitions as one Dagster backfill for the instance's daemon "
        "(runs in parallel, shown in the UI's backfill view); in this process when no daemon runs",
    )
    run.set_defaults(handler=Handler("run", "handle"), backfill=False)
    backfill = commands.add_parser(
        "backfill",
        parents=[options, shards],
        help="the same as run --backfill",
        description="Rebuild the knowledge base here, submit the answer-model partitions as one "
        "Dagster backfill for the daemon of `rag-eval ui` or a deployment, follow it, then print "
        "the comparison.",
    )
    backfill.set_defaults(handler=Handler("run", "handle"), backfill=True)


def _evaluation_options() -> argparse.ArgumentParser:
    """What an evaluation is of and how it is judged: the options `run` and `backfill` share."""
    options = argparse.ArgumentParser(add_help=False)
    options.add_argument(
        "--models",
        type=comma_list,
        help="comma-separated answer configurations: names from the configuration file, or "
        f"MODEL or MODEL@MODE-kK (default: the file's, else {','.join(DEFAULT_MODELS)})",
    )
    options.add_argument("--profile", help="a profile of the configuration file: dev, pr, nightly")
    options.add_argument(
        "--sample", type=non_negative, help="questions to evaluate (default: the file's, else 35; 0 = all)"
    )
    options.add_argument("--selection", choices=["first", "random"], help="which N questions")
    options.add_argument("--seed", type=int, help="seed for --selection random")
    options.add_argument(
        "--dataset",
        help="'bundled' (the default: 500 HotpotQA questions shipped in the package, no network), "
        "'hub' (the full split from the Hugging Face hub), 'multimodal-sample' (images, captions "
        "and questions with boxes, drawn offline), or a local HotpotQA file (JSON list, JSONL or parquet)",
    )
    options.add_argument(
        "--documents",
        metavar="DIR",
        help="with a judgement list as --dataset (a generated one, say): the folder of documents "
        "it is evaluated over (default: dataset.documents of the configuration file)",
    )
    options.add_argument(
        "--judges",
        type=comma_list,
        help="comma-separated judges: reference (no LLM), a Claude model such as "
        "claude-sonnet-4-6 (the STRICT rubric), ragas:<model> (RAGAS-style metrics), claims:<model> "
        "(claim precision and recall, citation support); "
        "default: the configuration file's, else reference",
    )
    options.add_argument(
        "--judge-repeats",
        type=positive,
        metavar="K",
        help="ask each LLM judge K times per case (independent calls, cached apart): each case's "
        "median is its score, <metric>_flip_rate the share of cases whose K scores differ; K times "
        "the judge calls (default: judge_repeats of the configuration file, else 1)",
    )
    options.add_argument(
        "--jury",
        nargs="?",
        const="median",
        choices=["median", "weighted"],
        help="add the judge 'jury': per case the median of the run's LLM judges, with Krippendorff's "
        "alpha between them; 'weighted' also weighs them by agreement with people's labels "
        "(default: jury of the configuration file, else none)",
    )
    options.add_argument(
        "--concurrency", type=positive, help="LLM calls in flight at most (default: the file's, else 8)"
    )
    options.add_argument(
        "--embedding-model",
        help="adds vectors to the knowledge base for the semantic, hybrid and two_hop modes: minilm "
        "(all-MiniLM-L6-v2 on ONNX Runtime, the [semantic] extra, no PyTorch), an .onnx file or "
        "folder, or a sentence-transformers name or folder (the [semantic-torch] extra)",
    )
    options.add_argument(
        "--elasticsearch",
        metavar="URL",
        help="build the knowledge base in this Elasticsearch cluster (default: knowledge_base.backend "
        "of the configuration file, the embedded on-disk index unless it says elasticsearch)",
    )
    options.add_argument(
        "--refresh",
        action="store_true",
        help="ask every LLM call again this run instead of answering from the response cache",
    )
    options.add_argument("--verbose", action="store_true", help="show Dagster's log and tracebacks")
    return options


def _inspect(commands: argparse._SubParsersAction) -> None:
    explain = commands.add_parser(
        "explain",
        help="the lineage of one case's scores",
        description="The question, ground truth, retrieved passages (gold marked), the answer, "
        "each judge's scores and rationales, prompt versions, model ids, index version and the "
        "Dagster runs that produced each step.",
    )
    explain.add_argument("qid", help="question id")
    explain.add_argument("--model", required=True, help="answer-model partition")
    explain.add_argument(
        "--run",
        metavar="RUN_ID",
        help="the case as this Dagster run scored it (each materialization's files are kept), "
        "not as the latest did",
    )
    explain.set_defaults(handler=Handler("inspect", "handle_explain"))

    worst = commands.add_parser("worst", help="the lowest-scoring cases of a model")
    worst.add_argument("--model", required=True, help="answer-model partition")
    worst.add_argument("--metric", default="correctness")
    worst.add_argument("--judge", help="judge id (default: the first judge with the metric)")
    worst.add_argument("-n", type=positive, default=10, help="how many cases (default 10)")
    worst.set_defaults(handler=Handler("inspect", "handle_worst"))

    gate = commands.add_parser(
        "gate",
        help="fail (exit 1) when a metric is below its threshold: for CI pipelines",
        description="Reads the model's metric_summary and compares overall means with thresholds. "
        "Exit 0: all pass; 1: a metric is below its threshold, not measured, or stale; 2: no summary.",
    )
    gate.add_argument(
        "--model",
        required=True,
        help="answer-model partition, or an agent version's sessions: trajectories:VERSION (traced), "
        "simulation:VERSION (simulated)",
    )
    gate.add_argument(
        "--min",
        dest="thresholds",
        action="append",
        metavar="METRIC=VALUE",
        help="e.g. faithfulness=0.7, JUDGE/METRIC=VALUE, or tag:TAG/METRIC=VALUE (also type: and "
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
    gate.add_argument(
        "--bound",
        choices=[b.value for b in Bound],
        default=Bound.MEAN.value,
        help="what must clear each --min threshold: the mean (default), or the lower end of its "
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


def _diff(commands: argparse._SubParsersAction) -> None:
    references = (
        "a baseline name (`rag-eval baseline set`), an answer model (its latest evaluation), a run "
        "id or its first 6+ characters, or 'current' (the latest evaluation of the other side's model)"
    )
    diff = commands.add_parser(
        "diff",
        help="which cases got worse between two evaluations, per metric and tag, tested",
        description="Matches the two evaluations' cases by question id and reports, per judge and "
        "metric and then per tag, the cases regressed, improved and unchanged, the mean change with "
        "its paired interval, the exact paired test's p-value and Holm's adjustment over the metrics "
        "shown; then the regressed cases worst first with what changed in their lineage. Cases added, "
        "removed or asked with another question or truth are listed, never counted as regressions.",
    )
    diff.add_argument("before", help=f"the evaluation compared against: {references}")
    diff.add_argument("after", help="the evaluation under review (same forms)")
    diff.add_argument("--format", choices=["table", "markdown", "json"], default="table",
                      help="table (default), markdown (a pull-request comment under 60,000 "
                      "characters), json (every number)")  # fmt: skip
    diff.add_argument(
        "--output", metavar="FILE", help="also write it to FILE (a pull-request comment's body, say)"
    )
    diff.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 when a metric is significantly worse after Holm's adjustment (the CI gate "
        "against a baseline instead of fixed thresholds)",
    )
    diff.add_argument(
        "--min-effect",
        type=share_or_zero,
        default=0.0,
        help="the smallest mean worsening that counts as a regression (default 0)",
    )
    diff.add_argument(
        "--min-cases",
        type=positive,
        help="fewest paired cases a tag is tested on (default: statistics.min_cases, else 10)",
    )
    diff.set_defaults(handler=Handler("diff", "handle_diff"))

    baseline = commands.add_parser("baseline", help="name the runs pull requests are compared with")
    baseline_commands = baseline.add_subparsers(dest="baseline_command", required=True)
    pin = baseline_commands.add_parser(
        "set",
        help="pin a run as a named baseline (say main)",
        description="Pins RUN under NAME in this instance: `rag-eval diff NAME current` then compares "
        "the latest evaluation of its model with it, refused when the judgement list or the judges "
        "differ.",
    )
    pin.add_argument("name", help="the baseline's name: letters, digits, '.', '_', '-'")
    pin.add_argument("run", help="a run id (or its first 6+ characters), or an answer model (its latest)")
    pin.set_defaults(handler=Handler("diff", "handle_baseline_set"))
    baseline_commands.add_parser("list", help="the baselines of this instance").set_defaults(
        handler=Handler("diff", "handle_baseline_list")
    )
    forget = baseline_commands.add_parser("remove", help="forget a baseline (its run stays)")
    forget.add_argument("name")
    forget.set_defaults(handler=Handler("diff", "handle_baseline_remove"))


def _plan(commands: argparse._SubParsersAction) -> None:
    plan = commands.add_parser(
        "plan",
        help="how many cases a comparison needs to detect a difference",
        description="The paired cases needed to detect a true mean difference with 80 percent power "
        "at the configured significance level: the smallest n at which the exact paired test's own "
        "power reaches it and stays there. With --model A --model B how much two models differ case "
        "by case comes from their stored scores; otherwise from --discordance, the share of cases "
        "on which two models differ.",
    )
    plan.add_argument("--difference", type=share, required=True, help="the difference to detect, e.g. 0.1")
    plan.add_argument("--model", action="append", default=[], help="two stored answer models to compare")
    plan.add_argument(
        "--judge", default=REFERENCE_JUDGE_ID, help="the judge whose scores (default reference)"
    )
    plan.add_argument("--metric", default="correctness", help="the metric (default correctness)")
    plan.add_argument(
        "--discordance",
        type=share,
        help=f"without stored models: the share of cases the two differ on (default {ASSUMED_DISCORDANCE})",
    )
    plan.add_argument(
        "--models-compared",
        type=positive,
        default=2,
        help="models compared at once: Holm's first test is then at the level / number of pairs",
    )
    plan.add_argument(
        "--judges", type=comma_list, help="the judges to count calls for (default: the configuration file's)"
    )
    plan.add_argument(
        "--judge-repeats", type=positive, metavar="K", help="each LLM judge asked K times a case"
    )
    plan.set_defaults(handler=Handler("plan", "handle"))


def _judges(commands: argparse._SubParsersAction) -> None:
    judges = commands.add_parser("judges", help="align a judge to your reviewers' labels")
    judge_commands = judges.add_subparsers(dest="judges_command", required=True)
    align = judge_commands.add_parser(
        "align",
        help="a judge's prompt with examples where it and people disagreed, kept if it agrees better",
        description="Build a candidate prompt for a STRICT judge with few-shot examples drawn from "
        "labelled cases where judge and reviewer disagreed (one half of the labelled cases, chosen "
        "by a hash of model and question), score the other half with both prompts, and report each "
        "one's weighted kappa and true-positive / true-negative rates against the labels. The "
        "candidate becomes a new prompt version of the judge (used by later runs, recorded as the "
        "scores' prompt_version) only when its held-out kappa is higher.",
    )
    align.add_argument("judge", help="a STRICT judge id, e.g. claude-sonnet-4-6")
    align.add_argument("--metric", default="correctness", help="the labelled metric (default correctness)")
    align.add_argument("--examples", type=positive, default=6, help="examples in the prompt at most (6)")
    align.add_argument("--verbose", action="store_true", help="show tracebacks")
    align.set_defaults(handler=Handler("judges", "handle_align"))


def _models(commands: argparse._SubParsersAction) -> None:
    models = commands.add_parser("models", help="list, add or remove answer-model partitions")
    model_commands = models.add_subparsers(dest="models_command", required=True)
    model_commands.add_parser("list", help="the registered answer models").set_defaults(
        handler=Handler("models", "handle_list")
    )
    add = model_commands.add_parser("add", help="register answer models (partitions)")
    add.add_argument("names", nargs="+", help="MODEL or MODEL@MODE-kK")
    add.set_defaults(handler=Handler("models", "handle_add"))
    remove = model_commands.add_parser("remove", help="unregister answer models")
    remove.add_argument("names", nargs="+")
    remove.set_defaults(handler=Handler("models", "handle_remove"))


def _agents(commands: argparse._SubParsersAction) -> None:
    agents = commands.add_parser("agents", help="the team's agents: list them, check one's response mapping")
    agent_commands = agents.add_subparsers(dest="agents_command", required=True)
    agent_commands.add_parser("list", help="the agents of the configuration file").set_defaults(
        handler=Handler("agents", "handle_list")
    )
    check = agent_commands.add_parser(
        "check",
        help="call an agent once and show what each JSONPath of its mapping finds",
        description="Calls the agent once (a file: reads its first row) and prints the request, the raw "
        "response (cut), what each JSONPath extracted and what is missing. Exit 0 when a run could read "
        "a reply from it, 1 when not.",
    )
    check.add_argument("name", help="an agent of the configuration file (provider http, python or file)")
    check.add_argument("--question", help="the question to ask (default: the dataset's first question)")
    check.set_defaults(handler=Handler("agents", "handle_check"))


def _review(commands: argparse._SubParsersAction) -> None:
    review = commands.add_parser("review", help="human review: export a queue to label, import the labels")
    review_commands = review.add_subparsers(dest="review_command", required=True)
    export = review_commands.add_parser(
        "export",
        help="write a review queue: a labelling page and a JSONL of empty label rows",
        description="Picks cases of a model's latest evaluation (seeded) and writes "
        "<review folder>/<queue>.html (one self-contained page: label each metric 0 / 0.5 / 1, save "
        "downloads <queue>.labels.jsonl) and <queue>.jsonl (the same cases as empty label rows). "
        "The judges' verdicts are hidden unless --show-judge.",
    )
    export.add_argument(
        "--model",
        required=True,
        help="the answer model whose cases to review, or an agent version's judged sessions: "
        "trajectories:VERSION (traced), simulation:VERSION (simulated)",
    )
    export.add_argument("--n", type=positive, default=40, help="cases in the queue (default 40)")
    export.add_argument(
        "--strategy",
        choices=[s.value for s in Strategy],
        default=Strategy.DISAGREEMENT.value,
        help="disagreement (judges, or a judge and the reference, disagree most; then at random), "
        "random (unbiased corrected means), low (lowest scores first), failed (failures first)",
    )
    export.add_argument("--judge", help="one judge's metrics and verdicts (default: every judge's)")
    export.add_argument("--seed", type=int, default=0, help="the same seed picks the same cases")
    export.add_argument("--name", help="the queue's name (default <model>-<strategy>-<date>)")
    export.add_argument("--show-judge", action="store_true", help="show the judges' verdicts (not blind)")
    export.set_defaults(handler=Handler("review", "handle_export"))

    take = review_commands.add_parser(
        "import",
        help="take in labels: a file, or Phoenix's HUMAN span annotations",
        description="Checks every row (each problem named by file and line; nothing is taken from a "
        "file with one), keeps the labels in <review folder>/labels, measures every judge against "
        "them (judge_agreement), summarizes the labelled models again with corrected means, and "
        "refreshes the report.",
    )
    take.add_argument("file", nargs="?", help="a label file (.jsonl, .csv or .parquet)")
    take.add_argument("--phoenix", metavar="URL", help="read HUMAN annotations from this Phoenix")
    take.add_argument(
        "--project", help="the Phoenix project the case traces went to (default tracing.project)"
    )
    take.add_argument("--verbose", action="store_true", help="Dagster's own log and stack traces")
    take.set_defaults(handler=Handler("review", "handle_import"))


def _production(commands: argparse._SubParsersAction) -> None:
    production = commands.add_parser(
        "production", help="score a daily sample of real traffic; promote problem cases"
    )
    sub = production.add_subparsers(dest="production_command", required=True)
    run = sub.add_parser(
        "run",
        help="score the days the production sources hold (or one) and print them",
        description="Reads the production sources, materializes each day they hold (a daily "
        "partition: its interactions, a seeded sample, reference-free scores, the summary held to "
        "the thresholds), then the trend and report. Exit 1 when a day fails a threshold.",
    )
    run.add_argument("--day", type=day, help="only this day (YYYY-MM-DD)")
    run.add_argument("--verbose", action="store_true", help="Dagster's own log and stack traces")
    run.set_defaults(handler=Handler("production", "handle_run"))

    promote = sub.add_parser(
        "promote",
        help="write a day's chosen cases as judgement-list cases (regression cases)",
        description="Writes sampled cases of a scored day to a judgement list of this project's "
        "format: the question, an empty reference answer to fill in (reference_pending), the "
        "served contexts as the case's documents with --with-contexts. `rag-eval run --dataset FILE` "
        "evaluates it. Prints the list's count and version (a content hash a CI gate can pin).",
    )
    promote.add_argument("--day", type=day, help="the scored day (YYYY-MM-DD; not with --blind-spots)")
    chosen = promote.add_mutually_exclusive_group(required=True)
    chosen.add_argument("--qid", nargs="+", help="the interactions' ids (as the day's sample names them)")
    chosen.add_argument("--worst", type=positive, metavar="N", help="the N scored lowest on --metric")
    chosen.add_argument(
        "--feedback",
        choices=["negative"],
        help="the day's thumbs-down interactions (production.feedback), sampled or not: the agent's "
        "answer as the rejected answer, the user's comment as the note",
    )
    chosen.add_argument(
        "--blind-spots",
        action="store_true",
        help="the sampled questions `rag-eval kb health` proposes for topics no case covers",
    )
    promote.add_argument(
        "--metric", default="faithfulness", help="what --worst ranks by (default faithfulness)"
    )
    promote.add_argument("--judge", help="whose --metric (default: the first judge that measured it)")
    promote.add_argument(
        "--with-contexts", action="store_true", help="carry the served contexts as the cases' documents"
    )
    promote.add_argument("--out", required=True, help="the judgement list (JSONL; cases are added to it)")
    promote.set_defaults(handler=Handler("production", "handle_promote"))

    feedback = sub.add_parser(
        "feedback",
        help="users' feedback: how much, how negative, and how the judges agree with it",
        description="Reads the production sources and the feedback sources (production.feedback: the "
        "interactions' own field, a Langfuse score export, Phoenix span annotations), joins them, and "
        "sets each judge's scores of the scored days against the users' thumbs (agreement, Cohen's "
        "kappa with its 95%% interval). Feedback is self-selected: not the traffic's quality. Exit 1 "
        "when a day's thumbs-down rate is above production.feedback.max_negative_rate.",
    )
    feedback.add_argument("--day", type=day, help="only this day (YYYY-MM-DD; default every day)")
    feedback.add_argument("--format", choices=["text", "json"], default="text", help="text tables or JSON")
    feedback.add_argument(
        "--worst", type=positive, default=5, metavar="N", help="disagreements listed per judge"
    )
    feedback.set_defaults(handler=Handler("production", "handle_feedback"))


def _knowledge_base(commands: argparse._SubParsersAction) -> None:
    kb = commands.add_parser("kb", help="the knowledge base's health: gaps, old documents, topics")
    sub = kb.add_subparsers(dest="kb_command", required=True)
    health = sub.add_parser(
        "health",
        help="which questions the documents cannot answer, which documents are out of date",
        description="Each case's gap label (knowledge_gap, retrieval_miss, outdated, conflict, "
        "covered) with its evidence, each document's status (current, superseded, expired), how "
        "often it was retrieved and whether it is gone from the source (a ghost), and the flagged "
        "questions' topics ranked by frequency x severity; with --production, the Jensen-Shannon "
        "divergence of the judgement list's topics from production's, its blind spots and the "
        "questions to promote. Gate on it: rag-eval gate --max knowledge_gap_rate=0.1.",
    )
    health.add_argument("--model", help="the evaluated answer model (default: the only one)")
    health.add_argument(
        "--format", choices=("text", "json"), default="text", help="json: cases, documents, topics"
    )
    health.add_argument("--as-of", help="judge documents current on this day (YYYY-MM-DD; default today)")
    health.add_argument(
        "--production", metavar="FILE", help="production questions (JSONL, CSV or parquet with 'question')"
    )
    health.add_argument("--max-topics", type=positive, default=8, help="most topics (default 8)")
    health.set_defaults(handler=Handler("health", "handle_health"))


def _worker(commands: argparse._SubParsersAction) -> None:
    worker = commands.add_parser(
        "worker",
        help="a Celery worker: takes runs from the broker and executes them (workers: in the file)",
        description="Starts a Celery worker in the foreground on this configuration: the instance on "
        "PostgreSQL, storage.folder mounted, the broker in workers.broker_env. It takes one run at a "
        "time from its queue and tags it rag_eval/worker with its name and host.",
    )
    worker.add_argument("--name", required=True, help="this worker's name (its runs are tagged with it)")
    worker.add_argument("--queue", help="the queue to take runs from (default: workers.queue)")
    worker.set_defaults(handler=Handler("worker", "handle"))


def _trajectories(commands: argparse._SubParsersAction) -> None:
    trajectories = commands.add_parser(
        "trajectories",
        help="score an agent's tool calls and sessions from its traces against a reference",
        description="Reads OTLP/JSON traces (OpenInference or GenAI conventions), rebuilds the sessions "
        "(a turn per root span, tool calls in start order), materializes each agent version as a "
        "partition (spans, sessions, scores, session judges, summary) and prints every session's "
        "tool-call F1 and matches, and pass^k. Exit 1 when a threshold or the reconstruction "
        "check fails; 2 on input that cannot be read.",
    )
    trajectories.add_argument(
        "--traces",
        nargs="+",
        metavar="FILE",
        help="OTLP/JSON files or folders (default: trajectories.traces)",
    )
    trajectories.add_argument(
        "--reference", metavar="FILE", help="JSONL, a task per line (default: trajectories.reference)"
    )
    trajectories.add_argument(
        "--judge",
        action="append",
        help="an LLM judge of each session (repeatable; default: trajectories.judges)",
    )
    trajectories.add_argument("--format", choices=["table", "markdown", "json"], default="table")
    trajectories.add_argument(
        "--min",
        dest="thresholds",
        action="append",
        metavar="METRIC=VALUE",
        help="e.g. match_strict=0.8 or pass^2=0.5; repeatable (default: trajectories.thresholds)",
    )
    trajectories.add_argument(
        "--bound", choices=[b.value for b in Bound], default=Bound.MEAN.value, help="as for `rag-eval gate`"
    )
    trajectories.add_argument(
        "--diff", nargs=2, metavar=("BEFORE", "AFTER"), help="compare two agent versions trial by trial"
    )
    trajectories.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="with --diff: exit 1 when AFTER is significantly worse",
    )
    trajectories.add_argument("--min-cases", type=positive, help="fewest paired sessions a diff tests")
    trajectories.add_argument("--verbose", action="store_true", help="Dagster's own log and stack traces")
    trajectories.set_defaults(handler=Handler("trajectories", "handle"))


def _simulate(commands: argparse._SubParsersAction) -> None:
    simulate = commands.add_parser(
        "simulate",
        help="simulated users talk to your agent over several trials, scored with pass^k",
        description="Runs every scenario (a user with a goal, scripted or played by an LLM) --trials "
        "times against --agent, each conversation until the user's ###STOP###, max turns, an agent "
        "error or a loop; scores each session (task success, the trajectory figures) and prints a "
        "table per scenario, pass^k and the worst session's transcript. Calls are cached by "
        "scenario, trial and turn: a re-run makes none unless --rerun. Exit 1 when a threshold "
        "fails or a scenario line is refused; 2 on input that cannot be used.",
    )
    simulate.add_argument(
        "--scenarios", metavar="FILE", help="JSONL, a scenario per line (default: simulation.scenarios)"
    )
    simulate.add_argument("--agent", metavar="NAME", help="an http or python entry of answer_models")
    simulate.add_argument("--trials", type=positive, help="conversations per scenario (default 3)")
    simulate.add_argument(
        "--user", metavar="MODEL", help="the LLM playing users without user_turns (claude-haiku-4-5, ...)"
    )
    simulate.add_argument("--judge", metavar="MODEL", help="the LLM answering the scenarios' rubrics")
    simulate.add_argument(
        "--session-judge",
        action="append",
        metavar="MODEL",
        help="an LLM judge of each session: goal completion, turn relevancy, knowledge retention",
    )
    simulate.add_argument(
        "--tool-calls", metavar="JSONPATH", help="the tool calls in the agent's reply (name, arguments)"
    )
    simulate.add_argument("--rerun", action="store_true", help="ask the agent and the simulated user again")
    simulate.add_argument("--format", choices=["table", "markdown", "json"], default="table")
    simulate.add_argument(
        "--min", dest="thresholds", action="append", metavar="METRIC=VALUE",
        help="e.g. task_success=0.8 or pass^3=0.5; repeatable (default: simulation.thresholds)",
    )  # fmt: skip
    simulate.add_argument(
        "--bound", choices=[b.value for b in Bound], default=Bound.MEAN.value, help="as for `rag-eval gate`"
    )
    simulate.add_argument(
        "--diff",
        metavar="BEFORE",
        help="compare with agent version BEFORE's stored simulation, trial by trial",
    )
    simulate.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="with --diff: exit 1 when this version is significantly worse",
    )
    simulate.add_argument("--verbose", action="store_true", help="Dagster's own log and stack traces")
    simulate.set_defaults(handler=Handler("simulate", "handle"))


def _generate(commands: argparse._SubParsersAction) -> None:
    generate = commands.add_parser(
        "generate",
        help="write a judgement list from your documents, every case checked",
        description="Plans cases over the documents (single, multi-hop over two linked passages, "
        "comparison, unanswerable; spread over the documents), has --model write each, and has "
        "--judge check each: answerable from its sources, not without them, not from one of two "
        "passages, not a near-duplicate, a short answer. Writes the kept cases to --out, the "
        "rejected ones to <out>.rejected.jsonl with their reasons, and <out>.manifest.json.",
    )
    generate.add_argument("--documents", required=True, metavar="DIR", help="the folder of documents")
    # unset options take rag_eval.yaml's generation section, else its defaults (shown)
    generate.add_argument("--n", type=positive, help=f"candidate cases to write (default {DEFAULT_CASES})")
    generate.add_argument(
        "--model",
        help=f"the generator: an LLM name (default {DEFAULT_GENERATOR}; local:smollm2, openai:<model>)",
    )
    generate.add_argument("--judge", help="the validating judge (default: the generator)")
    generate.add_argument(
        "--types",
        help="comma-separated: single, multi_hop, comparison, unanswerable (default: all, equal shares)",
    )
    generate.add_argument("--seed", type=int, help="the same seed plans the same cases (default 0)")
    generate.add_argument(
        "--max-document-share",
        type=share,
        help=f"of the cases, at most per document (default {DEFAULT_MAX_DOCUMENT_SHARE})",
    )
    generate.add_argument("--out", required=True, help="the judgement list to write (JSONL)")
    generate.add_argument("--verbose", action="store_true", help="Dagster's own log and stack traces")
    generate.set_defaults(handler=Handler("generate", "handle"))


def _ui(commands: argparse._SubParsersAction) -> None:
    ui = commands.add_parser(
        "ui",
        help="open this instance in the Dagster UI, with the daemon and the reports",
        description="Starts `dagster dev` (webserver and daemon) for the instance, with its generated "
        "dagster.yaml, and serves the HTML reports read-only on ui.reports_port; stops both on Ctrl-C.",
    )
    ui.add_argument("--port", type=int, help="the Dagster UI's port (default: ui.port of the configuration)")
    ui.set_defaults(handler=Handler("ui", "handle"))


def _report(commands: argparse._SubParsersAction) -> None:
    report = commands.add_parser(
        "report",
        help="where the latest report is; --single-file: a copy that needs nothing beside it",
        description="Prints the path of the latest evaluation report. The report loads plotly.js "
        "and its further pages of cases from files beside it; with --single-file, writes a copy "
        "that carries them inside, to send or attach alone.",
    )
    report.add_argument("--single-file", action="store_true", help="write a self-contained copy")
    report.add_argument(
        "--out", default="eval_report-single-file.html", help="where (default ./eval_report-single-file.html)"
    )
    report.set_defaults(handler=Handler("report", "handle"))


def _titles(commands: argparse._SubParsersAction) -> None:
    titles = commands.add_parser(
        "titles",
        help="the knowledge base's titles (to write relevant_titles by hand)",
        description="Lists the titles of the passages a run would index (the configured dataset's "
        "paragraphs and your documents), with each passage's id and first words; nothing is built.",
    )
    titles.add_argument("--filter", help="only titles containing this text (case-insensitive)")
    titles.add_argument("--dataset", help="as for run: bundled, hub, or a HotpotQA file")
    titles.add_argument("-n", type=positive, default=50, help="at most this many (default 50)")
    titles.set_defaults(handler=Handler("titles", "handle"))


def _images(commands: argparse._SubParsersAction) -> None:
    images = commands.add_parser("images", help="the images of a documents folder")
    image_commands = images.add_subparsers(dest="images_command", required=True)
    check = image_commands.add_parser(
        "check",
        help="list each image with its size and type, and one line per problem",
        description="Decodes every PNG, JPEG, GIF and WebP file of the folder and reads its "
        "images.jsonl captions: one line per image, one per problem (unreadable, too large, "
        "duplicate, a caption of no image); exit 1 when there is a problem.",
    )
    check.add_argument("folder", help="the documents folder")
    check.set_defaults(handler=Handler("images", "handle_check"))


def _init(commands: argparse._SubParsersAction) -> None:
    init = commands.add_parser("init", help="write a commented example configuration file")
    init.add_argument("path", nargs="?", default="rag_eval.yaml")
    init.set_defaults(handler=Handler("init", "handle"))


def _probe(commands: argparse._SubParsersAction) -> None:
    probe = commands.add_parser(
        "probe",
        help="security probes: planted instructions, poisoned knowledge and exfiltration",
        description="For a sample of the judgement list's cases, plants passages made to be retrieved "
        "for each (in the case's language) in an attacked copy of the knowledge base (the original is "
        "never touched), asks each model or agent, and reports the attack success rate per attack, "
        "language and model with its interval, utility under attack against the same cases clean, "
        "how often the planted passages were retrieved, and paired verdicts between models. The "
        "results are stored for `rag-eval gate --max asr_injection=0.05` and the report.",
    )
    probe.add_argument(
        "--attacks",
        default=None,
        help="comma-separated: injection, poisoning, exfiltration (default: security.attacks, else all)",
    )
    probe.add_argument("--sample", type=positive, help="cases probed (default: security.sample, else 50)")
    probe.add_argument(
        "--models",
        type=comma_list,
        help="answer models and agents (default: security.models, else the instance's registered ones)",
    )
    probe.add_argument("--poison-count", type=positive, help="planted passages per poisoned case (default 5)")
    probe.add_argument(
        "--top-k", type=positive, help="passages given to an agent that takes them (default 4)"
    )
    probe.add_argument("--seed", help="the run's seed: the same seed plants the same canaries (default: new)")
    probe.add_argument("--format", choices=["table", "json"], default="table")
    probe.add_argument("--verbose", action="store_true", help="show tracebacks")
    probe.set_defaults(handler=Handler("probe", "handle"))
