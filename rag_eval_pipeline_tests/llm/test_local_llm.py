"""A real model: SmolLM2-135M served by a real llama.cpp server (the xllamacpp wheel), reached
through the real `openai` SDK. Outputs are the model's own; the tests assert what must hold for
any model (shapes, token counts that match the server's, structured output, the cache)."""

import json
import subprocess
import sys
import urllib.request

import pytest

from rag_eval_pipeline.answering.answer_cases import answer_cases
from rag_eval_pipeline.answering.base import AnswerRequest
from rag_eval_pipeline.answering.chat import ChatAnswerer
from rag_eval_pipeline.answering.registry import AnswerRegistry
from rag_eval_pipeline.judges.engine import JudgeEndpoint
from rag_eval_pipeline.judges.score_cases import join_cases, score_cases
from rag_eval_pipeline.judges.strict import StrictLLMJudge
from rag_eval_pipeline.llm.cache import CachedClient, ResponseCache
from rag_eval_pipeline.llm.llamacpp_server import LlamaCppServer, LocalServerSettings
from rag_eval_pipeline.llm.openai_client import OpenAICompatibleClient, StructuredOutput, chat_kwargs
from rag_eval_pipeline.llm.providers import LOCAL_MAX_STRING_CHARS
from rag_eval_pipeline.llm.services import FreeOfCharge
from rag_eval_pipeline.llm.targets import local_model_path
from rag_eval_pipeline_tests.llm.test_anthropic_sdk import HITS, _candidates, _cases
from rag_eval_pipeline_tests.support.processes import spinning

pytestmark = pytest.mark.slow  # the real llama.cpp server


SMOLLM2 = AnswerRegistry().resolve("local:smollm2@bm25-k2")


@pytest.fixture(scope="session")
def smollm2():
    """One llama.cpp server for the session (two slots, the cores free when it starts)."""
    server = LlamaCppServer(local_model_path("smollm2"), LocalServerSettings(n_ctx=4096, n_parallel=2))
    yield server
    server.stop()


def _client(server, tmp_path=None):
    cache = ResponseCache(tmp_path / "cache") if tmp_path is not None else None
    inner = OpenAICompatibleClient(
        None,
        server.base_url,
        structured_output=StructuredOutput.JSON_SCHEMA,
        max_string_chars=LOCAL_MAX_STRING_CHARS,
    )
    return CachedClient(inner, cache)


def _answer(server, client, n=3):
    answerer = ChatAnswerer(
        SMOLLM2.model, SMOLLM2.model_id, client, FreeOfCharge(), record_served_model=False
    )
    return answer_cases(
        _cases(n),
        SMOLLM2,
        answerer,
        retrieve=lambda queries, k, languages=None: [HITS[:k] for _ in queries],
        concurrency=2,
    )


def test_the_real_model_answers_with_the_servers_token_counts(smollm2, tmp_path):
    answers = _answer(smollm2, _client(smollm2, tmp_path))
    assert (answers["status"] == "ok").all() and answers["answer"].str.len().gt(0).all()
    assert "\n" not in "".join(answers["answer"])  # one line, whatever the model wrote after it
    assert (answers["model_id"] == "smollm2").all() and (answers["cost_usd"] == 0.0).all()
    # the same request sent by hand: the server's own usage is what the answers recorded
    request = ChatAnswerer(SMOLLM2.model, "smollm2", None, {}).llm_request  # type: ignore[arg-type]
    case = _cases(1).iloc[0]
    body = chat_kwargs(
        request(AnswerRequest(case["qid"], case["question"], tuple(HITS[:2]), "")), StructuredOutput.TEXT
    )
    http = urllib.request.Request(
        f"{smollm2.base_url}/chat/completions",
        json.dumps(body).encode(),
        {"Content-Type": "application/json"},
    )
    usage = json.loads(urllib.request.urlopen(http, timeout=60).read())["usage"]
    row = answers.iloc[0]
    assert row["input_tokens"] + row["cache_read_tokens"] == usage["prompt_tokens"]
    assert row["output_tokens"] > 0


