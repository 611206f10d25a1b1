"""Resources: the knowledge-base backend behind the search interface, the LLM providers, the
user's documents, the metric history."""

import hashlib
import os
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import anthropic as anthropic_sdk
import dagster as dg
import numpy as np
import pandas as pd
from elasticsearch import Elasticsearch
from pydantic import Field, PrivateAttr

from rag_eval_pipeline.answering.answer_cases import Retriever
from rag_eval_pipeline.answering.registry import AnswerRegistry
from rag_eval_pipeline.config import Settings
from rag_eval_pipeline.data.documents import (
    DEFAULT_CHUNK_OVERLAP,
    DEFAULT_CHUNK_WORDS,
    DEFAULT_MAX_FILE_BYTES,
    Chunking,
    LoadedDocuments,
    load_documents,
)
from rag_eval_pipeline.judges.registry import JudgeRegistry
from rag_eval_pipeline.llm.anthropic_client import AnthropicClient
from rag_eval_pipeline.llm.batches import BatchPrefetcher
from rag_eval_pipeline.llm.cache import CachedClient, ResponseCache
from rag_eval_pipeline.llm.llamacpp_server import LocalServers, LocalServerSettings
from rag_eval_pipeline.llm.openai_client import OpenAICompatibleClient, StructuredOutput
from rag_eval_pipeline.llm.pricing import DEFAULT_PRICES, ModelPrice
from rag_eval_pipeline.llm.services import LLMServices
from rag_eval_pipeline.llm.shared_slots import SharedSlots
from rag_eval_pipeline.llm.targets import (
    ANTHROPIC,
    DEFAULT_OPENAI_KEY_ENV,
    LOCAL,
    OPENAI,
    LLMEndpoint,
    local_model_path,
)
from rag_eval_pipeline.reporting.monitoring import HISTORY_COLUMNS, upsert_history
from rag_eval_pipeline.retrieval.base import IndexManifest, ProgressCallback, RetrievalMode, SearchBackend
from rag_eval_pipeline.retrieval.elasticsearch import (
    ElasticsearchBackend,
    EsFeatures,
    EsIndexNames,
    detect_features,
)
from rag_eval_pipeline.retrieval.embedded import EmbeddedBackend
from rag_eval_pipeline.retrieval.embedder import Embedder, make_embedder, resolve_embedding_model
from rag_eval_pipeline.retrieval.modes import OpenedIndex, search_many
from rag_eval_pipeline.retrieval.vector_index import VectorSearch


class ElasticsearchResource(dg.ConfigurableResource):
    """An Elasticsearch cluster: URL or Cloud ID, API key or basic auth, TLS options. Bind the
    secrets (and, in deployments, the address) with ``dg.EnvVar``."""

    url: str | None = Field(default=None, description="e.g. https://es.internal:9200")
    cloud_id: str | None = None
    api_key: str | None = None
    username: str | None = None
    password: str | None = None
    verify_certs: bool = True
    ca_certs: str | None = Field(default=None, description="CA bundle path for TLS")
    request_timeout_s: float = 30.0

    def client(self) -> Elasticsearch:
        if not self.url and not self.cloud_id:
            raise ValueError("ElasticsearchResource needs url or cloud_id")
        auth: dict[str, Any] = {}
        if self.api_key:
            auth["api_key"] = self.api_key
        elif self.username:
            auth["basic_auth"] = (self.username, self.password or "")
        return Elasticsearch(
            hosts=[self.url] if self.url else None,
            cloud_id=self.cloud_id,
            verify_certs=self.verify_certs,
            ca_certs=self.ca_certs,
            request_timeout=self.request_timeout_s,
            **auth,
        )


