"""LLM calls as plain data (requests that hash into cache keys, responses with usage), the
response cache, prices, and the adapters that talk to provider SDKs (``anthropic_client``)."""
