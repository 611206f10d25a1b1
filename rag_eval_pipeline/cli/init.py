"""`rag-eval init`: write the commented example configuration (every setting, its default)."""

from __future__ import annotations

import argparse
from pathlib import Path

from rag_eval_pipeline.cli.errors import CommandError
from rag_eval_pipeline.config import example_config


def handle(args: argparse.Namespace) -> int:
    target = Path(args.path)
    if target.exists():
        raise CommandError(f"{target} exists; not overwriting it")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(example_config())
    print(f"wrote {target}: edit it, then `rag-eval --config {target} run`")
    return 0
