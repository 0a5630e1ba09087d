// A displaced juror's page (docs/protocol.md, "Displaced jurors"): a finished session's rounds judged later, at the
// juror's own pace. One round at a time: each question's clip, text and choices, the players' answers under the
// round's aliases in the recorded order with a judgment-sheet line each (saved as the juror types, drafts kept in
// localStorage until acknowledged), an attention line among the first round's lines where the snapshot has one,
// then the round's vote and "Next round"; at the end the completion code (and, where the host set a completion URL,
// the way back to the crowd platform with it). A reload or a reconnect rebuilds all of it
// from the snapshot.
import { Connection, boot, format, h, newId, strings } from "./client.js";
import { ClipScreen, screenRendition } from "./screening.js";
import { connectionLine, questionView } from "./show.js";

const SAVE_DEBOUNCE_MS = 1500;  // a sheet line is saved once typing pauses this long (a crowd types at once too)

const S = strings();
const { auth, key, route } = boot();
const node = (id) => document.getElementById(id);
const draftsKey = `vtt-displaced-sheet:${key}`;
const placeKey = `vtt-displaced-place:${key}`;
const attentionKey = `vtt-displaced-attention:${key}`;

const read = (where, otherwise) => {
  try { return JSON.parse(localStorage.getItem(where) || "null") ?? otherwise; } catch { return otherwise; }
};
const keep = (where, value) => {
  try { localStorage.setItem(where, JSON.stringify(value)); } catch { /* private mode: memory only */ }
};

let view = null;
let place;                   // the round number on screen, or "done"; undefined until the first snapshot
let drawn = null;            // the round whose questions are in the page (its clips are left alone while it stays)
let drafts = read(draftsKey, {});   // "question/alias" -> line typed but not yet acknowledged
const lineState = {};        // "question/alias" -> "saving" | "saved" | {refused: message}
let saveTimer = null;
let voteState = null;        // null | "pending" | "saved" | {refused}
let attentionState = null;   // null | "saving" | {refused}
let screens = [];
const rendition = screenRendition();  // the light clip on a phone, the clip itself on a larger screen

const live = new Connection({
  auth,
  key,
  route,
  onView,
  onConnection: (online) => connectionLine(node("connection"), online, S),
  onRefused: (error) => {
    const words = { not_finished: S.not_finished, removed: S.removed, link_revoked: S.removed, bad_token: S.link_bad };
    node("phase").textContent = words[error.code] || format(S.link_refused, { message: error.message });
    connectionLine(node("connection"), false, S);
    node("connection").textContent = S.not_connected;
    for (const id of ["intro", "round", "vote", "done"]) node(id).hidden = true;
  },
});
// Actions an earlier visit of this page left unacknowledged are resent at connect; the snapshot came before them.
let leftovers = live.pending() > 0;
if (Object.keys(drafts).length) scheduleSave();

function onView(data, event) {
  if (!data) return;
  view = data;
  if (event && event.startsWith("ack:")) {
    if (leftovers && live.pending() === 0) { leftovers = false; live.resync(); }
    return;
  }
  if (place === undefined) place = startingPlace();
  render();
}

const rounds = () => view.rounds || [];
const roundCard = (number) => rounds().find((card) => card.round === number);
const indexOf = (number) => rounds().findIndex((card) => card.round === number);
const votesOf = (number) => (view.votes || []).filter((v) => v.round === number);
const attentionRound = () => (view.attention && rounds().length ? rounds()[0].round : null);
const attentionDone = () => !view.attention || view.attention.answered;

// Where a visit starts: the finale once the task is done, else where the juror was, else the first round not voted.
function startingPlace() {
  if (view.me && view.me.completion_code) return "done";
  const kept = read(placeKey, null);
  if (kept !== null && kept !== "done" && roundCard(kept)) return kept;
  const open = rounds().find((card) => !votesOf(card.round).length);
  return open ? open.round : (rounds()[0] || {}).round ?? "done";
}

function go(to) {
  place = to;
  keep(placeKey, to);
  render();
  window.scrollTo(0, 0);
}

