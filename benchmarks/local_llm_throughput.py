"""Benchmark: SmolLM2-135M answering 35 cases on a real llama.cpp server (xllamacpp), through the
pipeline's own path (the answer prompt, the openai SDK, answer_cases), at concurrency 1, 2 and 4
against a server with 1, 2 and 4 parallel slots.

For each configuration: wall time, cases per minute, generated and prompt tokens per second, and
beside them the sum of the server-reported per-request times (prompt + generation, from the
``timings`` llama.cpp adds to every response): the time the same requests take one after another
on this CPU, i.e. the ideal of a sequential loop. A ratio below 1 means parallel slots overlapped
work; above 1 means they got in each other's way. No response cache: every call is made.

    python benchmarks/local_llm_throughput.py [--cases 35]
"""

import argparse
import asyncio
import sys
import time
from pathlib import Path

import openai

from rag_eval_pipeline.answering.answer_cases import answer_cases
from rag_eval_pipeline.answering.chat import ChatAnswerer, render_answer_prompt
from rag_eval_pipeline.answering.registry import AnswerRegistry
from rag_eval_pipeline.data.hotpotqa import read_hotpotqa_file
from rag_eval_pipeline.data.knowledge_base import build_judgement_list, flatten_passages
from rag_eval_pipeline.llm.cache import CachedClient
from rag_eval_pipeline.llm.llamacpp_server import LlamaCppServer, LocalServerSettings
from rag_eval_pipeline.llm.openai_client import OpenAICompatibleClient, StructuredOutput, chat_kwargs
from rag_eval_pipeline.llm.services import FreeOfCharge
from rag_eval_pipeline.llm.targets import local_model_path
from rag_eval_pipeline.retrieval.bm25_index import Bm25Index

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATASET = REPO.parent / "shared" / "data" / "hotpotqa" / "dev_distractor_500.jsonl"
SPEC = AnswerRegistry().resolve("local:smollm2@bm25-k4")


async def server_timings(base_url: str, requests) -> tuple[float, int, int]:
    """Each request once more, one at a time, straight through the SDK: the server's own
    prompt + generation milliseconds summed, and the tokens it reported."""
    total_ms, prompt_tokens, generated = 0.0, 0, 0
    async with openai.AsyncOpenAI(api_key="not-needed", base_url=base_url) as client:
        for request in requests:
            completion = await client.chat.completions.create(**chat_kwargs(request, StructuredOutput.TEXT))
            timings = (completion.model_extra or {}).get("timings", {})
            total_ms += timings.get("prompt_ms", 0.0) + timings.get("predicted_ms", 0.0)
            prompt_tokens += completion.usage.prompt_tokens
            generated += completion.usage.completion_tokens
    return total_ms / 1000, prompt_tokens, generated


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=35)
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    args = parser.parse_args()

    questions = read_hotpotqa_file(args.dataset).head(args.cases)
    cases = build_judgement_list(questions)
    index = Bm25Index.build(flatten_passages(questions))
    hits = index.search_many(cases["question"].tolist(), SPEC.top_k)
    prompts = [
        render_answer_prompt(SPEC.model_id, q, h) for q, h in zip(cases["question"], hits, strict=True)
    ]
    print(f"{len(cases)} cases, SmolLM2-135M-Instruct Q4_1, answer prompt with {SPEC.top_k} passages")
    with_one_slot = LlamaCppServer(local_model_path("smollm2"), LocalServerSettings(n_ctx=4096, n_parallel=1))
    try:
        ideal_s, prompt_tokens, generated = asyncio.run(server_timings(with_one_slot.base_url, prompts))
    finally:
        with_one_slot.stop()
    print(
        f"sum of the server-reported times, one request after another: {ideal_s:.1f} s "
        f"({prompt_tokens} prompt tokens, {generated} generated)\n"
    )
    print("| slots | concurrency | wall s | cases/min | prompt tok/s | generated tok/s | wall / sequential |")
    print("|---|---|---|---|---|---|---|")
    for slots, concurrency in ((1, 1), (2, 1), (2, 2), (4, 4)):
        server = LlamaCppServer(
            local_model_path("smollm2"), LocalServerSettings(n_ctx=2048 * slots, n_parallel=slots)
        )
        try:
            client = CachedClient(OpenAICompatibleClient(None, server.base_url), cache=None)
            answerer = ChatAnswerer(
                SPEC.model, SPEC.model_id, client, FreeOfCharge(), record_served_model=False
            )
            started = time.perf_counter()
            answers = answer_cases(
                cases,
                SPEC,
                answerer,
                retrieve=lambda queries, k: index.search_many(list(queries), k),
                concurrency=concurrency,
            )
            wall = time.perf_counter() - started
        finally:
            server.stop()
        assert (answers["status"] == "ok").all(), answers["error"].dropna().head()
        prompt = answers["input_tokens"].sum() + answers["cache_read_tokens"].sum()
        print(
            f"| {slots} | {concurrency} | {wall:.1f} | {len(cases) / wall * 60:.1f} | "
            f"{prompt / wall:.0f} | {answers['output_tokens'].sum() / wall:.0f} | {wall / ideal_s:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    sys.exit(main())
