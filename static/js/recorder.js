// A spoken player's answer box (answer mode "spoken"): one big button records the answer with the microphone
// (MediaRecorder: Opus in WebM, or MP4/AAC on Safari), a clear "Recording…" state with the seconds running and a
// Stop button, then the take is uploaded by itself and the page says when the server has it on disk. "Record
// again" makes a new take (the host hears the latest) until answering closes.
//
// An upload is an action like any other (docs/protocol.md, "Spoken answers"): it carries an id, is resent with the
// same id until the server acknowledges it (a dropped connection, a server restart), and the server stores it once.
// `ended_ms_ago` is measured at each send, so a take resent a minute later is still dated when the child stopped.
// Until then the take is also kept in the browser's IndexedDB, as the other actions' outbox is kept in localStorage:
// a page reloaded (or a tablet restarted) before the server had it sends it again when it opens.
import { RETRY_MS, RETRYABLE, format, h, newId } from "./client.js";

// What MediaRecorder is asked for, in order: Opus in WebM where the engine records it (Chrome, Edge, Firefox,
// Android), else AAC in MP4 (Safari, iOS), else Opus in Ogg. The server keeps each (vtt/protocol/vocabulary.py).
const RECORDING_TYPES = ["audio/webm;codecs=opus", "audio/webm", "audio/mp4;codecs=mp4a.40.2", "audio/mp4",
  "audio/ogg;codecs=opus"];
// How each container's file begins, for a recorder that does not say what it wrote.
const CONTAINER_SIGNS = [
  ["audio/webm", (head) => head[0] === 0x1a && head[1] === 0x45 && head[2] === 0xdf && head[3] === 0xa3],
  ["audio/mp4", (head) => String.fromCharCode(...head.slice(4, 8)) === "ftyp"],
  ["audio/ogg", (head) => String.fromCharCode(...head.slice(0, 4)) === "OggS"],
];
const MAX_RECORDING_MS = 5 * 60 * 1000;  // a take stops by itself after five minutes (the server keeps up to 10)
// The server keeps no more takes of this player (or of the session): the page says so in its own words.
const TAKES_FULL = new Set(["too_many_takes", "too_many_session_takes", "too_much_audio", "too_much_session_audio"]);
// The browser has not said yes or no to the microphone by then: the page says so (a fresh WebKitGTK took over a
// minute to answer its first question for capture devices). A late answer still counts.
export const MICROPHONE_WAIT_MS = 4000;

// The takes not yet acknowledged, by id: {id, url, question, blob, durationMs, stoppedAt (ms since the epoch)}.
const PENDING_DB = "vtt-spoken-takes";
const PENDING_STORE = "takes";

// The browser's store is a safety net, never a gate: whatever it does (refuses, throws, is blocked by another tab,
// or is slow to open a fresh profile), the promise settles, with null where the store did not answer.
function pendingStore(mode, work) {
  return new Promise((resolve) => {
    try {
      if (typeof indexedDB === "undefined") { resolve(null); return; }
      const opening = indexedDB.open(PENDING_DB, 1);
      opening.onupgradeneeded = () => opening.result.createObjectStore(PENDING_STORE, { keyPath: "id" });
      opening.onerror = opening.onblocked = () => resolve(null);  // private mode and the like: in memory only
      opening.onsuccess = () => {
        const db = opening.result;
        try {
          const done = db.transaction(PENDING_STORE, mode);
          const request = work(done.objectStore(PENDING_STORE));
          done.oncomplete = () => { db.close(); resolve(request ? request.result : null); };
          done.onerror = done.onabort = () => { db.close(); resolve(null); };
        } catch {  // e.g. a Blob this store cannot clone
          db.close();
          resolve(null);
        }
      };
    } catch {
      resolve(null);
    }
  });
}

// How long a stopped take waits for the store before it is sent all the same (kept or not, it goes).
export const KEEP_WAIT_MS = 1500;

const keepTake = (take) => pendingStore("readwrite", (store) => store.put(take));
const forgetTake = (id) => pendingStore("readwrite", (store) => store.delete(id));
const pendingTakes = () => pendingStore("readonly", (store) => store.getAll());

export function recordingType() {
  if (typeof MediaRecorder === "undefined") return null;
  return RECORDING_TYPES.find((type) => MediaRecorder.isTypeSupported(type)) || "";
}

