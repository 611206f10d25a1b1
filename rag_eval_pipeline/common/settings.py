"""The one base of every settings section: a key the schema does not know is refused, with its
name, instead of being ignored (a typo would otherwise be a setting silently left at its
default). Where sections live is said in docs/contributing.md."""

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")
