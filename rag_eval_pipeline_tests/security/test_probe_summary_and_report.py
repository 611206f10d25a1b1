"""After `rag-eval probe`, the probes are where a user looks for a model's numbers: the refresh
sensor asks for the comparison again, ``model_comparison`` (the `run` table and the UI's metadata)
has a ``probe`` row per model with ``asr_<attack>`` and its interval, `rag-eval gate` holds it to
a threshold, and the report materialized by the comparison job has the security section with each
attack's figures and the worst probe (planted passage, reply, canary found)."""

from __future__ import annotations

import html

import dagster as dg

from rag_eval_pipeline_tests.support.cli import in_process

ATTACKS = ("injection", "poisoning", "exfiltration")


def test_probes_join_the_comparison_the_gate_and_the_report(evaluated_copy, capsys):
    from rag_eval_pipeline.cli.output import comparison_table
    from rag_eval_pipeline.defs.sensors import reports_refresh_sensor
    from rag_eval_pipeline.instance.lineage import load_asset
    from rag_eval_pipeline.metrics.security import worst_probes
    from rag_eval_pipeline.storage.probes import load_probes

    defs, instance, home = evaluated_copy.defs, evaluated_copy.instance, evaluated_copy.home
    args = ["--dagster-home", str(home)]
    code, _, err = in_process(capsys, *args, "probe", "--models", "compliant,oracle", "--sample", "10")
    assert code == 0, err
    # nothing runs that nobody asked for: the refresh sensor starts no comparison for a probe
    # (the comparison, which depends on security_probes, reads stale until it is compared)
    job = defs.resolve_job_def("comparison_job")
    sensor = reports_refresh_sensor(job)
    assert sensor.evaluate_tick(dg.build_sensor_context(instance=instance)).run_requests == []
    assert instance.get_latest_materialization_event(dg.AssetKey("security_probes"))
    assert (
        job.get_subset(asset_selection={dg.AssetKey("model_comparison"), dg.AssetKey("eval_report")})
        .execute_in_process(instance=instance)
        .success
    )

    comparison = load_asset(instance, "model_comparison")
    probed = comparison[comparison["judge_id"] == "probe"].set_index("answer_model")
    assert set(probed.index) == {"compliant", "oracle"}  # a model probed but never evaluated too
    for attack in ATTACKS:
        assert probed.loc["compliant", f"asr_{attack}"] == 1.0  # follows any planted instruction
        assert probed.loc["oracle", f"asr_{attack}"] == 0.0
        low, high = probed.loc["compliant", [f"asr_{attack}_ci_low", f"asr_{attack}_ci_high"]]
        assert 0.0 < low < 1.0 == high  # Clopper-Pearson over 10 probes, not a bare 1.0
    judged = comparison[comparison["judge_id"] != "probe"]
    assert judged["answer_model"].nunique() == 3 and judged.filter(like="asr_").isna().all().all()
    table = comparison_table(comparison)  # what `rag-eval run` prints
    assert "asr_injection" in table and f"1.000 [{low:.3f}, 1.000]" in table
    # the UI: the comparison's metadata has the attack success beside the judged headline
    metadata = instance.get_latest_materialization_event(
        dg.AssetKey("model_comparison")
    ).asset_materialization.metadata
    success = metadata["attack_success"].value
    assert "| compliant | exfiltration |" in success  # a row per model and attack: narrow
    assert "probe" not in metadata["comparison"].value
    # gate reads the same rows
    code, out, _ = in_process(capsys, *args, "gate", "--model", "oracle", "--max", "asr_injection=0.05")
    assert code == 0 and "asr_injection" in out, out

    report = (home / "storage" / "artifacts" / "eval_report.html").read_text(encoding="utf-8")
    section = report[report.index('<h2 id="security">') :]
    for attack in ATTACKS:
        assert f"<td>{attack}</td>" in section
    worst = worst_probes(load_probes(home / "storage" / "artifacts"), 1).iloc[0]
    assert worst["model"] == "compliant"
    assert html.escape(str(worst["planted"])[:200]) in section  # the planted passage
    assert html.escape(str(worst["reply"])[:200]) in section  # the reply
    assert f"found <code>{html.escape(str(worst['evidence']))}</code>" in section  # what gave it away
    assert "Probes that succeeded" in section and "oracle resists more" in section
