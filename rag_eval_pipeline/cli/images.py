"""`rag-eval images check DIR`: the images of a documents folder as the image_catalog asset
sees them, one line per image and one per problem, before any run."""

from __future__ import annotations

import argparse
from pathlib import Path

from rag_eval_pipeline.cli.errors import CommandError, say


def handle_check(args: argparse.Namespace) -> int:
    from rag_eval_pipeline.data.images import image_catalog

    folder = Path(args.folder)
    if not folder.is_dir():
        raise CommandError(f"{folder} is not a folder: give the documents folder")
    try:
        catalog = image_catalog(folder)
    except ImportError as err:
        raise CommandError(str(err)) from None
    for info in catalog.images.values():
        if info.usable:
            captioned = "captioned" if info.caption else "no caption (not searchable by text)"
            say(f"{info.image_id}\t{info.type}\t{info.width}x{info.height}\t{info.sha256[:12]}\t{captioned}")
    problems = catalog.all_problems()
    for problem in problems:
        say(f"problem: {problem}")
    usable = sum(1 for i in catalog.images.values() if i.usable)
    say(f"({usable} of {len(catalog.images)} images usable; {len(problems)} problems)")
    return 1 if problems else 0
