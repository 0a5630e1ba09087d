"""A phone that sleeps, for the browser tests and bench/bench_comeback.py: its network link goes dead silently
(``SilentLink``), its page is hidden and frozen, and the host, whose link never sleeps, moves on meanwhile.

Engine-neutral: the link (any browser opens the app through ``link.url``), hiding and showing by the page's own
``visibilitychange`` (the visibility a script reads is overridden: a headless browser has no window to hide), a
``pageshow`` restored from the back-forward cache, a stub of the Screen Wake Lock.  ``page`` is a Playwright page
(Chromium) or an ``EnginePage`` (Firefox, WebKit: tests/support/browser_engines.py).  Freezing: Chromium through the
DevTools protocol; Firefox and WebKit offer no way to freeze a page (neither has the page lifecycle's freeze, nor a
driver command that stops a page's scripts), so there the page's main thread is held by a busy script for the sleep.
"""

from __future__ import annotations

import socket
import threading
import time

import socketio

from tests.support.apps import host_api_token
from tests.support.browser import wait_in_page
from tests.support.browser_engines import EnginePage
from tests.support.live import client_id
from tests.support.served import free_port


class SilentLink:
    """A link between a browser and the served app that can go dead silently, as a phone's does when it sleeps: the
    connections open at the cut stay open but carry nothing more (no reset, no close, so neither end notices until a
    timeout), while connections opened after it work."""

    def __init__(self, target_port: int):
        self.target_port = target_port
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._listener = socket.create_server(("127.0.0.1", self.port))
        self._lock = threading.Lock()
        self._open: list[dict] = []  # one per connection: {"dead": bool}
        self._stopped = False

    def __enter__(self) -> SilentLink:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *_exc) -> None:
        self._stopped = True
        self._listener.close()

    def cut(self) -> None:
        """From now on every connection open now carries nothing either way (its bytes are read and dropped)."""
        with self._lock:
            for connection in self._open:
                connection["dead"] = True

    def _accept(self) -> None:
        while not self._stopped:
            try:
                near, _ = self._listener.accept()
            except OSError:
                return
            try:
                far = socket.create_connection(("127.0.0.1", self.target_port))
            except OSError:  # the server has stopped
                near.close()
                continue
            connection = {"dead": False}
            with self._lock:
                self._open.append(connection)
            for source, sink in ((near, far), (far, near)):
                threading.Thread(target=self._pump, args=(source, sink, connection), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket, connection: dict) -> None:
        try:
            while data := source.recv(65536):
                if not connection["dead"]:
                    sink.sendall(data)
        except OSError:
            pass
        if not connection["dead"]:  # an end closed it: the other end hears of it (a dead link stays silent)
            for end in (source, sink):
                try:
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


# The page as a hidden tab or a locked phone shows it to its scripts, and as it is seen again; the moment it is seen
# is kept (performance.now()) with the moment `selector` first matches after it, for the reconnect time.
HIDE = """() => {
  Object.defineProperty(document, "visibilityState", { configurable: true, get: () => "hidden" });
  Object.defineProperty(document, "hidden", { configurable: true, get: () => true });
  document.dispatchEvent(new Event("visibilitychange"));
}"""
WATCH = """(selector) => {
  window.vttBackAt = null;
  window.vttSeenAt = null;
  const look = () => {
    if (window.vttBackAt !== null && window.vttSeenAt === null && document.querySelector(selector)) {
      window.vttSeenAt = performance.now();
    }
  };
  window.vttWatch?.disconnect();
  window.vttWatch = new MutationObserver(look);
  window.vttWatch.observe(document.body, { subtree: true, childList: true, attributes: true });
}"""
SHOW = """() => {
  delete document.visibilityState;
  delete document.hidden;
  window.vttBackAt = performance.now();
  document.dispatchEvent(new Event("visibilitychange"));
}"""
RESTORE = """() => {
  window.vttBackAt = performance.now();
  window.dispatchEvent(new PageTransitionEvent("pageshow", { persisted: true }));
}"""


