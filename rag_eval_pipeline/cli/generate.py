"""`rag-eval generate`: a judgement list written from a folder of documents by any LLM, every
case checked by a judge, the kept ones in the list and the rejected ones beside it with their
reasons; prints what was asked against what survived."""

from __future__ import annotations

import argparse
from pathlib import Path

from rag_eval_pipeline.cli.context import instance_of, settings_of
from rag_eval_pipeline.cli.errors import CommandError
from rag_eval_pipeline.cli.output import error, report_failure, seconds_since_start
from rag_eval_pipeline.data.documents import document_files
from rag_eval_pipeline.definitions import build_definitions, llm_resource
from rag_eval_pipeline.instance.generation import run_generation
from rag_eval_pipeline.llm.providers import MissingApiKeyError, parse_llm_name
from rag_eval_pipeline.reporting.markdown import to_markdown


def handle(args: argparse.Namespace) -> int:
    folder = Path(args.documents)
    if not folder.is_dir() or not document_files(folder):
        raise CommandError(
            f"no documents in {folder}: give a folder of .md / .txt files or JSONL / parquet rows "
            "of {title, passage}"
        )
    chosen = {
        "n": args.n,
        "model": args.model,
        "judge": args.judge,
        "types": args.types,
        "seed": args.seed,
        "max_document_share": args.max_document_share,
    }
    settings = settings_of(args).with_documents(str(folder), args.out)
    assert settings.generation is not None
    try:
        spec = settings.generation.overridden(chosen).spec()
    except ValueError as err:
        raise CommandError(str(err)) from None
    llm = llm_resource(settings)
    problems = []
    for role, name in (("--model", spec.model), ("--judge", spec.judge)):
        target = parse_llm_name(name)
        assert target is not None
        missing = llm.missing(target.endpoint)
        if missing:
            problems.append(f"{role} {name} needs {missing}")
    for problem in dict.fromkeys(problems):
        error(problem)
    if problems:
        return 2
    instance = instance_of(args)
    out = Path(args.out)
    types = ", ".join(t.value for t in spec.types)
    print(f"generating {spec.n} cases ({types}) from {folder} with {spec.model}, checked by {spec.judge}")
    try:
        report = run_generation(
            build_definitions(settings),
            instance,
            {k: v for k, v in chosen.items() if v is not None},
            out,
            str(folder.resolve()),
            args.verbose,
        )
    except Exception as err:
        return report_failure(
            err, args.verbose, instance.root_directory, (ValueError, MissingApiKeyError), args.config
        )
    for note in report.notes:
        print(f"note: {note}")
    manifest = report.manifest
    cost = f"${manifest['cost_usd']:.4f}" if manifest["cost_usd"] is not None else "cost unknown"
    print(f"\n{to_markdown(report.survival)}")
    print(
        f"\n{manifest['cases']} of {manifest['asked']} cases kept in {out} (version {manifest['version']}), "
        f"from {manifest['documents_used']} documents (at most {manifest['largest_document_share']:.0%} "
        f"from one); {manifest['rejected']} rejected with their reasons in "
        f"{out.with_name(out.stem + '.rejected.jsonl')}; {manifest['api_calls']} calls made "
        f"({manifest['cache_hits']} answered from the cache), the cases' tokens {cost}; "
        f"wall time {seconds_since_start():.1f}s"
    )
    print(
        f"next: review a random queue of it, then evaluate over the same documents: rag-eval run "
        f"--dataset {out} --documents {folder}"
    )
    return 0
