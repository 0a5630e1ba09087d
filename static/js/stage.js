// The stage screen (projector): the join QR in the lobby, the clip and question, the answers at the reveal
// in large type, how many jurors have voted, the tally and the reveals. It sees what the jury sees.
import { format, h, roundHeading } from "./client.js";
import { ClipScreen } from "./screening.js";
import { phaseText, questionView, resultsView, startPage } from "./show.js";

let view = null;
let questionOf = null;  // the question on screen (its clip is not restarted by other events)

const { S, auth, node, live } = startPage({
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

// A stage opened with the host's link (its stage key) shows the open join's door code, and puts it in the QR
// code so that a phone scanning it joins without typing; the code changes every two minutes.
const DOOR_REFRESH_MS = 15000;
let doorShown = null;

async function showDoor() {
  if (!auth.key || !live.socket.connected || node("join").hidden) return;
  const reply = await new Promise((resolve) => {
    live.socket.timeout(5000).emit("door", null, (error, answer) => resolve(error ? null : answer));
  });
  if (!reply || !reply.ok || reply.door === doorShown) return;
  doorShown = reply.door;
  node("door-code").textContent = reply.door;
  node("door").hidden = false;
  node("join").querySelector("img").src = `${S.join_qr}?door=${reply.door}`;
}
window.setInterval(showDoor, DOOR_REFRESH_MS);
live.socket.on("connect", () => { doorShown = null; showDoor(); });  // the snapshot comes before "connect"

function render() {
  const status = view.status || {};
  const phase = status.phase;
  node("phase").textContent = heading(status);
  node("join").hidden = !["draft", "lobby"].includes(phase) || !status.open_join;
  if (!node("join").hidden && doorShown === null) showDoor();
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
  const results = ["tally", "identities", "finished", "vote_closed", "round"].includes(phase) ? resultsView(view, S) : [];
  node("results").replaceChildren(...results.slice(0, 2));
  node("results").hidden = !results.length;
  fitToScreen();
}

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
