"""Judges: one protocol (``Judge``), one registry (``JudgeRegistry``), one module per kind, and
the call/re-ask engine of the LLM judges. Formulas and aggregation stay in ``metrics/``."""
