// The read-aloud rules of static/js/speech.js: which voice reads a language, what is read for a question, who reads
// aloud, and a Reader over a fake speech synthesis (the browser test, tests/test_read_aloud.py, runs the page).
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  Reader, VOICE_POLL_MS, VOICE_WAIT_MS, optionSpoken, pickVoice, readingLanguage, readingOf, readsAloud,
} from "../../static/js/speech.js";

const voice = (lang, extra = {}) => ({ name: `${lang}${extra.default ? "*" : ""}`, lang, default: false, localService: true, ...extra });

test("a voice of the same tag wins, then one of the same language; default and on-device voices first", () => {
  const voices = [voice("en-US"), voice("ko-KR"), voice("en-GB", { localService: false }), voice("en-GB")];
  assert.equal(pickVoice(voices, "en-GB"), voices[3]);
  assert.equal(pickVoice(voices, "en-gb").lang, "en-GB");
  assert.equal(pickVoice(voices, "ko").lang, "ko-KR");
  assert.equal(pickVoice(voices, "en").lang, "en-US");
  assert.equal(pickVoice([voice("en-US"), voice("en-AU", { default: true })], "en").lang, "en-AU");
  assert.equal(pickVoice([voice("ko_KR")], "ko").lang, "ko_KR");  // Android writes tags with "_"
});

test("no voice for the language, or none at all: null", () => {
  assert.equal(pickVoice([voice("en-US"), voice("ja-JP")], "ko"), null);
  assert.equal(pickVoice([], "en"), null);
  assert.equal(pickVoice(undefined, "en"), null);
  assert.equal(pickVoice([voice("en-US")], ""), null);
});

test("a question is read as its text, then each option with the number on its button", () => {
  const S = { option_spoken: "Number {number}: {option}" };
  const mcq = { text: "What does he carry?", type: "mcq", choices: ["an umbrella", "a kettle"] };
  assert.deepEqual(readingOf(mcq, S), ["What does he carry?", "Number 1: an umbrella", "Number 2: a kettle"]);
  assert.deepEqual(readingOf({ text: "Why?", type: "open", choices: [] }, S), ["Why?"]);
  assert.equal(optionSpoken("고양이", 2, { option_spoken: "{number}번, {option}" }), "3번, 고양이");
});

test("a page reads aloud when its player's own snapshot lists read_aloud", () => {
  assert.equal(readsAloud({ me: { name: "Mina", answer_modes: ["text", "read_aloud"] } }), true);
  assert.equal(readsAloud({ me: { name: "Grace", answer_modes: ["text"] } }), false);
  assert.equal(readsAloud({ me: { name: "Old server" } }), false);
  assert.equal(readsAloud(null), false);
});

function fakeSynth(voices) {
  const spoken = [];
  return {
    spoken,
    cancelled: 0,
    getVoices: () => voices,
    speak(utterance) { spoken.push({ text: utterance.text, lang: utterance.lang, voice: utterance.voice && utterance.voice.name }); },
    cancel() { this.cancelled += 1; },
    addEventListener() {},
  };
}

class FakeUtterance {
  constructor(text) { this.text = text; this.lang = ""; this.voice = null; }
}

test("a Reader with a voice reads each line in the page's language, after stopping what it was reading", async () => {
  const synth = fakeSynth([voice("en-US"), voice("ko-KR")]);
  const reader = new Reader({ language: "ko", synth, Utterance: FakeUtterance });
  assert.equal(await reader.ready(), true);
  assert.equal(reader.say(["질문", "1번, 고양이"]), true);
  assert.deepEqual(synth.spoken, [
    { text: "질문", lang: "ko", voice: "ko-KR" },
    { text: "1번, 고양이", lang: "ko", voice: "ko-KR" },
  ]);
  assert.equal(synth.cancelled, 1);
});

test("a Reader without speech synthesis, or without a voice for its language, reads nothing and says so", async () => {
  const none = new Reader({ language: "ko", synth: null, Utterance: FakeUtterance });
  assert.equal(await none.ready(), false);
  assert.equal(none.say(["질문"]), false);
  const synth = fakeSynth([voice("en-US")]);
  const english = new Reader({ language: "ko", synth, Utterance: FakeUtterance });
  assert.equal(await english.ready(), false);  // after waiting VOICE_WAIT_MS for voices that never come
  assert.equal(english.say(["질문"]), false);
  assert.deepEqual(synth.spoken, []);
});

test("the reading language is the session's when its design names one, else the page's", () => {
  const doc = { documentElement: { lang: "en" } };
  assert.equal(readingLanguage({ session: { language: "ko-KR" } }, doc), "ko-kr");
  assert.equal(readingLanguage({ session: { language: null } }, doc), "en");
  assert.equal(readingLanguage({}, { documentElement: { lang: "" } }), "en");
  assert.equal(readingLanguage(null, { documentElement: { lang: "ko" } }), "ko");
});

// Voices that arrive late: Chrome and Safari give none at first. `fire`: the synthesis tells `voiceschanged` through
// addEventListener ("listener"), only through onvoiceschanged ("property"), or not at all (Safari: "none").
function lateSynth(fire) {
  const synth = fakeSynth([]);
  let voices = [];
  let listener = null;
  synth.getVoices = () => voices;
  if (fire === "listener") synth.addEventListener = (kind, callback) => { if (kind === "voiceschanged") listener = callback; };
  else delete synth.addEventListener;
  synth.arrive = (list) => {
    voices = list;
    if (fire === "listener" && listener) listener({});
    if (fire === "property" && synth.onvoiceschanged) synth.onvoiceschanged({});
  };
  return synth;
}

test("voices that arrive during the wait: the Reader picks the language's voice then", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
  for (const fire of ["listener", "property", "none"]) {
    const synth = lateSynth(fire);
    const reader = new Reader({ language: "ko", synth, Utterance: FakeUtterance });
    const ready = reader.ready();
    t.mock.timers.tick(300);
    synth.arrive([voice("en-US"), voice("ko-KR")]);
    t.mock.timers.tick(VOICE_POLL_MS);
    assert.equal(await ready, true, fire);
    assert.equal(reader.voice.lang, "ko-KR", fire);
  }
});

test("voices that arrive after the wait, with or without voiceschanged: the page is told, then reads", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
  for (const fire of ["listener", "property", "none"]) {
    const synth = lateSynth(fire);
    const changes = [];
    const reader = new Reader({ language: "ko", synth, Utterance: FakeUtterance, onChange: (has) => changes.push(has) });
    const ready = reader.ready();
    t.mock.timers.tick(VOICE_WAIT_MS);
    assert.equal(await ready, false, fire);  // no voice yet: the page says so (and tells the host)
    assert.equal(reader.say(["질문"]), false);
    t.mock.timers.tick(5000);
    synth.arrive([voice("en-US"), voice("ko-KR")]);
    t.mock.timers.tick(VOICE_POLL_MS);
    assert.deepEqual(changes, [true], fire);
    assert.equal(reader.say(["질문"]), true, fire);
    assert.deepEqual(synth.spoken, [{ text: "질문", lang: "ko", voice: "ko-KR" }], fire);
  }
});
