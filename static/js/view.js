// A client's picture of a live session, kept as docs/protocol.md says: a snapshot, then events. The pages keep
// theirs with it (through client.js), the bots and `vtt agent` with vtt/client/view.py: the same rules, one
// module per language, both run over the cases of tests/data/view_cases.json. Pure: no browser needed.

const VOTE_FIELDS = ["round", "slot", "alias", "confidence", "reason"];
const SHEET_FIELDS = ["question", "alias", "note", "human_likeness", "looks_like_ai"];

const pick = (source, keys) => Object.fromEntries(keys.map((key) => [key, source[key] ?? null]));

// One row per round: a round's later tally or reveal (`finish` reveals again) replaces its earlier one.
const replaceRound = (rows, row) => [...(rows || []).filter((item) => item.round !== row.round), row];

// A person's own accepted action (docs/protocol.md, "mine"), put into the view as its ack put it there.
export function applyOwn(data, payload) {
  const { action, ...fields } = payload;
  if (action === "vote" && data.status && fields.round === data.status.round) {
    data.votes = [...(data.votes || []).filter((v) => v.slot !== fields.slot), pick(fields, VOTE_FIELDS)];
  } else if (action === "sheet") {
    const lines = fields.lines || [fields];
    const same = (a, b) => a.question === b.question && a.alias === b.alias;
    data.sheet = [...(data.sheet || []).filter((row) => !lines.some((line) => same(row, line))),
      ...lines.map((line) => pick(line, SHEET_FIELDS))];
  } else if (action === "answer") {
    data.answer = { question: fields.question, text: fields.text || "", choice: fields.choice ?? null };
  }
}

export class View {
  constructor() {
    this.data = {};
    this.known = -1;           // the version last applied; -1 until the first snapshot
    this.stale = true;         // until the first snapshot, and after a missed event until the next one
    this.revoked = null;       // why this link no longer works (link_revoked)
    this.fromSnapshot = true;
    this.newest = -1;          // the newest version this view has held: a snapshot older than it is behind
  }

  // Replace the view, even with an older one: a snapshot and its version go together (`playing` is known from
  // snapshots only). One older than a version already held was read before events that arrived first: the view
  // is stale, and its owner asks again (no later event may come to show the gap).
  snapshot(snapshot) {
    this.data = snapshot;
    this.known = snapshot.state_version;
    this.stale = this.known < this.newest;
    this.newest = Math.max(this.newest, this.known);
    this.fromSnapshot = true;
  }

  // Apply one server event (a snapshot too); true when it was applied.
  event(name, payload) {
    if (name === "link_revoked") {
      this.revoked = (payload && payload.reason) || name;
      return true;
    }
    if (!payload || typeof payload !== "object" || Array.isArray(payload)) return false;
    if (name === "snapshot") {
      this.snapshot(payload);
      return true;
    }
    if (this.known < 0) return false;  // before the first snapshot there is no view to change
    if (name === "presence") {  // not versioned: the latest wins
      this.data.connected = payload;
      return true;
    }
    if (name === "mine") {  // not versioned: applied as it comes
      applyOwn(this.data, payload);
      return true;
    }
    const { state_version: version, prev_version: prev, ...bare } = payload;
    const previous = prev || 0;
    if (typeof version !== "number") return false;
    if (version < this.known) return false;  // old: the snapshot already holds it
    // One action can send several events with one version: only a sibling of the last applied event applies.
    if (version === this.known && (this.fromSnapshot || previous !== this.known)) return false;
    if (previous > this.known) {
      this.stale = true;  // something was missed: the owner asks for a snapshot
      return false;
    }
    this.known = version;
    this.newest = Math.max(this.newest, version);
    this.fromSnapshot = false;
    applyToView(this.data, name, bare);
    return true;
  }
}

// What each versioned event changes.
function applyToView(data, event, payload) {
  switch (event) {
    case "status": data.status = payload; break;
    case "round":
      Object.assign(data, { round: payload, revealed: [], sheet: [], votes: [], question: null });
      break;
    case "question":  // a player's answer, and a spoken player's recording, were to the question before
      Object.assign(data, { question: payload, answer: null, recorded: null });
      break;
    case "answers":
      data.revealed = [...(data.revealed || []).filter((item) => item.question !== payload.question), payload];
      break;
    case "answer": {  // the host's: an answer as it arrives or is edited
      const answers = data.answers || (data.answers = {});
      const rows = (answers[payload.question] || []).filter((row) => row.player.id !== payload.player.id);
      answers[payload.question] = [...rows, payload];
      break;
    }
    case "agent": {  // the host's: an AI player's agent's last status report
      const { player, ...report } = payload;
      (data.agents || (data.agents = {}))[String(player)] = report;
      break;
    }
    case "notice": {  // the host's: a read-aloud player's page about its voice (no_voice: the host reads aloud)
      const { player, ...report } = payload;
      (data.notices || (data.notices = {}))[String(player)] = report;
      break;
    }
    case "readiness": {  // the host's: a person's latest device check, players by id, jurors by label
      const readiness = data.readiness || (data.readiness = { players: {}, jurors: {} });
      if (payload.role === "juror") (readiness.jurors || (readiness.jurors = {}))[payload.juror] = payload;
      else (readiness.players || (readiness.players = {}))[String(payload.player)] = payload;
      break;
    }
    case "recording": {  // the host's: a spoken answer's latest recording replaces the player's earlier take
      const recordings = data.recordings || (data.recordings = {});
      const rows = (recordings[payload.question] || []).filter((row) => row.player !== payload.player);
      recordings[payload.question] = [...rows, payload];
      break;
    }
    case "tells": data.tells = payload; break;  // the host's: the closed question's answers with tells
    case "juror": {  // the host's: a juror joined openly, or was removed
      const rows = (data.jurors || []).filter((row) => row.label !== payload.label);
      const before = (data.jurors || []).find((row) => row.label === payload.label) || {};
      data.jurors = [...rows, { ...before, ...payload }];
      break;
    }
    case "votes": data.votes = payload; break;  // the host's and the stage's live count
    case "tally": data.tallies = replaceRound(data.tallies, payload); break;
    case "identities": data.identities = replaceRound(data.identities, payload); break;
    default: break;
  }
}
