// Which recording each engine makes (static/js/recorder.js): MediaRecorder is asked for Opus in WebM where the engine
// records it, else AAC in MP4 (Safari), else Opus in Ogg; the upload is typed by what the recorder wrote. The server
// keeps each (tests/test_spoken.py uploads a real MP4/AAC take).
import assert from "node:assert/strict";
import { afterEach, test } from "node:test";

import { recordingType, takeType } from "../../static/js/recorder.js";

// MediaRecorder.isTypeSupported as each engine answers it (Chromium 130, Firefox 128, Safari 18.3).
const ENGINES = {
  chromium: ["audio/webm;codecs=opus", "audio/webm", "video/webm"],
  firefox: ["audio/webm;codecs=opus", "audio/webm", "audio/ogg;codecs=opus", "audio/ogg"],
  safari: ["audio/mp4;codecs=mp4a.40.2", "audio/mp4", "video/mp4"],
  ogg_only: ["audio/ogg;codecs=opus"],
  none: [],
};

function engine(name) {
  globalThis.MediaRecorder = { isTypeSupported: (type) => ENGINES[name].includes(type) };
}

afterEach(() => { delete globalThis.MediaRecorder; });

test("each engine records in the type it does best, which the server keeps", () => {
  engine("chromium");
  assert.equal(recordingType(), "audio/webm;codecs=opus");
  engine("firefox");
  assert.equal(recordingType(), "audio/webm;codecs=opus");
  engine("safari");
  assert.equal(recordingType(), "audio/mp4;codecs=mp4a.40.2");
  engine("ogg_only");
  assert.equal(recordingType(), "audio/ogg;codecs=opus");
  engine("none");
  assert.equal(recordingType(), "");  // the recorder's own default: typed by its bytes below
  delete globalThis.MediaRecorder;
  assert.equal(recordingType(), null);  // no MediaRecorder: the page says it cannot record
});

const bytes = (...values) => Uint8Array.from(values);
const MP4_HEAD = bytes(0, 0, 0, 0x1c, ...Buffer.from("ftypiso5"));
const WEBM_HEAD = bytes(0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42);
const OGG_HEAD = bytes(...Buffer.from("OggS"), 0, 2);

test("a take is typed by what the recorder says it wrote, else what it was asked for, else its first bytes", () => {
  assert.equal(takeType("audio/mp4; codecs=mp4a.40.2", "audio/mp4;codecs=mp4a.40.2", MP4_HEAD), "audio/mp4");
  assert.equal(takeType("", "audio/webm;codecs=opus", WEBM_HEAD), "audio/webm");
  // a recorder asked for no type that does not say what it wrote (early Safari): the bytes tell
  assert.equal(takeType("", "", MP4_HEAD), "audio/mp4");
  assert.equal(takeType(undefined, "", WEBM_HEAD), "audio/webm");
  assert.equal(takeType("", "", OGG_HEAD), "audio/ogg");
  assert.equal(takeType("", "", bytes(1, 2, 3)), "");
});
