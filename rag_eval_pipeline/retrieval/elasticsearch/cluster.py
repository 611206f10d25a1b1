"""The Elasticsearch cluster as this project sees it: its errors, its index names, and the
features it has (detected once: the integ-test distribution lacks the english analyzer,
inference endpoints and the rrf retriever; Elastic Cloud has all three)."""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from elasticsearch import ApiError, Elasticsearch, TransportError

from rag_eval_pipeline.language.analysis import analyzer
from rag_eval_pipeline.language.table import language
from rag_eval_pipeline.retrieval.base import Backend
from rag_eval_pipeline.retrieval.elasticsearch.errors import ElasticsearchUnavailableError

log = logging.getLogger(__name__)

BACKEND_NAME = Backend.ELASTICSEARCH.value
FALLBACK_ANALYZER = "standard_english_stop"


@dataclass(frozen=True)
class EsFeatures:
    """What this cluster can do, detected once: the integ-test distribution lacks the english
    analyzer, inference endpoints and the rrf retriever; Elastic Cloud has all three."""

    version: str
    english_analyzer: bool
    inference_id: str | None
    rrf: bool

    @functools.cached_property  # read for every document of a bulk load: parse the version once
    def base64_vectors(self) -> bool:
        """Elasticsearch 9.3+ takes a dense vector as base64 of big-endian float32: a third of
        the JSON, and no float formatting on either side of a bulk load."""
        parts = [int(part) for part in re.findall(r"\d+", self.version)[:2]]
        return len(parts) == 2 and tuple(parts) >= (9, 3)  # an unknown version: plain JSON arrays

    @property
    def analyzer(self) -> str:
        return "english" if self.english_analyzer else FALLBACK_ANALYZER

    def analysis_settings(self) -> dict[str, Any]:
        if self.english_analyzer:
            return {}
        # core Elasticsearch only: the standard tokenizer with English stop words, no stemming
        return {"analyzer": {FALLBACK_ANALYZER: {"type": "standard", "stopwords": "_english_"}}}


@dataclass(frozen=True)
class LanguageAnalysis:
    """How one language's text is analysed on this cluster: the analyzer its fields use, the
    definition of that analyzer where it is our own (the standard one with the language's stop
    words), and how the log line says it."""

    code: str
    analyzer: str
    definition: dict[str, Any] | None
    said: str


def _has_analyzer(es: Elasticsearch, analyzer: str) -> bool:
    try:
        es.indices.analyze(analyzer=analyzer, text="probe")
        return True
    except ApiError:
        return False


def _has_stop_words(es: Elasticsearch, stop: str, words: list[str]) -> bool:
    """Whether the node knows the named stop-word list: it removes some of the language's own
    stop ``words`` (a name it does not know is read as one literal stop word, without error)."""
    text = " ".join(words)
    try:
        tokens = es.indices.analyze(
            tokenizer="standard", filter=[{"type": "stop", "stopwords": stop}], text=text
        )
    except ApiError:
        return False
    return bool(words) and len(tokens.get("tokens", [])) < len(text.split())


def language_analyses(
    es: Elasticsearch, features: EsFeatures, codes: list[str]
) -> dict[str, LanguageAnalysis]:
    """Each language's analysis on this cluster: its own analyzer where the node has one
    (``spanish``, ``cjk``, ...), else the standard analyzer with the language's stop words where
    the node knows them, else the standard analyzer. English stays as the features say."""
    found: dict[str, LanguageAnalysis] = {}
    for code in codes:
        row = language(code)
        if row.is_english:
            definition = features.analysis_settings().get("analyzer", {}).get(features.analyzer)
            fallback = "standard, English stop words (the node has no english analyzer)"
            said = "english" if features.english_analyzer else fallback
            found[code] = LanguageAnalysis(code, features.analyzer, definition, said)
            continue
        if row.es_analyzer and _has_analyzer(es, row.es_analyzer):
            found[code] = LanguageAnalysis(code, row.es_analyzer, None, row.es_analyzer)
            continue
        stop = f"_{row.name.lower()}_"
        listed = _has_stop_words(es, stop, sorted(analyzer(code).index_stop_words)[:20])
        definition = {"type": "standard", **({"stopwords": stop} if listed else {})}
        words = f", {row.name} stop words" if listed else ""
        said = f"standard{words} (the node has no {row.es_analyzer or 'language'} analyzer)"
        found[code] = LanguageAnalysis(code, f"standard_{code}", definition, said)
    return found


def es_call(what: str, fn: Callable[[], Any]) -> Any:
    """Run one cluster call; an unreachable cluster becomes one clear error saying what failed."""
    try:
        return fn()
    except (TransportError, ConnectionError) as err:
        raise ElasticsearchUnavailableError(f"Elasticsearch unreachable while {what}: {err}") from err


SHARD_WAIT_S = 30.0


