// A player's page: the lobby, the clip and question, an answer by option or text within the time limit
// (changeable until answering closes), and a clear "received" once the server has it on disk.
// A player whose answer modes include "read_aloud" (a young child) also hears the question and each option when
// answering opens ("Read it again" repeats it), and picks among big numbered buttons: a touch reads that option
// and selects it, a second touch (or the big Choose button) answers, so a touch never answers unheard. A page
// without a voice for its language says so, and tells the host (the `notice` action), who then reads aloud.
// A player whose answer modes include "spoken" says the answer: the page records and uploads it (recorder.js) and
// the host confirms what was said; without "text" too, the page has no typing or option buttons at all.
import { applyOwn, format, h } from "./client.js";
import { DeviceCheck } from "./devcheck.js";
import { SpokenAnswer } from "./recorder.js";
import { ClipScreen, screenRendition } from "./screening.js";
import { phaseText, startPage } from "./show.js";
import { Reader, optionSpoken, readingLanguage, readingOf, readsAloud } from "./speech.js";

let view = null;
let shownQuestion = null;  // the question whose form is on screen (kept while the player types)
let answerState = null;    // null | "sending" | "received" | {refused}
let playingRound = null;   // the round the snapshot's "playing" is about
let reader = null;         // read-aloud players: the page's voice (made at the first snapshot that says so)
let readFor = null;        // the question last read aloud by itself (once, when its answering opens)
let selected = null;       // read-aloud, multiple choice: the option touched (and heard), not yet sent
let spoken = null;         // spoken players: the recording box (made at the first snapshot that says so)
let check = null;          // "Check this device" (made at the first snapshot: a spoken player's also records)

