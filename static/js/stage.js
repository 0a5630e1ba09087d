// The stage screen (projector): the join QR in the lobby, the clip and question, the answers at the reveal
// in large type, how many jurors have voted, the tally and the reveals. It sees what the jury sees.
import { format, h, roundHeading } from "./client.js";
import { TestClip } from "./devcheck.js";
import { followDoorCode } from "./door.js";
import { ClipScreen } from "./screening.js";
import { phaseText, questionView, resultsView, startPage } from "./show.js";

let view = null;
let questionOf = null;  // the question on screen (its clip is not restarted by other events)
let askedAtEnd = false;  // a fresh snapshot once the session has finished

const { S, node, live } = startPage({
  onView: (data) => { view = data; render(); },
  status: () => view && view.status,
  showPhase: () => { node("phase").textContent = heading(view.status); },
});
// The heading says what happens: after a round's questions it names the round, not the last question.
const heading = (status) => roundHeading(status, S) || phaseText(status, S);
// The projector plays with sound when the browser lets it (else muted, with a "sound on" button); with
// clip_playback "device" it starts each clip by itself.
const screen = new ClipScreen({ live, autoplay: true });
screen.video.addEventListener("loadedmetadata", () => fitToScreen());  // its height is known now

// The stage (opened only with its key or the host's login) shows the open join's door code, and puts it in the QR
// code so that a phone scanning it joins without typing.
const door = followDoorCode(live, {
  wanted: () => !node("join").hidden,
  show: (code) => {
    node("door-code").textContent = code;
    node("door").hidden = false;
    node("join").querySelector("img").src = `${S.join_qr}?door=${code}`;
  },
});

// Before the event the host plays the test clip here: the hall's speakers and the projector, checked.
const testClip = new TestClip();
node("test-clip").replaceChildren(testClip.element);

function render() {
  const status = view.status || {};
  const phase = status.phase;
  node("test-clip").hidden = !["draft", "lobby"].includes(phase);
  node("phase").textContent = heading(status);
  node("join").hidden = !["draft", "lobby"].includes(phase) || !status.open_join;
  if (!node("join").hidden && door.shown === null) door.refresh();
  const question = view.question;
  const showQuestion = question && ["clip", "answering", "answers_closed", "judging"].includes(phase);
  node("question").hidden = !showQuestion;
  screen.show(showQuestion ? question : null, status);
  if (showQuestion && questionOf !== question.id) {
    questionOf = question.id;
    const clip = question.clip && question.clip.src ? [screen.element] : [];
    node("question").replaceChildren(...clip, ...questionView(question));
  } else if (!showQuestion) {
    questionOf = null;
  }
  node("question").classList.toggle("judging", phase === "judging");  // the clip steps aside for the answers
  const current = (view.revealed || []).find((shown) => question && shown.question === question.id);
  node("answers").hidden = !(current && phase === "judging");
  if (current) {
    node("answers-grid").replaceChildren(...current.answers.map((answer) => h("div", { class: "card" },
      h("span", { class: "alias" }, answer.alias), " ", answer.answered ? answer.text : h("em", {}, S.no_answer))));
  }
  node("count").hidden = phase !== "voting" || !view.votes;
  if (view.votes) node("vote-count").textContent = format(S.voted, view.votes);
  // The end screen: every round, who was who and the jury's votes; before it, the latest round's results.
  const results = phase === "finished" ? [endView(view, S)]
    : ["tally", "identities", "vote_closed", "round"].includes(phase) ? resultsView(view, S).slice(0, 2) : [];
  node("results").replaceChildren(...results);
  node("results").hidden = !results.length;
  if (phase === "finished" && !askedAtEnd) {
    askedAtEnd = true;  // a round whose tally was never put on screen is shown now: the snapshot has every round's
    live.resync();
  }
  fitToScreen();
}

// Every round at the end, one card each in round order: each alias, who it was (as revealed) and its votes.
function endView(data, S) {
  const rounds = new Set([...(data.tallies || []).map((t) => t.round), ...(data.identities || []).map((i) => i.round)]);
  return h("div", { class: "end-grid" }, [...rounds].sort((a, b) => a - b).map((number) => {
    const tally = (data.tallies || []).find((t) => t.round === number);
    const revealed = (data.identities || []).find((i) => i.round === number);
    const votes = new Map((tally ? tally.votes : []).map((row) => [row.alias, row.votes]));
    const who = new Map((revealed ? revealed.revealed : []).map((row) => [row.alias, row]));
    const aliases = [...new Set([...votes.keys(), ...who.keys()])].sort();
    return h("section", { class: "card end-round", "data-round": String(number) },
      h("h2", {}, format(S.round_short, { round: number })),
      h("ul", {}, aliases.map((alias) => {
        const row = who.get(alias);
        const words = !row ? "" : row.is_ai ? S.ai : row.age ? format(S.human_age, { age: row.age }) : S.human;
        return h("li", { class: row && row.is_ai ? "is-ai" : "" }, h("span", { class: "alias" }, alias),
          h("span", { class: "who" }, words), h("span", { class: "end-votes" }, votes.has(alias) ? voteWords(votes.get(alias), S) : ""));
      })));
  }));
}

const voteWords = (count, S) => (count === 1 ? S.vote_one : format(S.votes_short, { votes: count }));

// A projector shows no scrollbars: long questions or answers (or many players) shrink the stage's type, in
// steps, until everything is on screen (--fit scales the large type in live.css; never below MIN_FIT).
const MIN_FIT = 0.4;
function fitToScreen() {
  const root = document.documentElement;
  let fit = 1;
  document.body.style.setProperty("--fit", "1");
  while (fit > MIN_FIT && root.scrollHeight > window.innerHeight) {
    fit = Math.round((fit - 0.05) * 100) / 100;
    document.body.style.setProperty("--fit", String(fit));
  }
}
window.addEventListener("resize", () => { if (view) fitToScreen(); });
