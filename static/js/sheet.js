// The judgment sheet of the juror's page (jury.js) and the displaced juror's (displaced.js): a line per answer (a
// note, how human it seems, whether it looks like the AI), saved as the juror types: every line changed since the
// last save in one `sheet` message, each draft kept in localStorage until the server has it (it outlives a reload),
// and each line's state said under it.
import { format, h, kept, keep } from "./client.js";

export const lineKey = (question, alias) => `${question}/${alias}`;

export class Sheet {
  // S: the page's words; live: its connection; view(): its view now (its `sheet`: the lines the server has);
  // storage: where the drafts are kept; maxText: the longest note; saved(line): a line the server has, put in the
  // view; after(reply): the save's ack, once every line says it; spareFocused: a reload of the saved lines leaves
  // the note being typed in alone.
  // pace: when a changed line is saved, debounceMs once typing pauses, at most maxWaitMs after the first unsaved
  // change while the juror keeps typing; with spacing() (ms), at the page's next save slot, one every spacing at a
  // phase drawn per page, so N pages send at most N / spacing saves however their jurors type
  // (bench/bench_load.py models it).
  constructor({ S, live, view, storage, maxText, pace, saved, after = () => {}, spareFocused = false }) {
    Object.assign(this, { S, live, view, storage, maxText, pace, saved, after, spareFocused });
    this.drafts = kept(storage, {});  // "question/alias" -> the line typed but not yet acknowledged
    this.state = {};                  // "question/alias" -> "pending" | "saving" | "saved" | {refused: message}
    this.timer = null;
    this.firstUnsaved = null;
    this.lastSave = 0;
    this.phase = Math.random();
    if (Object.keys(this.drafts).length) this.schedule();
  }

  // A new round: no drafts, no states.
  reset() {
    this.drafts = {};
    keep(this.storage, this.drafts);
    this.state = {};
  }

  savedLine(question, alias) {
    return (this.view().sheet || []).find((row) => row.question === question && row.alias === alias);
  }

  currentLine(question, alias) {
    return this.drafts[lineKey(question, alias)] || this.savedLine(question, alias)
      || { question, alias, note: "", human_likeness: null, looks_like_ai: false };
  }

  edit(question, alias, change) {
    const k = lineKey(question, alias);
    this.drafts[k] = { ...this.currentLine(question, alias), ...change };
    keep(this.storage, this.drafts);
    this.state[k] = "pending";
    this.showState(question, alias);
    this.schedule();
  }

  schedule() {
    const now = Date.now();
    if (this.firstUnsaved === null) this.firstUnsaved = now;
    window.clearTimeout(this.timer);
    const { debounceMs, maxWaitMs = Infinity, spacing = null } = this.pace;
    let due = Math.min(now + debounceMs, this.firstUnsaved + maxWaitMs);
    if (spacing) {  // the first of this page's save slots after the last save and the wait
      const every = spacing();
      due = (Math.floor(Math.max(this.lastSave, due) / every - this.phase) + 1 + this.phase) * every;
    }
    this.timer = window.setTimeout(() => this.save(), Math.max(0, Math.ceil(due - now)));  // not a moment early
  }

  // Every line changed since the last save, in one message; the drafts stay until the server has them.
  async save() {
    this.firstUnsaved = null;
    this.lastSave = Date.now();
    const sent = { ...this.drafts };
    const lines = Object.values(sent);
    if (!lines.length) return;
    for (const k of Object.keys(sent)) this.state[k] = "saving";
    lines.forEach((line) => this.showState(line.question, line.alias));
    const reply = await this.live.send("sheet", { lines });
    for (const [k, line] of Object.entries(sent)) {
      if (this.drafts[k] === line) delete this.drafts[k];  // unless it changed again while saving
      this.state[k] = !reply.ok ? { refused: reply.error.message } : this.drafts[k] ? "pending" : "saved";
      if (reply.ok) this.saved(line);
      this.showState(line.question, line.alias);
    }
    keep(this.storage, this.drafts);
    this.after(reply);
  }

  showState(question, alias) {
    const { S } = this;
    const k = lineKey(question, alias);
    const target = document.querySelector(`[data-line-state="${CSS.escape(k)}"]`);
    if (!target) return;
    const state = this.state[k] || (this.drafts[k] ? "pending" : (this.savedLine(question, alias) ? "saved" : null));
    target.className = `line-state ${typeof state === "object" && state ? "refused" : state || ""}`;
    target.textContent = state === "saved" ? S.saved : state === "saving" ? S.saving : state === "pending"
      ? S.not_saved : state && state.refused ? format(S.refused, { message: state.refused }) : "";
  }

  // One answer's line: the answer under its alias, the note, how human (1-5), "looks like the AI", its state.
  line(question, answer, locked = false) {
    const { S } = this;
    const line = this.currentLine(question, answer.alias);
    const edit = (change) => this.edit(question, answer.alias, change);
    const id = `l-${question}-${answer.alias}`;
    const likeness = h("fieldset", { class: "likeness" },
      h("legend", {}, S.likeness),
      [1, 2, 3, 4, 5].map((score) => h("label", { class: "pill" },
        h("input", { type: "radio", name: `${id}-likeness`, value: score, checked: line.human_likeness === score,
          disabled: locked, on: { change: () => edit({ human_likeness: score }) } }),
        h("span", {}, `${score}`))));
    const note = h("textarea", { id: `${id}-note`, rows: 2, maxlength: this.maxText, disabled: locked,
      on: { input: (e) => edit({ note: e.target.value }) } });
    note.value = line.note || "";
    const marked = h("label", { class: "check" },
      h("input", { type: "checkbox", id: `${id}-ai`, checked: line.looks_like_ai, disabled: locked,
        on: { change: (e) => edit({ looks_like_ai: e.target.checked }) } }),
      h("span", {}, S.looks_ai));
    const stateNode = h("span", { "data-line-state": lineKey(question, answer.alias), role: "status" });
    queueMicrotask(() => this.showState(question, answer.alias));
    return h("div", { class: "sheet-line" },
      h("p", { class: "answer" }, h("span", { class: "alias" }, answer.alias),
        answer.answered ? answer.text : h("em", {}, S.no_answer)),
      h("label", { for: `${id}-note`, class: "field" }, S.note), note, likeness, marked, stateNode);
  }

  // The lines the server has (saved from another tab, or seen again in a snapshot), shown unless this page is
  // editing them.
  refresh() {
    for (const row of this.view().sheet || []) {
      const k = lineKey(row.question, row.alias);
      if (this.drafts[k]) continue;
      const id = `l-${row.question}-${row.alias}`;
      const note = document.getElementById(`${id}-note`);
      if (!note) continue;
      if (!this.spareFocused || document.activeElement !== note) note.value = row.note || "";
      const marked = document.getElementById(`${id}-ai`);
      if (marked) marked.checked = Boolean(row.looks_like_ai);
      for (const radio of document.querySelectorAll(`input[name="${CSS.escape(`${id}-likeness`)}"]`)) {
        radio.checked = Number(radio.value) === row.human_likeness;
      }
      this.state[k] = "saved";
      this.showState(row.question, row.alias);
    }
  }
}