class KnowledgeBaseResource(dg.ConfigurableResource):
    """Where the knowledge base lives: configuration plus a factory for its ``SearchBackend``.

    Embedded on disk by default (BM25, plus vectors when ``embedding_model`` is set); in
    Elasticsearch when ``elasticsearch`` is set. ``index_dir`` defaults to
    ``<DAGSTER_HOME>/storage/kb_index``; every content version gets its own folder (or index),
    so a rebuild never overwrites the index that runs are reading.
    """

    index_dir: str | None = Field(default=None, description="Where embedded indexes are kept.")
    embedding_model: str | None = Field(
        default=None,
        description="minilm (ONNX, no PyTorch), an .onnx file or folder, or a sentence-transformers "
        "model name or folder; unset = BM25 only.",
    )
    embedding_batch_size: int = 64
    vector_search: VectorSearch = Field(
        default=VectorSearch.EXACT,
        description="embedded vectors: exact (one matrix product) or hnsw (an approximate graph, the "
        "[ann] extra), for hundreds of thousands of passages; Elasticsearch's kNN is HNSW anyway.",
    )
    elasticsearch: ElasticsearchResource | None = Field(
        default=None, description="Set: the knowledge base lives in Elasticsearch, not on disk."
    )
    es_index_names: dict[str, str] = Field(
        default_factory=lambda: dict(asdict(EsIndexNames())),
        description="knowledge_base (an alias), judgement_list and eval_results index names",
    )
    es_inference_id: str | None = Field(
        default=None, description="Inference endpoint for a semantic_text field (Elastic Cloud)."
    )
    es_max_error_share: float = Field(
        default=0.0, description="Share of documents that may fail to index before the build fails."
    )

    _root: Path = PrivateAttr()
    _es: tuple[Elasticsearch, EsFeatures] | None = PrivateAttr(default=None)
    _embedders: dict[str, Embedder] = PrivateAttr(default_factory=dict)
    _opened: dict[str, OpenedIndex] = PrivateAttr(default_factory=dict)

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        if self.index_dir:
            self._root = Path(self.index_dir)
        else:
            self._root = Path(context.instance.storage_directory()) / "kb_index"  # type: ignore[union-attr]

    def embedder(self, model: str) -> Embedder:
        if model not in self._embedders:
            self._embedders[model] = make_embedder(resolve_embedding_model(model), self.embedding_batch_size)
        return self._embedders[model]

    def query_embedder(self) -> Callable[[list[str]], np.ndarray] | None:
        """Embeds texts with the configured model (RAGAS answer relevancy), loaded on first use;
        None when unset."""
        model = self.embedding_model
        if not model:
            return None
        return lambda texts: self.embedder(model).encode(texts)

    @property
    def backend_name(self) -> str:
        return "elasticsearch" if self.elasticsearch is not None else "embedded"

    @property
    def index_names(self) -> EsIndexNames:
        return EsIndexNames(**self.es_index_names)

    def es(self) -> tuple[Elasticsearch, EsFeatures]:
        """The cluster client and its detected features (detected once, logged once)."""
        if self.elasticsearch is None:
            raise ValueError("no Elasticsearch configured")
        if self._es is None:
            client = self.elasticsearch.client()
            self._es = (client, detect_features(client, self.es_inference_id))
        return self._es

    def backend(self) -> SearchBackend:
        """The configured backend: the one place that chooses between them."""
        embedder = self.embedder(self.embedding_model) if self.embedding_model else None
        if self.elasticsearch is None:
            return EmbeddedBackend(self._root, embedder, self.embedder, self.vector_search)
        es, features = self.es()
        return ElasticsearchBackend(
            es, features, self.index_names.knowledge_base, embedder, self.embedder, self.es_max_error_share
        )

    def build(self, passages: pd.DataFrame, on_progress: ProgressCallback | None = None) -> IndexManifest:
        return self.backend().build(passages, on_progress)

    def retriever(self, manifest: IndexManifest, mode: RetrievalMode) -> Retriever:
        """A batch search function for ``mode`` over the index the manifest names (opened once)."""
        key = f"{manifest.backend}:{manifest.location}:{manifest.version}"
        if key not in self._opened:
            self._opened[key] = self.backend().open(manifest)
        index = self._opened[key].for_mode(mode)
        return lambda queries, k: search_many(index, queries, k)