// The take's type for the upload, without parameters: what the recorder says it wrote, else what it was asked
// for, else what the file's first bytes (`head`) show; "" when none of these tells.
export function takeType(recorded, asked, head) {
  const said = (recorded || asked || "").split(";")[0].trim();
  if (said) return said;
  const sign = CONTAINER_SIGNS.find(([, matches]) => matches(Array.from(head || [])));
  return sign ? sign[0] : "";
}

export class SpokenAnswer {
  // `S`: the page's words; `uploadUrl`: the player's upload address; `onSent(reply)`: the server has a take.
  constructor({ S, uploadUrl, onSent }) {
    this.S = S;
    this.uploadUrl = uploadUrl;
    this.onSent = onSent;
    this.question = null;
    this.open = false;
    this.recorder = null;
    this.take = null;        // the take being sent: {id, question, blob, type, durationMs, stoppedAt}
    // idle | asking (the microphone asked for) | not_answering (asked MICROPHONE_WAIT_MS ago, no answer yet) |
    // recording | sending | sent | refused | full | no_microphone | unsupported
    this.state = "idle";
    this.asking = null;      // set while the browser is asked for the microphone, until it answers
    this.message = "";
    this.started = 0;
    this.record = h("button", { type: "button", class: "big record", id: "record",
      on: { click: () => this.start() } }, S.record);
    this.stop = h("button", { type: "button", class: "big stop", id: "stop-recording", hidden: true,
      on: { click: () => this.finish() } }, S.stop_recording);
    this.status = h("p", { class: "recording-state", id: "recording-state", role: "status", "aria-live": "polite" });
    this.element = h("div", { class: "spoken-answer", id: "spoken-answer" }, this.status, this.record, this.stop);
    this.ticker = null;
    if (recordingType() === null || !navigator.mediaDevices) this.state = "unsupported";
    this.resume();
  }

  // The take of this player's page that a reload interrupted: sent again (only the newest: the host hears the latest).
  async resume() {
    const takes = ((await pendingTakes()) || []).filter((take) => take.url === this.uploadUrl);
    takes.sort((a, b) => b.stoppedAt - a.stoppedAt);
    for (const older of takes.slice(1)) await forgetTake(older.id);
    if (takes.length && !this.take) await this.send(takes[0]);
  }

  // The current question, whether answering is open, and the server's word on a take already sent (a reload).
  show(question, open, recorded) {
    if (!this.question || this.question.id !== question.id) {
      this.question = question;
      const sending = this.take && this.take.question === question.id;  // a take the page is still sending
      if (!sending && this.state !== "unsupported" && this.state !== "no_microphone") {
        this.asking = null;  // a microphone that answers later was asked for the question before: not recorded
        this.state = recorded && recorded.question === question.id ? "sent" : "idle";
      }
    }
    this.open = open;
    if (!open && this.state === "recording") this.finish();  // answering closed mid-take: send what there is
    if (!open && this.asking) {  // answering closed while the browser thought: a late microphone records nothing
      this.asking = null;
      this.state = "idle";
    }
    this.render();
  }

  // Whether the microphone can be asked for now: answering is open and no recording or question is under way.
  canStart() {
    return this.open && !this.asking && this.state !== "recording";
  }

