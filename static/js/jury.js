// The juror's phone page: the revealed answers under this round's aliases, the judgment sheet (saved as the
// juror types, drafts kept in localStorage), the round's vote, the tally and reveals when the host shows them.
import { screenLock } from "./awake.js";
import { Ballot, choiceOf } from "./ballot.js";
import { applyOwn, format, h, roundHeading } from "./client.js";
import { DeviceCheck } from "./devcheck.js";
import { ClipScreen } from "./screening.js";
import { Sheet } from "./sheet.js";
import { phaseText, questionView, resultsView, startPage } from "./show.js";

const { S, key, node, live, maxText } = startPage({
  onView: (data, event) => {
    if (event === "round") { sheet.reset(); ballot.state = null; }
    view = data;
    render(event);
  },
  status: () => view && view.status,
  showPhase: () => { node("phase").textContent = heading(view.status); },
});
// After a round's questions the heading names the round and what happens, not the last question.
const heading = (status) => roundHeading(status, S, { voting: S.head_vote_juror }) || phaseText(status, S);

let view = null;
// The sheet is saved once typing pauses a second, or two seconds after the first unsaved change while the juror
// keeps typing, at the page's next save slot: one every sheet_save_seconds (the status's), so N pages send at most
// N / sheet_save_seconds saves a second however their jurors type, even when all start at the reveal.
const sheet = new Sheet({
  S,
  live,
  maxText,
  view: () => view,
  storage: `vtt-sheet:${key}`,  // lines typed but not yet acknowledged, by "question/alias"; they outlive a reload
  pace: {
    debounceMs: 1000,
    maxWaitMs: 2000,
    spacing: () => ((view && view.status && view.status.sheet_save_seconds) || 1) * 1000,
  },
  saved: (line) => applyOwn(view, { action: "sheet", ...line }),
});
const ballot = new Ballot({
  S,
  live,
  maxText,
  recorded: (fields) => applyOwn(view, { action: "vote", ...fields }),
  show: () => showVoteState(),
  done: () => showVoteState(),
});
// The clip the players saw, in the light rendition, played when the juror wants (a remote jury judges it too).
const screen = new ClipScreen({ live, rendition: "phone", synced: false });
// "Check this device": the lobby's first card, and at the page's end later (the test clip in the same rendition).
const check = new DeviceCheck({ live, rendition: screen.rendition || "main" });
node("results").after(check.element);
let questionOf = null;

function render(event) {
  if (!view) return;
  if (event && event.startsWith("ack:")) return;  // acks update their own parts
  const status = view.status || {};
  screenLock.hold("vote", status.phase === "voting");  // the screen stays on while the juror may vote
  node("me").textContent = view.me ? format(S.me, { label: view.me.label }) : "";
  node("phase").textContent = heading(status);
  renderQuestion(status);
  renderSheet();
  if (event === "mine") { sheet.refresh(); if ((view.votes || []).length) ballot.state = "saved"; }
  renderVote(status, event);
  const results = resultsView(view, S);
  node("results").replaceChildren(...results);
  node("results").hidden = !results.length;
  arrange(status.phase);
  updateJump();
}

const AFTER_VOTE = ["vote_closed", "tally", "identities", "finished"];

// What matters now comes first on the phone: the ballot while the vote is open (the sheets below it, still
// open), the tally and reveals once it has closed. Only the sections that change place are moved, so a note
// being typed keeps its caret.
function arrange(phase) {
  const order = phase === "voting" ? ["vote", "question", "sheet", "results"]
    : AFTER_VOTE.includes(phase) ? ["results", "vote", "question", "sheet"]
    : ["question", "sheet", "vote", "results"];
  let after = document.querySelector(".live-head");
  for (const id of order) {
    const section = node(id);
    if (after.nextElementSibling !== section) after.after(section);
    after = section;
  }
}

// A bar at the bottom of the screen that takes the juror to the ballot while they have not voted, or to the
// results when new ones are shown, whenever that section is out of sight (a juror deep in the sheets).
const inView = { vote: false, results: false };
let seenResults = "";
const resultsKey = () => `${(view.tallies || []).length}/${(view.identities || []).length}`;
if ("IntersectionObserver" in window) {
  const observer = new IntersectionObserver((entries) => {
    for (const entry of entries) inView[entry.target.id] = entry.isIntersecting;
    updateJump();
  }, { rootMargin: "0px 0px -30% 0px" });
  observer.observe(node("vote"));
  observer.observe(node("results"));
}
node("jump").addEventListener("click", () => {
  const target = node(node("jump-bar").dataset.target || "vote");
  target.scrollIntoView({ block: "start" });
  const title = target.querySelector("h2");
  if (title) { title.tabIndex = -1; title.focus({ preventScroll: true }); }
  if (target.id === "results") seenResults = resultsKey();
  updateJump();
});

