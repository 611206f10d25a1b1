"""`python -m rag_eval_pipeline.cli`: the same as the `rag-eval` script."""

import sys

from rag_eval_pipeline.cli import entry

sys.exit(entry())
