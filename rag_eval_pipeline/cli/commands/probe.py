"""`probe`: security probes against the models and agents."""

from __future__ import annotations

from rag_eval_pipeline.cli.arguments import positive
from rag_eval_pipeline.cli.commands import Commands, Handler
from rag_eval_pipeline.cli.options import TRACEBACKS, add_format, add_models, add_verbose


def register(commands: Commands) -> None:
    probe = commands.add_parser(
        "probe",
        help="security probes: planted instructions, poisoned knowledge and exfiltration",
        description="""For a sample of the judgement list's cases, plants passages made to be retrieved for
        each (in the case's language) in an attacked copy of the knowledge base (the original is never
        touched), asks each model or agent, and reports the attack success rate per attack, language and model
        with its interval, utility under attack against the same cases clean, how often the planted passages
        were retrieved, and paired verdicts between models. The results are stored for `rag-eval gate --max
        asr_injection=0.05` and the report.""",
    )
    probe.add_argument(
        "--attacks",
        default=None,
        help="comma-separated: injection, poisoning, exfiltration (default: security.attacks, else all)",
    )
    probe.add_argument("--sample", type=positive, help="cases probed (default: security.sample, else 50)")
    add_models(
        probe, "answer models and agents (default: security.models, else the instance's registered ones)"
    )
    probe.add_argument("--poison-count", type=positive, help="planted passages per poisoned case (default 5)")
    probe.add_argument(
        "--top-k", type=positive, help="passages given to an agent that takes them (default 4)"
    )
    probe.add_argument("--seed", help="the run's seed: the same seed plants the same canaries (default: new)")
    add_format(probe, ("table", "json"))
    add_verbose(probe, TRACEBACKS)
    probe.set_defaults(handler=Handler("probe"))