def llm_cache_root(context: dg.InitResourceContext, enabled: bool, folder: str | None) -> Path | None:
    """The one response cache every LLM resource shares (None: caching off)."""
    if not enabled:
        return None
    return Path(folder) if folder else Path(context.instance.storage_directory()) / "llm_cache"  # type: ignore[union-attr]


def llm_slots_root(context: dg.InitResourceContext) -> Path | None:
    """Where the per-provider limits shared by the runs of this instance keep their slots."""
    if context.instance is None:
        return None
    return Path(context.instance.storage_directory()) / "llm_slots"


class AnthropicResource(dg.ConfigurableResource):
    """The Anthropic Messages API for Claude answer models and judges.

    Bind ``api_key`` with ``dg.EnvVar("ANTHROPIC_API_KEY")``. Responses are cached on disk by
    content (model, parameters, full prompt) under ``<DAGSTER_HOME>/storage/llm_cache``, so a
    re-materialization with unchanged inputs makes no call and one after failures repeats only
    the calls that failed.
    """

    api_key: str | None = Field(default=None, description="Anthropic API key (use EnvVar).")
    base_url: str | None = Field(default=None, description="Another Messages-API endpoint.")
    timeout_s: float = 60.0
    max_retries: int = Field(default=4, description="Retries per call: 429/529 honour retry-after.")
    concurrency: int = Field(default=8, description="Calls in flight at most.")
    send_temperature: bool = Field(
        default=True,
        description="Send temperature 0 (Haiku 4.5, Sonnet 4.6); turn off for models that reject it.",
    )
    cache_responses: bool = True
    refresh_cache: bool = Field(
        default=False, description="Ask every call again this run (new answers still enter the cache)."
    )
    cache_dir: str | None = None
    use_batches: bool = Field(
        default=False,
        description="Send each stage's uncached calls as one Message Batch (half price, slower).",
    )
    batch_poll_interval_s: float = 30.0
    prices: dict[str, list[float]] = Field(
        default_factory=dict,
        description="USD per million tokens, model -> [input, output, cache write, cache read]; "
        "extends the defaults for claude-haiku-4-5 and claude-sonnet-4-6.",
    )

    _cache_root: Path | None = PrivateAttr(default=None)
    _slots_root: Path | None = PrivateAttr(default=None)

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        self._cache_root = llm_cache_root(context, self.cache_responses, self.cache_dir)
        self._slots_root = llm_slots_root(context)

    def price_table(self) -> dict[str, ModelPrice]:
        table = dict(DEFAULT_PRICES)
        for model, (input_, output, write, read) in self.prices.items():
            table[model] = ModelPrice(input_, output, write, read)
        return table

    def has_api_key(self) -> bool:
        """Whether a key is configured, bound through EnvVar or given directly (checked before a
        run, so a missing key is one line, not a failed run)."""
        try:
            return bool(self.api_key)
        except Exception:  # an EnvVar whose variable is unset
            return False

    def services(self, compatible: "OpenAICompatibleResource | None" = None) -> LLMServices:
        """The LLM clients (made on first use: offline runs need no key) and prices for one step;
        with ``compatible``, OpenAI-compatible and local models too."""
        factories: dict[str, Callable[[LLMEndpoint], CachedClient]] = {ANTHROPIC: lambda _: self.client()}
        if compatible is not None:
            factories.update(compatible.factories())
        return LLMServices(factories, self.price_table(), self.concurrency)

    def cache_root(self) -> Path | None:
        return self._cache_root

    def client(self) -> CachedClient:
        """A fresh client for one batch of calls (one event loop); it counts its real calls."""
        if not self.api_key:
            raise MissingApiKeyError(
                "A Claude answer model or judge needs ANTHROPIC_API_KEY in the environment of "
                "the Dagster process (the resource binds it with EnvVar)."
            )
        inner = AnthropicClient(
            self.api_key, self.base_url, self.timeout_s, self.max_retries, self.send_temperature
        )
        cache = ResponseCache(self._cache_root) if self._cache_root is not None else None
        # ``concurrency`` is the account's limit: every run of the instance shares it
        shared = SharedSlots(self._slots_root / ANTHROPIC, self.concurrency) if self._slots_root else None
        return CachedClient(
            inner, cache, refresh=self.refresh_cache, max_in_flight=self.concurrency, shared=shared
        )

    def batch_prefetcher(self) -> BatchPrefetcher:
        """Pre-fills the response cache through the Message Batches API (needs the cache)."""
        if self._cache_root is None:
            raise ValueError("use_batches needs cache_responses: the batch results land in the cache")
        if not self.api_key:
            raise MissingApiKeyError("the Message Batches API needs ANTHROPIC_API_KEY")
        client = anthropic_sdk.Anthropic(
            api_key=self.api_key, base_url=self.base_url, timeout=self.timeout_s, max_retries=self.max_retries
        )
        return BatchPrefetcher(
            client, ResponseCache(self._cache_root), self._cache_root / "batches", self.batch_poll_interval_s
        )


