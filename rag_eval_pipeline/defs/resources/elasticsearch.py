"""An Elasticsearch cluster's address and credentials (the knowledge base's backend when the
configuration says ``knowledge_base.backend: elasticsearch``)."""

from typing import TYPE_CHECKING, Any

import dagster as dg
from pydantic import Field

if TYPE_CHECKING:  # the client is imported when a run uses a cluster: 0.3 s at every import otherwise
    from elasticsearch import Elasticsearch


class ElasticsearchResource(dg.ConfigurableResource):
    """URL or Cloud ID, API key or basic auth, TLS options. Secrets (and in deployments the
    address) are bound with ``dg.EnvVar``."""

    url: str | None = Field(default=None, description="e.g. https://es.internal:9200")
    cloud_id: str | None = None
    api_key: str | None = None
    username: str | None = None
    password: str | None = None
    verify_certs: bool = True
    ca_certs: str | None = Field(default=None, description="CA bundle path for TLS")
    request_timeout_s: float = 30.0

    def client(self) -> "Elasticsearch":
        from elasticsearch import Elasticsearch

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