def test_a_second_run_makes_no_calls(smollm2, tmp_path):
    first_client, second_client = _client(smollm2, tmp_path), _client(smollm2, tmp_path)
    first = _answer(smollm2, first_client)
    second = _answer(smollm2, second_client)
    assert first_client.api_calls == 3 and second_client.api_calls == 0
    assert second["answer"].tolist() == first["answer"].tolist() and second["from_cache"].all()


def test_a_strict_judgement_through_the_json_schema_grammar(smollm2, tmp_path):
    """llama.cpp turns the schema into a grammar: what parses is a valid verdict; what does not
    (cut at max_tokens, an empty rationale) is re-asked once and then a counted judge error."""
    cases = _cases(3)
    client = _client(smollm2, tmp_path)
    judge = StrictLLMJudge("local:smollm2", JudgeEndpoint("smollm2", client, FreeOfCharge()))
    scores = score_cases(join_cases(_candidates(cases), cases), [judge])
    assert set(scores["status"]) <= {"ok", "judge_error"}
    ok = scores[scores["status"] == "ok"]
    assert len(ok) >= 1
    for metric in ("correctness", "faithfulness", "context_relevance"):
        assert ok[metric].isin([0.0, 0.5, 1.0]).all()
    errors = scores[scores["status"] == "judge_error"]
    assert errors["correctness"].isna().all() and errors["error"].str.startswith("InvalidJudgeOutput").all()
    assert (scores["input_tokens"] > 0).all() and (scores["cost_usd"] == 0).all()
    assert client._inner.structured_output is StructuredOutput.JSON_SCHEMA
    again = _client(smollm2, tmp_path)
    score_cases(
        join_cases(_candidates(cases), cases),
        [StrictLLMJudge("local:smollm2", JudgeEndpoint("smollm2", again, FreeOfCharge()))],
    )
    assert again.cache_hits >= len(ok)  # valid verdicts come from the cache; only errors are asked again


@pytest.mark.parametrize(("concurrency", "slots", "in_flight"), [(8, 2, 2), (3, 4, 3)])
def test_calls_to_the_local_server_never_wait_in_its_queue(concurrency, slots, in_flight, monkeypatch):
    """A call beyond the server's slots only waits in its queue, its timeout running: on a busy
    machine the last of ten judgements timed out after 600 s. The run's client sends at most as
    many calls as the server decodes at once (and no more than ``concurrency``)."""
    from rag_eval_pipeline.config import Settings
    from rag_eval_pipeline.defs.resources.llm import LLMResource
    from rag_eval_pipeline.defs.resources.settings import SettingsResource
    from rag_eval_pipeline.llm.targets import LLMEndpoint

    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")  # a client is made, never called
    settings = Settings.model_validate({"concurrency": concurrency, "local": {"n_parallel": slots}})
    resource = LLMResource(settings=SettingsResource.from_settings(settings))
    try:
        client = resource.client(LLMEndpoint("local", model_file="smollm2"))
        assert client._max_in_flight == in_flight
        assert resource.client(LLMEndpoint("anthropic"))._max_in_flight == concurrency
    finally:
        resource._servers.stop_all()


STOPPED_AT_ONCE = """
import sys
from rag_eval_pipeline.llm.llamacpp_server import LlamaCppServer, LocalServerSettings
from rag_eval_pipeline.llm.targets import local_model_path
for cycle in range(int(sys.argv[1])):
    settings = LocalServerSettings(n_ctx=2048, n_parallel=4, threads=1)
    LlamaCppServer(local_model_path("smollm2"), settings).stop()
    print(cycle, flush=True)
"""


def test_a_server_stopped_as_soon_as_it_started_stops():
    """A run makes its local server when it makes the client, so a run answered from the cache
    stops it moments later. llama.cpp's task loop marks itself running when it begins, on a
    thread of its own: a server stopped before then never stopped, and its destructor waited
    holding the GIL (a CI run froze so on a busy machine, and unfixed this hangs within five
    cycles). Ten servers started and stopped at once beside three spinning processes, in a
    child process so that a hang fails the test instead of freezing it."""
    try:
        with spinning(3):
            done = subprocess.run(
                [sys.executable, "-c", STOPPED_AT_ONCE, "10"], capture_output=True, text=True, timeout=600
            )
    except subprocess.TimeoutExpired as hung:
        pytest.fail(f"a server stopped at once never stopped; cycles done: {hung.stdout!r}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(cycle) for cycle in range(10)]
