"""Stand-ins for what cannot run here, shared by the tests and the benchmarks: a Messages-API
server (Anthropic) and a Chat Completions server (OpenAI), each scriptable for fault injection,
and the test agent: a RAG service of its own over the knowledge base."""
