// "Check this device": a player's or juror's page checks, before the event, what the session will ask of it, and
// tells the host (the `device_check` action; the host's Readiness panel shows each person's result).
//
// 1. Sound: the test clip (a few seconds of coloured cards and a tone) plays with sound, started inside the
//    person's touch as every engine asks, in the rendition the page plays clips in; then "Did you hear the tone?".
// 2. A spoken player's microphone: two seconds recorded (MediaRecorder, the type recorder.js picks) and played back;
//    then "Did you hear yourself?" (a take recorded is no proof the child will be heard: a muted or silent
//    microphone records silence).
// 3. The connection: the clock's offset as the page's clock sync reads it, the transport (websocket or
//    long-polling) and the round trip of those clock messages through the socket.
// The stage plays the test clip only (`TestClip`): the host stands beside the projector.
import { format, h } from "./client.js";
import { MICROPHONE_WAIT_MS, recordingType } from "./recorder.js";

const RECORD_MS = 2000;
// A browser that never answers the microphone's request (a prompt left open, a browser that never asks): after
// MICROPHONE_WAIT_MS the page says so, after this the check goes on without the microphone ("failed").
export const MICROPHONE_GIVE_UP_MS = 12000;

export function checkStrings() {
  const node = document.getElementById("vtt-devcheck-strings");
  return node ? JSON.parse(node.textContent) : {};
}

// The test clip's address in a rendition ("phone": the light one beside it, as a clip's is).
export function testClipSource(rendition) {
  const main = checkStrings().clip;
  return rendition === "phone" ? main.replace(/\.mp4$/, ".phone.mp4") : main;
}

// A video of the test clip and a button that plays it with sound (the stage's lobby; the check's first step).
export class TestClip {
  constructor({ rendition = "main", label = null } = {}) {
    this.W = checkStrings();
    this.rendition = rendition;
    // shown once played: until then the card is its button (the stage's lobby keeps room for the join code)
    this.video = h("video", { class: "check-video", playsinline: true, "webkit-playsinline": true, preload: "metadata",
      hidden: true, src: testClipSource(rendition) });
    this.button = h("button", { type: "button", class: "secondary", id: "play-test-clip",
      on: { click: () => this.play() } }, label || this.W.play_test_clip);
    this.element = h("div", { class: "test-clip" }, this.video, this.button);
  }

  // Resolves true once it has played to the end with sound allowed, false when it would not play.
  play() {
    this.video.hidden = false;
    this.video.muted = false;
    this.video.currentTime = 0;
    return new Promise((resolve) => {
      const ended = () => { this.video.removeEventListener("ended", ended); resolve(true); };
      this.video.addEventListener("ended", ended);
      this.video.addEventListener("error", () => resolve(false), { once: true });
      this.video.play().catch(() => { this.video.removeEventListener("ended", ended); resolve(false); });
    });
  }
}

export class DeviceCheck {
  // live: the page's Connection; rendition: the one the page plays clips in; records: a spoken player's page.
  constructor({ live, rendition = "main", records = false }) {
    this.live = live;
    this.W = checkStrings();
    this.rendition = rendition;
    this.records = records;
    this.clip = new TestClip({ rendition, label: this.W.play_again });
    this.clip.button.hidden = true;
    this.clip.button.id = "check-play-again";
    this.start = h("button", { type: "button", class: "big", id: "check-device", on: { click: () => this.run() } },
      this.W.check_device);
    this.step = h("p", { class: "check-step", id: "check-step", role: "status", "aria-live": "polite" });
    this.choices = h("div", { class: "check-choices", hidden: true },
      h("button", { type: "button", id: "check-heard", on: { click: () => this.answer("heard") } }, this.W.yes),
      h("button", { type: "button", class: "secondary", id: "check-not-heard",
        on: { click: () => this.answer("not_heard") } }, this.W.no));
    // the two seconds played back: a spoken player's page only (a juror's page holds no audio element at all)
    this.playback = records ? h("audio", { class: "check-playback", controls: true, hidden: true, playsinline: true,
      "webkit-playsinline": true }) : null;
    this.heardBack = null;  // resolves the playback's question with "ok" or "not_heard"
    this.playbackChoices = records ? h("div", { class: "check-choices", id: "check-playback-choices", hidden: true },
      h("button", { type: "button", id: "check-heard-self", on: { click: () => this.answerPlayback("ok") } },
        this.W.yes_heard_self),
      h("button", { type: "button", class: "secondary", id: "check-not-heard-self",
        on: { click: () => this.answerPlayback("not_heard") } }, this.W.no)) : null;
    this.result = h("div", { class: "check-result", id: "check-result", role: "status" });
    this.panel = h("div", { class: "check-panel", hidden: true },
      this.clip.element, this.step, this.choices, this.playback || "", this.playbackChoices || "", this.result);
    this.element = h("section", { class: "card device-check", id: "device-check", "aria-labelledby": "check-title" },
      h("h2", { id: "check-title" }, this.W.title),
      h("p", { class: "muted" }, this.records ? this.W.intro_spoken : this.W.intro),
      this.start, this.panel);
  }

