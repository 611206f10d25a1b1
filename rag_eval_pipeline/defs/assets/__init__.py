"""The asset graph, a module per group: the knowledge base, one answer model's evaluation, the
reports across models, and the Elasticsearch indices for dashboards."""
