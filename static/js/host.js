// The host's live console: the flow buttons of the current phase only, answers with names as they arrive,
// identity tells to edit or redact before the reveal, the live vote count, the full tally, who is connected,
// and the AI players' agents (their last report; the host types or imports an answer when one fails); a read-aloud
// player's page without a voice is said at the top: the host reads that child the questions; a spoken player's
// recordings are heard and confirmed in their own card (spoken_host.js).
import { agentReport } from "./agents_host.js";
import { format, h, newId, pageLanguage } from "./client.js";
import { followDoorCode } from "./door.js";
import { finishedStep, movesFor } from "./host_moves.js";
import { ClipScreen } from "./screening.js";
import { phaseText, startPage } from "./show.js";
import { renderReadiness } from "./readiness_host.js";
import { renderSpoken } from "./spoken_host.js";

let view = null;
const { S, node, live } = startPage({
  onView: (data, event) => { view = data; if (!event || !event.startsWith("ack:")) render(event); },
  status: () => view && view.status,
  showPhase: () => { node("phase").textContent = phaseText(view.status, S); },
});
node("open-join").addEventListener("change", (event) => move("set_open_join", { open: event.target.checked }));
node("join-door").addEventListener("change", (event) => move("set_open_join", {
  open: node("open-join").checked, door: event.target.checked }));
node("join-cap-form").addEventListener("submit", (event) => {
  event.preventDefault();
  move("set_open_join", { open: node("open-join").checked, cap: Number(node("join-cap").value || 0) });
});
// The host's preview follows the screening, muted: the host sees what the room sees.
const preview = new ClipScreen({ live, audible: false });
node("clip-preview").replaceChildren(preview.element);

// A move's outcome under the flow buttons: a refusal stays until the next move, "Done." only a moment (the
// phase line and the buttons already show what the move did; a lasting "Done." reads as news about the next step).
const DONE_SHOWN_MS = 2500;
let doneTimer = null;

async function move(action, args = {}) {
  window.clearTimeout(doneTimer);
  node("flow-state").textContent = "…";
  node("flow-state").className = "";
  const reply = await live.send("host", { action, ...args }, "host");
  node("flow-state").textContent = reply.ok ? S.done : format(S.refused, { message: reply.error.message });
  node("flow-state").className = reply.ok ? "received" : "refused";
  if (reply.ok) {
    doneTimer = window.setTimeout(() => { node("flow-state").textContent = ""; node("flow-state").className = ""; },
      DONE_SHOWN_MS);
  }
  return reply;
}

// How long the clip plays, read when the host presses play: the span's end (or the file's length, once the
// preview has read it) less its start; without either the server falls back on the span, or waits for the host.
function playLength() {
  const end = preview.end;
  return end !== null && end > preview.start ? { duration: Math.round((end - preview.start) * 1000) / 1000 } : {};
}

// --- the clips' preflight -------------------------------------------------------------------------------
// Every question's clip as the server checked it (found, decodes, long enough, plays in browsers), and a preview
// with controls, on this screen only: the host finds a problem before the players do.
let clipChecks = null;
let clipsDrawnFor = null;  // the checks and the round they were drawn for (not redrawn on every event)
const clipsCard = node("clips-card");
const clipsPreview = new ClipScreen({ live, rendition: null });
node("clips-preview").replaceChildren(clipsPreview.element);
clipsPreview.element.hidden = true;
node("clips-recheck").addEventListener("click", () => checkClips());
checkClips();

async function checkClips() {
  node("clips-summary").textContent = S.clips_checking;
  try {
    const response = await fetch(clipsCard.dataset.url, { headers: { Accept: "application/json" }, credentials: "same-origin" });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    clipChecks = (await response.json()).clips;
    clipsDrawnFor = null;
  } catch (error) {
    node("clips-summary").textContent = format(S.clips_failed, { message: String(error.message || error) });
    return;
  }
  if (view) renderClips(view.status || {});
}

