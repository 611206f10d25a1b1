"""Resources: configuration plus a factory for each external system, one module each. Every
resource takes its settings from ``SettingsResource`` (one route from ``rag_eval.yaml``); only
secrets are bound separately, with ``dg.EnvVar``."""

from rag_eval_pipeline.defs.resources.documents import DocumentsResource
from rag_eval_pipeline.defs.resources.elasticsearch import ElasticsearchResource
from rag_eval_pipeline.defs.resources.evaluation_lock import EvaluationLockResource
from rag_eval_pipeline.defs.resources.history import HistoryResource
from rag_eval_pipeline.defs.resources.knowledge_base import KnowledgeBaseResource
from rag_eval_pipeline.defs.resources.llm import LLMResource
from rag_eval_pipeline.defs.resources.monitoring import MonitoringResource
from rag_eval_pipeline.defs.resources.settings import SettingsResource
from rag_eval_pipeline.defs.resources.tracing import PhoenixResource, TracingResource

__all__ = [
    "DocumentsResource",
    "ElasticsearchResource",
    "EvaluationLockResource",
    "HistoryResource",
    "KnowledgeBaseResource",
    "LLMResource",
    "MonitoringResource",
    "PhoenixResource",
    "SettingsResource",
    "TracingResource",
]
