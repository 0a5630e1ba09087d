// The host console's guess of the option a spoken multiple-choice answer names (static/js/spoken_host.js): it only
// preselects the option in the host's box; the host hears the recording and confirms.
import assert from "node:assert/strict";
import { test } from "node:test";

import { optionSaid, showSuggestion, sureness } from "../../static/js/spoken_host.js";

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
  spoken_sure: "Sure ({confidence}): check it as you listen.",
  spoken_unsure: "Not sure ({confidence}): listen and retype.",
  spoken_guess: "A guess ({confidence}): listen and retype.",
  spoken_unknown: "No confidence given: listen and check.",
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

test("a suggestion's confidence is said in words a host acts on, with its number", () => {
  assert.deepEqual([0.95, 0.8, 0.79, 0.5, 0.49, 0, 1].map(sureness),
    ["sure", "sure", "unsure", "unsure", "guess", "guess", "sure"]);
  assert.deepEqual([null, undefined, NaN, "0.9"].map(sureness), ["unknown", "unknown", "unknown", "unknown"]);
  const heard = textOnlyParagraph();
  showSuggestion(heard, S, { text: "oh and war", confidence: 0.29, backend: "pocketsphinx 5.1.1" });
  assert.equal(heard.textContent, "Heard: “oh and war” (pocketsphinx 5.1.1). Check it against the recording. "
    + "A guess (29 %): listen and retype.");
  assert.equal(heard.dataset.sure, "guess");
  assert.match(heard.className, /sure-guess/);
  showSuggestion(heard, S, { text: "the man opened the red door", confidence: 0.91, backend: "http:x model m" });
  assert.match(heard.textContent, /Sure \(91 %\): check it as you listen\.$/);
  showSuggestion(heard, S, { text: "", confidence: null, backend: "http:x model m" });
  assert.match(heard.textContent, /“—”.*No confidence given: listen and check\.$/);
});

test("a suggestion is shown as the text it is, never as markup", () => {
  const heard = textOnlyParagraph();
  const hostile = '<img src=x onerror="alert(1)"><script>alert(2)</script>';
  showSuggestion(heard, S, { text: hostile, confidence: 0.6, backend: "<b>server</b>" });
  assert.ok(heard.textContent.includes(hostile) && heard.textContent.includes("(<b>server</b>)"));
  assert.equal(heard.dataset.sure, "unsure");
});
