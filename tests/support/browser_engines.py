"""The pages' tests on the two engines besides Chromium, with nothing downloaded at run time: Debian's Firefox ESR
over WebDriver BiDi, and Debian's WebKitGTK (WebKitWebDriver driving its MiniBrowser under an Xvfb) over classic
WebDriver.  Both are driven through one small page interface, ``EnginePage``: open a page at a viewport size, click
(a real pointer gesture, trusted by the page), type, read, evaluate, wait, screenshot, and the page's script errors.

The ``engine`` fixture (tests/conftest.py) starts each browser once per test run and gives every test a fresh page.
"""

from __future__ import annotations

import base64
import glob
import http.server
import itertools
import json
import os
import queue
import re
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from tests.support.served import free_port
from tests.support.waiting import wait_until

ENGINES = ("firefox", "webkit")
FIREFOX = "firefox-esr"
WEBKIT_DRIVER = "WebKitWebDriver"
START_TIMEOUT = 60  # seconds for a browser to come up on a loaded machine
COMMAND_TIMEOUT = 60
STABLE_TIMEOUT = 5  # seconds a click waits for its element to stand still under the pointer
# WebKit's first question for capture devices, asked once as the browser starts (a fresh machine's took over a minute
# inside a test that allowed 45 s; warm, it answers in milliseconds: docs/benchmarks.md, 2026-11-28).
CAPTURE_WARMUP_TIMEOUT = 180

# Firefox's profile: a fake microphone granted without asking (its media stream is a tone), no first-run pages.
# Its autoplay rule is the shipped one (sound only after the person has touched the page).
FIREFOX_PREFS = {
    "media.autoplay.default": 1,  # Firefox's own default, kept whatever the remote agent would set: block audible
    "ui.useOverlayScrollbars": 1,  # as on a phone: a 390 px window lays out 390 px, not 378 beside a scrollbar
    "media.navigator.streams.fake": True,
    "media.navigator.permission.disabled": True,
    "browser.shell.checkDefaultBrowser": False,
    "datareporting.policy.dataSubmissionEnabled": False,
    "toolkit.telemetry.reportingpolicy.firstRun": False,
}

# What a page's script errors and policy refusals are, gathered by the page itself from its load on (WebKit's classic
# WebDriver has no log to read; Firefox's errors come from its log, the refusals from here).
ERROR_WATCH = """() => {
  if (window.__engineErrors) return;
  window.__engineErrors = [];
  window.addEventListener("error", (event) => window.__engineErrors.push(String(event.message)));
  window.addEventListener("unhandledrejection", (event) =>
    window.__engineErrors.push("unhandled rejection: " + String(event.reason && (event.reason.stack || event.reason))));
  window.__engineRefusals = [];  // the Content-Security-Policy's refusals (the pages run under the real policy)
  document.addEventListener("securitypolicyviolation", (event) =>
    window.__engineRefusals.push(`CSP refused ${event.blockedURI || "inline"} (${event.violatedDirective})`));
  const error = console.error.bind(console);
  console.error = (...args) => { window.__engineErrors.push(args.map(String).join(" ")); error(...args); };
}"""


def _die_with_the_tests() -> None:
    """In the child before it runs: the kernel stops it when the test run ends, however that ends (a killed pytest
    leaves no browser, driver or Xvfb behind)."""
    import ctypes
    import signal

    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class EngineUnavailable(RuntimeError):
    """The browser or its driver is not installed, or did not start."""


def missing_programs(engine: str) -> list[str]:
    if engine == "firefox":
        needed = [FIREFOX]
    else:
        needed = [WEBKIT_DRIVER, "Xvfb"]
        if not minibrowser():
            return [*(p for p in needed if not shutil.which(p)), "MiniBrowser (webkit2gtk-driver)"]
    return [program for program in needed if not shutil.which(program)]


def minibrowser() -> str | None:
    found = sorted(glob.glob("/usr/lib/*/webkit2gtk-4.*/MiniBrowser"))
    return found[-1] if found else None


def as_function(script: str) -> str:
    """A JavaScript function's source: ``script`` itself when it is one, else a function returning the expression."""
    if re.match(r"\s*(async\b|function\b|\([^()]*\)\s*=>|\w+\s*=>)", script):
        return script
    return f"() => ({script})"


