"""Knowledge-base health: which questions the documents cannot answer, which documents are out
of date, and whether the judgement list looks like real traffic (pure: no Dagster, no network)."""
