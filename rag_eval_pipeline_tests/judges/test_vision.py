"""Vision judges through `rag-eval run --dataset multimodal-sample`: `vision:claude-sonnet-4-6`
against the tests' Messages-API server, which decodes the pixels it is sent. Every retrieved
image reaches it as an image block whose bytes hash to the file's sha256, before the text, and
no text block carries base64; the verdicts equal the stand-in's rules computed by hand; a
re-run makes no call; the figures reach the summary and the report."""

from __future__ import annotations

import base64
import hashlib
import json

import dagster as dg
import pytest
import yaml

from rag_eval_pipeline.data.multimodal_sample import write_multimodal_sample
from rag_eval_pipeline.instance.home import open_instance
from rag_eval_pipeline.instance.lineage import load_asset
from rag_eval_pipeline.judges.engine import JudgeEndpoint
from rag_eval_pipeline.llm.images import image_tokens, keyed_images, prepare_image
from rag_eval_pipeline_tests.support.cli import rag_eval
from stand_ins.anthropic_api import FakeAnthropic
from stand_ins.images import colours

JUDGE = "vision:claude-sonnet-4-6"
# a file of answers that misread colours: the garden called blue (the photo contradicts it), and
# the garden photo retrieved for the red sign (irrelevant: no red in it)
COLOUR_BLIND = {
    "garden": {"answer": "blue", "images": ["photos/garden.png"]},
    "sign": {"answer": "green", "images": ["photos/garden.png"]},
}
# by the stand-in's rules (stand_ins/images.py): (visual_relevance, image_text_consistency)
EXPECTED = {
    ("oracle", "kitchen"): (0.5, 0.5),  # red in the plan, white most; the answer names no colour
    ("oracle", "bathroom"): (0.5, 0.5),
    ("oracle", "sales"): (0.5, 0.5),
    ("oracle", "garden"): (0.5, 1.0),  # "green": the photo's colour
    ("oracle", "sign"): (1.0, 1.0),  # the question names red, the sign is red
    ("oracle", "hours"): (0.5, 0.5),  # the garden photo, retrieved by its caption ("office")
    ("colour-blind", "garden"): (0.5, 0.0),  # "blue": no image has it
    ("colour-blind", "sign"): (0.0, 1.0),
}


@pytest.fixture(scope="module")
def vision_run(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("vision")
    served = tmp_path / "colour_blind.jsonl"
    qids = ["kitchen", "bathroom", "sales", "garden", "sign", "hours"]
    served.write_text(
        "".join(
            json.dumps({"qid": q, "contexts": [], **COLOUR_BLIND.get(q, {"answer": "unknown"})}) + "\n"
            for q in qids
        )
    )
    config = tmp_path / "rag_eval.yaml"
    models = [
        {"name": "oracle", "provider": "offline", "model": "oracle"},
        {"name": "colour-blind", "provider": "file", "path": str(served)},
    ]
    config.write_text(yaml.safe_dump({"answer_models": models, "judges": ["reference", JUDGE]}))
    home = tmp_path / "home"
    args = ("--config", str(config), "--dagster-home", str(home), "run", "--dataset", "multimodal-sample")
    with FakeAnthropic() as server:
        env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.url}
        first = rag_eval(*args, cwd=tmp_path, env=env)
        requests = list(server.requests)
        server.reset_counts()
        again = rag_eval(*args, cwd=tmp_path, env=env)
        rerun_calls = len(server.requests)
    assert first.returncode == 0, first.stdout + first.stderr
    assert again.returncode == 0, again.stdout + again.stderr
    return tmp_path, home, requests, rerun_calls, first


@pytest.mark.slow  # two `rag-eval run`s of the sample, shared by this module's tests
def test_every_image_is_an_image_block_before_the_text_and_never_base64_in_text(vision_run):
    tmp_path, home, requests, rerun_calls, _ = vision_run
    documents = home / "samples" / "multimodal-sample" / "documents"
    sha_of_file = {
        hashlib.sha256(p.read_bytes()).hexdigest(): p.relative_to(documents).as_posix()
        for p in documents.rglob("*.png")
    }
    seeing = [
        r
        for r in requests
        if r.get("tool_choice", {}).get("name", "").startswith(("record_visual", "record_image"))
    ]
    # the oracle's 6 cases (hours: the garden photo its retrieval found by caption) and the file's 2,
    # a relevance and a consistency call each; the file's garden relevance is the oracle's, cached
    assert len(seeing) == 15
    for request in seeing:
        content = request["messages"][0]["content"]
        kinds = [block["type"] for block in content]
        assert kinds == ["image"] * (len(kinds) - 1) + ["text"], kinds  # images first, then the text
        for block in content[:-1]:
            data = base64.b64decode(block["source"]["data"])
            assert hashlib.sha256(data).hexdigest() in sha_of_file  # the file itself, unaltered
            assert block["source"]["media_type"] == "image/png"
        assert all("base64," not in json.dumps(b) for b in content if b["type"] == "text")
        assert "base64," not in json.dumps(request.get("system", ""))
    assert rerun_calls == 0  # a re-run is served from the cache