def calling(script: str, args) -> str:
    """A function body that calls ``script`` with ``args`` and gives its (awaited) value as JSON."""
    return (
        f"return Promise.resolve(({as_function(script)})(...{json.dumps(list(args))}))"
        ".then((value) => JSON.stringify(value === undefined ? null : value));"
    )


def pointer_click(x: float, y: float) -> list[dict]:
    """A mouse press and release at a point of the viewport: the same actions in both protocols."""
    return [
        {
            "type": "pointer",
            "id": "mouse",
            "parameters": {"pointerType": "mouse"},
            "actions": [
                {"type": "pointerMove", "x": round(x), "y": round(y), "origin": "viewport"},
                {"type": "pointerDown", "button": 0},
                {"type": "pointerUp", "button": 0},
            ],
        }
    ]


def typing(text: str) -> list[dict]:
    keys = []
    for char in text:
        keys += [{"type": "keyDown", "value": char}, {"type": "keyUp", "value": char}]
    return [{"type": "key", "id": "keyboard", "actions": keys}]


class EnginePage:
    """One page (a tab or window) of an engine; the engine's own class sends the commands."""

    engine = ""

    # -- what each engine provides
    def _call(self, body: str):  # a function body run in the page, its value awaited; returns the value
        raise NotImplementedError

    def _perform(self, actions: list[dict]) -> None:
        raise NotImplementedError

    def _navigate(self, url: str) -> None:
        raise NotImplementedError

    def _png(self) -> bytes:
        raise NotImplementedError

    def set_viewport(self, width: int, height: int) -> None:
        raise NotImplementedError

    def errors(self) -> list[str]:
        """The page's script errors and console.error lines so far."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    # -- the same in both
    def goto(self, url: str) -> None:
        self._navigate(url)
        self.evaluate(ERROR_WATCH)

    def reload(self) -> None:
        self.goto(self.evaluate("location.href"))

    def evaluate(self, script: str, *args):
        """``script``: an expression, or a function called with ``args`` (JSON values); its value, awaited."""
        return json.loads(self._call(calling(script, args)))

    def wait_for(self, script: str, *args, timeout: float = 15, message: str = ""):
        """Until ``script`` (an expression or a function of ``args``) is truthy in the page; its value."""
        return wait_until(
            lambda: self.evaluate(script, *args), timeout=timeout, interval=0.1, message=message or script
        )

    def wait_for_selector(self, selector: str, timeout: float = 15) -> None:
        """Until an element matching ``selector`` is shown (laid out, not in anything hidden)."""
        self.wait_for(
            "(s) => { const n = document.querySelector(s); return !!n && !n.closest('[hidden]')"
            " && n.getClientRects().length > 0; }",
            selector,
            timeout=timeout,
            message=f"{selector} to show",
        )

    def text(self, selector: str) -> str:
        """The element's rendered text (``innerText``), as a person reads it."""
        found = self.evaluate(
            "(s) => { const n = document.querySelector(s); return n ? n.innerText : null; }", selector
        )
        assert found is not None, f"no {selector} on {self.engine}'s page"
        return found

    def count(self, selector: str) -> int:
        return self.evaluate("(s) => document.querySelectorAll(s).length", selector)

    def is_visible(self, selector: str) -> bool:
        return self.evaluate(
            "(s) => { const n = document.querySelector(s); return !!n && !n.closest('[hidden]')"
            " && n.getClientRects().length > 0 && getComputedStyle(n).visibility !== 'hidden'; }",
            selector,
        )

    def click(self, selector: str, index: int = 0) -> None:
        """A real mouse click in the middle of the ``index``-th element matching ``selector``, scrolled into view,
        once it stands still and is the element at that point (a page still laying out, e.g. a clip's "not
        available" note arriving above a button, would move it under the pointer: Playwright waits the same way)."""
        where = """(s, i) => { const n = document.querySelectorAll(s)[i]; if (!n) return null;
              n.scrollIntoView({ block: "center", inline: "center" });
              const box = n.getBoundingClientRect();
              const x = box.left + box.width / 2, y = box.top + box.height / 2;
              const hit = document.elementFromPoint(x, y);
              return [x, y, box.width * box.height, Boolean(hit && (hit === n || n.contains(hit)))]; }"""
        deadline = time.monotonic() + STABLE_TIMEOUT
        point = self.evaluate(where, selector, index)
        while True:
            assert point is not None, f"no {selector} [{index}] to click on {self.engine}'s page"
            assert point[2] > 0, f"{selector} [{index}] has no size on {self.engine}'s page"
            time.sleep(0.05)  # standing still is the same place 50 ms apart: this sleep is the measure
            again = self.evaluate(where, selector, index)
            if again == point and point[3] or time.monotonic() > deadline:
                break
            point = again
        self._perform(pointer_click(point[0], point[1]))

    def click_text(self, selector: str, text: str) -> None:
        """Click the first ``selector`` whose text is ``text`` (a button by its label)."""
        index = self.evaluate(
            "(s, t) => [...document.querySelectorAll(s)].findIndex((n) => n.innerText.trim() === t)", selector, text
        )
        assert index >= 0, f"no {selector} saying {text!r} on {self.engine}'s page"
        self.click(selector, index)

    def fill(self, selector: str, text: str) -> None:
        """Click into the field, select what it has and type ``text`` over it, key by key."""
        self.click(selector)
        self.evaluate("(s) => document.querySelector(s).select()", selector)
        self._perform(typing(text))

    def value(self, selector: str) -> str:
        return self.evaluate("(s) => document.querySelector(s).value", selector)

    def screenshot(self, path: Path) -> Path:
        path.write_bytes(self._png())
        return path

    def no_sideways_scroll(self) -> None:
        width, view = self.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert width <= view, f"{self.engine}: the page is {width} px wide in a {view} px window"


