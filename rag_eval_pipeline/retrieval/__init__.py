"""The knowledge base: the retrieval modes, the ``SearchBackend`` protocol and its embedded and
Elasticsearch implementations, and the one mapping of a mode to a search (``modes.py``)."""