function updateJump() {
  if (!view || !view.status) return;
  const phase = view.status.phase;
  if (inView.results && !node("results").hidden) seenResults = resultsKey();
  let target = null;
  if (phase === "voting" && !(view.votes || []).length && !node("vote").hidden && !inView.vote) target = "vote";
  else if (AFTER_VOTE.includes(phase) && !node("results").hidden && !inView.results
    && resultsKey() !== seenResults) target = "results";
  const bar = node("jump-bar");
  bar.hidden = !target;
  bar.dataset.target = target || "";
  node("jump").textContent = target === "vote" ? S.vote_now : S.see_results;
  document.body.classList.toggle("with-jump-bar", Boolean(target));
}

function renderQuestion(status) {
  const question = view.question;
  const box = node("question");
  box.hidden = !question || !["clip", "answering", "answers_closed", "judging"].includes(status.phase);
  screen.show(box.hidden ? null : question, status);
  if (!question || questionOf === question.id) return;
  questionOf = question.id;  // rebuilt only for a new question: a playing clip is left alone
  box.replaceChildren(...(question.clip && question.clip.src ? [screen.element] : []), ...questionView(question));
}

// Adds the articles of newly revealed questions and leaves the others alone, so a juror typing a note keeps
// the caret when another event arrives; the sheet is rebuilt only when it locks or unlocks.
function renderSheet() {
  const revealed = [...(view.revealed || [])].sort((a, b) => b.position - a.position);
  const container = node("sheet-questions");
  const locked = !["judging", "voting"].includes(view.status.phase);
  node("sheet").hidden = !revealed.length;
  if (container.dataset.locked !== String(locked)) {
    container.replaceChildren();
    container.dataset.locked = String(locked);
  }
  const wanted = new Set(revealed.map((shown) => String(shown.question)));
  for (const article of [...container.children]) {
    if (!wanted.has(article.dataset.question)) article.remove();
  }
  for (const shown of revealed.slice().reverse()) {  // oldest first, each new one goes on top
    if (container.querySelector(`[data-question="${shown.question}"]`)) continue;
    container.prepend(h("article", { class: "card sheet-question", "data-question": shown.question },
      h("h3", {}, format(S.sheet_for, { position: shown.position })),
      shown.answers.map((answer) => sheet.line(shown.question, answer, locked))));
  }
}

function renderVote(status, event) {
  const round = view.round;
  const box = node("vote");
  const open = status.phase === "voting";
  const voted = (view.votes || []).length > 0;
  // Open: the ballot; closed (until the next round starts): what the juror chose, and no button.
  box.hidden = !round || !(open || ["vote_closed", "tally", "identities"].includes(status.phase)
    || (status.phase === "finished" && voted));
  if (box.hidden) return;
  const form = node("vote-form");
  const redraw = event === "round" || event === "mine";  // a new round, or a vote cast in another tab
  if (form.dataset.round === String(round.round) && form.dataset.open === String(open) && !redraw) {
    showVoteState();
    return;  // keep what the juror is choosing
  }
  form.dataset.round = String(round.round);
  form.dataset.open = String(open);
  if (!open) {
    form.onsubmit = (e) => e.preventDefault();
    form.replaceChildren(h("p", { class: "vote-closed" }, S.vote_closed), h("p", { id: "vote-state", role: "status" }));
    showVoteState();
    return;
  }
  const slots = status.vote_slots || 1;
  ballot.draw(form, { round: round.round, aliases: round.aliases, slots, votes: view.votes || [], hint: true });
  showVoteState();
}

function showVoteState() {
  const target = node("vote-state");
  if (!target) return;
  const votes = view.votes || [];
  if (view.status.phase !== "voting") {  // closed: what the juror chose
    target.className = "";
    target.textContent = votes.length ? format(S.your_vote, { choice: choiceOf(votes, S) }) : S.no_vote;
    return;
  }
  ballot.showOpen(target, votes);
  updateJump();
}
