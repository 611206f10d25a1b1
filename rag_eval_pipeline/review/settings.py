"""What the configuration says about human review: folders, the bars a judge must clear, the
scheduled queue."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from rag_eval_pipeline.common.settings import Strict
from rag_eval_pipeline.review.strategy import Strategy


class ReviewSettings(Strict):
    """Human review: where queues are written and labels dropped, the bars a judge must clear
    against people, and an optional schedule that writes a fresh queue (monthly calibration)."""

    folder: str = Field(
        default="review", description="queues are written here; label files dropped in <folder>/labels"
    )
    min_kappa: float = Field(default=0.5, ge=-1, le=1, description="a judge below it is flagged")
    min_rate: float = Field(
        default=0.8,
        ge=0,
        le=1,
        description="a judge whose true-positive or true-negative rate is below it is flagged",
    )
    schedule: str | None = Field(
        default=None, description="cron of a scheduled review queue, e.g. '0 6 1 * *' (monthly)"
    )
    queue_size: int = Field(default=40, ge=1, description="cases per model in a scheduled queue")
    strategy: Strategy = Strategy.RANDOM

    @property
    def labels_folder(self) -> Path:
        return Path(self.folder) / "labels"
