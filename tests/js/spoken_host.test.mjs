// The host console's guess of the option a spoken multiple-choice answer names (static/js/spoken_host.js): it only
// preselects the option in the host's box; the host hears the recording and confirms.
import assert from "node:assert/strict";
import { test } from "node:test";

import { levelOf, optionSaid, showSuggestion } from "../../static/js/spoken_host.js";

const choices = ["a red ball", "a big dog", "a small fish"];

test("a number said, in digits or in words, names that option", () => {
  assert.equal(optionSaid("number two", choices), 1);
  assert.equal(optionSaid("3", choices), 2);
  assert.equal(optionSaid("One!", choices), 0);
  assert.equal(optionSaid("number nine", choices), null);  // no ninth option: then the words decide
});

test("else the option whose own words were said, when one stands out", () => {
  assert.equal(optionSaid("i think it is the dog", choices), 1);
  assert.equal(optionSaid("the fish is small", choices), 2);
  assert.equal(optionSaid("a", choices), null);  // short words name nothing
  assert.equal(optionSaid("red dog", choices), null);  // a tie: the host picks
  assert.equal(optionSaid("", choices), null);
  assert.equal(optionSaid(null, choices), null);
});

const S = {
  spoken_heard: "Heard: “{text}” ({backend}). Check it against the recording.",
  spoken_sure: "Sure: check it as you listen.",
  spoken_likely: "Likely right: check it as you listen.",
  spoken_unsure: "Unsure: listen and retype.",
  spoken_unknown: "No confidence given: listen and check.",
  spoken_none: "No speech heard ({backend}): listen to the recording and type what was said, if anything.",
};

// A paragraph that refuses markup: any way of parsing HTML into it throws.
function textOnlyParagraph() {
  const markup = () => { throw new Error("a suggestion was parsed as markup"); };
  return {
    textContent: "", className: "", dataset: {},
    set innerHTML(value) { markup(); }, set outerHTML(value) { markup(); }, insertAdjacentHTML: markup,
    setHTMLUnsafe: markup,
  };
}

test("each level the server measured is said in its own words, and the backend's figure is not shown", () => {
  // Chromium's fake microphone beeps: pocketsphinx heard "gervais" at 1.0 and the card said "Sure (100 %)".  The
  // level now comes from the server's measured scale (vtt/transcribe/levels.py), never from the raw figure.
  const pocketsphinx = "pocketsphinx 5.1.1";
  const cases = [
    ["sure", "the man opened the red door", "Sure: check it as you listen."],
    ["likely", "the man opened the red door", "Likely right: check it as you listen."],
    ["unsure", "oh and war", "Unsure: listen and retype."],
    ["unknown", "a dog", "No confidence given: listen and check."],
  ];
  for (const [level, text, words] of cases) {
    const heard = textOnlyParagraph();
    showSuggestion(heard, S, { text, confidence: 1, backend: pocketsphinx, level });
    assert.equal(heard.textContent,
      `Heard: “${text}” (pocketsphinx 5.1.1). Check it against the recording. ${words}`);
    assert.equal(heard.dataset.sure, level);
    assert.match(heard.className, new RegExp(`sure-${level}`));
    assert.doesNotMatch(heard.textContent, /%/);
  }
  const silence = textOnlyParagraph();
  showSuggestion(silence, S, { text: "", confidence: null, backend: pocketsphinx, level: "none" });
  assert.equal(silence.textContent,
    "No speech heard (pocketsphinx 5.1.1): listen to the recording and type what was said, if anything.");
  assert.equal(silence.dataset.sure, "none");
});

test("a level the card does not know, or none given, is shown as no confidence given", () => {
  assert.deepEqual([{ level: "sure" }, { level: "none" }, { level: "SURE" }, { level: 0.9 }, {}, null].map(levelOf),
    ["sure", "none", "unknown", "unknown", "unknown", "unknown"]);
  const heard = textOnlyParagraph();
  showSuggestion(heard, S, { text: "gervais", confidence: 1, backend: "pocketsphinx 5.1.1" });
  assert.match(heard.textContent, /No confidence given: listen and check\.$/);
  assert.doesNotMatch(heard.textContent, /Sure/);
});

test("a suggestion is shown as the text it is, never as markup", () => {
  const heard = textOnlyParagraph();
  const hostile = '<img src=x onerror="alert(1)"><script>alert(2)</script>';
  showSuggestion(heard, S, { text: hostile, confidence: 0.6, backend: "<b>server</b>", level: "unsure" });
  assert.ok(heard.textContent.includes(hostile) && heard.textContent.includes("(<b>server</b>)"));
  assert.equal(heard.dataset.sure, "unsure");
});
