// A question's clip on a page, and the host's screening of it (docs/protocol.md, "The host's screening").
//
// One <video> element serves the page for its whole life: a browser lets a page start a video with sound only
// after the person has touched it, and WebKit (Safari, iOS) only an element that was played inside such a touch
// (docs/design.md, "Media rules per engine"). So the person's tap plays this very element at once (a quarter second
// of silence when it has no clip playing yet), the element stays in place, and only its source changes from
// question to question. Where sound is refused all the same, the clip plays muted with "Tap for sound".
//
// With clip_playback "host" a control loop keeps the video where the screening is: paused at the span's start
// until `status.screening.starts_at` (server time, converted with the page's clock offset), then playing,
// re-seeked when it drifts, stopped at the span's end. Late pages (a reload, a reconnect) join mid-clip.
// With "device" (and always on a juror's page) the clip has its controls and plays when the person wants.
import { repeatWhileShown, screenLock } from "./awake.js";
import { h, strings } from "./client.js";

const LOOP_MS = 100;
const DRIFT_SECONDS = 0.3;  // seek again beyond this; closer than that a seek costs more than it mends

// The silence a tap plays on the element (scripts/make_silence.py): AAC in MP4, or Opus in WebM for an engine
// without AAC.
export function silentSource(video) {
  const mp4 = video.canPlayType('audio/mp4; codecs="mp4a.40.2"');
  return new URL(mp4 ? "../media/silence.m4a" : "../media/silence.webm", import.meta.url).href;
}

// The light rendition for a phone-sized screen (its shorter side under 600 CSS px: a 640 x 360 clip fills it); a
// tablet or a laptop gets the clip itself.
export function screenRendition(screen = window.screen) {
  return Math.min(screen.width, screen.height) < 600 ? "phone" : null;
}

