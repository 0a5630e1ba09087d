// The juror's phone page: the revealed answers under this round's aliases, the judgment sheet (saved as the
// juror types, drafts kept in localStorage), the round's vote, the tally and reveals when the host shows them.
import { screenLock } from "./awake.js";
import { applyOwn, format, h, roundHeading } from "./client.js";
import { DeviceCheck } from "./devcheck.js";
import { ClipScreen } from "./screening.js";
import { phaseText, questionView, resultsView, startPage } from "./show.js";

const SAVE_DEBOUNCE_MS = 1000;  // save once typing pauses this long, or this long after the first unsaved
const SAVE_MAX_WAIT_MS = 2000;  // change while the juror keeps typing, at the page's next save slot: one every
// sheet_save_seconds (the status's), at a phase drawn per page, so N pages send at most N / sheet_save_seconds
// saves a second however their jurors type, even when all start at the reveal (bench/bench_load.py models it)
const SAVE_PHASE = Math.random();

const { S, key, node, live } = startPage({
  onView: (data, event) => {
    if (event === "round") { drafts = {}; writeDrafts(); lineState = {}; voteState = null; }
    view = data;
    render(event);
  },
  status: () => view && view.status,
  showPhase: () => { node("phase").textContent = heading(view.status); },
});
// After a round's questions the heading names the round and what happens, not the last question.
const heading = (status) => roundHeading(status, S, { voting: S.head_vote_juror }) || phaseText(status, S);
const draftsKey = `vtt-sheet:${key}`;

// Lines typed but not yet acknowledged, by "question/alias"; they outlive a reload.
let drafts = readDrafts();
let lineState = {};      // "question/alias" -> "saving" | "saved" | {refused: message}
let saveTimer = null;
let firstUnsaved = null;
let lastSave = 0;
let voteState = null;    // null | "pending" | "saved" | {refused}
let view = null;
if (Object.keys(drafts).length) scheduleSave();
// The clip the players saw, in the light rendition, played when the juror wants (a remote jury judges it too).
const screen = new ClipScreen({ live, rendition: "phone", synced: false });
// "Check this device": the lobby's first card, and at the page's end later (the test clip in the same rendition).
const check = new DeviceCheck({ live, rendition: screen.rendition || "main" });
node("results").after(check.element);
let questionOf = null;

function lineKey(question, alias) { return `${question}/${alias}`; }

function readDrafts() {
  try { return JSON.parse(localStorage.getItem(draftsKey) || "{}"); } catch { return {}; }
}

function writeDrafts() {
  try { localStorage.setItem(draftsKey, JSON.stringify(drafts)); } catch { /* memory only */ }
}

function savedLine(question, alias) {
  return (view.sheet || []).find((row) => row.question === question && row.alias === alias);
}

function currentLine(question, alias) {
  return drafts[lineKey(question, alias)] || savedLine(question, alias)
    || { question, alias, note: "", human_likeness: null, looks_like_ai: false };
}

function edit(question, alias, change) {
  const k = lineKey(question, alias);
  drafts[k] = { ...currentLine(question, alias), ...change };
  writeDrafts();
  lineState[k] = "pending";
  showLineState(question, alias);
  scheduleSave();
}

function saveSpacing() {
  return ((view && view.status && view.status.sheet_save_seconds) || 1) * 1000;
}

function nextSaveSlot(time) {  // the first of this page's save slots after time
  const spacing = saveSpacing();
  return (Math.floor(time / spacing - SAVE_PHASE) + 1 + SAVE_PHASE) * spacing;
}

function scheduleSave() {
  const now = Date.now();
  if (firstUnsaved === null) firstUnsaved = now;
  window.clearTimeout(saveTimer);
  const due = nextSaveSlot(Math.max(lastSave, Math.min(now + SAVE_DEBOUNCE_MS, firstUnsaved + SAVE_MAX_WAIT_MS)));
  saveTimer = window.setTimeout(saveDrafts, Math.max(0, Math.ceil(due - now)));  // not a moment early
}