@pytest.mark.slow
def test_vision_verdicts_equal_what_the_pixels_say_and_reach_summary_and_report(vision_run):
    tmp_path, home, _, _, first = vision_run
    instance = open_instance(str(home))
    for model in ("oracle", "colour-blind"):
        scores = load_asset(instance, "judge_scores", model)
        vision = scores[scores["judge_id"] == JUDGE].set_index("qid")
        for (who, qid), expected in EXPECTED.items():
            if who == model:
                got = (vision.loc[qid, "visual_relevance"], vision.loc[qid, "image_text_consistency"])
                assert got == expected, (model, qid, got)
    unseen = load_asset(instance, "judge_scores", "colour-blind").set_index(["judge_id", "qid"]).loc[JUDGE]
    assert (
        unseen.loc["hours", ["visual_relevance", "image_text_consistency"]].isna().all()
    )  # no image: absent
    blind = load_asset(instance, "judge_scores", "colour-blind")
    assert blind.set_index(["judge_id", "qid"]).loc[(JUDGE, "garden"), "diagnosis"] == "image_contradiction"
    rationale = json.loads(blind.set_index(["judge_id", "qid"]).loc[(JUDGE, "garden"), "rationales"])
    assert "photos/garden.png (" in rationale["visual_relevance"] and "80x60" in rationale["visual_relevance"]
    summary = load_asset(instance, "metric_summary", "oracle")
    overall = summary[(summary["group"] == "all") & (summary["judge_id"] == JUDGE)].set_index("metric")
    assert overall.loc["visual_relevance", "mean"] == pytest.approx(3.5 / 6)  # (5 x 0.5 + 1) / 6
    assert overall.loc["image_text_consistency", "mean"] == pytest.approx(4 / 6)  # (4 x 0.5 + 1 + 1) / 6
    grounding = summary[(summary["group"] == "all") & (summary["judge_id"] == "grounding")].set_index(
        "metric"
    )
    assert grounding.loc["grounding_accuracy", "mean"] == 1.0  # the oracle returns the gold boxes
    # the printed comparison: a column per figure, the vision judge's and the grounding judge's rows
    printed = _table(first.stdout, "visual_relevance")
    vision_row = next(r for r in printed if r["answer_model"] == "oracle" and r["judge_id"] == JUDGE)
    assert float(vision_row["visual_relevance"].split()[0]) == pytest.approx(3.5 / 6, abs=5e-3)
    assert float(vision_row["image_text_consistency"].split()[0]) == pytest.approx(4 / 6, abs=5e-3)
    grounding_row = next(r for r in printed if r["answer_model"] == "oracle" and r["judge_id"] == "grounding")
    assert float(grounding_row["grounding_accuracy"].split()[0]) == 1.0
    # the UI: metric_summary's materialization carries each figure (plotted over runs) and its table
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(dg.AssetKey("metric_summary"), asset_partitions=["oracle"]), limit=1
    ).records
    metadata = records[0].asset_materialization.metadata
    assert metadata[f"{JUDGE}/visual_relevance"].value == pytest.approx(3.5 / 6, abs=1e-4)
    assert metadata[f"{JUDGE}/image_text_consistency"].value == pytest.approx(4 / 6, abs=1e-4)
    assert metadata["grounding/grounding_accuracy"].value == 1.0
    table = metadata["summary"].value
    assert "image_context_recall" in table and "visual_relevance" in table
    # the report: the images section's table carries the vision judge's figures beside grounding's
    report = (home / "storage" / "artifacts" / "eval_report.html").read_text()
    images_section = report.split('<section id="images">', 1)[1].split("</section>", 1)[0]
    assert "visual_relevance" in images_section and "image_text_consistency" in images_section
    assert JUDGE in images_section and "0.583" in images_section


def _table(printed: str, column: str) -> list[dict[str, str]]:
    """The rows of the first markdown table printed whose header has ``column``."""
    lines = printed.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|") and f" {column} " in line)
    header = [c.strip() for c in lines[start].strip("|").split("|")]
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(dict(zip(header, (c.strip() for c in line.strip("|").split("|")))))
    return rows


