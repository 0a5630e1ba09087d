// The clip rendition a page asks for, by the size of its screen.
import { test } from "node:test";
import assert from "node:assert/strict";

import { screenRendition } from "../../static/js/screening.js";

test("a phone-sized screen gets the light rendition, a tablet or laptop the clip itself", () => {
  assert.equal(screenRendition({ width: 390, height: 844 }), "phone");
  assert.equal(screenRendition({ width: 844, height: 390 }), "phone");  // turned sideways: still a phone
  assert.equal(screenRendition({ width: 768, height: 1024 }), null);
  assert.equal(screenRendition({ width: 1366, height: 768 }), null);
});
