"""The knowledge base's resource: the configuration's ``knowledge_base`` section plus the
cluster, in front of ``retrieval.knowledge_base.KnowledgeBase``."""

import dagster as dg
from pydantic import Field, PrivateAttr

from rag_eval_pipeline.defs.kept import kept_for
from rag_eval_pipeline.defs.resources.elasticsearch import ElasticsearchResource
from rag_eval_pipeline.defs.resources.settings import SettingsResource, storage_folder
from rag_eval_pipeline.retrieval.base import Backend
from rag_eval_pipeline.retrieval.knowledge_base import KnowledgeBase
from rag_eval_pipeline.retrieval.pair_scores import PAIR_SCORES_FILE
from rag_eval_pipeline.retrieval.spec import KnowledgeBaseSpec

KB_INDEX_FOLDER = "kb_index"


class KnowledgeBaseResource(dg.ConfigurableResource):
    """Where the knowledge base lives, as ``knowledge_base.backend`` says: embedded on disk (BM25,
    plus vectors with an embedding model), under ``<DAGSTER_HOME>/storage/kb_index`` (a folder
    per content version: a rebuild never overwrites the live index), or in the cluster of
    ``elasticsearch``. The reranker's scores are kept by content in
    ``<DAGSTER_HOME>/storage/rerank_pair_scores.sqlite`` (with the response cache: ``cache.enabled``
    and ``cache.refresh`` apply to both): a pair scored once is never scored again."""

    settings: SettingsResource
    elasticsearch: ElasticsearchResource | None = Field(
        default=None, description="the cluster, when knowledge_base.backend is elasticsearch"
    )
    index_dir: str | None = Field(default=None, description="where embedded indexes are kept")

    _knowledge_base: KnowledgeBase | None = PrivateAttr(default=None)

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        root = self.index_dir or storage_folder(context) / KB_INDEX_FOLDER
        connect = self.elasticsearch.client if self.elasticsearch is not None else None
        indexes = kept_for(context.instance).indexes  # opened once by the runs of this instance
        cache = self.settings.settings.cache
        self._knowledge_base = KnowledgeBase(
            self.spec,
            root,  # type: ignore[arg-type]
            connect,
            embedded_indexes=indexes,
            pair_scores=storage_folder(context) / PAIR_SCORES_FILE if cache.enabled else None,
            refresh_pair_scores=cache.refresh,
        )

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        if self._knowledge_base is not None:
            self._knowledge_base.close()

    @property
    def spec(self) -> KnowledgeBaseSpec:
        return self.settings.settings.knowledge_base.spec()

    @property
    def in_elasticsearch(self) -> bool:
        return self.spec.backend is Backend.ELASTICSEARCH

    @property
    def knowledge_base(self) -> KnowledgeBase:
        if self._knowledge_base is None:
            raise ValueError("the knowledge base is opened when a run starts (setup_for_execution)")
        return self._knowledge_base
