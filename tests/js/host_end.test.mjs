// What the host's console says at and after the end: the Next step card after the finish
// (static/js/host_moves.js), an AI player's agent that answered and left (static/js/agents_host.js), and times in
// the page's language, not the browser's (static/js/client.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import { agentReport } from "../../static/js/agents_host.js";
import { clockTime } from "../../static/js/client.js";
import { finishedStep, movesFor } from "../../static/js/host_moves.js";

const EN = {
  finished_step: "The session is over.", see_results: "See the results",
  agent_none: "No report from its agent yet.", agent_report: "{status} at {time}",
  agent_failed: "Agent error at {time}: {message}", agent_answered: "answered", agent_working: "working",
  agent_ready: "ready", agent_error: "error",
  agent_tally: "Answers from its agent: {answered} · entered by the host: {entered}",
  agent_done: "The session is over; its agent has left.", agent_gone: "Its agent has gone offline.",
  agent_last: "Its last report: {report}", agent_never_played: "No agent played this AI player.",
  agent_never_played_entered: "No agent played it: the host entered its answers.",
};
// The Korean console's words (vtt/translations/ko): a status in Korean, the time before it.
const KO = { ...EN, agent_report: "{time}에 {status}", agent_answered: "답변함",
  agent_tally: "에이전트의 답변: {answered} · 진행자가 입력: {entered}", agent_last: "마지막 보고: {report}",
  agent_done: "세션이 끝났고 에이전트는 나갔습니다." };

const AT = "2026-11-28T03:57:58Z";
const ANSWERED_14 = { status: "answered", message: "question q15: a red umbrella", at: AT, answered: 14, entered: 0 };

test("after the finish the Next step card links to the results (found: after Stop the session now it was empty)", () => {
  const finished = { phase: "finished", moves: [] };
  assert.deepEqual(movesFor(finished, EN, () => ({})), []);  // no move is left...
  assert.deepEqual(finishedStep(finished, EN), { text: EN.finished_step, link: EN.see_results });  // ...but a way on
  assert.equal(finishedStep({ phase: "voting", moves: ["close_vote"] }, EN), null);
  assert.equal(finishedStep(null, EN), null);
});

test("an agent that answered 14 questions and left says so, with no command (found: 'Nothing plays this AI player yet')", () => {
  const { lines, command } = agentReport(ANSWERED_14, { online: false, finished: true, lang: "en-US" }, EN);
  const text = lines.map((line) => line.text).join("\n");
  assert.equal(command, null);  // the session is over: nothing to run
  assert.match(text, /session is over/);
  assert.match(text, /Answers from its agent: 14 · entered by the host: 0/);
  assert.match(text, /Its last report: answered at /);
  assert.doesNotMatch(text, /Nothing plays/);
});

test("an agent offline in the middle of the session says what it did and how to play on", () => {
  const { lines, command } = agentReport(ANSWERED_14, { online: false, finished: false, lang: "en" }, EN);
  assert.equal(command, "again");
  assert.equal(lines[0].text, EN.agent_gone);
  assert.match(lines.map((line) => line.text).join("\n"), /Answers from its agent: 14/);
  // one that never reported nor answered: the first run's command and words (host.js), and nothing else
  assert.deepEqual(agentReport({ answered: 0, entered: 0 }, { online: false, finished: false }, EN),
    { lines: [], command: "first" });
  // after the finish, one that never played says so; the host's own answers for it are counted
  const never = agentReport({ answered: 0, entered: 3 }, { online: false, finished: true }, EN);
  assert.equal(never.command, null);
  assert.deepEqual(never.lines.map((line) => line.text),
    [EN.agent_never_played_entered, "Answers from its agent: 0 · entered by the host: 3"]);
});

test("an online agent's status is in the page's words, its own English message only a tooltip; an error is said", () => {
  const { lines, command } = agentReport(ANSWERED_14, { online: true, finished: false, lang: "ko" }, KO);
  assert.equal(command, null);
  assert.equal(lines[0].title, ANSWERED_14.message);
  assert.doesNotMatch(lines.map((line) => line.text).join("\n"), /question q15/);
  const failed = agentReport({ status: "error", message: "timeout", at: AT, answered: 2, entered: 1 },
    { online: true, finished: false, lang: "en" }, EN);
  assert.match(failed.lines[0].text, /^Agent error at .*: timeout$/);
  assert.equal(failed.lines[0].className, "agent-error");
  assert.equal(agentReport({ status: "error", message: "x", at: AT }, { online: true, handled: true }, EN).lines[0].className,
    "agent-status error");  // the host has entered the answer: no longer an alarm
});

test("times are in the page's language (found: '12:57:58 PM에 답변함' on the Korean console)", () => {
  // Korean puts the day period first ("오후 12:57:58" in a browser; Node's own ICU may name it "PM"); the browser's
  // default locale (en-US here) puts it last
  const korean = clockTime(AT, "ko");
  assert.equal(korean, new Date(AT).toLocaleTimeString("ko"));
  assert.match(korean, /^\S+ \d{1,2}:\d{2}:\d{2}$/);
  assert.notEqual(korean, new Date(AT).toLocaleTimeString("en-US"));
  assert.match(clockTime(AT, "en-US"), /\d{1,2}:\d{2}:\d{2} (AM|PM)/);
  assert.equal(clockTime(null, "ko"), "");
  assert.equal(clockTime("not a time", "ko"), "");
  const { lines } = agentReport(ANSWERED_14, { online: false, finished: true, lang: "ko" }, KO);
  const last = lines.at(-1).text;
  assert.equal(last, `마지막 보고: ${korean}에 답변함`);
});
