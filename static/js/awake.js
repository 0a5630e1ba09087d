// A phone that slept, a tab put behind another, a page restored from the back-forward cache: what a live page does
// when it is seen again (docs/protocol.md, "Coming back"), the work a page repeats while it is shown, and the Screen
// Wake Lock that keeps the screen on while a clip plays or the vote is open. No Socket.IO here: the decision is pure,
// the lock needs only `navigator`.

// The server pings every 25 s (python-engineio's ping_interval); a page that has heard nothing for longer than that
// and a little more has a socket that no longer carries anything, whatever the socket says.
export const SERVER_PING_MS = 25000;
const PING_GRACE_MS = 5000;
// A socket that looks alive must answer a snapshot request within this, or it is taken for dead. A snapshot's round
// trip on a slow phone link is well under it; a wrong guess costs one reconnect, never a lost action.
export const PROBE_MS = 2000;
// Hidden this long, a phone has most likely slept and its socket with it (a phone's system closes or freezes a
// sleeping page's connections within seconds): a new one is cheaper than a probe's wait.
export const LONG_SLEEP_MS = 10000;

// What a page does when it is shown again: "none" (refused for good: it has stopped trying), "reconnect" at once (no
// socket, a page restored from the back-forward cache whose socket was closed under it, a long sleep, or silence
// past the server's ping), or "probe": ask for a snapshot on the socket, and reconnect if none comes within PROBE_MS.
export function onComingBack({ refused, connected, restored = false, hiddenMs = 0, sinceHeardMs }) {
  if (refused) return "none";
  if (!connected || restored || hiddenMs >= LONG_SLEEP_MS) return "reconnect";
  if (sinceHeardMs > SERVER_PING_MS + PING_GRACE_MS) return "reconnect";
  return "probe";
}

// `work` every `ms` while the page is shown: one interval at most, cleared when the page is closed, replaced or put in
// the back-forward cache (pagehide), and set again if that cache brings the page back (pageshow). stop() ends it for
// good (a page refused for good has nothing left to retry).
export function repeatWhileShown(work, ms, env = globalThis) {
  let id = null;
  let stopped = false;
  const start = () => { if (id === null && !stopped) id = env.setInterval(work, ms); };
  const pause = () => { if (id !== null) { env.clearInterval(id); id = null; } };
  if (env.addEventListener) {
    env.addEventListener("pagehide", pause);
    env.addEventListener("pageshow", (event) => { if (event.persisted) start(); });
  }
  start();
  return {
    stop() { stopped = true; pause(); },
    get running() { return id !== null; },
  };
}

// The screen kept on while any reason holds (a clip playing, the vote open), where the browser offers the Screen
// Wake Lock. The browser releases the lock whenever the page is hidden: it is asked for again when the page is seen.
// A browser without it, or one that refuses (no permission, a hidden page, a battery saver), changes nothing.
export class ScreenLock {
  constructor(env = globalThis) {
    this.env = env;
    this.reasons = new Set();
    this.sentinel = null;    // the lock held now, or null
    this.asking = null;      // a request under way
    this.refused = false;    // asked in vain: not again until the page is seen again or a new reason comes
    if (env.document && env.document.addEventListener) {
      env.document.addEventListener("visibilitychange", () => { this.refused = false; this.update(); });
    }
  }

  get offered() {
    const { navigator } = this.env;
    return Boolean(navigator && navigator.wakeLock && typeof navigator.wakeLock.request === "function");
  }

  get wanted() {
    return this.reasons.size > 0;
  }

  // hold(reason, true) while the reason lasts, hold(reason, false) once it is over.
  hold(reason, on) {
    if (on === this.reasons.has(reason)) return;
    if (on) {
      this.reasons.add(reason);
      this.refused = false;
    } else {
      this.reasons.delete(reason);
    }
    this.update();
  }

  update() {
    if (!this.offered) return;
    const visible = !this.env.document || this.env.document.visibilityState !== "hidden";
    if (this.wanted && visible && !this.sentinel && !this.asking && !this.refused) this.acquire();
    else if (!this.wanted && this.sentinel) this.release();
  }

  acquire() {
    this.asking = Promise.resolve()
      .then(() => this.env.navigator.wakeLock.request("screen"))
      .then((sentinel) => {
        this.sentinel = sentinel;
        sentinel.addEventListener?.("release", () => { if (this.sentinel === sentinel) this.sentinel = null; });
      })
      .catch(() => { this.refused = true; })  // the screen may dim, nothing else changes
      .finally(() => { this.asking = null; this.update(); });  // the reasons may have changed meanwhile
  }

  release() {
    const sentinel = this.sentinel;
    this.sentinel = null;
    Promise.resolve().then(() => sentinel.release()).catch(() => {});
  }
}

// The page's one lock.
export const screenLock = new ScreenLock();
