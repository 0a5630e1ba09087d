// The phase line every live page shows (static/js/show.js): where the flow is, said once.
import assert from "node:assert/strict";
import { test } from "node:test";

import { phaseText } from "../../static/js/show.js";

const S = {
  phase_round: "Round {round} of {rounds} is starting.",
  phase_clip: "Watch the clip.",
  phase_vote_closed: "The vote is closed.",
  round_of: "Round {round} of {rounds}",
  question_of: "Question {position} of {count}",
};

test("a phase whose words name the round is not prefixed with the round again", () => {
  assert.equal(phaseText({ phase: "round", round: 1, rounds: 5 }, S), "Round 1 of 5 is starting.");
});

test("other phases say the round (and the question) first", () => {
  const clip = { phase: "clip", round: 2, rounds: 5, position: 3, questions_in_round: 6 };
  assert.equal(phaseText(clip, S), "Round 2 of 5 · Question 3 of 6 — Watch the clip.");
  assert.equal(phaseText({ phase: "vote_closed", round: 2, rounds: 5 }, S), "Round 2 of 5 — The vote is closed.");
});