# navigator.wakeLock as a page sees it, recording what the page asks ("request screen", "release") and when the
# browser takes a lock back by itself, as it does when the page is hidden ("lost").
WAKE_LOCK_STUB = """() => {
  window.vttWakeLock = [];
  const held = new Set();
  const wakeLock = {
    request: async (type) => {
      window.vttWakeLock.push(`request ${type}`);
      const listeners = [];
      const sentinel = {
        released: false, type,
        addEventListener: (name, listener) => { if (name === "release") listeners.push(listener); },
        end: (word) => {
          window.vttWakeLock.push(word);
          held.delete(sentinel);
          listeners.forEach((listener) => listener());
        },
        release: async () => sentinel.end("release"),
      };
      held.add(sentinel);
      return sentinel;
    },
  };
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "hidden") [...held].forEach((sentinel) => sentinel.end("lost"));
  });
  Object.defineProperty(Navigator.prototype, "wakeLock", { configurable: true, get: () => wakeLock });
}"""

# The stand-in for a freeze where the engine has none: from `after` ms on, the page's main thread is busy for `ms`, so
# none of its timers, events or socket messages runs meanwhile (they run after, late, as a thawed page's). Not at
# once: WebKit's driver answers the script that starts the hold only after the page's tasks queued by then.
HOLD = """(after, ms) => {
  setTimeout(() => {
    window.vttHeldFrom = performance.timeOrigin + performance.now();
    const end = performance.now() + ms;
    while (performance.now() < end);
  }, after);
}"""
HOLD_AFTER_MS = 200
HOLD_MS = 1500  # longer than the host's moves while the phone sleeps; under Firefox's slow-script warning (10 s)


class Host:
    """The host, from a script (``vtt host-token``), straight to the server: its link never sleeps."""

    def __init__(self, url: str, code: str):
        self.client = socketio.Client()
        self.client.connect(url, auth={"code": code, "role": "host", "host_token": host_api_token()})

    def __call__(self, action: str, **args) -> None:
        reply = self.client.call("host", {"id": client_id("h"), "action": action, **args}, timeout=10)
        assert reply["ok"], (action, reply)


def freeze(page, frozen: bool) -> None:
    """The page's scripts stop (no timer, no event, no socket message handled) until it is thawed, as a frozen tab or a
    sleeping phone's.  Chromium 156 headless accepts ``Page.setWebLifecycleState`` but keeps running the page (timers
    fire, no ``freeze`` event): the DevTools debugger's pause stops it for real.  Firefox, WebKit: held (``HOLD``),
    it thaws by itself; thawing waits for that (a script of the driver's runs only once the page's main thread is
    free)."""
    if isinstance(page, EnginePage):
        if frozen:
            page.evaluate(HOLD, HOLD_AFTER_MS, HOLD_MS)
            # Held by now: a held page answers nothing, so its hold cannot be polled for, only waited out.
            time.sleep(2 * HOLD_AFTER_MS / 1000)
        else:
            page.evaluate("true")
    elif frozen:
        cdp = page.context.new_cdp_session(page)
        paused = []
        cdp.on("Debugger.paused", lambda event: paused.append(event))
        cdp.send("Debugger.enable")
        cdp.send("Debugger.pause")  # at the page's next task: a timer of its own comes within a second
        deadline = time.monotonic() + 5
        while not paused and time.monotonic() < deadline:
            page.wait_for_timeout(50)  # Playwright's own wait: the event is delivered meanwhile
        assert paused, "the page did not stop"
        page.vtt_cdp = cdp
    else:
        page.vtt_cdp.send("Debugger.resume")
        page.vtt_cdp.send("Debugger.disable")
        page.vtt_cdp.detach()


def sleep_phone(page, link: SilentLink, *, hide: bool = True) -> None:
    if hide:
        page.evaluate(HIDE)
    freeze(page, True)
    link.cut()


def wake_phone(page, seen: str, *, restored: bool = False) -> float:
    """Thaw the page and show it (or restore it from the back-forward cache); ms until ``seen`` matches."""
    freeze(page, False)
    page.evaluate(WATCH, seen)
    page.evaluate(RESTORE if restored else SHOW)
    wait_in_page(page, "window.vttSeenAt !== null")
    return page.evaluate("window.vttSeenAt - window.vttBackAt")


def tap(page, selector: str) -> None:
    """A person's click on the first element matching ``selector``."""
    if isinstance(page, EnginePage):
        page.click(selector)
    else:
        page.locator(selector).first.click()