function render() {
  node("waiting").hidden = true;  // the snapshot came (a crowd's snapshots are paced by the server)
  node("me").textContent = view.me ? format(S.me, { label: view.me.label }) : "";
  const done = place === "done" && view.me.completion_code;
  node("done").hidden = !done;
  node("intro").hidden = Boolean(done);
  node("round").hidden = node("vote").hidden = Boolean(done);
  if (done) {
    node("phase").textContent = S.finished;
    node("completion-code").textContent = view.me.completion_code;
    clearRound();
    return;
  }
  if (place === "done") place = startingPlace();  // kept from a visit before, the task not done: where it stands
  const card = roundCard(place);
  if (!card) return;
  const index = indexOf(place) + 1;
  node("phase").textContent = format(S.progress, { index, count: rounds().length });
  if (drawn !== place) drawRound(card, index);
  else refreshSavedLines();
  renderVote(card, index);
}

function clearRound() {
  for (const screen of screens) { screen.following.stop(); screen.video.pause(); }
  screens = [];
  drawn = null;
  node("questions").replaceChildren();
}

// --- the round's questions and sheet lines -----------------------------------------------------------------------

function drawRound(card, index) {
  clearRound();
  drawn = card.round;
  voteState = null;
  node("round-title").replaceChildren(format(S.progress, { index, count: rounds().length }),
    card.theme ? h("span", { class: "muted theme" }, ` · ${format(S.theme, { theme: card.theme })}`) : "");
  const questions = [...card.questions].sort((a, b) => a.position - b.position);
  node("questions").replaceChildren(...questions.map((question, at) => {
    const clip = [];
    if (question.clip && question.clip.src) {
      const screen = new ClipScreen({ live, rendition, synced: false });
      screen.show(question, {});
      screens.push(screen);
      clip.push(screen.element);
    }
    const lines = question.answers.map((answer) => sheetLine(question.id, answer));
    if (at === 0 && card.round === attentionRound()) lines.splice(Math.min(1, lines.length), 0, attentionLine());
    return h("article", { class: "card displaced-question", "data-question": question.id },
      h("h3", {}, format(S.question_of, { position: at + 1, count: questions.length })),
      ...clip, ...questionView(question),
      h("h4", { class: "answers-title" }, S.answers), ...lines);
  }));
}

const lineKey = (question, alias) => `${question}/${alias}`;
const savedLine = (question, alias) => (view.sheet || []).find((row) => row.question === question && row.alias === alias);
const currentLine = (question, alias) => drafts[lineKey(question, alias)] || savedLine(question, alias)
  || { question, alias, note: "", human_likeness: null, looks_like_ai: false };

function edit(question, alias, change) {
  const k = lineKey(question, alias);
  drafts[k] = { ...currentLine(question, alias), ...change };
  keep(draftsKey, drafts);
  lineState[k] = "pending";
  showLineState(question, alias);
  scheduleSave();
}

function scheduleSave() {
  window.clearTimeout(saveTimer);
  saveTimer = window.setTimeout(saveDrafts, SAVE_DEBOUNCE_MS);
}

