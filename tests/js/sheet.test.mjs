// The judgment sheet and the ballot both juror pages share (static/js/sheet.js, static/js/ballot.js): when a changed
// line is saved (the displaced page once typing pauses, the juror's page at its next save slot), what one save sends
// and what it leaves, and the choice said in words.
import assert from "node:assert/strict";
import { afterEach, before, test } from "node:test";

import { choiceOf } from "../../static/js/ballot.js";
import { Sheet, lineKey } from "../../static/js/sheet.js";

let timers = [];
const realNow = Date.now;

before(() => {
  globalThis.window = {
    setTimeout: (run, ms) => timers.push({ run, ms }),
    clearTimeout: (id) => { if (id) timers[id - 1] = null; },
  };
  globalThis.document = { querySelector: () => null };  // no line on screen: states are kept, not shown
  globalThis.CSS = { escape: (text) => text };
});

afterEach(() => {
  timers = [];
  Date.now = realNow;
});

function sheet({ pace = { debounceMs: 1500 }, reply = { ok: true } } = {}) {
  const sent = [];
  const saved = [];
  const acks = [];
  const made = new Sheet({
    S: {},
    live: { send: async (event, payload) => { sent.push([event, payload]); return reply; } },
    view: () => ({ sheet: [] }),
    storage: "test-sheet",
    maxText: 4000,
    pace,
    saved: (line) => saved.push(line),
    after: (ack) => acks.push(ack),
  });
  return { made, sent, saved, acks };
}

const pending = () => timers.filter(Boolean);

test("the displaced page saves a line once typing pauses, the last change only", () => {
  const { made } = sheet();
  made.edit(7, "A", { note: "to" });
  made.edit(7, "A", { note: "too smooth" });
  assert.deepEqual(pending().map((timer) => timer.ms), [1500]);
  assert.equal(made.state[lineKey(7, "A")], "pending");
});

test("the juror's page saves at its next save slot after the pause", () => {
  Date.now = () => 10_200;
  const { made } = sheet({ pace: { debounceMs: 1000, maxWaitMs: 2000, spacing: () => 1000 } });
  made.phase = 0.5;  // this page's slots: at .5 s of every second
  made.edit(7, "A", { human_likeness: 2 });
  assert.deepEqual(pending().map((timer) => timer.ms), [1300]);  // 11.2 s, then the slot at 11.5 s
  Date.now = () => 11_000;  // still typing: at most two seconds after the first change, at a slot
  made.edit(7, "A", { human_likeness: 3 });
  assert.deepEqual(pending().map((timer) => timer.ms), [1500]);
});

test("one save sends every changed line and leaves none pending", async () => {
  const { made, sent, saved, acks } = sheet();
  made.edit(7, "A", { note: "too smooth" });
  made.edit(7, "B", { looks_like_ai: true });
  await made.save();
  const lines = [
    { question: 7, alias: "A", note: "too smooth", human_likeness: null, looks_like_ai: false },
    { question: 7, alias: "B", note: "", human_likeness: null, looks_like_ai: true },
  ];
  assert.deepEqual(sent, [["sheet", { lines }]]);
  assert.deepEqual(saved, lines);
  assert.deepEqual(made.drafts, {});
  assert.deepEqual(made.state, { "7/A": "saved", "7/B": "saved" });
  assert.deepEqual(acks, [{ ok: true }]);
});

test("a refused save says why under the line and is not sent again", async () => {
  const { made, saved } = sheet({ reply: { ok: false, error: { code: "too_long", message: "note is too long" } } });
  made.edit(7, "A", { note: "x" });
  await made.save();
  assert.deepEqual(saved, []);
  assert.deepEqual(made.drafts, {});
  assert.deepEqual(made.state["7/A"], { refused: "note is too long" });
});

test("the choice is said slot by slot, an abstention in words", () => {
  const votes = [{ slot: 2, alias: null }, { slot: 1, alias: "B" }];
  assert.equal(choiceOf(votes, { abstained: "you abstain" }), "B, you abstain");
});
