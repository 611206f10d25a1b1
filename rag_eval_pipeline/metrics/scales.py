"""What a stored metric's values may be: the one declaration per metric that the judge writing it
and the blocking checks reading it both use. A judge whose verdicts are each on the 0 / 0.5 / 1
scale but whose stored value aggregates several of them (per image, per claim, per turn) declares
the aggregate on [0, 1] and its verdicts' scale apart, so two images judged 1 and 0.5 (a mean of
0.75) are a valid row, and the verdicts themselves are still held to their scale."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # tables pass through; pandas is imported where a function needs it
    import pandas as pd

THREE_POINT_VALUES = (0.0, 0.5, 1.0)


class Scale(str, Enum):
    THREE_POINT = "0, 0.5 or 1"
    UNIT = "[0, 1]"

    def accepts(self, value: float) -> bool:
        if self is Scale.THREE_POINT:
            return float(value) in THREE_POINT_VALUES
        return 0.0 <= float(value) <= 1.0


@dataclass(frozen=True)
class MetricScale:
    """A metric's stored scale and, when the stored value aggregates verdicts, what each verdict
    is about (``item``: "image") and the verdicts' own scale."""

    stored: Scale
    item: str | None = None
    item_scale: Scale | None = None

    @property
    def aggregates(self) -> bool:
        return self.item is not None


THREE_POINT = MetricScale(Scale.THREE_POINT)
UNIT = MetricScale(Scale.UNIT)


def per_item(item: str, item_scale: Scale = Scale.THREE_POINT) -> MetricScale:
    """A metric stored as the mean of its verdicts on each ``item``: on [0, 1] whatever the
    verdicts' scale."""
    return MetricScale(Scale.UNIT, item, item_scale)


def three_point_of(scales: Mapping[str, MetricScale]) -> tuple[str, ...]:
    """The metrics whose stored values take exactly 0, 0.5 or 1."""
    return tuple(m for m, s in scales.items() if s.stored is Scale.THREE_POINT)


def item_verdict_counts(judge_scores: pd.DataFrame) -> pd.DataFrame:
    """The stored per-item verdicts summarised: a row per judge and metric with how many items
    were judged, how many got each verdict, and their mean (the mean over items, where the
    metric's own mean is over cases). Empty when no judge keeps verdicts apart."""
    import pandas as pd

    from rag_eval_pipeline.metrics.schema import ITEM_VERDICTS

    columns = ["judge_id", "metric", "items", *(f"{v:g}" for v in THREE_POINT_VALUES), "mean"]
    if ITEM_VERDICTS not in judge_scores:
        return pd.DataFrame(columns=columns)
    found: dict[tuple[str, str], list[float]] = {}
    for judge_id, kept in zip(judge_scores["judge_id"], judge_scores[ITEM_VERDICTS]):
        if not isinstance(kept, str):
            continue
        for metric, items in json.loads(kept).items():
            found.setdefault((str(judge_id), metric), []).extend(float(v) for v in items.values())
    rows = [
        [judge_id, metric, len(v), *(v.count(t) for t in THREE_POINT_VALUES), round(sum(v) / len(v), 4)]
        for (judge_id, metric), v in sorted(found.items())
        if v
    ]
    return pd.DataFrame(rows, columns=columns)
