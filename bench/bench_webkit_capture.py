"""How long WebKitGTK takes to answer a page's questions for capture devices (``enumerateDevices()``, then
``getUserMedia({audio: true})``), on a fresh user's caches or warm ones.

    python bench/bench_webkit_capture.py [--fresh] [--runs 1]

Each run starts the WebKit of the engines' tests (tests/support/browser_engines.py: Xvfb, WebKitWebDriver,
MiniBrowser), which asks the browser's first question for capture devices as it starts (``warm_up``: its seconds
and the devices found), then opens a page served from 127.0.0.1 in two windows one after the other and times each
question there from the page's own clock.  ``--fresh``: each run under a new, empty HOME and XDG cache and data
folders (no GStreamer registry, no Mesa shader cache, no WebKit caches), as on a machine that never ran the browser;
the real HOME's caches are not touched; with ``--evict``, also WebKit's and GStreamer's libraries (and what they
link) dropped from the page cache first, as a disk's first read.  ``--no-warm-up``: the browser starts without its
first question, so the first window's are the first (as before 2026-11-28).  Prints one JSON line per run.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.browser_engines import WebKitBrowser, serve_blank_page, start_engine

# Started in the page, read by polling: a question may outlast the driver's script timeout.
ASK = """(what) => {
  const started = performance.now();
  window.__asked = null;
  const ask = what === "devices" ? navigator.mediaDevices.enumerateDevices()
    : navigator.mediaDevices.getUserMedia({ audio: true });
  ask.then(
    (value) => { window.__asked = { ms: performance.now() - started,
      answer: Array.isArray(value) ? value.map((d) => d.kind) : "stream" }; },
    (error) => { window.__asked = { ms: performance.now() - started, answer: error.name }; });
  return true;
}"""


def ask(page, what: str, timeout: float = 240) -> dict:
    page.evaluate(ASK, what)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        answer = page.evaluate("window.__asked")
        if answer:
            return {"ms": round(answer["ms"]), "answer": answer["answer"]}
        time.sleep(0.1)
    return {"ms": None, "answer": f"no answer in {timeout} s"}


def evict_from_page_cache() -> None:
    """WebKit's and GStreamer's files, and the libraries they link, out of the page cache (the pages of a file that
    a running process maps stay)."""
    roots = [
        *glob.glob("/usr/lib/*/gstreamer-1.0/*.so"),
        *glob.glob("/usr/lib/*/gstreamer1.0/gstreamer-1.0/*"),
        *glob.glob("/usr/lib/*/webkit2gtk-4.*/*"),
        *glob.glob("/usr/lib/*/libwebkit2gtk*"),
        *glob.glob("/usr/lib/*/libjavascriptcore*"),
    ]
    files = {os.path.realpath(root) for root in roots if os.path.isfile(root)}
    for root in list(files):
        linked = subprocess.run(["ldd", root], capture_output=True, text=True).stdout
        files.update(os.path.realpath(line.split()[2]) for line in linked.splitlines() if " => /" in line)
    for path in files:
        descriptor = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(descriptor)


def one_run(url: str) -> dict:
    started = time.monotonic()
    browser = start_engine("webkit")
    figures = {"browser_start_s": round(time.monotonic() - started, 2), "warm_up": browser.capture}
    try:
        for window in ("first", "second"):
            page = browser.new_page(390, 844)
            page.goto(url)
            figures[f"{window}_devices"] = ask(page, "devices")
            figures[f"{window}_microphone"] = ask(page, "microphone")
            page.close()
    finally:
        browser.quit()
    figures["total_s"] = round(time.monotonic() - started, 2)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fresh", action="store_true", help="each run under a new, empty HOME")
    parser.add_argument("--evict", action="store_true", help="drop WebKit's and GStreamer's files from the page cache")
    parser.add_argument("--no-warm-up", action="store_true", help="no first question as the browser starts")
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    if args.no_warm_up:
        WebKitBrowser.warm_capture = lambda browser: {"skipped": True}
    server = serve_blank_page()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    for _ in range(args.runs):
        home = tempfile.mkdtemp(prefix="vtt-fresh-home-") if args.fresh else None
        saved = {name: os.environ.get(name) for name in ("HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME")}
        if home:
            os.environ["HOME"] = home
            os.environ["XDG_CACHE_HOME"] = f"{home}/.cache"  # Mesa's shader cache goes by the passwd entry without it
            os.environ["XDG_DATA_HOME"] = f"{home}/.local/share"
        if args.evict:
            evict_from_page_cache()
        try:
            figures = one_run(url)
            if home:
                figures["caches_made"] = sorted(
                    str(path.relative_to(home)) for path in Path(home).glob("*/*/*") if path.is_dir() or path.is_file()
                )[:20]
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
            if home:
                shutil.rmtree(home, ignore_errors=True)
        print(json.dumps({"fresh": args.fresh, "evict": args.evict, **figures}), flush=True)
    server.shutdown()


if __name__ == "__main__":
    main()
