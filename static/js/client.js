// The pages' side of the live protocol (docs/protocol.md): a snapshot, then events under the
// version rules; every action carries an id and is resent with it until the server acknowledges
// it, across reconnects and page reloads (the outbox lives in localStorage; the server de-duplicates). A page seen
// again after a phone slept reconnects or asks for a snapshot at once (./awake.js).
import { io } from "../vendor/socket.io/socket.io.esm.min.js";
import { PROBE_MS, onComingBack, repeatWhileShown } from "./awake.js";
import { View } from "./view.js";

export { applyOwn } from "./view.js";

const ACK_TIMEOUT_MS = 10000;
export const RETRY_MS = 1500;
export const RETRYABLE = new Set(["server_error", "timeout", "not_connected"]);
const CLOCK_SAMPLES = 5;  // the clock's offset is read from the quickest of these round trips
const CLOCK_GAP_MS = 100;

// The page's words in the person's language (rendered by the server from the catalogs).
export function strings() {
  const read = (id) => { const node = document.getElementById(id); return node ? JSON.parse(node.textContent) : {}; };
  return { ...read("vtt-common-strings"), ...read("vtt-strings") };
}

// How the page connects (auth, key, route) and the limits it shows (max_text: the longest answer, note or reason).
export function boot() {
  return JSON.parse(document.getElementById("vtt-boot").textContent);
}

// A value kept in localStorage across reloads (otherwise where there is none, or storage is unavailable).
export function kept(where, otherwise) {
  try { return JSON.parse(localStorage.getItem(where) || "null") ?? otherwise; } catch { return otherwise; }
}

export function keep(where, value) {
  try { localStorage.setItem(where, JSON.stringify(value)); } catch { /* private mode: memory only */ }
}

// A tiny element builder: h("p", {class: "x"}, "text", child). Listeners are named in `on`:
// h("button", {on: {click: f}}, "Go"). An attribute such as "onclick" would be an inline handler, which the pages'
// CSP refuses: h() refuses it too, so a listener is never lost as a silent attribute.
export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "on") {
      for (const [event, listener] of Object.entries(value)) node.addEventListener(event, listener);
    } else if (key.toLowerCase().startsWith("on")) {
      throw new TypeError(`h(): "${key}" would be an inline handler; give listeners as on: {${key.slice(2)}: ...}`);
    } else if (key === "text") node.textContent = value;
    else if (key === "style") Object.assign(node.style, value);  // the CSSOM: allowed by the pages' CSP
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function format(template, values) {
  return template.replace(/\{(\w+)\}/g, (_, key) => (key in values ? values[key] : `{${key}}`));
}

// A time of day (ISO 8601) in the page's language, the <html lang> the server chose ("오후 12:57:58" on a Korean
// page), never the browser's own locale; "" for a missing or unreadable time.
export function clockTime(at, lang = pageLanguage()) {
  const moment = at ? new Date(at) : null;
  if (!moment || Number.isNaN(moment.getTime())) return "";
  try {
    return moment.toLocaleTimeString(lang || undefined);
  } catch {
    return moment.toLocaleTimeString();  // a tag this browser does not know: its own locale rather than nothing
  }
}

export function pageLanguage() {
  return typeof document !== "undefined" && document.documentElement ? document.documentElement.lang : "";
}

export function newId(prefix) {
  const random = crypto.randomUUID ? crypto.randomUUID() : `${Date.now()}-${Math.random().toString(36).slice(2)}`;
  return `${prefix}-${random}`.slice(0, 64);
}

// Seconds left to an ISO deadline (null without one), for countdowns.
export function secondsLeft(deadline) {
  if (!deadline) return null;
  return Math.max(0, Math.round((Date.parse(deadline) - Date.now()) / 1000));
}

// The heading of the phases after a round's questions (and of a round's start), which name no question: the
// round and what happens now ("Round 1 of 2 — the jury votes"); null in the other phases. S holds the words
// (head_* in templates/live/_live.html); own: words that replace a phase's, e.g. {voting: "..."} on a juror's page.
export function roundHeading(status, S, own = {}) {
  if (!status || !status.round) return null;
  const values = { round: status.round, rounds: status.rounds || status.round };
  const words = own[status.phase] || {
    round: S.phase_round, voting: S.head_voting, vote_closed: S.head_vote_closed, tally: S.head_tally,
    identities: S.head_identities,
  }[status.phase];
  if (!words) return null;
  let line = format(words, values);
  const left = secondsLeft(status.deadline);
  if (left !== null && status.phase === "voting" && S.seconds_left) line += ` (${format(S.seconds_left, { seconds: left })})`;
  return line;
}