class MissingApiKeyError(RuntimeError):
    pass


# one sentence of rationale (the rubric asks for one); a small model under a grammar otherwise
# rambles inside a string until max_tokens and never closes the JSON
LOCAL_MAX_STRING_CHARS = 160


class OpenAICompatibleResource(dg.ConfigurableResource):
    """Answer models and judges behind any OpenAI-compatible API (``openai:<model>``), and local
    GGUF models (``local:<model>``) served by a llama.cpp server this resource starts on
    127.0.0.1 at first use and stops when the run ends.

    Bind ``api_key`` with ``dg.EnvVar("OPENAI_API_KEY")``; a named answer model with its own
    ``api_key_env`` reads that variable when its client is made. Responses share the Anthropic
    resource's content-addressed cache (provider and endpoint are part of the key)."""

    api_key: str | None = Field(default=None, description="the default endpoint's key (use EnvVar)")
    base_url: str | None = Field(default=None, description="None: OPENAI_BASE_URL, else api.openai.com")
    api_key_env: str = DEFAULT_OPENAI_KEY_ENV
    structured_output: str = Field(default="auto", description="auto, json_schema, tools or text")
    timeout_s: float = 60.0
    max_retries: int = Field(default=4, description="Retries per call: 429 honours retry-after.")
    concurrency: int = Field(default=8, description="Calls in flight at most, per endpoint.")
    cache_responses: bool = True
    refresh_cache: bool = False
    cache_dir: str | None = None
    local_n_ctx: int = 8192
    local_n_parallel: int = 2
    local_threads: int | None = None

    _cache_root: Path | None = PrivateAttr(default=None)
    _slots_root: Path | None = PrivateAttr(default=None)
    _servers: LocalServers = PrivateAttr(default_factory=LocalServers)

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        self._cache_root = llm_cache_root(context, self.cache_responses, self.cache_dir)
        self._slots_root = llm_slots_root(context)

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        self._servers.stop_all()  # a local model's server lives as long as the run

    def has_api_key(self, endpoint: LLMEndpoint) -> bool:
        """Whether the endpoint's calls can be made: a local model or a server of one's own
        (a base URL) needs no key; OpenAI's own API does."""
        if endpoint.provider == LOCAL or endpoint.base_url or self.base_url:
            return True
        return bool(self._key(endpoint))

    def _key(self, endpoint: LLMEndpoint) -> str | None:
        variable = endpoint.api_key_env or self.api_key_env
        if variable == DEFAULT_OPENAI_KEY_ENV:
            try:
                return self.api_key or os.environ.get(variable)
            except Exception:  # an EnvVar whose variable is unset
                return None
        return os.environ.get(variable)

    def factories(self) -> dict[str, Callable[[LLMEndpoint], CachedClient]]:
        return {OPENAI: self.openai_client, LOCAL: self.local_client}

    def _cached(self, inner: OpenAICompatibleClient, shared_by: str | None = None) -> CachedClient:
        """``shared_by``: the server whose limit every run of the instance shares (None for a
        local model: each run starts its own server)."""
        cache = ResponseCache(self._cache_root) if self._cache_root is not None else None
        shared = None
        if shared_by is not None and self._slots_root is not None:
            server = hashlib.sha256(shared_by.encode()).hexdigest()[:12]
            shared = SharedSlots(self._slots_root / f"{OPENAI}-{server}", self.concurrency)
        return CachedClient(
            inner, cache, refresh=self.refresh_cache, max_in_flight=self.concurrency, shared=shared
        )

    def openai_client(self, endpoint: LLMEndpoint) -> CachedClient:
        base_url = endpoint.base_url or self.base_url or os.environ.get("OPENAI_BASE_URL")
        key = self._key(endpoint)
        if not key and not base_url:
            raise MissingApiKeyError(
                f"An openai: answer model or judge needs {endpoint.api_key_env or self.api_key_env} "
                "in the environment of the Dagster process (or a base_url of a server that takes no key)."
            )
        return self._cached(
            OpenAICompatibleClient(
                key,
                base_url,
                self.timeout_s,
                self.max_retries,
                StructuredOutput(self.structured_output),
                cache_identity=f"openai|{base_url or 'https://api.openai.com/v1'}",
            ),
            shared_by=base_url or "https://api.openai.com/v1",
        )

    def local_client(self, endpoint: LLMEndpoint) -> CachedClient:
        """Starts (once) the llama.cpp server of the endpoint's model file and talks to it."""
        model_file = local_model_path(endpoint.model_file or "")
        settings = LocalServerSettings(self.local_n_ctx, self.local_n_parallel, self.local_threads)
        base_url = self._servers.base_url(model_file, settings)
        return self._cached(
            OpenAICompatibleClient(
                None,
                base_url,
                self.timeout_s,
                self.max_retries,
                StructuredOutput.JSON_SCHEMA,  # llama.cpp turns the schema into a grammar
                # the file, not the server's port (new every run), is what the answers depend on
                cache_identity=f"local|{model_file.name}|{model_file.stat().st_size}",
                max_string_chars=LOCAL_MAX_STRING_CHARS,
            )
        )


