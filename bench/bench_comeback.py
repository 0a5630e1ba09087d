"""A juror's phone that sleeps through the host's moves and comes back: how long until its page shows the session as
it is, from the moment it is seen again (``visibilitychange`` to visible, or ``pageshow`` from the back-forward cache).

    python bench/bench_comeback.py [--runs 5] [--long]

Each run: a fresh instance and ``python run.py`` (gevent), Debian's Chromium at 390x844 opening the juror's link
through tests/support/sleeping_phone.SilentLink, which goes dead silently while the phone sleeps (the socket stays
"open", as a sleeping phone's does).  Three ways back, each across a host move made while the page is hidden and frozen:

- ``short hide``: hidden a moment (a tab switch): the page probes its socket with a snapshot request, which the dead
  link never answers; it reconnects after the probe's 2 s;
- ``restored``: ``pageshow`` with ``persisted`` (the back-forward cache): a reconnect at once;
- ``long sleep`` (with ``--long``, 11 s per run): hidden past the page's long-sleep mark: a reconnect at once.

Without the page's own handling the transport notices a dead socket only at its ping timeout (25 + 20 s).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, PHONE, WAIT_MS
from tests.support.served import ServedApp
from tests.support.sleeping_phone import Host, SilentLink, sleep_phone, wake_phone

LONG_SLEEP_S = 11  # past static/js/awake.js's LONG_SLEEP_MS


def one_run(chromium, long: bool) -> dict[str, float]:
    from tests.support.live import make_session
    from vtt.db import make_db_factory, make_engine, upgrade

    folder = Path(tempfile.mkdtemp(prefix="vtt-comeback-"))
    url = f"sqlite:///{folder / 'vtt.db'}"
    os.environ.update({"VTT_INSTANCE_PATH": str(folder), "VTT_HOST_PASSWORD": "bench password", "DATABASE_URL": url})
    upgrade(url)
    engine = make_engine(url)
    people = make_session(make_db_factory(engine), rounds=1, per_round=1, jurors=1)
    engine.dispose()
    times = {}
    with ServedApp({"DATABASE_URL": url}) as app, SilentLink(app.port) as link:
        host = Host(app.url, people.code)
        phone = chromium.new_page(viewport=PHONE, bypass_csp=True)  # Playwright waits by eval (tests.support.browser)
        try:
            phone.goto(f"{link.url}/jury/{people.jurors['J1']}")
            phone.wait_for_function(
                "document.getElementById('connection').textContent === 'Connected'", timeout=WAIT_MS
            )
            for action in ("open_lobby", "start_round", "show_question", "open_answering", "close_answering"):
                host(action)
            sleep_phone(phone, link)
            host("reveal")
            times["short hide"] = wake_phone(phone, ".sheet-line")
            sleep_phone(phone, link, hide=False)
            host("open_vote")
            times["restored"] = wake_phone(phone, "#vote:not([hidden]) input[name=slot-1]", restored=True)
            if long:
                sleep_phone(phone, link)
                host("close_vote")
                phone.wait_for_timeout(LONG_SLEEP_S * 1000)
                times["long sleep"] = wake_phone(phone, "#vote .vote-closed")
        finally:
            host.client.disconnect()
            phone.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--long", action="store_true", help="also an 11 s sleep per run")
    options = parser.parse_args()
    from playwright.sync_api import sync_playwright

    runs = []
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for number in range(options.runs):
            runs.append(one_run(chromium, options.long))
            print(f"run {number + 1}: " + ", ".join(f"{way} {ms:.0f} ms" for way, ms in runs[-1].items()), flush=True)
        chromium.close()
    print("\nway back          median    worst   (ms, from seen again to the page showing the new phase)")
    for way in runs[0]:
        values = [run[way] for run in runs]
        print(f"{way:<16} {statistics.median(values):>7.0f} {max(values):>8.0f}")


if __name__ == "__main__":
    main()