// Every line changed since the last save, in one message; each draft stays until the server has it.
async function saveDrafts() {
  const sent = { ...drafts };
  const lines = Object.values(sent);
  if (!lines.length) return;
  for (const k of Object.keys(sent)) lineState[k] = "saving";
  lines.forEach((line) => showLineState(line.question, line.alias));
  const reply = await live.send("sheet", { id: newId("sheet"), lines });
  for (const [k, line] of Object.entries(sent)) {
    if (drafts[k] === line) delete drafts[k];  // unless it changed again while saving
    lineState[k] = !reply.ok ? { refused: reply.error.message } : drafts[k] ? "pending" : "saved";
    if (reply.ok) {
      view.sheet = [...(view.sheet || []).filter((row) => lineKey(row.question, row.alias) !== k), line];
    }
    showLineState(line.question, line.alias);
  }
  keep(draftsKey, drafts);
  completed(reply);
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

function sheetLine(question, answer) {
  const line = currentLine(question, answer.alias);
  const id = `l-${question}-${answer.alias}`;
  const likeness = h("fieldset", { class: "likeness" },
    h("legend", {}, S.likeness),
    [1, 2, 3, 4, 5].map((score) => h("label", { class: "pill" },
      h("input", { type: "radio", name: `${id}-likeness`, value: score, checked: line.human_likeness === score,
        on: { change: () => edit(question, answer.alias, { human_likeness: score }) } }),
      h("span", {}, `${score}`))));
  const note = h("textarea", { id: `${id}-note`, rows: 2, maxlength: 4000,
    on: { input: (e) => edit(question, answer.alias, { note: e.target.value }) } });
  note.value = line.note || "";
  const marked = h("label", { class: "check" },
    h("input", { type: "checkbox", id: `${id}-ai`, checked: line.looks_like_ai,
      on: { change: (e) => edit(question, answer.alias, { looks_like_ai: e.target.checked }) } }),
    h("span", {}, S.looks_ai));
  const stateNode = h("span", { "data-line-state": lineKey(question, answer.alias), role: "status" });
  queueMicrotask(() => showLineState(question, answer.alias));
  return h("div", { class: "sheet-line", "data-alias": answer.alias },
    h("p", { class: "answer" }, h("span", { class: "alias" }, answer.alias),
      answer.answered ? answer.text : h("em", {}, S.no_answer)),
    h("label", { for: `${id}-note`, class: "field" }, S.note), note, likeness, marked, stateNode);
}

// A snapshot again (a reconnect, the page seen again): the saved lines shown, unless this page is editing them.
function refreshSavedLines() {
  for (const row of view.sheet || []) {
    const k = lineKey(row.question, row.alias);
    if (drafts[k]) continue;
    const id = `l-${row.question}-${row.alias}`;
    const note = document.getElementById(`${id}-note`);
    if (!note) continue;
    if (document.activeElement !== note) note.value = row.note || "";
    const marked = document.getElementById(`${id}-ai`);
    if (marked) marked.checked = Boolean(row.looks_like_ai);
    for (const radio of document.querySelectorAll(`input[name="${CSS.escape(`${id}-likeness`)}"]`)) {
      radio.checked = Number(radio.value) === row.human_likeness;
    }
    lineState[k] = "saved";
    showLineState(row.question, row.alias);
  }
  showAttentionState();
}

// The instructed-response line: it looks like a sheet line and asks for one given number.
function attentionLine() {
  const chosen = read(attentionKey, null);
  queueMicrotask(showAttentionState);
  return h("div", { class: "sheet-line attention-line", id: "attention" },
    h("fieldset", { class: "likeness" },
      h("legend", {}, format(S.attention, { value: view.attention.asks })),
      [1, 2, 3, 4, 5].map((value) => h("label", { class: "pill" },
        h("input", { type: "radio", name: "attention", value, checked: chosen === value,
          on: { change: () => answerAttention(value) } }),
        h("span", {}, `${value}`)))),
    h("span", { id: "attention-state", role: "status" }));
}

async function answerAttention(value) {
  keep(attentionKey, value);
  attentionState = "saving";
  showAttentionState();
  const reply = await live.send("attention", { id: newId("attention"), value });
  attentionState = reply.ok ? null : { refused: reply.error.message };
  if (reply.ok) view.attention.answered = true;
  showAttentionState();
  completed(reply);
  renderVote(roundCard(place), indexOf(place) + 1);
}

function showAttentionState() {
  const target = node("attention-state");
  if (!target) return;
  const saved = view.attention && view.attention.answered && !attentionState;
  target.className = `line-state ${attentionState && attentionState.refused ? "refused" : saved ? "saved" : attentionState || ""}`;
  target.textContent = attentionState === "saving" ? S.saving
    : attentionState && attentionState.refused ? format(S.refused, { message: attentionState.refused })
    : saved ? S.saved : "";
}

// --- the round's vote and the way on -----------------------------------------------------------------------------

function renderVote(card, index) {
  if (!card) return;
  const form = node("vote-form");
  node("vote-title").textContent = format(S.vote_title, { index });
  if (form.dataset.round !== String(card.round) || (voteState !== "pending" && !form.contains(document.activeElement))) {
    drawBallot(form, card);
  }
  showVoteState(card);
  const last = index === rounds().length;
  const voted = votesOf(card.round).length > 0;
  const attentionHere = card.round === attentionRound() && !attentionDone();
  const next = node("next");
  next.textContent = last ? S.finish : S.next;
  next.disabled = !voted || attentionHere;
  node("nav-hint").textContent = !voted ? S.vote_first : attentionHere ? S.attention_first : "";
  node("back").hidden = index === 1;
}

function drawBallot(form, card) {
  form.dataset.round = String(card.round);
  const slots = view.vote_slots || 1;
  const mine = (slot) => votesOf(card.round).find((v) => v.slot === slot);
  const slotSets = [];
  for (let slot = 1; slot <= slots; slot += 1) {
    const chosen = mine(slot);
    slotSets.push(h("fieldset", { class: "suspects" },
      h("legend", {}, slots > 1 ? format(S.slot, { slot }) : S.suspect),
      [...card.aliases, null].map((alias) => h("label", { class: "pill big" },
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
  form.replaceChildren(...slotSets, confidence, h("label", { for: "vote-reason", class: "field" }, S.reason), reason,
    h("button", { type: "submit", id: "vote-submit", class: "big" }, S.cast),
    h("p", { id: "vote-state", role: "status" }));
  form.onsubmit = (e) => { e.preventDefault(); castVote(form, slots, card.round); };
}

async function castVote(form, slots, round) {
  const data = new FormData(form);
  const picks = [];
  for (let slot = 1; slot <= slots; slot += 1) {
    if (!data.has(`slot-${slot}`)) { voteState = { refused: S.pick_one }; showVoteState(roundCard(round)); return; }
    picks.push(data.get(`slot-${slot}`) || null);
  }
  const confidence = data.get("confidence") ? Number(data.get("confidence")) : null;
  const reason = data.get("reason") || "";
  voteState = "pending";
  showVoteState(roundCard(round));
  let reply = null;
  for (let slot = 1; slot <= slots; slot += 1) {
    const fields = { round, slot, alias: picks[slot - 1], confidence, reason };
    reply = await live.send("vote", { id: newId("vote"), ...fields });
    if (!reply.ok) { voteState = { refused: reply.error.message }; showVoteState(roundCard(round)); return; }
    view.votes = [...(view.votes || []).filter((v) => v.round !== round || v.slot !== slot), fields];
  }
  voteState = "saved";
  completed(reply);
  if (place === round) renderVote(roundCard(round), indexOf(round) + 1);
}

function showVoteState(card) {
  const target = node("vote-state");
  if (!target || !card) return;
  const votes = votesOf(card.round).slice().sort((a, b) => a.slot - b.slot);
  const choice = votes.map((v) => v.alias ?? S.abstained).join(", ");
  const submit = node("vote-submit");
  if (submit) submit.textContent = votes.length ? S.change : S.cast;
  target.className = voteState && voteState.refused ? "refused" : votes.length && voteState !== "pending" ? "received" : "";
  target.textContent = voteState === "pending" ? S.vote_pending
    : voteState && voteState.refused ? format(S.refused, { message: voteState.refused })
    : votes.length ? format(S.vote_saved, { choice }) : "";
}

// The ack that completes the task carries the completion code; the finale shows it once the last round is voted.
function completed(reply) {
  if (reply && reply.ok && reply.completion_code) view.me.completion_code = reply.completion_code;
}

node("next").addEventListener("click", () => {
  const index = indexOf(place);
  if (index < rounds().length - 1) { go(rounds()[index + 1].round); return; }
  if (view.me.completion_code) { finish(); return; }
  const open = rounds().find((card) => !votesOf(card.round).length);  // not done: where something is missing
  go(open ? open.round : attentionRound() ?? place);
});
// Finish: the code, and where the host set a completion URL, the crowd platform with it (the server redirects).
function finish() {
  go("done");
  const platform = node("return");
  if (platform) window.location.assign(platform.href);
}

node("back").addEventListener("click", () => {
  const index = indexOf(place);
  if (index > 0) go(rounds()[index - 1].round);
});
node("review").addEventListener("click", () => go(rounds()[0].round));
node("intro").hidden = false;
