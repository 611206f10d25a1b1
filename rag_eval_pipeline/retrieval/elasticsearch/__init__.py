"""The knowledge base in Elasticsearch: cluster probing, index build with alias swap, search,
and the records indices (judgement list, eval results)."""
