"""A judgement list generated from the knowledge base's documents, every case checked: the kept
cases and the rejected ones, each with its reason, in one table (what `rag-eval generate` writes
out as a judgement list and its rejected cases)."""

import time

import dagster as dg
import pandas as pd
from pydantic import Field

from rag_eval_pipeline.defs.assets.progress import progress_logger
from rag_eval_pipeline.defs.names import GENERATION
from rag_eval_pipeline.defs.resources import KnowledgeBaseResource, LLMResource, SettingsResource
from rag_eval_pipeline.generation.generate import Models, generate_cases
from rag_eval_pipeline.generation.output import asked_by_type, document_spread, survival
from rag_eval_pipeline.generation.plan import plan_cases
from rag_eval_pipeline.generation.settings import GenerationSettings
from rag_eval_pipeline.generation.spec import GENERATE_PROMPT_VERSION, CaseType
from rag_eval_pipeline.llm.providers import parse_llm_name
from rag_eval_pipeline.reporting.markdown import to_markdown
from rag_eval_pipeline.retrieval.bm25_index import Bm25Index


class GenerationConfig(dg.Config):
    """A run's choices; each one left unset takes the ``generation`` section's value."""

    n: int | None = Field(default=None, ge=1, description="candidate cases to write")
    model: str | None = Field(default=None, description="the generator: any LLM name")
    judge: str | None = Field(default=None, description="the validating judge (else the generator)")
    types: str | None = Field(default=None, description="single, multi_hop, comparison, unanswerable")
    seed: int | None = None
    max_document_share: float | None = Field(default=None, gt=0, le=1, description="per document")
    max_answer_words: int | None = Field(default=None, ge=1, description="longer answers rejected")


@dg.asset(group_name=GENERATION, code_version=GENERATE_PROMPT_VERSION)
def generated_judgement_list(
    context: dg.AssetExecutionContext,
    config: GenerationConfig,
    kb_passages: pd.DataFrame,
    llm: LLMResource,
    knowledge_base: KnowledgeBaseResource,
    settings: SettingsResource,
) -> pd.DataFrame:
    """Questions generated from the knowledge base's passages (single, multi-hop over two linked
    passages, comparison, unanswerable), each with its reference answer and source passages, and
    each held to its checks: answerable from its sources, not without them, not from one passage
    of two, not a near-duplicate, a short answer. A case that fails is kept with its reason
    (``kept`` false), never in the list quietly."""
    section = settings.settings.generation or GenerationSettings()
    spec = section.overridden(config.model_dump()).spec()
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
