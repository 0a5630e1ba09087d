// A displaced juror's page (docs/protocol.md, "Displaced jurors"): a finished session's rounds judged later, at the
// juror's own pace. One round at a time: each question's clip, text and choices, the players' answers under the
// round's aliases in the recorded order with a judgment-sheet line each (saved as the juror types, drafts kept in
// localStorage until acknowledged), an attention line among the first round's lines where the snapshot has one,
// then the round's vote and "Next round"; at the end the completion code (and, where the host set a completion URL,
// the way back to the crowd platform with it). A reload or a reconnect rebuilds all of it
// from the snapshot.
import { Ballot } from "./ballot.js";
import { format, h, keep, kept } from "./client.js";
import { ClipScreen, screenRendition } from "./screening.js";
import { Sheet, lineKey } from "./sheet.js";
import { questionView, startPage } from "./show.js";

let view = null;
let place;                   // the round number on screen, or "done"; undefined until the first snapshot
let drawn = null;            // the round whose questions are in the page (its clips are left alone while it stays)
let attentionState = null;   // null | "saving" | {refused}
let screens = [];
const rendition = screenRendition();  // the light clip on a phone, the clip itself on a larger screen

const { S, key, node, live, maxText } = startPage({
  onView,
  refusals: { not_finished: "not_finished", removed: "removed", link_revoked: "removed", bad_token: "link_bad" },
  onRefused: () => { for (const id of ["intro", "round", "vote", "done"]) node(id).hidden = true; },
});
const placeKey = `vtt-displaced-place:${key}`;
const attentionKey = `vtt-displaced-attention:${key}`;
// Actions an earlier visit of this page left unacknowledged are resent at connect; the snapshot came before them.
let leftovers = live.pending() > 0;
const sheet = new Sheet({
  S,
  live,
  maxText,
  view: () => view,
  storage: `vtt-displaced-sheet:${key}`,  // "question/alias" -> line typed but not yet acknowledged
  pace: { debounceMs: 1500 },  // a sheet line is saved once typing pauses this long (a crowd types at once too)
  saved: (line) => {
    const k = lineKey(line.question, line.alias);
    view.sheet = [...(view.sheet || []).filter((row) => lineKey(row.question, row.alias) !== k), line];
  },
  after: (reply) => completed(reply),
  spareFocused: true,
});
const ballot = new Ballot({
  S,
  live,
  maxText,
  recorded: (fields) => {
    view.votes = [...(view.votes || []).filter((v) => v.round !== fields.round || v.slot !== fields.slot), fields];
  },
  show: (round) => showVoteState(roundCard(round)),
  done: (reply, round) => {
    completed(reply);
    if (place === round) renderVote(roundCard(round), indexOf(round) + 1);
  },
});

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
  const was = kept(placeKey, null);
  if (was !== null && was !== "done" && roundCard(was)) return was;
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
  ballot.state = null;
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
    const lines = question.answers.map((answer) => {
      const line = sheet.line(question.id, answer);
      line.dataset.alias = answer.alias;
      return line;
    });
    if (at === 0 && card.round === attentionRound()) lines.splice(Math.min(1, lines.length), 0, attentionLine());
    return h("article", { class: "card displaced-question", "data-question": question.id },
      h("h3", {}, format(S.question_of, { position: at + 1, count: questions.length })),
      ...clip, ...questionView(question),
      h("h4", { class: "answers-title" }, S.answers), ...lines);
  }));
}

// A snapshot again (a reconnect, the page seen again): the saved lines shown, unless this page is editing them.
function refreshSavedLines() {
  sheet.refresh();
  showAttentionState();
}

// The instructed-response line: it looks like a sheet line and asks for one given number.
function attentionLine() {
  const chosen = kept(attentionKey, null);
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
  const reply = await live.send("attention", { value });
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
  if (form.dataset.round !== String(card.round) || (ballot.state !== "pending" && !form.contains(document.activeElement))) {
    form.dataset.round = String(card.round);
    ballot.draw(form, { round: card.round, aliases: card.aliases, slots: view.vote_slots || 1, votes: votesOf(card.round) });
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

function showVoteState(card) {
  const target = node("vote-state");
  if (!target || !card) return;
  ballot.showOpen(target, votesOf(card.round));
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