export class Connection {
  // auth: the Socket.IO auth object; key: where this person's outbox is kept in localStorage.
  // route: the session's join code (a displaced juror's: its route), named on the Socket.IO URL (?session=CODE) so that nginx sends every connection
  // of one session to the process that owns it (docs/deploy.md); a page opened by token learns it from its snapshot.
  constructor({ auth, key, route, onView, onConnection, onRefused }) {
    this.auth = auth;
    this.storageKey = `vtt-outbox:${key}`;
    this.onView = onView;             // (data, eventName|null) after the view changed
    this.onConnection = onConnection || (() => {});
    this.onRefused = onRefused || (() => {});
    this.view = new View();           // the snapshot and events under the rules of ./view.js
    this.waiters = new Map();         // action id -> resolve
    this.outbox = this.loadOutbox();  // id -> {event, payload}
    this.inFlight = new Set();
    this.clockOffset = 0;             // server time minus this page's time, in ms
    this.route = route || auth.code || null;
    this.socket = io({
      auth: (cb) => cb(this.auth), transports: ["websocket", "polling"], query: this.route ? { session: this.route } : {},
    });
    this.socket.on("connect", () => { this.onConnection(true); this.flush(); this.syncClock(); });
    this.socket.on("disconnect", () => { this.inFlight.clear(); if (!this.refused) this.onConnection(false); });
    this.socket.on("connect_error", (error) => {  // {message, data: {code, message}} (docs/protocol.md)
      if (error && error.data && error.data.code) this.refuse(error.data);  // else a network failure: retried
    });
    this.socket.onAny((event, payload) => {
      if (event === "snapshot") this.applySnapshot(payload);
      else this.applyEvent(event, payload);
    });
    this.retrying = repeatWhileShown(() => this.flush(), RETRY_MS);  // the outbox, until each action is acknowledged
    this.lastHeard = Date.now();      // the server's last word (an event, an ack, its ping)
    const heard = () => { this.lastHeard = Date.now(); };
    this.socket.io.on("ping", heard);
    this.socket.io.on("packet", heard);
    this.hiddenAt = null;             // when the page was last hidden (a phone locked, another tab in front)
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "hidden") this.hiddenAt = Date.now();
      else this.comeBack();
    });
    window.addEventListener("pageshow", (event) => { if (event.persisted) this.comeBack({ restored: true }); });
  }

  // The page is seen again (docs/protocol.md, "Coming back"): its view is made current at once rather than when the
  // transport's own timeout notices a socket that died while the phone slept (tens of seconds).
  comeBack({ restored = false } = {}) {
    const now = Date.now();
    const move = onComingBack({
      refused: this.refused, connected: this.socket.connected, restored,
      hiddenMs: this.hiddenAt === null ? 0 : now - this.hiddenAt, sinceHeardMs: now - this.lastHeard,
    });
    this.hiddenAt = null;
    if (move === "reconnect") this.reconnect();
    else if (move === "probe") this.probe();
  }

  // A new connection now, not after the transport's back-off; it brings a snapshot and flushes the outbox.
  reconnect() {
    this.socket.disconnect();
    this.socket.connect();
  }

  // A snapshot on the socket that looks alive; none within PROBE_MS: the socket is dead, a new one replaces it.
  probe() {
    const probed = this.socket.id;
    this.socket.timeout(PROBE_MS).emit("snapshot", null, (error, reply) => {
      if (!error) {
        if (reply && reply.ok) this.applySnapshot(reply.snapshot);
        this.syncClock();  // the phone's clock may have been set while it slept
      } else if (!this.refused && (!this.socket.connected || this.socket.id === probed)) {
        this.reconnect();
      }
    });
  }

  // Refused for good (bad link, closed join, removed): stop retrying, say why.
  refuse(error) {
    this.refused = true;
    this.retrying.stop();
    this.socket.disconnect();
    this.onRefused(error);
  }

  get data() {  // null until the first snapshot: the pages draw nothing before it
    return this.view.known < 0 ? null : this.view.data;
  }

  applySnapshot(snapshot) {
    this.view.snapshot(snapshot);
    // a displaced juror's snapshot names its route, never the join code (docs/security.md)
    const code = snapshot.session && (snapshot.session.route || snapshot.session.code);
    if (code && code !== this.route) {  // reconnects name the session (routed to its owner)
      this.route = code;
      this.socket.io.opts.query = { session: code };
    }
    if (snapshot.me && snapshot.me.token && this.auth.code) {
      this.auth = { token: snapshot.me.token };  // an open-join juror reconnects as themself
    }
    this.onView(this.data, null);
    if (this.view.stale) this.resync();  // read before events that came first: ask again
  }

  applyEvent(event, payload) {
    if (this.view.event(event, payload)) {
      if (this.view.revoked) this.refuse({ code: "link_revoked", message: this.view.revoked });  // this link is dead
      else this.onView(this.data, event);
    } else if (this.view.stale) {
      this.resync();  // an event was missed (or no snapshot came yet)
    }
  }

  resync() {
    this.socket.timeout(ACK_TIMEOUT_MS).emit("snapshot", null, (error, reply) => {
      if (!error && reply && reply.ok) this.applySnapshot(reply.snapshot);
    });
  }

  // Send an action until it is acknowledged; resolves with the server's reply (ok, or a refusal).
  send(event, payload, prefix = event) {
    const id = payload.id || newId(prefix);
    const message = { ...payload, id };
    this.outbox[id] = { event, payload: message };
    this.saveOutbox();
    const done = new Promise((resolve) => this.waiters.set(id, resolve));
    this.flush();
    return done;
  }

  // The server's time now, in ms since the epoch (a screening starts at a server moment).
  serverNow() {
    return Date.now() + this.clockOffset;
  }

  // offset = server time - the middle of the quickest round trip (docs/protocol.md, "The host's screening").
  // Resolves with {offset, trip, trips} (trips: every round trip in ms, the device check's figure), or null.
  async syncClock() {
    let best = null;
    const trips = [];
    for (let sample = 0; sample < CLOCK_SAMPLES && this.socket.connected; sample += 1) {
      const sent = Date.now();
      const reply = await new Promise((resolve) => {
        this.socket.timeout(ACK_TIMEOUT_MS).emit("clock", null, (error, answer) => resolve(error ? null : answer));
      });
      const received = Date.now();
      if (reply && reply.ok) trips.push(received - sent);
      if (reply && reply.ok && (!best || received - sent < best.trip)) {
        best = { trip: received - sent, offset: Date.parse(reply.now) - (sent + received) / 2 };
      }
      await new Promise((resolve) => { window.setTimeout(resolve, CLOCK_GAP_MS); });
    }
    if (best) this.clockOffset = best.offset;
    return best && { ...best, trips };
  }

  // The transport engine.io uses now: "websocket", or "polling" (long-polling: a network that blocks websockets).
  transport() {
    const engine = this.socket.io.engine;
    return engine && engine.transport ? engine.transport.name : null;
  }

  pending() {
    return Object.keys(this.outbox).length;
  }

  flush() {
    if (!this.socket.connected) return;
    for (const [id, { event, payload }] of Object.entries(this.outbox)) {
      if (this.inFlight.has(id)) continue;
      this.inFlight.add(id);
      this.socket.timeout(ACK_TIMEOUT_MS).emit(event, payload, (error, reply) => {
        this.inFlight.delete(id);
        if (error || !reply || (!reply.ok && RETRYABLE.has(reply.error && reply.error.code))) return;  // again later
        delete this.outbox[id];
        this.saveOutbox();
        const resolve = this.waiters.get(id);
        this.waiters.delete(id);
        if (resolve) resolve(reply);
        this.onView(this.data, `ack:${event}`);
      });
    }
  }

  loadOutbox() {
    try { return JSON.parse(localStorage.getItem(this.storageKey) || "{}"); } catch { return {}; }
  }

  saveOutbox() {
    try { localStorage.setItem(this.storageKey, JSON.stringify(this.outbox)); } catch { /* private mode: memory only */ }
  }
}
