// A player's page: the lobby, the clip and question, an answer by option or text within the time limit
// (changeable until answering closes), and a clear "received" once the server has it on disk.
import { applyOwn, format, h } from "./client.js";
import { ClipScreen } from "./screening.js";
import { phaseText, startPage } from "./show.js";

let view = null;
let shownQuestion = null;  // the question whose form is on screen (kept while the player types)
let answerState = null;    // null | "sending" | "received" | {refused}
let playingRound = null;   // the round the snapshot's "playing" is about

const { S, node, live } = startPage({
  onView: (data, event) => {
    // Whether this player plays a round is in the snapshot only (questions go to every player): a new round
    // asks for a fresh one.
    if (event === "status" && view && data.status.round !== playingRound) live.resync();
    if (!event) playingRound = data.status ? data.status.round : null;
    view = data;
    if (!event || !event.startsWith("ack:")) render();
  },
  status: () => view && view.status,
  showPhase: () => showPhase(view.status),
});
const screen = new ClipScreen({ live, askToJoin: true });
node("clip").replaceChildren(screen.element);
const joinBox = h("div", { class: "clip-join-box" }, screen.joinButton);
node("phase").after(joinBox);  // seen in the lobby, before the first clip

// After a round's questions the player has nothing to do: the page says so in words a child understands, in
// place of the last question (its clip and answer box are hidden).
function notice(status) {
  const last = status.round >= (status.rounds || 0);
  switch (status.phase) {
    case "voting": return last ? S.wait_vote_last : S.wait_vote;
    case "vote_closed": case "tally": case "identities":
      return format(last ? S.round_over_last : S.round_over, { round: status.round });
    case "finished": return S.finished_thanks;
    default: return null;
  }
}

function showPhase(status) {
  const line = notice(status)
    ? (status.phase === "finished" || !status.round ? "" : format(S.round_of, { round: status.round, rounds: status.rounds }))
    : status.round && view.playing === false ? S.sitting_out : phaseText(status, S);
  node("phase").textContent = line;
  node("phase").hidden = !line;
}

function render() {
  const status = view.status || {};
  node("me").textContent = view.me ? format(S.me, { name: view.me.name }) : "";
  showPhase(status);
  const message = notice(status);
  node("notice").hidden = !message;
  node("notice-text").textContent = message || "";
  joinBox.hidden = Boolean(message);  // back at the next round, before its clip
  // No stale question: none after the round's questions, nor a previous round's at a round's start.
  const stale = view.question && status.round && view.question.round && view.question.round !== status.round;
  const question = message || stale ? null : view.question;
  node("question").hidden = !question;
  screen.show(question, status);
  if (!question) { shownQuestion = null; return; }
  const answering = status.phase === "answering";
  if (!shownQuestion || shownQuestion.id !== question.id) {
    shownQuestion = question;
    answerState = view.answer && view.answer.question === question.id ? "received" : null;
    node("question-body").replaceChildren(h("p", { class: "question-text" }, question.text));
    buildForm(question);
  }
  setOpen(answering);
  showState();
}

function buildForm(question) {
  const form = node("answer-form");
  const mine = view.answer && view.answer.question === question.id ? view.answer : null;
  let field;
  if (question.type === "mcq") {
    field = h("fieldset", { class: "choice-list" }, h("legend", {}, S.your_answer),
      question.choices.map((choice, index) => h("label", { class: "pill" },
        h("input", { type: "radio", name: "choice", value: index, checked: mine ? mine.choice === index : false }),
        h("span", {}, `${String.fromCharCode(65 + index)}. ${choice}`))));
  } else {
    const text = h("textarea", { id: "answer-text", name: "text", rows: 4, maxlength: 4000 });
    text.value = mine ? mine.text : "";
    field = [h("label", { for: "answer-text", class: "field" }, S.your_answer), text];
  }
  form.replaceChildren(...[field].flat(), h("button", { type: "submit", class: "big" }, mine ? S.change : S.send));
  form.onsubmit = (event) => { event.preventDefault(); submit(question); };
  form.hidden = false;
}

function setOpen(open) {
  for (const control of node("answer-form").querySelectorAll("input, textarea, button")) control.disabled = !open;
}

async function submit(question) {
  const data = new FormData(node("answer-form"));
  const payload = { question: question.id };
  if (question.type === "mcq") {
    if (!data.has("choice")) { answerState = { refused: S.choose }; showState(); return; }
    payload.choice = Number(data.get("choice"));
  } else {
    payload.text = (data.get("text") || "").trim();
    if (!payload.text) { answerState = { refused: S.write }; showState(); return; }
  }
  answerState = "sending";
  showState();
  const reply = await live.send("answer", payload);
  answerState = reply.ok ? "received" : { refused: reply.error.message };
  if (reply.ok) {
    applyOwn(view, { action: "answer", ...payload });  // as the ack and the other tabs' `mine` put it
    node("answer-form").querySelector("button").textContent = S.change;
  }
  showState();
}

function showState() {
  const target = node("answer-state");
  const closed = view.status.phase !== "answering" && view.status.phase !== "clip";
  target.className = answerState === "received" ? "received" : answerState && answerState.refused ? "refused" : "";
  target.textContent = answerState === "sending" ? S.sending
    : answerState === "received" ? (closed ? format(S.kept, { answer: describe() }) : S.received)
    : answerState && answerState.refused ? format(S.refused, { message: answerState.refused })
    : closed && view.status.phase !== "clip" ? S.closed : "";
}

function describe() {
  const mine = view.answer;
  if (!mine) return "";
  return mine.choice !== null && mine.choice !== undefined && shownQuestion
    ? shownQuestion.choices[mine.choice] : mine.text;
}