def test_images_are_prepared_within_limits_keyed_by_sha256_and_priced_by_pixels(tmp_path):
    from PIL import Image

    from rag_eval_pipeline.llm.client import LLMRequest
    from rag_eval_pipeline.llm.openai_client import StructuredOutput, chat_messages

    documents, _ = write_multimodal_sample(tmp_path)
    data = (documents / "photos/sign.png").read_bytes()
    image = prepare_image("photos/sign.png", data)
    assert image.data == data and image.sha256 == hashlib.sha256(data).hexdigest() and not image.resized
    assert colours(image.data)[0][0] == "red"
    big = tmp_path / "big.png"
    Image.new("RGB", (9000, 300), "blue").save(big)
    shrunk = prepare_image("big.png", big.read_bytes())
    assert (
        shrunk.resized
        and max(shrunk.width, shrunk.height) <= 8000
        and shrunk.sha256 == hashlib.sha256(big.read_bytes()).hexdigest()
    )
    request = LLMRequest(
        "claude-sonnet-4-6", ({"role": "user", "content": [image.block(), {"type": "text", "text": "q"}]},)
    )
    keyed = json.dumps(keyed_images(request.api_kwargs()))
    assert image.sha256 in keyed and "base64," not in keyed and image.block()["source"]["data"] not in keyed
    assert image_tokens(64, 64) == 6  # ceil(4096 / 750)
    other = LLMRequest(
        "claude-sonnet-4-6",
        (
            {
                "role": "user",
                "content": [
                    prepare_image("g", (documents / "photos/garden.png").read_bytes()).block(),
                    {"type": "text", "text": "q"},
                ],
            },
        ),
    )
    assert request.cache_key() != other.cache_key()
    messages = chat_messages(request, StructuredOutput.TOOLS)
    parts = messages[-1]["content"]
    assert parts[0]["type"] == "image_url" and parts[0]["image_url"]["url"].startswith(
        "data:image/png;base64,"
    )
    assert parts[1] == {"type": "text", "text": "q"}


def test_the_stand_ins_refuse_images_as_the_apis_do(tmp_path):
    import anthropic

    from stand_ins.images import anthropic_images

    with FakeAnthropic() as server:
        client = anthropic.Anthropic(api_key="k", base_url=server.url, max_retries=0)
        bad = {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": "not base64!"},
        }
        with pytest.raises(anthropic.BadRequestError, match="invalid base64"):
            client.messages.create(
                model="claude-sonnet-4-6",
                max_tokens=10,
                messages=[{"role": "user", "content": [bad, {"type": "text", "text": "q"}]}],
            )
    from PIL import Image

    wide = tmp_path / "wide.png"
    Image.new("L", (8001, 2), 0).save(wide)
    block = {
        "type": "image",
        "source": {
            "type": "base64",
            "media_type": "image/png",
            "data": base64.b64encode(wide.read_bytes()).decode(),
        },
    }
    assert "8000 pixels" in (anthropic_images({"messages": [{"role": "user", "content": [block]}]})[1] or "")
    heavy = {
        "type": "image",
        "source": {
            "type": "base64",
            "media_type": "image/png",
            "data": base64.b64encode(b"\0" * (5 * 1024 * 1024 + 1)).decode(),
        },
    }
    assert "5 MB" in (anthropic_images({"messages": [{"role": "user", "content": [heavy]}]})[1] or "")


def _catalog(tmp_path):
    from rag_eval_pipeline.data.images import image_catalog

    documents, _ = write_multimodal_sample(tmp_path)
    return image_catalog(documents)


def _case(images, answer="green", question="What colour is the garden?"):
    from rag_eval_pipeline.judges.base import JudgeCase
    from rag_eval_pipeline.metrics.grounding import VisualAnswer

    return JudgeCase(question, None, answer, (), qid="q", visual=VisualAnswer(images=tuple(images)))