function renderClips(status) {
  const drawnFor = `${status.phase}/${status.round}`;
  if (!clipChecks || clipsDrawnFor === drawnFor) return;
  clipsDrawnFor = drawnFor;
  const counts = { ok: 0, warning: 0, problem: 0, url: 0, none: 0 };
  for (const row of clipChecks) counts[row.verdict] += 1;
  node("clips-summary").textContent = format(S.clips_summary, { count: clipChecks.length, ...counts });
  node("clips-summary").className = counts.problem ? "tell" : "";
  const next = status.phase === "lobby" || status.phase === "draft" ? 1 : (status.round || 0) + 1;
  node("clips-table").replaceChildren(
    h("thead", {}, h("tr", {}, ["#", S.clip_question, S.clip_file, S.clip_status, S.clip_length, ""].map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {}, clipChecks.map((row) => {
      const soon = row.round === status.round || row.round === next;
      const notes = [...row.problems, ...row.warnings].join(" ");
      return h("tr", { class: soon ? "soon" : "", "data-qid": row.qid },
        h("td", {}, `${row.round}.${row.position}`),
        h("td", {}, row.qid),
        h("td", { class: "clip-src" }, row.source || "—", row.phone ? h("span", { class: "badge" }, S.clip_phone) : ""),
        h("td", {}, h("span", { class: `badge clip-${row.verdict}` }, S[`clip_${row.verdict}`] || row.verdict),
          notes ? h("p", { class: "clip-notes" }, notes) : ""),
        h("td", { class: "num" }, row.duration !== null && row.duration !== undefined ? `${row.duration.toFixed(1)} s` : ""),
        h("td", {}, row.source && row.verdict !== "problem"
          ? h("button", { type: "button", class: "secondary", on: { click: () => previewClip(row) } }, S.preview) : ""));
    })));
  showWholeRows(node("clips-table").parentElement);
}

// The clips' scroll box ends between two rows, never through one (a row cut at its Preview button reads as a
// broken list); the rows below are a scroll away.
function showWholeRows(box) {
  box.style.maxHeight = "";
  box.scrollTop = 0;
  const rows = [...box.querySelectorAll("tbody tr")];
  const top = box.getBoundingClientRect().top;
  const bottomOf = (row) => row.getBoundingClientRect().bottom - top;
  const fitting = rows.filter((row) => bottomOf(row) <= box.clientHeight + 0.5);
  if (fitting.length < rows.length && fitting.length) box.style.maxHeight = `${Math.ceil(bottomOf(fitting.at(-1)))}px`;
}

function previewClip(row) {
  const question = (view.questions || []).find((q) => q.id === row.question);
  if (!question) return;
  clipsPreview.show(question, { clip_playback: "device" });  // the host's own preview: its controls, no screening
  clipsPreview.element.hidden = false;
  node("clips-summary").textContent = format(S.previewing, row);
}

function render() {
  const status = view.status || {};
  node("phase").textContent = phaseText(status, S);
  preview.show(view.question, status);
  renderFlow(status);
  renderClips(status);
  renderQuestion(status);
  renderVotes(status);
  renderPeople();
  renderSpeechNotices();
  renderJury(status);
  renderAgents(status);
  renderSpoken(view, status, { S, node, live });
  renderReadiness(view, { S, node });
  node("open-join").checked = Boolean(status.open_join);
  if (!status.open_join) node("door-line").hidden = true;  // closed (after the finish too): no door code to give
  else if (node("door-line").hidden) door.refresh();
}

function renderFlow(status) {
  const finished = finishedStep(status, S);
  if (finished) {
    node("flow").replaceChildren(h("p", { class: "flow-finished" }, finished.text),
      h("a", { class: "button", id: "see-results", href: node("flow").dataset.results }, finished.link));
    return;
  }
  const buttons = movesFor(status, S, playLength).map((m) => h("button", {
    type: "button", class: m.secondary ? "secondary" : "", "data-action": m.action,
    on: { click: () => move(m.action, typeof m.args === "function" ? m.args() : m.args || {}) },
  }, m.label));
  if (!["finished", "draft"].includes(status.phase) && !buttons.some((b) => b.dataset.action === "finish")) {
    buttons.push(h("button", { type: "button", class: "danger", "data-action": "force-finish",
      on: { click: () => { if (window.confirm(S.force_confirm)) move("finish", { force: true }); } } }, S.force_finish));
  }
  node("flow").replaceChildren(...buttons);
}

function renderQuestion(status) {
  const question = view.question;
  if (!question) { node("question").replaceChildren(); node("answers").replaceChildren(); return; }
  const key = question.type === "mcq" && question.answer_index !== null && question.answer_index !== undefined
    ? format(S.key, { answer: question.choices[question.answer_index] })
    : question.reference_answer ? format(S.reference, { answer: question.reference_answer }) : "";
  node("question").replaceChildren(h("p", { class: "question-text" }, question.text),
    question.type === "mcq" ? h("ol", { class: "choices" }, question.choices.map((c) => h("li", {}, c))) : "",
    key ? h("p", { class: "muted" }, key) : "");
  const rows = ((view.answers || {})[question.id] || []).slice();
  const missing = status.phase === "answers_closed" ? unanswered(status, rows) : "";
  // Every player of the question's round, those without an answer too (the jury sees "no answer" under them).
  const listed = rows.concat(absentRows(question, rows)).sort((a, b) => (a.alias || "").localeCompare(b.alias || ""));
  if (!listed.length) { node("answers").replaceChildren(h("p", { class: "empty" }, S.no_answers), missing); return; }
  const editable = status.phase === "answers_closed";
  node("answers").replaceChildren(h("table", { class: "grid" },
    h("thead", {}, h("tr", {}, [S.alias, S.player, S.answer, S.seconds].map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {}, listed.map((row) => (row.absent ? absentRow(row) : answerRow(question, row, editable))))), missing);
}

// The players of the question's round who have not answered it, as rows of the answer table.
function absentRows(question, rows) {
  const round = (view.rounds || []).find((r) => r.round === question.round);
  const answered = new Set(rows.map((row) => row.player.id));
  return (view.players || [])
    .filter((p) => (!round || !round.participants || round.participants.includes(p.id)) && !answered.has(p.id))
    .map((p) => ({ absent: true, alias: round && round.aliases ? round.aliases[String(p.id)] || "" : "",
      player: { id: p.id, name: p.name, kind: p.kind } }));
}

function absentRow(row) {
  return h("tr", { class: "no-answer", "data-player": String(row.player.id) },
    h("td", {}, h("span", { class: "alias" }, row.alias || "?")),
    h("td", {}, row.player.name, " ", h("span", { class: `badge ${row.player.kind}` }, row.player.kind === "ai" ? S.kind_ai : S.kind_human)),
    h("td", { class: "muted" }, S.no_answer || "(no answer)"),
    h("td", { class: "num" }, ""));
}

// Before the reveal: who plays this round and has not answered (the jury would see "no answer" under an alias,
// which gives a failed agent away; its answer can still be entered in the Agents panel).
function unanswered(status, rows) {
  const round = (view.rounds || []).find((r) => r.round === status.round);
  const answered = new Set(rows.map((row) => row.player.id));
  const names = (view.players || [])
    .filter((p) => (!round || !round.participants || round.participants.includes(p.id)) && !answered.has(p.id))
    .map((p) => (p.kind === "ai" ? `${p.name} (${S.kind_ai})` : p.name));
  return names.length ? h("p", { class: "tell missing", role: "alert" }, format(S.missing_answers, { names: names.join(", ") })) : "";
}

function answerRow(question, row, editable) {
  const text = row.choice !== null && row.choice !== undefined ? question.choices[row.choice] : row.text;
  const cell = [h("span", {}, text || "—")];
  if (row.redacted) cell.push(" ", h("span", { class: "badge" }, S.redacted));
  else if (row.edited) cell.push(" ", h("span", { class: "badge" }, S.edited));
  if (row.provenance && row.provenance.spoken) {
    cell.push(" ", h("span", { class: "badge" }, format(S.spoken_by, { who: row.provenance.transcribed_by })));
  } else if (row.entered_by_host) cell.push(" ", h("span", { class: "badge" }, S.entered_by_host));
  if (row.tells && row.tells.length) cell.push(h("p", { class: "tell" }, format(S.tell, { tells: row.tells.join(", ") })));
  const edit = (args) => move("edit_answer", { player: row.player.id, ...args });
  const redact = () => h("button", { type: "button", class: "danger", on: { click: () => edit({ redact: true }) } }, S.redact);
  if (editable && question.type === "open" && !row.redacted) {
    const box = h("textarea", { rows: 2, "aria-label": `${S.edit}: ${row.alias}` });
    box.value = row.text;
    cell.push(h("div", { class: "edit-row" }, box,
      h("button", { type: "button", class: "secondary", on: { click: () => edit({ text: box.value }) } }, S.edit),
      redact()));
  } else if (editable && !row.redacted) {
    cell.push(h("div", { class: "edit-row" }, redact()));
  }
  return h("tr", {},
    h("td", {}, h("span", { class: "alias" }, row.alias || "?")),
    h("td", {}, row.player.name, " ", h("span", { class: `badge ${row.player.kind}` }, row.player.kind === "ai" ? S.kind_ai : S.kind_human)),
    h("td", {}, cell),
    h("td", { class: "num" }, row.latency_ms !== null && row.latency_ms !== undefined ? `${(row.latency_ms / 1000).toFixed(1)} s` : ""));
}

function currentTally(status) {
  const fromEvents = (view.tallies || []).find((t) => t.round === status.round && t.players);
  if (fromEvents) return fromEvents;
  const round = (view.rounds || []).find((r) => r.round === status.round);
  return round ? round.tally : null;
}

function renderVotes(status) {
  node("votes").textContent = view.votes && view.votes.round === status.round ? format(S.votes_in, view.votes) : "";
  const tally = currentTally(status);
  if (!tally) { node("tally").replaceChildren(); return; }
  const verdict = tally.control ? S.control : tally.ai_passed === null ? "" : tally.ai_passed ? S.passed : S.not_passed;
  const pct = (x) => (x === null || x === undefined ? "–" : Number(x).toFixed(1));
  node("tally").replaceChildren(
    h("table", { class: "grid" },
      h("thead", {}, h("tr", {}, [S.alias, S.player, S.votes_col].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, tally.players.map((row) => h("tr", {},
        h("td", {}, h("span", { class: "alias" }, row.alias)),
        h("td", {}, row.name, " ", h("span", { class: `badge ${row.kind}` }, row.kind === "ai" ? S.kind_ai : S.kind_human)),
        h("td", { class: "num" }, `${row.votes}`))))),
    tally.detection_pct !== null && tally.detection_pct !== undefined
      ? h("p", {}, format(S.detection, { pct: pct(tally.detection_pct), low: pct(tally.ci_low), high: pct(tally.ci_high),
        p: tally.p_value === null ? "–" : Number(tally.p_value).toPrecision(2) })) : "",
    verdict ? h("p", { class: "phase" }, verdict) : "");
}

// --- the jury: who joined (openly or by card), removing a juror, the open join's door code ----------------
const JURORS_LISTED = 200;

function renderJury(status) {
  const jurors = view.jurors || [];
  const removed = jurors.filter((j) => j.removed).length;
  node("jury-summary").textContent = format(S.jury_summary, {
    jurors: jurors.length - removed, open: jurors.filter((j) => j.open).length, removed });
  node("join-door").checked = Boolean(status.join_door);
  // A finished session takes no one: its open-join settings can no longer change, and the card says why.
  const over = status.phase === "finished";
  for (const control of [node("open-join"), node("join-door"), node("join-cap"), ...node("join-cap-form").querySelectorAll("button")]) {
    control.disabled = over;
  }
  node("join-closed").hidden = !over;
  if (document.activeElement !== node("join-cap")) node("join-cap").value = view.open_join_cap || 0;
  const here = new Set((view.connected || {}).juror_labels || []);
  const newest = [...jurors].sort((a, b) => String(b.joined_at).localeCompare(String(a.joined_at)));
  node("jurors").replaceChildren(...newest.slice(0, JURORS_LISTED).map((juror) => h("li",
    { class: juror.removed ? "removed" : "" },
    h("span", { class: `dot ${here.has(juror.label) ? "on" : ""}`, "aria-hidden": "true" }),
    h("span", { class: "juror-label" }, juror.label), " ",
    juror.open ? h("span", { class: "badge" }, S.joined_openly) : "",
    juror.removed ? h("span", { class: "badge removed" }, S.removed)
      : h("button", { type: "button", class: "secondary small", "data-remove": juror.label,
        on: { click: () => { if (window.confirm(format(S.remove_confirm, { label: juror.label }))) {
          move("remove_juror", { juror: juror.label });
        } } } }, S.remove))),
  jurors.length > JURORS_LISTED ? h("li", { class: "muted" }, format(S.more_jurors,
    { count: jurors.length - JURORS_LISTED })) : "");
}

const door = followDoorCode(live, {
  wanted: () => Boolean(view && (view.status || {}).open_join),
  show: (code) => { node("door-code").textContent = code; node("door-line").hidden = false; },
  hide: () => { node("door-line").hidden = true; },
});

function renderPeople() {
  const connected = view.connected || {};
  const here = new Set(connected.players || []);
  node("people").replaceChildren(
    h("h3", {}, S.players_title),
    h("ul", { class: "people" }, (view.players || []).map((p) => h("li", {},
      h("span", { class: `dot ${here.has(p.id) ? "on" : ""}`, "aria-hidden": "true" }),
      `${p.name} `, h("span", { class: `badge ${p.kind}` }, p.kind === "ai" ? S.kind_ai : S.kind_human),
      readsAloud(p) ? [" ", h("span", { class: "badge reads-aloud" }, S.reads_aloud)] : "",
      here.has(p.id) ? "" : h("span", { class: "muted" }, ` (${S.player_offline})`)))),
    h("p", {}, format(S.jurors_here, { count: connected.jurors || 0 })),
    connected.juror_labels && connected.juror_labels.length
      ? h("p", { class: "muted" }, connected.juror_labels.join(", ")) : "",
    h("p", { class: "muted" }, format(S.stage_here, { count: connected.stage || 0 })));
}

// --- read-aloud players' pages: a page without a voice for its language (the host reads aloud) -------------------
function readsAloud(player) {
  return (player.answer_modes || []).includes("read_aloud");
}

function renderSpeechNotices() {
  const lines = (view.players || []).filter(readsAloud).map((player) => {
    const notice = (view.notices || {})[String(player.id)];
    return notice && notice.notice === "no_voice"
      ? h("li", { "data-player": player.id }, format(S.no_voice_notice, { name: player.name, language: notice.language }))
      : null;
  }).filter(Boolean);
  node("speech-notices").hidden = !lines.length;
  node("speech-notice-list").replaceChildren(...lines);
}

// --- the AI players' agents ---------------------------------------------------------------------------
// One list item per AI player, kept across renders: its report is redrawn on every event, its answer forms
// only when the question changes (so what the host is typing survives answers arriving).
const agentItems = new Map();

function renderAgents(status) {
  const ai = (view.players || []).filter((p) => p.kind === "ai");
  node("agents-card").hidden = !ai.length;
  const here = new Set((view.connected || {}).players || []);
  const question = view.question;
  const open = Boolean(question) && ["answering", "answers_closed"].includes(status.phase);
  const round = (view.rounds || []).find((r) => r.round === status.round);
  for (const player of ai) {
    let item = agentItems.get(player.id);
    if (!item) {
      item = { info: h("div", { class: "agent-info" }), forms: h("div", { class: "agent-forms" }),
        result: h("p", { class: "agent-result", role: "status" }), formKey: null };
      item.li = h("li", { class: "agent", "data-player": player.id }, item.info, item.forms, item.result);
      agentItems.set(player.id, item);
      node("agents").append(item.li);
    }
    const playing = !round || !round.participants || round.participants.includes(player.id);
    item.info.replaceChildren(...agentInfo(player, here.has(player.id), question, open, playing));
    const formKey = open && playing ? `${question.id}` : "";
    if (item.formKey !== formKey) {
      item.formKey = formKey;
      item.result.textContent = "";
      item.forms.replaceChildren(...(formKey ? answerForms(player, question, item.result) : []));
    }
  }
}

function agentInfo(player, online, question, open, playing) {
  const row = question && ((view.answers || {})[question.id] || []).find((r) => r.player.id === player.id);
  const { lines: said, command } = agentReport((view.agents || {})[String(player.id)], {
    online, finished: (view.status || {}).phase === "finished", handled: Boolean(row && row.entered_by_host),
    lang: pageLanguage() }, S);
  const lines = [h("p", { class: "agent-name" },
    h("span", { class: `dot ${online ? "on" : ""}`, "aria-hidden": "true" }), `${player.name} `,
    h("span", { class: "badge ai" }, S.kind_ai), online ? "" : h("span", { class: "muted" }, ` (${S.player_offline})`)),
    ...said.map((line) => h("p", { class: line.className, title: line.title }, line.text))];
  if (command) lines.push(...agentCommand(player, command));
  if (question && open) {
    if (!playing) { lines.push(h("p", { class: "muted" }, S.agent_sits_out)); return lines; }
    if (!row) lines.push(h("p", { class: "muted" }, S.agent_no_answer));
    else {
      const text = row.choice !== null && row.choice !== undefined ? question.choices[row.choice] : row.text;
      const origin = row.entered_by_host ? h("span", { class: "badge" }, S.entered_by_host)
        : row.provenance ? h("span", { class: "muted" }, format(S.from_program, { program: program(row.provenance) })) : "";
      lines.push(h("p", {}, format(S.agent_answer, { answer: text || "—" }), " ", origin));
    }
  }
  return lines;
}

// What to run to play an offline AI player: the `vtt agent` line the server wrote (with this player's token).
const agentCommands = JSON.parse(node("agents").dataset.commands || "{}");

function agentCommand(player, command) {
  const line = agentCommands[String(player.id)];
  if (!line) return [];
  const words = command === "again" ? S.agent_run_again : line.ready ? S.agent_run_demo : S.agent_run;
  return [h("p", { class: "muted" }, words),
    h("pre", { class: "agent-command" }, h("code", {}, line.command))];
}

function program(provenance) {
  return provenance.model ? `${provenance.backend} · ${provenance.model}` : provenance.backend;
}

function answerForms(player, question, result) {
  const label = format(S.enter_label, { name: player.name });
  const field = question.type === "mcq"
    ? h("select", { name: "choice", required: true, "aria-label": label },
      h("option", { value: "" }, S.choose_option),
      question.choices.map((choice, index) => h("option", { value: String(index) },
        `${index + 1} · ${choice}`)))
    : h("textarea", { name: "text", rows: 2, required: true, "aria-label": label });
  const typed = h("form", { class: "edit-row agent-typed" }, field,
    h("button", { type: "submit", class: "secondary" }, S.enter_answer));
  typed.addEventListener("submit", async (event) => {
    event.preventDefault();
    const answer = question.type === "mcq" ? { choice: Number(field.value) } : { text: field.value };
    show(result, S.sending, "");
    const reply = await live.send("host", { action: "enter_answer", player: player.id, question: question.id, ...answer }, "host");
    show(result, reply.ok ? S.entered : format(S.refused, { message: reply.error.message }), reply.ok ? "received" : "refused");
  });
  const agents = node("agents");
  const url = agents.dataset.importUrl.replace("/agents/0/", `/agents/${player.id}/`);
  const file = h("input", { type: "file", name: "file", accept: ".csv,.json,.jsonl", required: true,
    "aria-label": format(S.import_label, { name: player.name }) });
  const upload = h("form", { class: "edit-row agent-import", method: "post", action: url, enctype: "multipart/form-data" },
    h("input", { type: "hidden", name: "csrf_token", value: agents.dataset.csrf }), file,
    h("button", { type: "submit", class: "secondary" }, S.import_answer));
  upload.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = new FormData(upload);
    body.set("entry", newId("import"));
    show(result, S.sending, "");
    try {
      const response = await fetch(url, { method: "POST", body, headers: { Accept: "application/json" }, credentials: "same-origin" });
      const reply = await response.json();
      show(result, reply.message, reply.ok ? "received" : "refused");
    } catch (error) {
      show(result, format(S.refused, { message: String(error) }), "refused");
    }
  });
  return [typed, upload];
}

function show(target, text, className) {
  target.textContent = text;
  target.className = `agent-result ${className}`;
}
