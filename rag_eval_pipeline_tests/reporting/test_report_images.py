"""The bundled multimodal sample's report, whole wherever it is read: over `rag-eval ui`'s report
server each overlay's image is a display copy beside the report (a relative address, never
file://), and the `--single-file` copy, opened from an empty folder with the documents and the
instance moved away and every request refused, shows every overlay from inside itself. A model
that returned no boxes has its IoU absent ("–"), never 0.00; nothing logs an error."""

import contextlib
import re
import shutil

import pytest

from rag_eval_pipeline.cli.ui import serve_reports
from rag_eval_pipeline_tests.support.cli import rag_eval
from rag_eval_pipeline_tests.support.processes import free_port
from rag_eval_pipeline_tests.support.report_page import LAYOUT_PROBLEMS, open_report
from rag_eval_pipeline_tests.support.ui import browser_context

# each overlay's image loaded (its address fetched and decoded), by the address the page gave it
IMAGES_LOADED = """async () => Promise.all(
  [...document.querySelectorAll('figure.overlay svg image')].map(im =>
  new Promise(done => { const probe = new Image(); probe.onload = () => done(probe.naturalWidth > 0);
    probe.onerror = () => done(false); probe.src = im.href.baseVal; })))"""


@pytest.mark.slow  # a run of the sample (about half a minute) and a browser
def test_the_sample_reports_overlays_over_http_and_in_a_single_file_sent_alone(tmp_path):
    home = tmp_path / "home"
    # the home from DAGSTER_HOME: `rag-eval run` says where its report is all the same
    ran = rag_eval("run", "--dataset", "multimodal-sample", cwd=tmp_path, env={"DAGSTER_HOME": str(home)})
    assert ran.returncode == 0, ran.stderr[-3000:]
    artifacts = home / "storage" / "artifacts"
    assert f"report: {artifacts / 'eval_report.html'}" in ran.stdout
    text = (artifacts / "eval_report.html").read_text()
    assert "file://" not in text
    copies = sorted(p.name for p in (artifacts / "images").iterdir())
    assert len(copies) == 4 and all(re.fullmatch(r"[0-9a-f]{16}-\d+\.(png|jpg)", c) for c in copies)
    single = tmp_path / "sent" / "report.html"
    single.parent.mkdir()
    made = rag_eval(
        "--dagster-home", str(home), "report", "--single-file", "--out", str(single), cwd=tmp_path
    )
    assert made.returncode == 0 and "4 image(s)" in made.stdout, made.stderr

    with contextlib.ExitStack() as stack:
        page = browser_context(stack).new_page()
        page.set_viewport_size({"width": 1440, "height": 900})
        server = serve_reports(artifacts, "127.0.0.1", free_port())
        stack.callback(server.server_close)
        stack.callback(server.shutdown)
        errors = open_report(page, f"http://127.0.0.1:{server.server_address[1]}/eval_report.html")
        loaded = page.evaluate(IMAGES_LOADED)
        assert len(loaded) == 5 and all(loaded)  # five labelled images (one plan holds two cases)
        assert page.locator(".image-missing").count() == 0
        # IoU: absent for the models that returned no boxes, a number for the one that did
        for table in page.locator("figure.overlay table").all():
            for row in table.locator("tbody tr").all():
                model, _, best, value = row.locator("td").all_inner_texts()
                if model == "oracle":
                    assert value == "1.00"
                else:
                    assert (best, value) == ("no boxes returned", "–")
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        assert page.evaluate(LAYOUT_PROBLEMS) == []
        assert errors == []

        # sent alone: the instance and the documents moved away, every request but the file refused
        shutil.move(home, tmp_path / "elsewhere")
        requested: list[str] = []
        page.route("**/*", lambda route: route.continue_() if route.request.url == single.as_uri()
                   else (requested.append(route.request.url), route.abort()))  # fmt: skip
        errors = open_report(page, single.as_uri())
        loaded = page.evaluate(IMAGES_LOADED)
        assert len(loaded) == 5 and all(loaded)
        assert all(
            href.startswith("data:image/")
            for href in page.eval_on_selector_all(
                "figure.overlay svg image", "e => e.map(i => i.href.baseVal)"
            )
        )
        assert page.locator(".image-missing").count() == 0
        page.locator("#trend").scroll_into_view_if_needed()
        page.wait_for_selector(".main-svg")  # plotly.js from inside the copy too
        assert requested == [] and errors == []


def test_a_large_image_is_shown_as_a_smaller_copy_and_its_original_size_is_said(tmp_path):
    from PIL import Image

    from rag_eval_pipeline.reporting.images import DISPLAY_WIDTH, display_image

    source = tmp_path / "scan.png"
    Image.new("RGB", (2400, 1200), "white").save(source)
    shown = display_image(source)
    assert shown.original == (2400, 1200) and shown.shown == (DISPLAY_WIDTH, DISPLAY_WIDTH // 2)
    assert shown.path.startswith("images/") and shown.path.endswith(f"-{DISPLAY_WIDTH}.jpg")
    with Image.open(__import__("io").BytesIO(shown.make())) as copy:
        assert copy.size == shown.shown
    small = tmp_path / "icon.png"
    Image.new("RGBA", (64, 32)).save(small)
    kept = display_image(small)
    assert kept.shown == kept.original == (64, 32) and kept.path.endswith("-64.png")
