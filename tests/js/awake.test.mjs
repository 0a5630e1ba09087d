// A page seen again after a phone slept, and the screen kept on (static/js/awake.js): when to reconnect, the work a
// page repeats while it is shown, and the Screen Wake Lock asked for and given back as the reasons come and go, also
// where the browser has none.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  LONG_SLEEP_MS, PROBE_MS, SERVER_PING_MS, ScreenLock, onComingBack, repeatWhileShown,
} from "../../static/js/awake.js";

test("a page without a socket, or restored from the back-forward cache, reconnects at once", () => {
  assert.equal(onComingBack({ refused: false, connected: false, sinceHeardMs: 10 }), "reconnect");
  assert.equal(onComingBack({ refused: false, connected: true, restored: true, sinceHeardMs: 10 }), "reconnect");
});

test("a page hidden long enough for a phone to have slept reconnects without probing a socket that looks alive", () => {
  assert.equal(onComingBack({ refused: false, connected: true, hiddenMs: LONG_SLEEP_MS, sinceHeardMs: 10 }), "reconnect");
  assert.equal(onComingBack({ refused: false, connected: true, hiddenMs: 3000, sinceHeardMs: 10 }), "probe");
});

test("a socket silent past the server's ping is dead whatever it says: reconnect without probing", () => {
  assert.equal(onComingBack({ refused: false, connected: true, sinceHeardMs: SERVER_PING_MS + 6000 }), "reconnect");
});

test("a socket heard from lately is probed with a snapshot request, answered well within the probe's time", () => {
  assert.equal(onComingBack({ refused: false, connected: true, sinceHeardMs: 3000 }), "probe");
  assert.ok(PROBE_MS <= 3000, "a dead socket is replaced within seconds");
});

test("a refused page has stopped trying and stays so", () => {
  assert.equal(onComingBack({ refused: true, connected: false, restored: true, sinceHeardMs: 1e9 }), "none");
});

// A page's navigator.wakeLock and document, recording what the lock asks for.
function fakeBrowser({ refuse = false } = {}) {
  const calls = [];
  const listeners = [];
  const document = {
    visibilityState: "visible",
    addEventListener: (name, listener) => { if (name === "visibilitychange") listeners.push(listener); },
  };
  const navigator = {
    wakeLock: {
      request: async (type) => {
        calls.push(`request ${type}`);
        if (refuse) throw new DOMException("not allowed", "NotAllowedError");
        const sentinelListeners = [];
        const sentinel = {
          released: false,
          addEventListener: (name, listener) => { if (name === "release") sentinelListeners.push(listener); },
          release: async () => {
            calls.push("release");
            sentinel.released = true;
            sentinelListeners.forEach((listener) => listener());
          },
        };
        return sentinel;
      },
    },
  };
  const setVisibility = (state) => {
    document.visibilityState = state;
    if (state === "hidden") {  // the browser gives the lock back by itself
      navigator.lastSentinel?.release();
    }
    listeners.forEach((listener) => listener());
  };
  return { env: { document, navigator }, calls, setVisibility };
}

const settle = () => new Promise((resolve) => { setTimeout(resolve, 0); });

test("the lock is held while any reason holds, and given back when the last one ends", async () => {
  const { env, calls } = fakeBrowser();
  const lock = new ScreenLock(env);
  lock.hold("clip", true);
  lock.hold("vote", true);
  await settle();
  assert.deepEqual(calls, ["request screen"]);
  lock.hold("clip", false);
  await settle();
  assert.deepEqual(calls, ["request screen"]);
  lock.hold("vote", false);
  await settle();
  assert.deepEqual(calls, ["request screen", "release"]);
  assert.equal(lock.sentinel, null);
});

test("a reason that ends while the lock is being asked for gives it back as soon as it comes", async () => {
  const { env, calls } = fakeBrowser();
  const lock = new ScreenLock(env);
  lock.hold("clip", true);
  lock.hold("clip", false);
  await settle();
  assert.deepEqual(calls, ["request screen", "release"]);
});

test("hidden, the browser releases the lock; seen again while the reason holds, it is asked for again", async () => {
  const { env, calls, setVisibility } = fakeBrowser();
  const lock = new ScreenLock(env);
  lock.hold("vote", true);
  await settle();
  env.navigator.lastSentinel = lock.sentinel;
  setVisibility("hidden");
  await settle();
  assert.equal(lock.sentinel, null);
  setVisibility("visible");
  await settle();
  assert.deepEqual(calls, ["request screen", "release", "request screen"]);
  assert.ok(lock.sentinel && !lock.sentinel.released);
});

test("a refused request is not repeated in a loop, and no error escapes", async () => {
  const { env, calls } = fakeBrowser({ refuse: true });
  const lock = new ScreenLock(env);
  lock.hold("clip", true);
  await settle();
  await settle();
  assert.deepEqual(calls, ["request screen"]);
});

test("a browser without the Screen Wake Lock: holding and releasing change nothing and throw nothing", () => {
  const lock = new ScreenLock({ document: { visibilityState: "visible", addEventListener() {} }, navigator: {} });
  lock.hold("clip", true);
  lock.hold("clip", false);
  assert.equal(lock.offered, false);
  const bare = new ScreenLock({});
  bare.hold("vote", true);
});

// A window's timers and its pagehide/pageshow, recording the intervals set and cleared.
function fakeWindow() {
  const intervals = new Map();
  const listeners = {};
  let next = 1;
  return {
    intervals,
    setInterval: (work, ms) => { intervals.set(next, { work, ms }); return next++; },
    clearInterval: (id) => { intervals.delete(id); },
    addEventListener: (name, listener) => { (listeners[name] ||= []).push(listener); },
    fire: (name, event = {}) => { for (const listener of listeners[name] || []) listener(event); },
  };
}

test("repeated work runs on one interval while the page is shown", () => {
  const env = fakeWindow();
  let runs = 0;
  const repeat = repeatWhileShown(() => { runs += 1; }, 1500, env);
  assert.equal(env.intervals.size, 1);
  assert.equal([...env.intervals.values()][0].ms, 1500);
  [...env.intervals.values()][0].work();
  assert.equal(runs, 1);
  assert.equal(repeat.running, true);
});

test("a page closed or put in the back-forward cache clears its interval; restored, it sets one again, never two", () => {
  const env = fakeWindow();
  const repeat = repeatWhileShown(() => {}, 1000, env);
  env.fire("pagehide", { persisted: true });
  assert.equal(env.intervals.size, 0);
  assert.equal(repeat.running, false);
  env.fire("pageshow", { persisted: false });  // a fresh load runs the page's script anew: nothing to restart
  assert.equal(env.intervals.size, 0);
  env.fire("pageshow", { persisted: true });
  env.fire("pageshow", { persisted: true });
  assert.equal(env.intervals.size, 1);
  assert.equal(repeat.running, true);
});

test("stopped work stays stopped, even when the page comes back", () => {
  const env = fakeWindow();
  const repeat = repeatWhileShown(() => {}, 1000, env);
  repeat.stop();
  assert.equal(env.intervals.size, 0);
  env.fire("pageshow", { persisted: true });
  assert.equal(env.intervals.size, 0);
  assert.equal(repeat.running, false);
});
