"""`images check`: the images of a documents folder."""

from __future__ import annotations

from rag_eval_pipeline.cli.commands import Commands, Handler, add_group


def register(commands: Commands) -> None:
    image_commands = add_group(commands, "images", "the images of a documents folder")
    check = image_commands.add_parser(
        "check",
        help="list each image with its size and type, and one line per problem",
        description="""Decodes every PNG, JPEG, GIF and WebP file of the folder and reads its images.jsonl
        captions: one line per image, one per problem (unreadable, too large, duplicate, a caption of no
        image); exit 1 when there is a problem.""",
    )
    check.add_argument("folder", help="the documents folder")
    check.set_defaults(handler=Handler("images", "handle_check"))