def test_an_openai_compatible_vision_judge_sends_image_url_data_urls_before_the_text(tmp_path):
    import asyncio

    from rag_eval_pipeline.judges.vision import VisionLLMJudge
    from rag_eval_pipeline.llm.openai_client import OpenAICompatibleClient, StructuredOutput
    from stand_ins.openai_api import FakeOpenAI

    catalog = _catalog(tmp_path)
    with FakeOpenAI() as server:
        client = OpenAICompatibleClient(
            "k", server.url, max_retries=0, structured_output=StructuredOutput.TOOLS
        )
        judge = VisionLLMJudge("vision:openai:gpt-4o", JudgeEndpoint("gpt-4o", client, {}), catalog)
        outcome = asyncio.run(judge.judge(_case(["photos/garden.png", "photos/sign.png"], answer="blue")))
        absent = asyncio.run(judge.judge(_case([])))
        unknown = asyncio.run(judge.judge(_case(["nowhere.png"])))
    assert outcome.error is None, outcome.error
    # garden: question names no colour (0.5), sign: neither (0.5); "blue" is in neither image: contradiction
    assert outcome.scores == {"visual_relevance": 0.5, "image_text_consistency": 0.0}
    assert len(server.requests) == 3  # a relevance call per image, one consistency call
    parts = server.requests[-1]["messages"][-1]["content"]
    assert [p["type"] for p in parts] == ["image_url", "image_url", "text"]
    sent = base64.b64decode(parts[0]["image_url"]["url"].split("base64,", 1)[1])
    assert hashlib.sha256(sent).hexdigest() == catalog.images["photos/garden.png"].sha256
    assert "base64," not in parts[-1]["text"]
    assert absent.scores == {"visual_relevance": None, "image_text_consistency": None}  # no image: absent
    assert unknown.scores["visual_relevance"] is None and "nowhere.png" in unknown.notes[0]


def test_an_image_that_cannot_be_sent_is_a_judge_error_and_the_budget_prices_pixels(tmp_path):
    import asyncio

    from rag_eval_pipeline.data.images import ImageCatalog, ImageInfo
    from rag_eval_pipeline.judges.vision import VisionLLMJudge, render_relevance_prompt
    from rag_eval_pipeline.llm.budget import CHARS_PER_TOKEN_AT_LEAST, SpendingLimit
    from rag_eval_pipeline.llm.pricing import ModelPrice

    catalog = _catalog(tmp_path)
    broken = tmp_path / "gone.png"
    broken.write_bytes(b"\x89PNG not an image")
    catalog.images["gone.png"] = ImageInfo("gone.png", broken, "x" * 64, 10, 10, "PNG", 20)
    nowhere = JudgeEndpoint("claude-sonnet-4-6", None, {})  # type: ignore[arg-type]
    judge = VisionLLMJudge("vision:claude-sonnet-4-6", nowhere, catalog)
    outcome = asyncio.run(judge.judge(_case(["gone.png"])))
    assert outcome.error is not None and "gone.png" in outcome.error and not outcome.scores  # never a 0
    image = prepare_image(
        "photos/sign.png", (documents := tmp_path / "documents" / "photos" / "sign.png").read_bytes()
    )
    request = render_relevance_prompt("claude-sonnet-4-6", _case(["photos/sign.png"]), image)
    price = ModelPrice(input=1e6, output=0.0, cache_write=1e6, cache_read=0.0)  # $1 a token: cost = tokens
    limit = SpendingLimit(1e9, {"claude-sonnet-4-6": price})
    text_only = json.dumps(keyed_images(request.api_kwargs()))
    assert limit.most_it_costs(request) == pytest.approx(
        len(text_only) / CHARS_PER_TOKEN_AT_LEAST + image_tokens(64, 64)
    )
    assert isinstance(ImageCatalog(), ImageCatalog) and documents.is_file()


def test_a_claude_answer_model_is_shown_the_retrieved_images_before_the_passages(tmp_path):
    import asyncio

    from rag_eval_pipeline.answering.base import AnswerRequest
    from rag_eval_pipeline.answering.chat import ChatAnswerer
    from rag_eval_pipeline.llm.anthropic_client import AnthropicClient
    from rag_eval_pipeline.retrieval.base import SearchHit

    catalog = _catalog(tmp_path)
    hits = (
        SearchHit("image:photos/sign.png", "sign", "Photo of the stop sign at the car park exit", 2.0),
        SearchHit("doc_parking", "parking", "Visitors park behind the office.", 1.0),
    )
    request = AnswerRequest("q1", "What colour is the stop sign?", hits, None)
    with FakeAnthropic() as server:
        client = AnthropicClient("k", server.url, max_retries=0)
        plain = ChatAnswerer("claude", "claude-haiku-4-5", client, {})
        seeing = plain.with_images(catalog)
        asyncio.run(seeing.answer_async(request))
        asyncio.run(plain.answer_async(request))
    shown, text_only = (r["messages"][0]["content"] for r in server.requests)
    assert [b["type"] for b in shown] == ["image", "text"]
    assert (
        hashlib.sha256(base64.b64decode(shown[0]["source"]["data"])).hexdigest()
        == catalog.images["photos/sign.png"].sha256
    )
    assert "Visitors park behind the office." in shown[1]["text"] and "base64," not in shown[1]["text"]
    assert isinstance(text_only, str)  # a model not given the catalog: the passages alone, as before