  // The person's touch: the clip starts inside it (with sound), the rest follows.
  async run() {
    this.started = Date.now();
    this.start.disabled = true;
    this.panel.hidden = false;
    this.result.replaceChildren();
    if (this.playback) this.playback.hidden = true;
    if (this.playbackChoices) this.playbackChoices.hidden = true;
    this.step.textContent = this.W.listen;
    const played = await this.clip.play();
    this.clip.button.hidden = false;
    if (!played) { this.finishSound("failed"); return; }
    this.step.textContent = this.W.heard_question;
    this.choices.hidden = false;
  }

  answer(sound) {
    this.choices.hidden = true;
    this.clip.button.hidden = true;
    this.finishSound(sound);
  }

  async finishSound(sound) {
    const microphone = this.records ? await this.recordTwoSeconds() : null;
    this.step.textContent = this.W.measuring;
    const clock = await this.live.syncClock();
    const trips = clock ? [...clock.trips].sort((a, b) => a - b) : [];
    const check = {
      sound,
      microphone,
      clock_offset_ms: clock ? Math.round(clock.offset) : 0,
      round_trip_ms: trips.length ? trips[Math.floor(trips.length / 2)] : 0,
      transport: this.live.transport() === "polling" ? "polling" : "websocket",
      rendition: this.rendition,
      duration_ms: Date.now() - this.started,
    };
    this.step.textContent = this.W.sending;
    const reply = await this.live.send("device_check", check, "check");
    this.start.disabled = false;
    this.start.textContent = this.W.check_again;
    this.step.textContent = "";
    this.show(reply, check);
  }

  answerPlayback(microphone) {
    this.playbackChoices.hidden = true;
    if (this.heardBack) this.heardBack(microphone);
  }

  // Two seconds from the microphone, played back, and the person asked whether they heard it: "ok", "not_heard",
  // or why nothing was played back ("none", "denied", "failed").
  async recordTwoSeconds() {
    const type = recordingType();
    if (type === null || !navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
      this.step.textContent = this.W.cannot_record;
      return "none";
    }
    let stream;
    try {
      stream = await this.askMicrophone();
    } catch (error) {
      const name = error && error.name;
      return name === "NotAllowedError" || name === "SecurityError" ? "denied"
        : name === "NotFoundError" || name === "OverconstrainedError" ? "none" : "failed";
    }
    if (stream === null) return "failed";
    try {
      const parts = [];
      const recorder = new MediaRecorder(stream, type ? { mimeType: type } : {});
      recorder.addEventListener("dataavailable", (event) => { if (event.data.size) parts.push(event.data); });
      const stopped = new Promise((resolve) => recorder.addEventListener("stop", resolve, { once: true }));
      this.step.textContent = this.W.speak_now;
      recorder.start();
      await new Promise((resolve) => { window.setTimeout(resolve, RECORD_MS); });
      recorder.stop();
      await stopped;
      const blob = new Blob(parts, { type: recorder.mimeType || type || "audio/webm" });
      if (!blob.size) return "failed";
      this.playback.src = URL.createObjectURL(blob);
      this.playback.hidden = false;
      stream.getTracks().forEach((track) => track.stop());  // the microphone is off while the person listens
      this.step.textContent = this.W.hear_yourself;
      const heard = new Promise((resolve) => { this.heardBack = resolve; });
      this.playbackChoices.hidden = false;  // asked at once: the controls replay it for a page that will not by itself
      await this.playback.play().catch(() => {});
      return await heard;
    } catch {
      return "failed";
    } finally {
      stream.getTracks().forEach((track) => track.stop());
      this.heardBack = null;
    }
  }

  // The microphone's stream, or null when the browser has not answered within MICROPHONE_GIVE_UP_MS (a stream
  // that comes later is stopped at once: the check has moved on).
  async askMicrophone() {
    const asked = navigator.mediaDevices.getUserMedia({ audio: true });
    const waiting = window.setTimeout(() => { this.step.textContent = this.W.microphone_waiting; }, MICROPHONE_WAIT_MS);
    let giveUp;
    const late = new Promise((resolve) => { giveUp = window.setTimeout(() => resolve(null), MICROPHONE_GIVE_UP_MS); });
    try {
      const stream = await Promise.race([asked, late]);
      if (stream === null) asked.then((given) => given.getTracks().forEach((track) => track.stop()), () => {});
      return stream;
    } finally {
      window.clearTimeout(waiting);
      window.clearTimeout(giveUp);
    }
  }

  show(reply, check) {
    if (!reply || !reply.ok) {
      this.result.replaceChildren(h("p", { class: "error" }, format(this.W.not_sent,
        { message: reply && reply.error ? reply.error.message : "" })));
      return;
    }
    const problems = reply.problems || [];
    this.result.replaceChildren(
      h("p", { class: problems.length ? "check-bad" : "check-good" },
        problems.length ? this.W.some_problems : this.W.all_fine),
      problems.length ? h("ul", {}, problems.map((code) => h("li", {}, problemText(code, check, this.W)))) : "");
  }
}

// A named problem in words (the host's Readiness panel says the same): the figures a check carries fill them in.
export function problemText(code, check, W = checkStrings()) {
  return format(W[`problem_${code}`] || code, {
    seconds: (Math.abs(check.clock_offset_ms || 0) / 1000).toFixed(1),
    ms: check.round_trip_ms,
  });
}