// Every line changed since the last save, in one message; the drafts stay until the server has them.
async function saveDrafts() {
  firstUnsaved = null;
  lastSave = Date.now();
  const lines = Object.values(drafts);
  if (!lines.length) return;
  const sent = Object.fromEntries(lines.map((line) => [lineKey(line.question, line.alias), line]));
  for (const k of Object.keys(sent)) lineState[k] = "saving";
  lines.forEach((line) => showLineState(line.question, line.alias));
  const reply = await live.send("sheet", { lines }, "sheet");
  for (const [k, line] of Object.entries(sent)) {
    if (drafts[k] === line) delete drafts[k];  // unless it changed again while saving
    lineState[k] = !reply.ok ? { refused: reply.error.message } : drafts[k] ? "pending" : "saved";
    if (reply.ok) applyOwn(view, { action: "sheet", ...line });
    showLineState(line.question, line.alias);
  }
  writeDrafts();
}

function showLineState(question, alias) {
  const k = lineKey(question, alias);
  const target = document.querySelector(`[data-line-state="${CSS.escape(k)}"]`);
  if (!target) return;
  const state = lineState[k] || (drafts[k] ? "pending" : (savedLine(question, alias) ? "saved" : null));
  target.className = `line-state ${typeof state === "object" && state ? "refused" : state || ""}`;
  target.textContent = state === "saved" ? S.saved : state === "saving" ? S.saving : state === "pending"
    ? S.not_saved : state && state.refused ? format(S.refused, { message: state.refused }) : "";
}

function render(event) {
  if (!view) return;
  if (event && event.startsWith("ack:")) return;  // acks update their own parts
  const status = view.status || {};
  screenLock.hold("vote", status.phase === "voting");  // the screen stays on while the juror may vote
  node("me").textContent = view.me ? format(S.me, { label: view.me.label }) : "";
  node("phase").textContent = heading(status);
  renderQuestion(status);
  renderSheet();
  if (event === "mine") { refreshSavedLines(); voteState = (view.votes || []).length ? "saved" : voteState; }
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
      shown.answers.map((answer) => sheetLine(shown.question, answer, locked))));
  }
}

// Lines saved from another tab of this juror ("mine") show here too, unless this tab is editing them.
function refreshSavedLines() {
  for (const row of view.sheet || []) {
    const k = lineKey(row.question, row.alias);
    if (drafts[k]) continue;
    const id = `l-${row.question}-${row.alias}`;
    const note = document.getElementById(`${id}-note`);
    if (!note) continue;
    note.value = row.note || "";
    const marked = document.getElementById(`${id}-ai`);
    if (marked) marked.checked = Boolean(row.looks_like_ai);
    for (const radio of document.querySelectorAll(`input[name="${CSS.escape(`${id}-likeness`)}"]`)) {
      radio.checked = Number(radio.value) === row.human_likeness;
    }
    lineState[k] = "saved";
    showLineState(row.question, row.alias);
  }
}

