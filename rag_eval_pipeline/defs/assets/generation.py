"""A judgement list generated from the knowledge base's documents, every case checked: the kept
cases and the rejected ones, each with its reason, in one table (what `rag-eval generate` writes
out as a judgement list and its rejected cases)."""

import time

import dagster as dg
import pandas as pd
from pydantic import Field

from rag_eval_pipeline.defs.assets.progress import progress_logger
from rag_eval_pipeline.defs.names import GENERATION
from rag_eval_pipeline.defs.resources import KnowledgeBaseResource, LLMResource
from rag_eval_pipeline.generation.generate import Models, generate_cases
from rag_eval_pipeline.generation.output import asked_by_type, document_spread, survival
from rag_eval_pipeline.generation.plan import plan_cases
from rag_eval_pipeline.generation.spec import GENERATE_PROMPT_VERSION, CaseType, GenerationSpec, parse_types
from rag_eval_pipeline.llm.providers import parse_llm_name
from rag_eval_pipeline.reporting.markdown import to_markdown
from rag_eval_pipeline.retrieval.bm25_index import Bm25Index


class GenerationConfig(dg.Config):
    """What to generate: how many cases, of which types, by which model, checked by which judge."""

    n: int = Field(default=100, ge=1, description="candidate cases to write (the kept ones are fewer)")
    model: str = Field(default="claude-sonnet-4-6", description="the generator: any LLM name")
    judge: str | None = Field(default=None, description="the validating judge; unset: the generator")
    types: str = Field(
        default=",".join(t.value for t in CaseType), description="single, multi_hop, comparison, unanswerable"
    )
    seed: int = 0
    max_document_share: float = Field(default=0.1, gt=0, le=1, description="of the cases, per document")
    max_answer_words: int = Field(default=6, ge=1, description="a longer reference answer is rejected")


def generation_spec(config: GenerationConfig) -> GenerationSpec:
    """The config resolved once; an unknown model or type is a ValueError naming it."""
    for name in (config.model, config.judge):
        if name is not None and parse_llm_name(name) is None:
            raise ValueError(
                f"unknown model {name!r}: use an LLM name (claude-sonnet-4-6, anthropic:<id>, "
                "openai:<model>, local:<model>)"
            )
    return GenerationSpec(
        n=config.n,
        model=config.model,
        judge=config.judge or config.model,
        types=parse_types(config.types),
        seed=config.seed,
        max_document_share=config.max_document_share,
        max_answer_words=config.max_answer_words,
    )


@dg.asset(group_name=GENERATION, code_version=GENERATE_PROMPT_VERSION)
def generated_judgement_list(
    context: dg.AssetExecutionContext,
    config: GenerationConfig,
    kb_passages: pd.DataFrame,
    llm: LLMResource,
    knowledge_base: KnowledgeBaseResource,
) -> pd.DataFrame:
    """Questions generated from the knowledge base's passages (single, multi-hop over two linked
    passages, comparison, unanswerable), each with its reference answer and source passages, and
    each held to its checks: answerable from its sources, not without them, not from one passage
    of two, not a near-duplicate, a short answer. A case that fails is kept with its reason
    (``kept`` false), never in the list quietly."""
    spec = generation_spec(config)
    plan = plan_cases(kb_passages, spec)
    for note in plan.notes:
        context.log.warning(note)
    services = llm.services()
    generator, judge = parse_llm_name(spec.model), parse_llm_name(spec.judge)
    assert generator is not None and judge is not None
    index = Bm25Index.build(kb_passages) if CaseType.UNANSWERABLE in spec.types else None
    started = time.perf_counter()
    generated = generate_cases(
        plan,
        spec,
        Models(
            services.client(generator.endpoint),
            generator.model_id,
            services.prices_for(generator.endpoint),
            services.client(judge.endpoint),
            judge.model_id,
            services.prices_for(judge.endpoint),
        ),
        retrieve=index.search if index is not None else None,
        embed=knowledge_base.knowledge_base.query_embedder(),
        concurrency=services.concurrency,
        on_progress=progress_logger(context, "generated and checked"),
    )
    documents, largest = document_spread(generated)
    cost = generated["cost_usd"].sum(min_count=1)
    context.add_output_metadata(
        {
            "asked": spec.n,
            "kept": int(generated["kept"].sum()),
            "rejected": int((~generated["kept"]).sum()),
            "survival": dg.MetadataValue.md(to_markdown(survival(generated, asked_by_type(plan)))),
            "asked_by_type": dg.MetadataValue.json(asked_by_type(plan)),
            "documents_used": documents,
            "largest_document_share": round(largest, 3),
            "generator": spec.model,
            "judge": spec.judge,
            "prompt_version": spec.prompt_version,
            "api_calls": services.api_calls,
            "cache_hits": services.cache_hits,
            "cost_usd": float(cost) if pd.notna(cost) else float("nan"),
            "seconds": round(time.perf_counter() - started, 2),
            "notes": dg.MetadataValue.json(plan.notes),
        }
    )
    return generated


GENERATION_ASSETS = [generated_judgement_list]