# ---------------------------------------------------------------- Firefox over WebDriver BiDi


class BidiConnection:
    """A WebDriver BiDi websocket: commands wait for their reply; events go to the listeners."""

    def __init__(self, url: str):
        import websocket

        self.socket = websocket.create_connection(url, timeout=START_TIMEOUT, suppress_origin=True)
        self.socket.settimeout(None)
        self.ids = itertools.count(1)
        self.replies: dict[int, queue.Queue] = {}
        self.listeners: list = []
        self.lock = threading.Lock()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        while True:
            try:
                message = json.loads(self.socket.recv())
            except Exception:
                for waiting in list(self.replies.values()):
                    waiting.put({"type": "error", "error": "closed", "message": "the browser closed the connection"})
                return
            if "id" in message and message["id"] in self.replies:
                self.replies[message["id"]].put(message)
            elif message.get("type") == "event":
                for listener in list(self.listeners):
                    listener(message)

    def send(self, method: str, **params):
        number = next(self.ids)
        waiting = self.replies[number] = queue.Queue()
        with self.lock:
            self.socket.send(json.dumps({"id": number, "method": method, "params": params}))
        try:
            reply = waiting.get(timeout=COMMAND_TIMEOUT)
        except queue.Empty:
            raise TimeoutError(f"Firefox did not answer {method} within {COMMAND_TIMEOUT} s") from None
        finally:
            del self.replies[number]
        if reply.get("type") == "error":
            raise RuntimeError(f"{method}: {reply.get('error')}: {reply.get('message')}")
        return reply["result"]

    def close(self) -> None:
        self.socket.close()