export function clipSource(clip, { rendition = null } = {}) {
  if (!clip || !clip.src) return null;
  if (/^(https?:)?\/\//.test(clip.src) || clip.src.startsWith("/")) return clip.src;
  const path = `/media/${clip.src.split("/").map(encodeURIComponent).join("/")}`;
  return rendition ? `${path}?rendition=${rendition}` : path;
}

const has = (value) => value !== null && value !== undefined;

export class ClipScreen {
  // live: the page's Connection (for its server clock); audible: whether the page plays sound (the host's preview
  // does not); rendition: "phone" for the light rendition (the same timeline, fewer pixels); synced: whether the
  // page joins the host's screening (a juror's page plays the clip when the juror wants); askToJoin: a player's
  // page, whose `joinButton` ("tap to join the screening", placed by the page where it is seen before the round)
  // stays until the person has touched it; autoplay: with clip_playback "device", start each clip by itself (the
  // stage).
  constructor({ live, audible = true, rendition = null, synced = true, askToJoin = false, autoplay = false }) {
    this.live = live;
    this.audible = audible;
    this.rendition = rendition;
    this.synced = synced;
    this.autoplay = autoplay;
    this.S = strings();
    this.clip = null;
    this.question = null;
    this.hostPlays = false;
    this.screening = null;
    this.failed = false;
    this.joined = !askToJoin;
    this.unlocking = false;  // the tap's silent source is on the element: the clip waits until it has played
    // inline on a phone, not in the fullscreen player (webkit-playsinline: iOS before 10)
    this.video = h("video", { class: "clip-video", playsinline: true, "webkit-playsinline": true, preload: "auto" });
    this.video.muted = !audible;
    this.note = h("p", { class: "clip-note", role: "status" });
    this.sound = h("button", { type: "button", class: "clip-sound secondary", hidden: true,
      on: { click: () => this.touched() } }, this.S.sound_on);
    this.joinButton = h("button", { type: "button", class: "clip-join big", hidden: true,
      on: { click: () => this.touched() } }, this.S.join_screening);
    this.missing = h("div", { class: "clip-missing", role: "status", hidden: true },
      h("p", { class: "clip-missing-title" }, this.S.clip_missing),
      h("p", { class: "clip-missing-detail" }, this.S.clip_missing_detail));
    this.element = h("div", { class: "clip-box" }, this.video, this.missing, this.note, this.sound);
    this.video.addEventListener("error", () => this.fail());
    this.video.addEventListener("loadedmetadata", () => this.ready());
    this.video.addEventListener("timeupdate", () => this.stopAtEnd());
    // The screen stays on while the clip plays (a phone would dim in the middle of it).
    this.video.addEventListener("playing", () => screenLock.hold(this, true));
    for (const stopped of ["pause", "ended", "emptied", "error"]) {
      this.video.addEventListener(stopped, () => screenLock.hold(this, false));
    }
    this.following = repeatWhileShown(() => this.follow(), LOOP_MS);
  }

  // The question on screen (null: none) and the status: which clip, who plays it, the host's latest screening.
  show(question, status) {
    const clip = question && question.clip && question.clip.src ? question.clip : null;
    this.hostPlays = status.clip_playback === "host" && this.synced;
    const screening = status.screening && question && status.screening.question === question.id ? status.screening : null;
    this.video.controls = !this.hostPlays && Boolean(clip);
    this.video.preload = this.synced ? "auto" : "metadata";
    this.element.hidden = !clip;
    this.screening = screening;
    if (!question || this.question !== question.id) {
      this.question = question ? question.id : null;
      this.load(clip);
      if (clip && this.autoplay && !this.hostPlays) this.play();
    }
    this.follow();
  }

  load(clip) {
    this.clip = clip;
    this.failed = false;
    this.missing.hidden = true;
    this.video.hidden = false;
    if (this.unlocking) return;  // the tap's silence is playing: the clip is put on the element after it
    this.video.pause();
    const src = clipSource(clip, { rendition: this.rendition });
    if (src) this.video.src = src;
    else this.video.removeAttribute("src");
    this.video.load();
  }

  get start() { return this.clip && has(this.clip.start) ? this.clip.start : 0; }

  get end() {
    if (this.clip && has(this.clip.end)) return this.clip.end;
    return Number.isFinite(this.video.duration) ? this.video.duration : null;
  }

  ready() {
    if (this.unlocking) return;
    if (this.video.currentTime < this.start) this.video.currentTime = this.start;  // the span's first frame
    this.follow();
  }

  fail() {  // a missing file (404), a format or URL this browser cannot play: a notice, never a broken player
    if (!this.clip || this.unlocking) return;
    this.failed = true;
    this.video.hidden = true;
    this.missing.hidden = false;
    this.note.textContent = "";
  }

  stopAtEnd() {
    const end = this.end;
    if (this.unlocking) return;
    if (!this.hostPlays && has(this.clip && this.clip.end) && end !== null && this.video.currentTime >= end) this.video.pause();
  }

  // Where the screening is now, in the clip's seconds (null: no screening of this question).
  position() {
    if (!this.screening) return null;
    return this.start + (this.live.serverNow() - Date.parse(this.screening.starts_at)) / 1000;
  }

  follow() {
    this.joinButton.hidden = this.joined || !this.hostPlays;
    if (!this.hostPlays || !this.clip || this.failed || this.unlocking) return;
    const at = this.position();
    const end = this.end;
    if (at === null) {
      this.note.textContent = this.S.screening_waiting;
      if (!this.video.paused) this.video.pause();
      return;
    }
    if (at < this.start) {  // the screening starts in a moment: ready at the first frame, start on the dot
      this.note.textContent = this.S.screening_soon;
      if (!this.video.paused) this.video.pause();
      if (Math.abs(this.video.currentTime - this.start) > 0.05 && this.video.readyState >= 1) this.video.currentTime = this.start;
      const wait = (this.start - at) * 1000;
      if (wait < LOOP_MS * 1.5 && !this.timer) {
        this.timer = window.setTimeout(() => { this.timer = null; this.follow(); }, wait);
      }
      return;
    }
    if (end !== null && at >= end) {  // it has played: the last frame stays
      this.note.textContent = this.S.screening_over;
      if (!this.video.paused) this.video.pause();
      if (this.video.readyState >= 1 && Math.abs(this.video.currentTime - end) > DRIFT_SECONDS) this.video.currentTime = end;
      return;
    }
    this.note.textContent = "";
    if (this.video.readyState >= 1 && Math.abs(this.video.currentTime - at) > DRIFT_SECONDS) this.video.currentTime = at;
    if (this.video.paused && !this.starting) this.play();
  }

  // Start with sound when the page may; when the browser refuses (no touch yet), muted rather than frozen.
  play() {
    if (this.unlocking) return;
    this.starting = true;
    this.video.muted = !this.audible;
    this.video.play().then(() => { this.starting = false; }).catch((error) => {
      if (error && error.name === "NotAllowedError" && !this.video.muted) {
        this.video.muted = true;
        this.sound.hidden = false;
        return this.video.play();
      }
      return undefined;
    }).catch(() => {}).finally(() => { this.starting = false; });
  }

  // The person's touch ("Tap to join the screening" in the lobby, or "Tap for sound"): from now on this page, and
  // this very element, may play with sound.
  touched() {
    this.joined = true;
    this.joinButton.hidden = true;
    this.sound.hidden = true;
    this.unlock();
    this.follow();
  }

  // Play the element inside the touch. One already playing (muted: sound was refused) is unmuted where it is; a
  // paused one plays the silent source and pauses, then gets its clip back (none yet in the lobby).
  unlock() {
    const video = this.video;
    if (!video.paused) {
      video.muted = !this.audible;
      video.play().catch(() => {});
      return;
    }
    this.unlocking = true;
    video.muted = !this.audible;
    video.src = silentSource(video);
    video.play().then(() => video.pause()).catch(() => {}).finally(() => {
      this.unlocking = false;
      this.load(this.clip);
      this.follow();
    });
  }
}
