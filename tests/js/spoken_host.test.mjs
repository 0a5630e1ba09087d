// The host console's guess of the option a spoken multiple-choice answer names (static/js/spoken_host.js): it only
// preselects the option in the host's box; the host hears the recording and confirms.
import assert from "node:assert/strict";
import { test } from "node:test";

import { optionSaid } from "../../static/js/spoken_host.js";

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