class DocumentsResource(dg.ConfigurableResource):
    """The folder of the user's documents (.md, .txt, JSONL or parquet of {title, passage})
    merged into the knowledge base; the new-documents sensor watches it."""

    folder: str = Field(default="data/documents", description="relative to the working directory")
    chunk_words: int = Field(default=DEFAULT_CHUNK_WORDS, description="split longer documents; 0 = never")
    chunk_overlap: int = DEFAULT_CHUNK_OVERLAP
    max_file_bytes: int = Field(default=DEFAULT_MAX_FILE_BYTES, description="larger files are skipped, named")

    def load(self) -> LoadedDocuments:
        return load_documents(
            Path(self.folder), Chunking(self.chunk_words, self.chunk_overlap), self.max_file_bytes
        )


class HistoryResource(dg.ConfigurableResource):
    """Keeps every metric summary ever materialized, for the trend in the report."""

    path: str | None = Field(
        default=None, description="default: <DAGSTER_HOME>/storage/history/metric_history.parquet"
    )

    _file: Path = PrivateAttr()

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        default = Path(context.instance.storage_directory()) / "history" / "metric_history.parquet"  # type: ignore[union-attr]
        self._file = Path(self.path) if self.path else default

    def read(self) -> pd.DataFrame:
        return pd.read_parquet(self._file) if self._file.is_file() else pd.DataFrame(columns=HISTORY_COLUMNS)

    def record(self, rows: pd.DataFrame) -> int:
        """Records one summary's rows, replacing an earlier record of the same summary run
        (idempotent), atomically (write aside, then rename); returns the history's length."""
        history = upsert_history(self.read(), rows)
        self._file.parent.mkdir(parents=True, exist_ok=True)
        tmp = self._file.with_name(self._file.name + ".tmp")
        history.to_parquet(tmp, index=False)
        tmp.replace(self._file)
        return len(history)


