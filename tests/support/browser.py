"""What the browser tests share: Debian's Chromium driven by Playwright, page sizes, waits in a page (Chromium's or
another engine's), and the host console's steps.

The ``browser`` and ``served`` fixtures are in ``tests/conftest.py``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.apps import HOST_PASSWORD
from tests.support.browser_engines import EnginePage
from tests.support.machine import unavailable

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
PHONE = {"width": 390, "height": 844}
LAPTOP = {"width": 1366, "height": 900}
HD = {"width": 1280, "height": 720}
FULL_HD = {"width": 1920, "height": 1080}
WAIT_MS = 15_000
PLAYERS = [
    {"name": "Mina", "kind": "human", "age": 10, "stage": "concrete"},
    {"name": "Grace", "kind": "human", "age": 31},
    {"name": "Agent", "kind": "ai"},
]


def screenshot_dir(tmp_path: Path) -> Path:
    """Where screenshots go: VTT_SCREENSHOTS when a person wants to look at them."""
    return Path(os.environ.get("VTT_SCREENSHOTS") or tmp_path)


class TestBrowser:
    """Chromium whose pages let a test wait on a JavaScript expression: Playwright evaluates a string predicate
    with ``eval``, which the app's Content-Security-Policy forbids.  tests/test_access.py opens its pages with
    ``bypass_csp=False`` and checks that the pages themselves need nothing the policy forbids."""

    __test__ = False  # not a test class

    def __init__(self, browser):
        self._browser = browser

    def new_page(self, **options):
        return self._browser.new_page(**{"bypass_csp": True, **options})

    def new_context(self, **options):
        return self._browser.new_context(**{"bypass_csp": True, **options})

    def __getattr__(self, name: str):
        return getattr(self._browser, name)


@contextmanager
def launched_chromium(*extra_args: str) -> Iterator[TestBrowser]:
    """Debian's Chromium through Playwright (required when CI=true) with ``extra_args``, closed on exit."""
    from playwright.sync_api import sync_playwright

    if not os.path.exists(CHROMIUM):
        unavailable(f"no {CHROMIUM}: install Debian's chromium to run the browser tests (make test installs it)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, *extra_args])
        yield TestBrowser(chromium)
        chromium.close()


def wait_in_page(page, script: str) -> None:
    """Until the expression ``script`` is truthy in the page (WAIT_MS at most): a Playwright page or an
    ``EnginePage``."""
    if isinstance(page, EnginePage):
        page.wait_for(script, timeout=WAIT_MS / 1000)
    else:
        page.wait_for_function(script, timeout=WAIT_MS)


def wait_connected(page, says: str = "Connected") -> None:
    """Until the live page's connection line says ``says`` (its Socket.IO connection is up)."""
    wait_in_page(page, f"document.getElementById('connection')?.textContent === {json.dumps(says)}")


def no_sideways_scroll(page) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"], f"{page.url} is {width} px wide"


def page_text(page) -> str:
    return page.inner_text("main")


def host_step(host, label: str) -> None:
    """Press the flow button ``label`` (the console shows only the moves the host's status lists) and wait for
    its ack.  "Done." shows only a moment, so a watcher set before the click notes it (a slow test thread may
    look after it has gone)."""
    host.evaluate(
        """() => {
          const state = document.getElementById('flow-state');
          window.vttStepDone = false;
          window.vttStepWatch?.disconnect();
          window.vttStepWatch = new MutationObserver(() => {
            if (state.textContent === 'Done.') window.vttStepDone = true;
          });
          window.vttStepWatch.observe(state, { childList: true, characterData: true, subtree: true });
        }"""
    )
    host.get_by_role("button", name=label, exact=True).click()
    host.wait_for_function("window.vttStepDone === true", timeout=WAIT_MS)
    host.evaluate("document.getElementById('flow-state').textContent = ''")


def host_console(browser, url: str, people):
    """The host's live console of ``people``'s session, signed in, at the first step."""
    host = browser.new_page(viewport=LAPTOP)
    host.goto(f"{url}/host/login?next=/host/sessions/{people.session_id}/live")
    host.fill("#password", HOST_PASSWORD)
    host.click("button[type=submit]")
    host.wait_for_selector("#flow button[data-action=open_lobby]", timeout=WAIT_MS)
    return host
