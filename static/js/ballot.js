// A round's ballot on the juror's page (jury.js) and the displaced juror's (displaced.js): a suspect for each vote
// slot (or "I abstain"), how sure, why; cast as one `vote` per slot, and what the server has said under it.
import { format, h } from "./client.js";

// The juror's choice in words, slot by slot ("A, you abstain").
export function choiceOf(votes, S) {
  return votes.slice().sort((a, b) => a.slot - b.slot).map((v) => v.alias ?? S.abstained).join(", ");
}

export class Ballot {
  // S: the page's words; live: its connection; maxText: the longest reason; recorded(fields): a vote the server has,
  // put in the view; show(round): says the ballot's state again; done(reply, round): every slot's vote is in.
  constructor({ S, live, maxText, recorded, show, done }) {
    Object.assign(this, { S, live, maxText, recorded, show, done });
    this.state = null;  // null | "pending" | "saved" | {refused: message}
  }

  // The open ballot of round `round` in `form`, the juror's votes (`votes`, this round's) chosen; hint: a line
  // saying the vote can change until it closes.
  draw(form, { round, aliases, slots, votes, hint = false }) {
    const { S } = this;
    const mine = (slot) => votes.find((v) => v.slot === slot);
    const slotSets = [];
    for (let slot = 1; slot <= slots; slot += 1) {
      const chosen = mine(slot);
      slotSets.push(h("fieldset", { class: "suspects" },
        h("legend", {}, slots > 1 ? format(S.slot, { slot }) : S.suspect),
        [...aliases, null].map((alias) => h("label", { class: "pill big" },
          h("input", { type: "radio", name: `slot-${slot}`, value: alias ?? "", required: true,
            checked: chosen ? chosen.alias === alias : false }),
          h("span", {}, alias ?? S.abstain)))));
    }
    const first = mine(1) || {};
    const confidence = h("fieldset", { class: "likeness" }, h("legend", {}, S.confidence),
      [1, 2, 3, 4, 5].map((score) => h("label", { class: "pill" },
        h("input", { type: "radio", name: "confidence", value: score, checked: first.confidence === score }),
        h("span", {}, `${score}`))));
    const reason = h("textarea", { id: "vote-reason", name: "reason", rows: 2, maxlength: this.maxText });
    reason.value = first.reason || "";
    const submit = h("button", { type: "submit", id: "vote-submit", class: "big" }, votes.length ? S.change : S.cast);
    form.replaceChildren(...slotSets, confidence, h("label", { for: "vote-reason", class: "field" }, S.reason), reason,
      submit, ...(hint ? [h("p", { id: "vote-hint", class: "muted" }, S.can_change)] : []),
      h("p", { id: "vote-state", role: "status" }));
    form.onsubmit = (e) => { e.preventDefault(); this.cast(form, slots, round); };
  }

  async cast(form, slots, round) {
    const data = new FormData(form);
    const picks = [];
    for (let slot = 1; slot <= slots; slot += 1) {
      if (!data.has(`slot-${slot}`)) { this.state = { refused: this.S.pick_one }; this.show(round); return; }
      picks.push(data.get(`slot-${slot}`) || null);
    }
    const confidence = data.get("confidence") ? Number(data.get("confidence")) : null;
    const reason = data.get("reason") || "";
    this.state = "pending";
    this.show(round);
    let reply = null;
    for (let slot = 1; slot <= slots; slot += 1) {
      const fields = { round, slot, alias: picks[slot - 1], confidence, reason };
      reply = await this.live.send("vote", fields);
      if (!reply.ok) { this.state = { refused: reply.error.message }; this.show(round); return; }
      this.recorded(fields);
    }
    this.state = "saved";
    this.done(reply, round);
  }

  // The open ballot's state in `target`: the button's words, the hint hidden once a vote is in, and what the
  // server has (votes: the juror's, this round's).
  showOpen(target, votes) {
    const { S, state } = this;
    const submit = document.getElementById("vote-submit");
    if (submit) submit.textContent = votes.length ? S.change : S.cast;
    const hint = document.getElementById("vote-hint");
    if (hint) hint.hidden = votes.length > 0;  // the recorded vote's line says it too
    target.className = state && state.refused ? "refused" : votes.length && state !== "pending" ? "received" : "";
    target.textContent = state === "pending" ? S.vote_pending
      : state && state.refused ? format(S.refused, { message: state.refused })
      : votes.length ? format(S.vote_saved, { choice: choiceOf(votes, S) }) : "";
  }
}