class MonitoringResource(dg.ConfigurableResource):
    """Where Prometheus metrics go: a textfile for node-exporter, and a Pushgateway if set."""

    textfile: str | None = Field(
        default=None, description="default: <DAGSTER_HOME>/storage/metrics/rag_eval.prom"
    )
    pushgateway_url: str | None = None
    job_name: str = "rag_eval"

    _file: Path = PrivateAttr()

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        default = Path(context.instance.storage_directory()) / "metrics" / "rag_eval.prom"  # type: ignore[union-attr]
        self._file = Path(self.textfile) if self.textfile else default

    def publish(self, exposition: bytes) -> str:
        """Writes the textfile atomically (the collector never reads half a file); pushes if set."""
        self._file.parent.mkdir(parents=True, exist_ok=True)
        tmp = self._file.with_name(self._file.name + ".tmp")
        tmp.write_bytes(exposition)
        tmp.replace(self._file)
        if self.pushgateway_url:
            from prometheus_client.exposition import default_handler

            default_handler(
                f"{self.pushgateway_url.rstrip('/')}/metrics/job/{self.job_name}",
                "PUT",
                10,
                [("Content-Type", "text/plain; version=0.0.4")],
                exposition,
            )()
        return str(self._file)


class SettingsResource(dg.ConfigurableResource):
    """The configuration file's settings (``rag_eval.yaml``), validated once by pydantic and
    handed to every asset, check and sensor typed: the dataset, named answer models, judges,
    thresholds and statistics. The registries that turn names into specs are built from it."""

    settings_json: str = Field(
        default_factory=lambda: Settings().model_dump_json(),
        description="The validated settings; edit rag_eval.yaml, not this value.",
    )

    _settings: Settings | None = PrivateAttr(default=None)

    @classmethod
    def from_settings(cls, settings: Settings) -> "SettingsResource":
        return cls(settings_json=settings.model_dump_json())

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            self._settings = Settings.model_validate_json(self.settings_json)
        return self._settings

    def answer_registry(self) -> AnswerRegistry:
        return AnswerRegistry(self.settings.answer_models)

    def judge_registry(self) -> JudgeRegistry:
        return JudgeRegistry(self.settings.custom_metrics)


class TracingResource(dg.ConfigurableResource):
    """Where case traces go (the configuration file's ``tracing`` section). Needs the
    ``[tracing]`` extra (the OpenTelemetry SDK and its OTLP/HTTP exporter)."""

    preset: str = "otlp"
    endpoint: str | None = None
    headers_env: dict[str, str] = Field(default_factory=dict)
    service_name: str = "rag-eval-pipeline"
    project: str = "rag-eval"
    sample: float = 1.0
    flush_timeout_s: float = 5.0

    def export(self, traces: list, qids: list[str]):
        from rag_eval_pipeline.tracing.otlp import export_traces, resolve_target  # the optional extra

        target = resolve_target(
            self.preset,
            self.endpoint,
            self.headers_env,
            self.service_name,
            self.project,
            self.sample,
            self.flush_timeout_s,
        )
        return export_traces(traces, qids, target)


class PhoenixResource(dg.ConfigurableResource):
    """Where the judgement list goes as a dataset and each answer model as an experiment (the
    ``tracing.phoenix`` section). Needs the ``[phoenix]`` extra (Phoenix's client library)."""

    url: str = "http://127.0.0.1:6006"
    api_key_env: str = "PHOENIX_API_KEY"
    project: str = "rag-eval"

    def upload(self, judgement_list, cases, case_set: str, experiment_name: str, metadata: dict, log):
        from rag_eval_pipeline.tracing.phoenix_experiments import (  # the optional extra
            dataset_examples,
            dataset_name,
            upload_experiment,
        )

        return upload_experiment(
            self.url,
            os.environ.get(self.api_key_env) or None,
            dataset_name(self.project, case_set),
            dataset_examples(judgement_list),
            cases,
            experiment_name,
            metadata,
            log,
        )