def create_index(
    es: Elasticsearch,
    name: str,
    *,
    mappings: dict[str, Any],
    settings: dict[str, Any],
    shard_wait_s: float = SHARD_WAIT_S,
) -> None:
    """Create an index and wait for its primary shard. A shard the cluster will not place (a disk
    above its watermark, a node filter) is one clear error naming the cluster's own reason, and
    the empty index is removed; without this the client only sees a timed-out request."""
    response = es_call(
        "creating the index",
        lambda: es.options(request_timeout=shard_wait_s + 30).indices.create(
            index=name,
            mappings=mappings,
            settings=settings,
            wait_for_active_shards="1",
            timeout=f"{max(1, round(shard_wait_s))}s",
        ),
    )
    if response.get("shards_acknowledged", True):
        return
    reason = _unassigned_reason(es, name)
    es.indices.delete(index=name, ignore_unavailable=True)
    raise ElasticsearchUnavailableError(
        f"Elasticsearch created index {name} but placed none of its shards within {shard_wait_s:g} s: "
        f"{reason}. Free what the reason names (often disk space) or change the setting it quotes; "
        "GET _cluster/allocation/explain has the details"
    )


def _unassigned_reason(es: Elasticsearch, name: str) -> str:
    """The first 'no' of the cluster's allocation deciders for the index's primary shard."""
    try:
        explain = es.cluster.allocation_explain(index=name, shard=0, primary=True)
    except (ApiError, TransportError) as err:
        return f"the cluster did not explain why ({err})"
    for node in explain.get("node_allocation_decisions", []):
        for decider in node.get("deciders", []):
            if decider.get("decision") == "NO":
                return f"{decider.get('decider')}: {decider.get('explanation')}"
    unassigned = explain.get("unassigned_info", {}).get("reason", "unknown")
    return str(explain.get("allocate_explanation") or unassigned)


def cluster_error(err: Exception) -> str:
    """The cluster's own words for a refused or failed call: its error type and reason, else the
    client's message."""
    info = getattr(err, "info", None) or getattr(err, "body", None)
    if isinstance(info, dict) and isinstance(info.get("error"), dict):
        cause = info["error"]
        return f"{cause.get('type', 'error')}: {cause.get('reason', '')}".strip()
    if isinstance(info, dict) and isinstance(info.get("error"), str):
        return info["error"]
    status = getattr(err, "status_code", None) or getattr(getattr(err, "meta", None), "status", None)
    return f"HTTP {status}: {err}" if status else f"{type(err).__name__}: {err}"


def access_problem(es: Elasticsearch, knowledge_base: str) -> str | None:
    """What a run needs of the cluster, checked before any work: that it answers, and that the
    knowledge base's index or alias can be read (when it exists) or created (when it does not).
    Asks nothing a restricted key lacks: no GET / (which the integ-test distribution does not
    serve) and no cluster monitoring; None when all is well, else the cluster's own error."""
    try:
        exists = bool(es.indices.exists(index=knowledge_base, allow_no_indices=False))
    except (TransportError, ConnectionError) as err:
        return f"does not answer ({type(err).__name__}: {err})"
    except ApiError as err:
        return f"refused to say whether {knowledge_base} exists ({cluster_error(err)})"
    try:
        if exists:
            es.count(index=knowledge_base)
        else:  # a create is only possible, not done: the privilege is asked for where security is on
            es.indices.exists(index=f"{knowledge_base}-*", allow_no_indices=True)
    except ApiError as err:
        verb = "read" if exists else "see indices named like"
        return f"refused to {verb} {knowledge_base} ({cluster_error(err)})"
    except (TransportError, ConnectionError) as err:
        return f"does not answer ({type(err).__name__}: {err})"
    return None


def _version(es: Elasticsearch) -> str:
    """The local node's version (GET / is not served by every distribution, the integ-test one
    lacks it: ask the nodes); "unknown" where a key may not monitor the cluster."""
    try:
        nodes = es.nodes.info(node_id="_local", filter_path="nodes.*.version")
    except ApiError as err:
        if getattr(err, "status_code", None) in (401, 403):
            return "unknown"
        raise
    except (TransportError, ConnectionError) as err:
        raise ElasticsearchUnavailableError(
            f"Elasticsearch unreachable while reading cluster info: {err}"
        ) from err
    return next(iter(nodes["nodes"].values()))["version"]


def detect_features(es: Elasticsearch, inference_id: str | None) -> EsFeatures:
    version = _version(es)
    try:
        es.indices.analyze(analyzer="english", text="probe")
        english = True
    except ApiError:
        english = False
    has_inference = False
    if inference_id:
        try:
            es.perform_request("GET", f"/_inference/{inference_id}", headers={"accept": "application/json"})
            has_inference = True
        except ApiError:
            has_inference = False
    rrf = _supports_rrf(es)
    features = EsFeatures(version, english, inference_id if has_inference else None, rrf)
    log.info(
        "Elasticsearch %s: analyzer %s, semantic field %s, hybrid %s",
        features.version,
        features.analyzer,
        f"semantic_text ({features.inference_id})"
        if features.inference_id
        else "dense_vector (client-side embeddings) or none",
        "rrf retriever" if rrf else "client-side reciprocal rank fusion",
    )
    return features


def _supports_rrf(es: Elasticsearch) -> bool:
    """An rrf search on no index: unknown retriever -> 400 parsing error; known -> any other answer."""
    try:
        es.search(
            index="rag-eval-feature-probe-*",
            retriever={"rrf": {"retrievers": [{"standard": {"query": {"match_all": {}}}}] * 2}},
            allow_no_indices=True,
            size=0,
        )
        return True
    except ApiError as err:
        return "unknown retriever" not in str(err)
