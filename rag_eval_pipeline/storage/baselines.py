"""Named baselines: ``baselines.json`` beside the instance's artifacts maps a name (``main``) to
the run it pins, so a pull request's evaluation is compared with the same run every time,
whatever was evaluated since. Written under a lock, replaced in one rename."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from rag_eval_pipeline.common.files import exclusive, write_atomically

BASELINES_FILE = "baselines.json"
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
RESERVED = frozenset({"current"})  # `diff main current`: the latest of the baseline's model


class BaselineError(ValueError):
    """A baseline name that cannot be used, or a damaged baselines file: said with the remedy."""


@dataclass(frozen=True)
class Baseline:
    """A pinned run, with what it must share with every evaluation compared to it."""

    name: str
    model: str
    run_id: str
    judgement_list: str | None
    judges: tuple[str, ...]
    set_at: str


class BaselineStore:
    def __init__(self, folder: Path) -> None:
        self.path = Path(folder) / BASELINES_FILE

    def all(self) -> dict[str, Baseline]:
        if not self.path.exists():
            return {}
        try:
            raw = json.loads(self.path.read_text())
            return {
                name: Baseline(**{**entry, "judges": tuple(entry["judges"])}) for name, entry in raw.items()
            }
        except (ValueError, TypeError, KeyError, AttributeError) as err:
            raise BaselineError(
                f"{self.path} is unreadable ({type(err).__name__}: {err}): delete it and set the "
                "baselines again (`rag-eval baseline set NAME RUN`)"
            ) from None

    def get(self, name: str) -> Baseline | None:
        return self.all().get(name)

    def set(self, baseline: Baseline) -> None:
        if not NAME.match(baseline.name) or baseline.name in RESERVED:
            raise BaselineError(
                f"'{baseline.name}' cannot name a baseline: letters, digits, '.', '_' and '-', "
                f"up to 64, not {', '.join(sorted(RESERVED))}"
            )
        with exclusive(self.path, "changing the baselines"):
            baselines = {name: asdict(b) for name, b in self.all().items()}
            baselines[baseline.name] = asdict(baseline)
            write_atomically(
                self.path, lambda tmp: tmp.write_text(json.dumps(baselines, indent=2, sort_keys=True))
            )

    def remove(self, name: str) -> bool:
        with exclusive(self.path, "changing the baselines"):
            baselines = {n: asdict(b) for n, b in self.all().items()}
            if baselines.pop(name, None) is None:
                return False
            write_atomically(
                self.path, lambda tmp: tmp.write_text(json.dumps(baselines, indent=2, sort_keys=True))
            )
        return True