class FirefoxBrowser:
    engine = "firefox"

    def __init__(self):
        self.profile = Path(tempfile.mkdtemp(prefix="vtt-firefox-"))
        (self.profile / "user.js").write_text(
            "".join(f'user_pref("{name}", {json.dumps(value)});\n' for name, value in FIREFOX_PREFS.items())
        )
        self.process = subprocess.Popen(
            [FIREFOX, "--headless", "--remote-debugging-port=0", "--no-remote", "--profile", str(self.profile)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=_die_with_the_tests,
        )
        lines: list[str] = []
        found = queue.Queue()

        def read_stderr() -> None:  # the BiDi address is printed on stderr; the rest is kept for a failure's report
            for line in self.process.stderr:
                lines.append(line)
                if match := re.search(r"WebDriver BiDi listening on (ws://\S+)", line):
                    found.put(match.group(1))

        threading.Thread(target=read_stderr, daemon=True).start()
        try:
            address = found.get(timeout=START_TIMEOUT)
        except queue.Empty:
            self.quit()
            raise EngineUnavailable(
                f"Firefox did not start within {START_TIMEOUT} s:\n{''.join(lines)[-2000:]}"
            ) from None
        self.bidi = BidiConnection(f"{address}/session")
        self.capabilities = self.bidi.send("session.new", capabilities={})["capabilities"]
        self.version = self.capabilities.get("browserVersion", "")
        self.bidi.send("session.subscribe", events=["log.entryAdded"])

    def new_page(self, width: int, height: int) -> FirefoxPage:
        return FirefoxPage(self, width, height)

    def quit(self) -> None:
        if getattr(self, "bidi", None):
            try:
                self.bidi.send("browser.close")
            except Exception:
                pass
            self.bidi.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


class FirefoxPage(EnginePage):
    """A window in a user context of its own (its own cookies and storage): a window, not a tab, so that every page
    is in the foreground, as each phone's is (Firefox suspends a background tab's video and slows its timers)."""

    engine = "firefox"

    def __init__(self, browser: FirefoxBrowser, width: int, height: int):
        self.bidi = browser.bidi
        self.user_context = self.bidi.send("browser.createUserContext")["userContext"]
        self.context = self.bidi.send("browsingContext.create", type="window", userContext=self.user_context)["context"]
        self.logged: list[str] = []
        self.bidi.listeners.append(self._log)
        self.set_viewport(width, height)

    def _log(self, event: dict) -> None:
        params = event["params"]
        if event["method"] == "log.entryAdded" and params.get("source", {}).get("context") == self.context:
            if params.get("level") == "error":
                self.logged.append(f"{params.get('type')}: {params.get('text')}")

    def _call(self, body: str):
        reply = self.bidi.send(
            "script.callFunction",
            functionDeclaration=f"async function () {{ {body} }}",
            target={"context": self.context},
            awaitPromise=True,
            userActivation=False,
        )
        if reply["type"] == "exception":
            details = reply["exceptionDetails"]
            raise RuntimeError(f"firefox: {details.get('text')}")
        return reply["result"]["value"]

    def _perform(self, actions: list[dict]) -> None:
        self.bidi.send("input.performActions", context=self.context, actions=actions)
        self.bidi.send("input.releaseActions", context=self.context)

    def _navigate(self, url: str) -> None:
        self.bidi.send("browsingContext.navigate", context=self.context, url=url, wait="complete")

    def _png(self) -> bytes:
        return base64.b64decode(self.bidi.send("browsingContext.captureScreenshot", context=self.context)["data"])

    def set_viewport(self, width: int, height: int) -> None:
        self.bidi.send("browsingContext.setViewport", context=self.context, viewport={"width": width, "height": height})

    def add_init_script(self, source: str) -> None:
        """``source`` (a function's) runs in every document of this page before its own scripts."""
        self.bidi.send("script.addPreloadScript", functionDeclaration=source, contexts=[self.context])

    def errors(self) -> list[str]:
        return [*self.logged, *self.evaluate("window.__engineRefusals || []")]

    def close(self) -> None:
        self.bidi.listeners.remove(self._log)
        self.bidi.send("browsingContext.close", context=self.context)
        self.bidi.send("browser.removeUserContext", userContext=self.user_context)


# ---------------------------------------------------------------- WebKit over classic WebDriver


# MiniBrowser's toolbar would keep its window at least 447 px wide: shrunk to nothing, a window is a phone's width.
MINIBROWSER_GTK_CSS = """
window > box > *:not(overlay), window > box > *:not(overlay) * {
  font-size: 1px; min-width: 0; min-height: 0; padding: 0; margin: 0;
}
"""
# Safari's autoplay rule: a page may start a video muted by itself, with sound only inside the person's gesture.
WEBKIT_AUTOPLAY = "allow-without-sound"
# The capture devices asked for, as a spoken player's page does, the answer kept in the page to be polled (a long
# first answer would outlast the driver's script timeout). The microphone is asked for only where there is none: it
# is refused at once; where there is one, MiniBrowser would wait for a person to allow it.
ASK_FOR_CAPTURE = """
const started = performance.now();
const answered = (answer) => { window.__capture = { seconds: (performance.now() - started) / 1000, ...answer }; };
window.__capture = null;
if (!navigator.mediaDevices) { answered({ error: "no navigator.mediaDevices" }); return true; }
navigator.mediaDevices.enumerateDevices().then(async (devices) => {
  const kinds = devices.map((device) => device.kind);
  if (!kinds.includes("audioinput")) {
    await navigator.mediaDevices.getUserMedia({ audio: true }).then(
      (stream) => stream.getTracks().forEach((track) => track.stop()), () => null);
  }
  answered({ devices: kinds });
}, (error) => answered({ error: error.name }));
return true;
"""


def serve_blank_page() -> http.server.ThreadingHTTPServer:
    """An empty page on 127.0.0.1 (a secure context, where ``navigator.mediaDevices`` is), served from a thread."""

    class BlankPage(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(b"<!doctype html><title>warm-up</title>")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), BlankPage)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class WebKitBrowser:
    """An Xvfb, WebKitWebDriver on it, and one WebDriver session of MiniBrowser; every page is a new window."""

    engine = "webkit"

    def __init__(self):
        self.processes: list[subprocess.Popen] = []
        self.session = None
        read, write = os.pipe()
        xvfb = subprocess.Popen(
            ["Xvfb", "-displayfd", str(write), "-screen", "0", "1920x1200x24", "-nolisten", "tcp"],
            pass_fds=(write,),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=_die_with_the_tests,
        )
        self.processes.append(xvfb)
        os.close(write)
        with os.fdopen(read) as display:
            number = display.readline().strip()
        if not number:
            self.quit()
            raise EngineUnavailable("Xvfb did not start")
        self.port = free_port()
        self.log = tempfile.TemporaryFile(mode="w+")
        self.config = Path(tempfile.mkdtemp(prefix="vtt-webkit-"))
        (self.config / "gtk-3.0").mkdir()
        (self.config / "gtk-3.0" / "gtk.css").write_text(MINIBROWSER_GTK_CSS)
        self.processes.append(
            subprocess.Popen(
                [WEBKIT_DRIVER, f"--port={self.port}", "--host=127.0.0.1"],
                env={**os.environ, "DISPLAY": f":{number}", "GDK_BACKEND": "x11", "XDG_CONFIG_HOME": str(self.config)},
                stdout=self.log,
                stderr=subprocess.STDOUT,
                preexec_fn=_die_with_the_tests,
            )
        )
        self.url = f"http://127.0.0.1:{self.port}"
        try:
            wait_until(self._answers, timeout=START_TIMEOUT, interval=0.2, message="WebKitWebDriver to answer")
            options = {"binary": minibrowser(), "args": ["--automation", f"--autoplay-policy={WEBKIT_AUTOPLAY}"]}
            created = self.request(
                "POST", "/session", {"capabilities": {"alwaysMatch": {"webkitgtk:browserOptions": options}}}
            )
        except Exception as exc:
            self.log.seek(0)
            output = self.log.read()[-2000:]
            self.quit()
            raise EngineUnavailable(f"WebKit did not start: {exc}\n{output}") from exc
        self.session = created["sessionId"]
        self.version = created["capabilities"].get("browserVersion", "")
        self.first_window = self.command("GET", "/window")
        self.frame = [0, 0]  # what MiniBrowser's window has around its page, in px (measured by the first page)
        try:
            self.capture = self.warm_capture()
        except Exception as exc:
            self.quit()
            raise EngineUnavailable(f"WebKit's first question for capture devices failed: {exc}") from exc

    def warm_capture(self) -> dict:
        """WebKit's first question for capture devices, asked in the session's first window before any test, with
        minutes to answer: WebKitGTK (GStreamer's device monitor) can take a long time over its first on a fresh
        machine, and a test's own question would time out. The answer: ``seconds``, ``devices`` (or ``error``), or
        ``{"seconds": None}`` when there was none in CAPTURE_WARMUP_TIMEOUT (the microphone's test says so)."""
        server = serve_blank_page()
        try:
            self.command("POST", "/url", {"url": f"http://127.0.0.1:{server.server_address[1]}/"})
            self.command("POST", "/execute/sync", {"script": ASK_FOR_CAPTURE, "args": []})
            deadline = time.monotonic() + CAPTURE_WARMUP_TIMEOUT
            while time.monotonic() < deadline:
                answer = self.command("POST", "/execute/sync", {"script": "return window.__capture", "args": []})
                if answer:
                    return answer
                time.sleep(0.1)
            return {"seconds": None}
        finally:
            self.command("POST", "/url", {"url": "about:blank"})
            server.shutdown()

    def _answers(self) -> bool:
        try:
            self.request("GET", "/status")
            return True
        except OSError:
            return False

    def request(self, method: str, path: str, body: dict | None = None):
        data = json.dumps(body if body is not None else {}).encode() if method == "POST" else None
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=COMMAND_TIMEOUT) as response:
                return json.loads(response.read())["value"]
        except urllib.error.HTTPError as error:
            reply = json.loads(error.read() or b"{}").get("value", {})
            raise RuntimeError(f"webkit {method} {path}: {reply.get('error')}: {reply.get('message')}") from None

    def command(self, method: str, path: str, body: dict | None = None):
        return self.request(method, f"/session/{self.session}{path}", body)

    def new_page(self, width: int, height: int) -> WebKitPage:
        return WebKitPage(self, width, height)

    def quit(self) -> None:
        if self.session:
            try:
                self.request("DELETE", f"/session/{self.session}")
            except Exception:
                pass
        for process in reversed(self.processes):
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        if getattr(self, "config", None):
            shutil.rmtree(self.config, ignore_errors=True)