function sheetLine(question, answer, locked) {
  const line = currentLine(question, answer.alias);
  const id = `l-${question}-${answer.alias}`;
  const likeness = h("fieldset", { class: "likeness" },
    h("legend", {}, S.likeness),
    [1, 2, 3, 4, 5].map((score) => h("label", { class: "pill" },
      h("input", { type: "radio", name: `${id}-likeness`, value: score, checked: line.human_likeness === score,
        disabled: locked, on: { change: () => edit(question, answer.alias, { human_likeness: score }) } }),
      h("span", {}, `${score}`))));
  const note = h("textarea", { id: `${id}-note`, rows: 2, maxlength: 4000, disabled: locked,
    on: { input: (e) => edit(question, answer.alias, { note: e.target.value }) } });
  note.value = line.note || "";
  const marked = h("label", { class: "check" },
    h("input", { type: "checkbox", id: `${id}-ai`, checked: line.looks_like_ai, disabled: locked,
      on: { change: (e) => edit(question, answer.alias, { looks_like_ai: e.target.checked }) } }),
    h("span", {}, S.looks_ai));
  const stateNode = h("span", { "data-line-state": lineKey(question, answer.alias), role: "status" });
  const block = h("div", { class: "sheet-line" },
    h("p", { class: "answer" }, h("span", { class: "alias" }, answer.alias),
      answer.answered ? answer.text : h("em", {}, S.no_answer)),
    h("label", { for: `${id}-note`, class: "field" }, S.note), note, likeness, marked, stateNode);
  queueMicrotask(() => showLineState(question, answer.alias));
  return block;
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
  const mine = (slot) => (view.votes || []).find((v) => v.slot === slot);
  const slotSets = [];
  for (let slot = 1; slot <= slots; slot += 1) {
    const chosen = mine(slot);
    slotSets.push(h("fieldset", { class: "suspects" },
      h("legend", {}, slots > 1 ? format(S.slot, { slot }) : S.suspect),
      [...round.aliases, null].map((alias) => h("label", { class: "pill big" },
        h("input", { type: "radio", name: `slot-${slot}`, value: alias ?? "", required: true,
          checked: chosen ? chosen.alias === alias : false }),
        h("span", {}, alias ?? S.abstain)))));
  }
  const first = mine(1) || {};
  const confidence = h("fieldset", { class: "likeness" }, h("legend", {}, S.confidence),
    [1, 2, 3, 4, 5].map((score) => h("label", { class: "pill" },
      h("input", { type: "radio", name: "confidence", value: score, checked: first.confidence === score }),
      h("span", {}, `${score}`))));
  const reason = h("textarea", { id: "vote-reason", name: "reason", rows: 2, maxlength: 4000 });
  reason.value = first.reason || "";
  const submit = h("button", { type: "submit", id: "vote-submit", class: "big" }, voted ? S.change : S.cast);
  form.replaceChildren(...slotSets, confidence, h("label", { for: "vote-reason", class: "field" }, S.reason), reason,
    submit, h("p", { id: "vote-hint", class: "muted" }, S.can_change), h("p", { id: "vote-state", role: "status" }));
  form.onsubmit = (e) => { e.preventDefault(); castVote(form, slots, round.round); };
  showVoteState();
}

async function castVote(form, slots, round) {
  const data = new FormData(form);
  const picks = [];
  for (let slot = 1; slot <= slots; slot += 1) {
    if (!data.has(`slot-${slot}`)) { voteState = { refused: S.pick_one }; showVoteState(); return; }
    picks.push(data.get(`slot-${slot}`) || null);
  }
  const confidence = data.get("confidence") ? Number(data.get("confidence")) : null;
  const reason = data.get("reason") || "";
  voteState = "pending";
  showVoteState();
  for (let slot = 1; slot <= slots; slot += 1) {
    const reply = await live.send("vote", { round, slot, alias: picks[slot - 1], confidence, reason });
    if (!reply.ok) { voteState = { refused: reply.error.message }; showVoteState(); return; }
    applyOwn(view, { action: "vote", round, slot, alias: picks[slot - 1], confidence, reason });
  }
  voteState = "saved";
  showVoteState();
}

function showVoteState() {
  const target = node("vote-state");
  if (!target) return;
  const votes = (view.votes || []).slice().sort((a, b) => a.slot - b.slot);
  const choice = votes.map((v) => v.alias ?? S.abstained).join(", ");
  if (view.status.phase !== "voting") {  // closed: what the juror chose
    target.className = "";
    target.textContent = votes.length ? format(S.your_vote, { choice }) : S.no_vote;
    return;
  }
  const submit = node("vote-submit");
  if (submit) submit.textContent = votes.length ? S.change : S.cast;
  const hint = node("vote-hint");
  if (hint) hint.hidden = votes.length > 0;  // the recorded vote's line says it too
  target.className = voteState && voteState.refused ? "refused" : votes.length && voteState !== "pending" ? "received" : "";
  target.textContent = voteState === "pending" ? S.vote_pending
    : voteState && voteState.refused ? format(S.refused, { message: voteState.refused })
    : votes.length ? format(S.vote_saved, { choice }) : "";
  updateJump();
}
