"""What a failing cluster raises, importable without the Elasticsearch client (the command line
names it among the errors a user can fix)."""


class ElasticsearchUnavailableError(RuntimeError):
    """The cluster cannot be reached or answered with an error; the message says which."""
