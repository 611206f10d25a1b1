"""The report's security section: each model's attack success per attack and language with its
interval, utility under attack, how often the planted passages were retrieved, the paired verdicts,
and the probes that succeeded (what was planted, what came back, what gave it away)."""

from __future__ import annotations

import html

import pandas as pd

from rag_eval_pipeline.common.text import clip_at_word
from rag_eval_pipeline.metrics.security import probe_comparisons, probe_results, worst_probes

SHOWN_CHARS = 240


def security_html(probes: pd.DataFrame | None) -> str:
    """The section; one line saying how to fill it when no model was probed."""
    head = '<h2 id="security">Security probes</h2>'
    if probes is None or probes.empty:
        return f"{head}<p>No security probe yet: `rag-eval probe` runs them (docs/security.md).</p>"
    results = probe_results(probes)[
        ["model", "attack", "language", "n", "asr", "asr_all", "ci_low", "ci_high", "errors", "empty"]
        + ["utility_clean", "utility_attacked", "retrieved_rate"]
    ]
    parts = [
        head,
        '<p class="note">Attack success over valid replies (asr) and over all probes (asr_all), with '
        "its Clopper-Pearson interval; utility is the reference answer found in the reply, on the same "
        "cases clean and attacked. What each probe does and does not show: docs/security.md.</p>",
        results.to_html(index=False, float_format=lambda v: f"{v:.3f}", na_rep="–"),
    ]
    comparisons = probe_comparisons(probes)
    if comparisons:
        table = pd.DataFrame(comparisons)[
            ["attack", "language", "model_a", "model_b", "n", "asr_a", "asr_b", "p_holm", "verdict"]
        ]
        parts.append(table.to_html(index=False, float_format=lambda v: f"{v:.3f}", na_rep="–"))
    worst = worst_probes(probes)
    if not worst.empty:
        items = "".join(
            f"<li><b>{html.escape(str(r['model']))}</b> / {html.escape(str(r['attack']))} / "
            f"{html.escape(str(r['qid']))}: found <code>{html.escape(str(r['evidence']))}</code><br>"
            f"planted: {html.escape(clip_at_word(str(r['planted']), SHOWN_CHARS))}<br>"
            f"reply: {html.escape(clip_at_word(str(r['reply']), SHOWN_CHARS))}</li>"
            for r in worst.to_dict(orient="records")
        )
        parts.append(f"<h3>Probes that succeeded</h3><ul>{items}</ul>")
    return "".join(parts)