class _ServersSeen:
    """Where the llama.cpp server would listen (no vision GGUF ships offline here): the
    OpenAI-compatible stand-in, with the settings the run would start llama.cpp with."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.started: list = []

    def base_url(self, model_file, settings):
        self.started.append((model_file, settings))
        return self.url


def test_a_local_vision_model_is_served_with_its_mmproj_and_sent_image_url_parts(tmp_path):
    # a real vision GGUF and its projector are not available offline, so llama.cpp itself is not
    # started: this checks what the run asks of it (the projector, the chat request's shape)
    import asyncio

    import xllamacpp

    from rag_eval_pipeline.judges.registry import JudgeRegistry
    from rag_eval_pipeline.judges.vision import VisionLLMJudge
    from rag_eval_pipeline.llm.llamacpp_server import LocalServerSettings, server_params
    from rag_eval_pipeline.llm.providers import LLM_PROVIDERS, LLMEnvironment
    from rag_eval_pipeline.llm.settings import LLMSettings, LocalLLMSettings
    from stand_ins.openai_api import FakeOpenAI

    catalog = _catalog(tmp_path)
    model, projector = tmp_path / "qwen2-vl.gguf", tmp_path / "mmproj-qwen2-vl-f16.gguf"
    model.write_bytes(b"GGUF model")
    projector.write_bytes(b"GGUF projector")
    spec = JudgeRegistry().resolve(f"vision:local:{model}")
    settings = LLMSettings(local=LocalLLMSettings(mmproj={str(model): str(projector)}))
    with FakeOpenAI() as server:
        servers = _ServersSeen(server.url)
        provider = LLM_PROVIDERS["local"]
        environment = LLMEnvironment(settings, lambda variable: None, servers)  # type: ignore[arg-type]
        assert provider.missing(spec.endpoint, environment) is None
        assert provider.sees_images(spec.endpoint, settings)
        client = provider.client(spec.endpoint, environment)
        judge = VisionLLMJudge(spec.judge_id, JudgeEndpoint(spec.model_id, client, {}), catalog)
        outcome = asyncio.run(judge.judge(_case(["photos/garden.png"], answer="green")))
    assert outcome.error is None, outcome.error
    assert outcome.scores == {"visual_relevance": 0.5, "image_text_consistency": 1.0}
    [(served, started)] = servers.started
    assert (served, started.mmproj) == (model, projector)  # the server is started with the projector
    params = server_params(xllamacpp.CommonParams(), model, started, threads=1)
    assert (params.model.path, params.mmproj.path) == (str(model), str(projector))  # llama-server --mmproj
    request = server.requests[-1]
    assert request["response_format"]["type"] == "json_schema"  # llama.cpp's grammar, as for text
    parts = request["messages"][-1]["content"]
    assert [p["type"] for p in parts] == ["image_url", "text"]
    sent = base64.b64decode(parts[0]["image_url"]["url"].split("base64,", 1)[1])
    assert hashlib.sha256(sent).hexdigest() == catalog.images["photos/garden.png"].sha256
    # without a projector the model sees no images: an answer model is shown none, a vision judge
    # is refused before the run
    blind = LLMEnvironment(LLMSettings(), lambda variable: None, servers)  # type: ignore[arg-type]
    assert not provider.sees_images(spec.endpoint, LLMSettings())
    said = provider.missing(spec.endpoint, blind)
    assert said is not None and said.startswith("its vision projector:") and "local.mmproj" in said
    text_judge = JudgeRegistry().resolve(f"local:{model}")
    assert provider.missing(text_judge.endpoint, blind) is None  # a text judge needs none
    assert LocalServerSettings().mmproj is None


@pytest.mark.slow  # a `rag-eval run` refused at preflight: the process and the sample drawn, ~12 s
def test_a_local_vision_judge_without_its_mmproj_file_is_one_error_line(tmp_path):
    model = tmp_path / "llava.gguf"
    model.write_bytes(b"GGUF model")
    config = tmp_path / "rag_eval.yaml"
    config.write_text(yaml.safe_dump({"judges": ["reference", f"vision:local:{model}"]}))
    args = ("--config", str(config), "--dagster-home", str(tmp_path / "home"), "run")
    result = rag_eval(*args, "--dataset", "multimodal-sample", "--models", "oracle", cwd=tmp_path)
    assert result.returncode != 0
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.stderr
    assert f"judge vision:local:{model} needs its vision projector" in errors[0]
    assert "local.mmproj" in errors[0] and "Traceback" not in result.stderr
