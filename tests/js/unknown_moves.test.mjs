// A page from before a server update meets what it does not know: a flow move the host console has no button for,
// an event type, a phase. It carries on with what it knows instead of throwing (which would stop the page).
import assert from "node:assert/strict";
import { test } from "node:test";

import { roundHeading } from "../../static/js/client.js";
import { movesFor } from "../../static/js/host_moves.js";
import { phaseText } from "../../static/js/show.js";
import { View } from "../../static/js/view.js";

const S = {
  open_vote: "Open the vote",
  close_vote: "Close the vote",
  extend: "+30 s",
  start_round: "Start round {round}",
  round_of: "Round {round} of {rounds}",
  phase_voting: "Vote: who is the AI?",
  head_voting: "Round {round} of {rounds} — the jury votes",
};

test("the console's buttons are the listed moves, the usual one first", () => {
  const moves = movesFor({ moves: ["open_vote", "extend"], round: 1 }, S, () => ({}));
  assert.deepEqual(moves, [
    { action: "open_vote", label: "Open the vote", secondary: false },
    { action: "extend", label: "+30 s", args: { seconds: 30 }, secondary: true },
  ]);
});

test("a move the console does not know gets no button and one warning; the known ones keep theirs", (t) => {
  const warn = t.mock.method(console, "warn", () => {});
  const status = { moves: ["pause_session", "close_vote", "toString", "start_round"], round: 1 };
  for (let i = 0; i < 3; i += 1) {
    const moves = movesFor(status, S, () => ({}));
    // the unknown first move was the usual one: the next is not promoted in its place
    assert.deepEqual(moves.map((m) => [m.action, m.label, m.secondary]),
      [["close_vote", "Close the vote", true], ["start_round", "Start round 2", true]]);
  }
  const said = warn.mock.calls.map((call) => call.arguments.join(" "));
  assert.equal(said.length, 2);  // once per unknown move, not once per render
  assert.ok(said[0].includes("pause_session") && said[1].includes("toString"), said.join(" | "));
});

test("an event type the page does not know changes nothing and keeps the versions in step", () => {
  const view = new View();
  view.snapshot({ state_version: 3, status: { phase: "voting", round: 1 } });
  assert.equal(view.event("pause", { until: "later", state_version: 4, prev_version: 3 }), true);
  assert.equal(view.event("hint", { text: "unversioned" }), false);
  assert.deepEqual(view.data, { state_version: 3, status: { phase: "voting", round: 1 } });
  assert.equal(view.event("status", { phase: "tally", round: 1, state_version: 5, prev_version: 4 }), true);
  assert.equal(view.stale, false);
  assert.equal(view.data.status.phase, "tally");
});

test("a phase the page has no words for is shown by its name, and names no round heading", () => {
  const status = { phase: "intermission", round: 2, rounds: 3 };
  assert.equal(phaseText(status, S), "Round 2 of 3 — intermission");
  assert.equal(roundHeading(status, S), null);
  assert.equal(roundHeading({ phase: "voting", round: 2, rounds: 3 }, S), "Round 2 of 3 — the jury votes");
});