  async start() {
    if (!this.canStart()) return;
    const asking = {};  // this question for the microphone (show() drops it when the question or answering moves on)
    this.asking = asking;
    this.state = "asking";
    this.render();
    const silent = window.setTimeout(() => {
      if (this.asking !== asking) return;
      this.state = "not_answering";
      this.render();
    }, MICROPHONE_WAIT_MS);
    let stream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    } catch {
      stream = null;
    }
    window.clearTimeout(silent);
    if (this.asking !== asking) {  // a new question, or answering closed, while the browser thought
      if (stream) stream.getTracks().forEach((track) => track.stop());
      return;
    }
    this.asking = null;
    if (!stream) {
      this.state = "no_microphone";
      this.render();
      return;
    }
    const type = recordingType();
    const recorder = new MediaRecorder(stream, type ? { mimeType: type } : {});
    const chunks = [];
    const question = this.question;
    recorder.ondataavailable = (event) => { if (event.data && event.data.size) chunks.push(event.data); };
    recorder.onstop = () => {
      stream.getTracks().forEach((track) => track.stop());
      window.clearInterval(this.ticker);
      this.recorder = null;
      const durationMs = Math.round(performance.now() - this.started);
      const stoppedAt = Date.now();
      this.state = "sending";  // from the stop on, the page says the take is on its way
      this.render();
      new Blob(chunks).slice(0, 12).arrayBuffer().catch(() => new ArrayBuffer(0)).then((head) => {
        const blob = new Blob(chunks, { type: takeType(recorder.mimeType, type, new Uint8Array(head)) });
        const take = { id: newId("take"), url: this.uploadUrl, question: question.id, blob, durationMs, stoppedAt };
        const kept = keepTake(take);
        const waited = new Promise((resolve) => { window.setTimeout(resolve, KEEP_WAIT_MS); });
        return Promise.race([kept, waited]).then(() => this.send(take, kept));
      });
    };
    this.recorder = recorder;
    this.started = performance.now();
    recorder.start();
    this.state = "recording";
    this.ticker = window.setInterval(() => {
      if (performance.now() - this.started > MAX_RECORDING_MS) this.finish();
      this.render();
    }, 500);
    this.render();
  }

  // The stop: the page says "sending" at the tap, not when the browser's stop event comes (later on a busy phone).
  finish() {
    if (!this.recorder || this.recorder.state === "inactive") return;
    this.recorder.stop();
    this.state = "sending";
    this.render();
  }

  // Upload the take, again and again with the same id until the server answers (ok, or a refusal that is final).
  // kept: the store's promise for this take (a take sent again after a reload is in the store already).
  async send(take, kept = Promise.resolve()) {
    if (this.take && this.take !== take) forgetTake(this.take.id);  // a newer take replaces one still unsent
    this.take = take;
    this.state = "sending";
    this.render();
    for (;;) {
      if (this.take !== take) return;  // a newer take replaced this one
      const form = new FormData();
      form.append("id", take.id);
      form.append("question", String(take.question));
      form.append("duration_ms", String(take.durationMs));
      form.append("ended_ms_ago", String(Math.max(0, Math.round(Date.now() - take.stoppedAt))));
      form.append("audio", take.blob, "answer");  // the server names the file by its type (and checks its first bytes)
      let reply = null;
      try {
        const response = await fetch(this.uploadUrl, { method: "POST", body: form, credentials: "omit" });
        reply = await response.json();
      } catch {
        reply = null;  // no connection, or the server went away mid-way: the same take again
      }
      if (reply && (reply.ok || !RETRYABLE.has(reply.error && reply.error.code))) {
        kept.then(() => forgetTake(take.id));  // the server has it (or refused it for good): nothing to send again
        if (this.take !== take) return;
        this.take = null;
        const code = reply.ok ? null : reply.error.code;
        this.state = reply.ok ? "sent" : TAKES_FULL.has(code) ? "full" : "refused";
        this.message = reply.ok ? "" : reply.error.message;
        this.render();
        if (reply.ok && this.onSent) this.onSent(reply);
        return;
      }
      await new Promise((resolve) => { window.setTimeout(resolve, RETRY_MS); });
    }
  }

  render() {
    const S = this.S;
    const recording = this.state === "recording";
    const seconds = recording ? Math.floor((performance.now() - this.started) / 1000) : 0;
    this.element.dataset.state = this.state;
    this.status.textContent = {
      idle: this.open ? S.record_hint : "",
      asking: S.asking_microphone,
      not_answering: S.microphone_not_answering,
      recording: format(S.recording, { seconds }),
      sending: S.recording_sending,
      sent: this.open ? S.recording_sent : S.recording_kept,
      refused: format(S.refused, { message: this.message }),
      full: S.takes_full,
      no_microphone: S.no_microphone,
      unsupported: S.cannot_record,
    }[this.state];
    this.record.hidden = recording || this.state === "unsupported" || this.state === "full";
    this.record.textContent = this.state === "sent" || this.state === "refused" ? S.record_again : S.record;
    this.record.disabled = !this.open || this.state === "sending" || Boolean(this.asking);
    this.stop.hidden = !recording;
  }
}
