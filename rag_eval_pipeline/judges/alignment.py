"""Judges aligned to a team's reviewers: a STRICT judge's prompt with few-shot examples drawn from
labelled cases where judge and reviewer disagreed (the training half only), kept as a new prompt
version of that judge only when it agrees with people better on the held-out half. Versions live
in the instance's storage (``judge_prompts.json``); the newest adopted one is the judge's prompt
in later runs unless ``judge_prompts: {JUDGE: base}`` (or another version) pins one."""

from __future__ import annotations

import hashlib
import html
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from rag_eval_pipeline.common.files import exclusive, write_text_atomically

BASE = "base"  # the judge's own prompt, always selectable
PROMPTS_FILE = "judge_prompts.json"


@dataclass(frozen=True)
class Example:
    """A labelled case shown to the judge with the score people gave it."""

    question: str
    ground_truth: str
    answer: str
    metric: str
    people: float


@dataclass(frozen=True)
class PromptVersion:
    """An aligned prompt of one judge: its examples and the held-out figures that adopted it."""

    judge_id: str
    version: str
    examples: tuple[Example, ...]
    held_out: Mapping[str, float]

    def block(self) -> str:
        """The examples as the judge reads them, after its rubric."""
        shown = "\n".join(
            f"<example><question>{html.escape(e.question)}</question>"
            f"<ground_truth>{html.escape(e.ground_truth)}</ground_truth>"
            f"<answer>{html.escape(e.answer)}</answer>"
            f'<people_scored metric="{e.metric}">{e.people:g}</people_scored></example>'
            for e in self.examples
        )
        return (
            "\n\nThis team's reviewers scored these cases; where your reading differs from theirs, "
            f"score as they do:\n<examples>\n{shown}\n</examples>"
        )


def agrees_better(current_kappa: float, candidate_kappa: float) -> bool:
    """Whether a candidate prompt's held-out weighted kappa beats the current prompt's. An
    undefined candidate kappa never does; an undefined current kappa (the judge said one thing on
    every held-out case) counts as 0, agreement no better than chance, so a candidate must show
    some: a constant judge is not beaten by one that agrees with people less often than chance."""
    if math.isnan(candidate_kappa):
        return False
    return candidate_kappa > (0.0 if math.isnan(current_kappa) else current_kappa)


def version_id(base_version: str, examples: Sequence[Example]) -> str:
    """A version named by its content: the same examples give the same version."""
    digest = hashlib.sha256(json.dumps([asdict(e) for e in examples], sort_keys=True).encode()).hexdigest()
    return f"{base_version}+aligned-{digest[:8]}"


@dataclass(frozen=True)
class PromptStore:
    """The adopted prompt versions of every judge, in one JSON file of the storage folder."""

    folder: Path

    @property
    def path(self) -> Path:
        return self.folder / PROMPTS_FILE

    def versions(self, judge_id: str) -> list[PromptVersion]:
        if not self.path.is_file():
            return []
        stored = json.loads(self.path.read_text()).get(judge_id, [])
        return [
            PromptVersion(
                judge_id, v["version"], tuple(Example(**e) for e in v["examples"]), v.get("held_out", {})
            )
            for v in stored
        ]

    def adopt(self, version: PromptVersion) -> None:
        """Add a version: read, changed and written under the file's lock (two adoptions at
        once keep both), written whole aside and renamed (never half a file)."""
        with exclusive(self.path, "adopting a judge prompt"):
            stored = json.loads(self.path.read_text()) if self.path.is_file() else {}
            kept = [v for v in stored.get(version.judge_id, []) if v["version"] != version.version]
            stored[version.judge_id] = [*kept, asdict(version) | {"held_out": dict(version.held_out)}]
            write_text_atomically(self.path, json.dumps(stored, indent=1))

    def chosen(self, judge_id: str, pinned: str | None = None) -> PromptVersion | None:
        """The prompt a judge uses: the pinned version, else the newest adopted; None: its own."""
        versions = self.versions(judge_id)
        if pinned == BASE or (pinned is None and not versions):
            return None
        if pinned is None:
            return versions[-1]
        found = next((v for v in versions if v.version == pinned), None)
        if found is None:
            known = ", ".join([BASE, *(v.version for v in versions)])
            raise ValueError(f"judge_prompts: {judge_id} has no prompt version {pinned} (known: {known})")
        return found