const { S, node, live, maxText } = startPage({
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
const screen = new ClipScreen({ live, rendition: screenRendition(), askToJoin: true });  // a phone: the light clip
node("clip").replaceChildren(screen.element);
const joinBox = h("div", { class: "clip-join-box" }, screen.joinButton);
node("phase").after(joinBox);  // seen in the lobby, before the first clip
// Read-aloud players: under the question, shown once the page knows it has a voice.
const readAgain = h("button", { type: "button", class: "read-again big", id: "read-again", hidden: true,
  on: { click: () => { if (shownQuestion) readQuestion(shownQuestion); } } }, S.read_again);

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
  if (readsAloud(view) && !reader) startReading();
  if (answersAloud() && !spoken) {
    spoken = new SpokenAnswer({ S, uploadUrl: node("question").dataset.upload,
      onSent: () => { view.recorded = { question: shownQuestion && shownQuestion.id }; } });
    node("answer-form").before(spoken.element);
  }
  if (!check) {
    check = new DeviceCheck({ live, rendition: screen.rendition || "main", records: answersAloud() });
    node("question").after(check.element);  // under the lobby's join button; under the question later
  }
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
  if (!question) { shownQuestion = null; if (reader) reader.stop(); return; }
  const answering = status.phase === "answering";
  if (!shownQuestion || shownQuestion.id !== question.id) {
    shownQuestion = question;
    selected = null;
    answerState = view.answer && view.answer.question === question.id ? "received" : null;
    node("question-body").replaceChildren(h("p", { class: "question-text" }, question.text),
      reader ? readAgain : "");
    buildForm(question);
  }
  setOpen(answering);
  if (spoken) spoken.show(question, answering, view.recorded);
  if (reader && question.type === "mcq") markOptions(myChoice(question));
  showState();
  if (reader && answering && readFor !== question.id && reader.checked && reader.hasVoice) {
    readFor = question.id;  // once, when the child is to answer (not over the clip), or when a late voice comes
    readQuestion(question);
  }
}

// --- reading aloud -------------------------------------------------------------------------------------------
function startReading() {
  const language = readingLanguage(view);
  reader = new Reader({
    language,
    onChange: (hasVoice) => {  // a voice that loaded late reads the open question at once
      voiceKnown(hasVoice, language);
      if (view) render();
    },
    onBlocked: () => showVoiceNote(S.touch_to_hear, "hint"),
  });
  document.body.classList.add("reads-aloud");
  reader.ready().then((hasVoice) => {
    voiceKnown(hasVoice, language);
    if (view) render();  // answering may already be open: read now
  });
}

// Whether the page can read aloud: said on the page, and to the host (at each load, so a page that found its voice
// clears the host's note). Without a voice the "Read it again" button goes: the host reads instead.
function voiceKnown(hasVoice, language) {
  readAgain.hidden = !hasVoice;
  showVoiceNote(hasVoice ? "" : S.no_voice, "warning");
  live.send("notice", { notice: hasVoice ? "voice_ok" : "no_voice", language });
}

function showVoiceNote(text, kind) {
  let note = node("voice-note");
  if (!note) {
    note = h("p", { id: "voice-note", role: "status" });
    node("question").before(note);
  }
  note.className = `voice-note ${kind}`;
  note.textContent = text;
  note.hidden = !text;
}

function readQuestion(question) {
  if (reader && reader.say(readingOf(question, S))) showVoiceNote("", "hint");
}

function answersAloud() {
  return Boolean(view.me && (view.me.answer_modes || []).includes("spoken"));
}

function types() {
  return !view.me || (view.me.answer_modes || ["text"]).includes("text");
}

function buildForm(question) {
  const form = node("answer-form");
  const mine = view.answer && view.answer.question === question.id ? view.answer : null;
  let field;
  if (!types()) {  // spoken only: the options are there to see (and hear); the child says the answer
    form.replaceChildren(question.type === "mcq"
      ? h("ol", { class: "spoken-options" }, question.choices.map((choice) => h("li", {}, choice))) : "");
    form.onsubmit = (event) => event.preventDefault();
    form.hidden = question.type !== "mcq";
    return;
  }
  if (question.type === "mcq" && reader) {
    bigOptions(form, question, mine);
    return;
  }
  if (question.type === "mcq") {
    field = h("fieldset", { class: "choice-list" }, h("legend", {}, S.your_answer),
      question.choices.map((choice, index) => h("label", { class: "pill" },
        h("input", { type: "radio", name: "choice", value: index, checked: mine ? mine.choice === index : false }),
        h("span", {}, `${index + 1}. ${choice}`))));  // numbers: aliases are letters
  } else {
    const text = h("textarea", { id: "answer-text", name: "text", rows: 4, maxlength: maxText });
    text.value = mine ? mine.text : "";
    field = [h("label", { for: "answer-text", class: "field" }, S.your_answer), text];
  }
  form.replaceChildren(...[field].flat(), h("button", { type: "submit", class: "big" }, mine ? S.change : S.send));
  form.onsubmit = (event) => { event.preventDefault(); submit(question); };
  form.hidden = false;
}

// Read-aloud, multiple choice: one big numbered button per option. A touch reads the option and selects it; a second
// touch on it, or the big Choose button, sends it.
function bigOptions(form, question, mine) {
  const hint = h("p", { class: "pick-hint", id: "pick-hint", role: "status" });
  const choose = h("button", { type: "submit", class: "big choose", id: "choose", disabled: true }, S.choose_big);
  const buttons = question.choices.map((option, index) => h("button", {
    type: "button", class: "big-option", "data-index": index, "aria-pressed": "false",
    on: { click: () => touch(question, index) },
  }, h("span", { class: "option-number", "aria-hidden": "true" }, String(index + 1)),
  h("span", { class: "option-text" }, option)));
  form.replaceChildren(h("div", { class: "big-options", role: "group", "aria-label": S.your_answer }, buttons),
    hint, choose);
  form.onsubmit = (event) => { event.preventDefault(); if (selected !== null) submit(question, selected); };
  form.hidden = false;
  markOptions(mine ? mine.choice : null);
}

function touch(question, index) {
  if (selected === index) { submit(question, index); return; }
  selected = index;
  if (reader) reader.say([optionSpoken(question.choices[index], index, S)]);
  markOptions(myChoice(question));
}

// The option the server has as this player's answer to `question` (null: none yet).
function myChoice(question) {
  return view.answer && view.answer.question === question.id ? view.answer.choice : null;
}

// Which option is selected (touched, heard, not yet sent) and which one is the player's answer on the server.
function markOptions(chosen) {
  const form = node("answer-form");
  for (const button of form.querySelectorAll(".big-option")) {
    const index = Number(button.dataset.index);
    button.setAttribute("aria-pressed", String(index === selected));
    button.classList.toggle("chosen", index === chosen && selected === null);
  }
  const hint = node("pick-hint");
  const choose = node("choose");
  if (hint) hint.textContent = selected === null ? "" : format(S.selected_hint, { number: selected + 1 });
  if (choose) choose.disabled = selected === null || view.status.phase !== "answering";
}

function setOpen(open) {
  for (const control of node("answer-form").querySelectorAll("input, textarea, button")) control.disabled = !open;
  if (node("choose")) node("choose").disabled = !open || selected === null;
}

// `choice`: a read-aloud player's option (touched twice, or touched then Choose); else read from the form.
async function submit(question, choice = null) {
  const data = new FormData(node("answer-form"));
  const payload = { question: question.id };
  if (question.type === "mcq" && choice !== null) {
    payload.choice = choice;
  } else if (question.type === "mcq") {
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
    if (choice !== null) {
      selected = null;
      markOptions(payload.choice);
    } else {
      node("answer-form").querySelector("button").textContent = S.change;
    }
  }
  showState();
}

function showState() {
  const target = node("answer-state");
  if (!types() && answerState === null) { target.textContent = ""; return; }  // the recording box says it all
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
