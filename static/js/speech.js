// Reading aloud for a player whose answer modes include "read_aloud" (a young child who cannot read yet): the
// browser's speech synthesis in the session's language (else the page's, <html lang>), with a voice for that language or none at all:
// a page without one says so (and tells the host, through the `notice` action: static/js/play.js), never silently.
// Imports nothing: the rules below (pickVoice, readingOf) run under `node --test tests/js/` too.

export const READ_ALOUD = "read_aloud";
export const VOICE_WAIT_MS = 2000;  // voices load late on some browsers (Chrome, Android): wait this long for them
export const VOICE_POLL_MS = 250;   // ...asking again meanwhile (not every browser fires `voiceschanged`: Safari)
export const VOICE_LATE_MS = 30000; // ...and after the wait, so a voice that comes later still reads

const fill = (template, values) => template.replace(/\{(\w+)\}/g, (_, key) => (key in values ? values[key] : `{${key}}`));

// "ko-KR", "ko_KR", "KO" -> "ko-kr", "ko-kr", "ko": language tags compared without case ("_": Android's voices).
const tag = (value) => String(value || "").trim().replace(/_/g, "-").toLowerCase();

// Whether this player's page reads aloud: the player's own snapshot says how the player takes part (`me.answer_modes`).
export function readsAloud(view) {
  return Boolean(view && view.me && Array.isArray(view.me.answer_modes) && view.me.answer_modes.includes(READ_ALOUD));
}

// The page's language: what the page is written in (the person's choice, or their browser's).
export function pageLanguage(doc = globalThis.document) {
  return tag(doc && doc.documentElement && doc.documentElement.lang) || "en";
}

// The language to read in: the session's (the questions' language, in the player's snapshot), else the page's.
export function readingLanguage(view, doc = globalThis.document) {
  return tag(view && view.session && view.session.language) || pageLanguage(doc);
}

// The voice that reads `language` best: the same tag ("en-gb" for "en-GB"), else the same language ("ko-KR" for
// "ko"); among equals the browser's default one, then one on the device (it works offline). null: none.
export function pickVoice(voices, language) {
  const wanted = tag(language);
  const primary = wanted.split("-")[0];
  if (!primary) return null;
  const rank = (voice) => {
    const lang = tag(voice.lang);
    const match = lang === wanted ? 0 : lang.split("-")[0] === primary ? 1 : null;
    return match === null ? null : match * 4 + (voice.default ? 0 : 2) + (voice.localService ? 0 : 1);
  };
  let best = null;
  let bestRank = null;
  for (const voice of voices || []) {
    const r = rank(voice);
    if (r !== null && (bestRank === null || r < bestRank)) [best, bestRank] = [voice, r];
  }
  return best;
}

// What is read for a question, in order: its text, then each option with its number (the number on its button).
// S.option_spoken: "Number {number}: {option}".
export function readingOf(question, S) {
  const lines = [question.text];
  if (question.type === "mcq") {
    question.choices.forEach((option, index) => lines.push(optionSpoken(option, index, S)));
  }
  return lines;
}

export function optionSpoken(option, index, S) {
  return fill(S.option_spoken || "{number}: {option}", { number: index + 1, option });
}

// The browser's speech synthesis for one language. `ready()` resolves with whether a voice for it is there
// (after waiting up to VOICE_WAIT_MS for voices to load); `onChange(hasVoice)` is called when that changes later.
export class Reader {
  constructor({ language, synth = globalThis.speechSynthesis, Utterance = globalThis.SpeechSynthesisUtterance,
    onChange = () => {}, onBlocked = () => {} } = {}) {
    this.language = language;
    this.synth = synth || null;
    this.Utterance = Utterance || null;
    this.voice = null;
    this.onChange = onChange;
    this.onBlocked = onBlocked;  // the browser refused to speak (no touch on the page yet): the person reads again
    this.checked = false;
  }

  get available() {
    return Boolean(this.synth && this.Utterance);
  }

  get hasVoice() {
    return Boolean(this.available && this.voice);
  }

  findVoice() {
    try {
      this.voice = pickVoice(this.synth.getVoices(), this.language);
    } catch {
      this.voice = null;
    }
    return this.voice;
  }

  ready() {
    if (!this.available) { this.checked = true; return Promise.resolve(false); }
    return new Promise((resolve) => {
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        globalThis.clearTimeout(timeout);
        this.checked = true;
        resolve(this.hasVoice);
      };
      const look = () => {  // the voices now: a voice found in the wait ends it; after it, a change is told
        const had = this.hasVoice;
        this.findVoice();
        if (!done) { if (this.hasVoice) finish(); } else if (had !== this.hasVoice) this.onChange(this.hasVoice);
      };
      let asked = 0;
      const poll = globalThis.setInterval(() => {
        look();
        asked += VOICE_POLL_MS;
        if (this.hasVoice || asked >= VOICE_LATE_MS) globalThis.clearInterval(poll);
      }, VOICE_POLL_MS);
      const timeout = globalThis.setTimeout(finish, VOICE_WAIT_MS);
      this.listen(look);  // voices that arrive later, during the session too
      look();
    });
  }

  listen(callback) {
    if (typeof this.synth.addEventListener === "function") this.synth.addEventListener("voiceschanged", callback);
    else this.synth.onvoiceschanged = callback;
  }

  // Read `lines` in order, after stopping whatever is being read (a touch on an option interrupts the reading).
  say(lines) {
    if (!this.hasVoice) return false;
    this.synth.cancel();
    for (const line of lines) {
      if (!line) continue;
      const utterance = new this.Utterance(line);
      utterance.lang = this.language;
      try { utterance.voice = this.voice; } catch { /* not a SpeechSynthesisVoice: the lang chooses */ }
      utterance.onerror = (event) => { if (event && event.error === "not-allowed") this.onBlocked(); };
      this.synth.speak(utterance);
    }
    return true;
  }

  stop() {
    if (this.available) this.synth.cancel();
  }
}