class WebKitPage(EnginePage):
    """A window of MiniBrowser (the driver talks to one window at a time: each command switches to this one)."""

    engine = "webkit"

    def __init__(self, browser: WebKitBrowser, width: int, height: int):
        self.browser = browser
        self.handle = browser.command("POST", "/window/new", {"type": "window"})["handle"]
        self.cleared: set[str] = set()
        self._focus()
        self.set_viewport(width, height)

    def _focus(self) -> None:
        if self.browser.__dict__.get("current") != self.handle:
            self.browser.command("POST", "/window", {"handle": self.handle})
            self.browser.current = self.handle

    def _call(self, body: str):
        self._focus()
        return self.browser.command("POST", "/execute/sync", {"script": body, "args": []})

    def _perform(self, actions: list[dict]) -> None:
        self._focus()
        self.browser.command("POST", "/actions", {"actions": actions})
        self.browser.command("DELETE", "/actions")

    def _navigate(self, url: str) -> None:
        self._focus()
        origin = urllib.parse.urlsplit(url)._replace(path="/", query="", fragment="").geturl()
        if origin not in self.cleared:  # the windows share cookies (a page's language...): none from an earlier page
            self.browser.command("POST", "/url", {"url": origin})
            self.browser.command("DELETE", "/cookie")
            self.cleared.add(origin)
        self.browser.command("POST", "/url", {"url": url})

    def _png(self) -> bytes:
        self._focus()
        return base64.b64decode(self.browser.command("GET", "/screenshot"))

    def set_viewport(self, width: int, height: int) -> None:
        """The window sized so that its page (the viewport) is ``width`` x ``height``: MiniBrowser's window has a
        frame, measured once (the new size shows in the page a moment after the window's)."""
        self._focus()
        for _attempt in range(3):
            frame = self.browser.frame
            self.browser.command("POST", "/window/rect", {"width": width + frame[0], "height": height + frame[1]})
            try:
                wait_until(
                    lambda: self.evaluate("[window.innerWidth, window.innerHeight]") == [width, height],
                    timeout=3,
                    message="the page's new size",
                )
                return
            except AssertionError:
                self.browser.frame = self.evaluate(
                    "[window.outerWidth - window.innerWidth, window.outerHeight - window.innerHeight]"
                )
        inner = self.evaluate("[window.innerWidth, window.innerHeight]")
        raise EngineUnavailable(f"webkit: a window for a {width}x{height} px page shows {inner[0]}x{inner[1]} px")

    def errors(self) -> list[str]:
        return self.evaluate("[...(window.__engineErrors || []), ...(window.__engineRefusals || [])]")

    def close(self) -> None:
        self._focus()
        self.browser.command("DELETE", "/window")
        # The driver needs a window in focus to open the next one: the session's first, kept open for that.
        self.browser.command("POST", "/window", {"handle": self.browser.first_window})
        self.browser.current = self.browser.first_window


def start_engine(engine: str):
    """The engine's browser, started (EngineUnavailable if it cannot be)."""
    missing = missing_programs(engine)
    if missing:
        raise EngineUnavailable(f"{engine}: {', '.join(missing)} not installed (scripts/system-deps.sh installs them)")
    started = time.monotonic()
    browser = FirefoxBrowser() if engine == "firefox" else WebKitBrowser()
    browser.start_seconds = time.monotonic() - started
    return browser
