"""The host pages in a real Chromium (Debian's, driven by Playwright)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from werkzeug.serving import make_server

from vtt.banks import import_bank, read_bank
from tests.conftest import DATA, HOST_PASSWORD, IN_CI

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]

pytestmark = pytest.mark.browser


def screenshot_dir(tmp_path: Path) -> Path:
    """Where screenshots go: VTT_SCREENSHOTS when a person wants to look at them."""
    return Path(os.environ.get("VTT_SCREENSHOTS") or tmp_path)


@pytest.fixture
def live_url(app, db):
    import_bank(db, read_bank(DATA / "spec_examples.csv"), "Spec examples")
    db.commit()
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    if not os.path.exists(CHROMIUM):
        if IN_CI:
            pytest.fail(f"{CHROMIUM} is required when CI=true (make test installs it)")
        pytest.skip(f"no {CHROMIUM}: install Debian's chromium to run the browser tests")

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.mark.parametrize("viewport", [{"width": 390, "height": 844}, {"width": 1366, "height": 900}],
                         ids=["phone", "laptop"])
def test_host_signs_in_and_browses_a_bank(browser, live_url, viewport, tmp_path):
    page = browser.new_page(viewport=viewport)
    requests = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(f"{live_url}/host/")
    assert page.locator("h1").inner_text() == "Host login"
    page.fill("#password", "wrong")
    page.click("button[type=submit]")
    assert page.locator("[role=alert]").inner_text() == "Wrong password."
    page.fill("#password", HOST_PASSWORD)
    page.click("button[type=submit]")
    page.click("text=Spec examples")
    assert page.locator("#balance").is_visible()
    assert page.locator('[data-element="Character"] .bar-count').inner_text() == "5"
    page.fill("input[name=element]", "Grasping")
    page.click("text=Filter")
    assert page.locator("#match-count").inner_text().startswith("2 questions match")
    assert page.locator("tr[data-qid]").count() == 2
    # Nothing overflows sideways on a phone, and nothing was fetched from outside.
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    assert all(url.startswith(live_url) for url in requests)
    page.screenshot(path=str(screenshot_dir(tmp_path) / f"bank-{viewport['width']}.png"), full_page=True)
    page.close()
