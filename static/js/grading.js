// The grading page, live: while the session runs, new answers (and a player's edits before answering closes)
// appear without a reload. The page is a host client of the live protocol like the console (the shared
// Connection; the login cookie allows it) and, when an `answer` or `answers` event changes the view, fetches itself
// again and merges in what is new: the server's template stays the one place an answer's grading form is drawn.
// What a grader is typing is never touched: answers already on the page keep their forms, only their text follows
// the player's edits. Without a connection (refused, or the server away) it looks again every POLL_MS.
import { repeatWhileShown } from "./awake.js";
import { Connection, format } from "./client.js";

const POLL_MS = 20000;
const boot = JSON.parse(document.getElementById("grading-boot").textContent);
const words = boot.words;
const status = document.getElementById("live-status");
let timer = null;
let busy = false;
let again = false;

function say(text) {
  if (status.textContent !== text) status.textContent = text;
}

function schedule(delay = 300) {
  window.clearTimeout(timer);
  timer = window.setTimeout(refresh, delay);
}

async function refresh() {
  if (busy) { again = true; return; }
  busy = true;
  try {
    const reply = await fetch(window.location.href, { headers: { Accept: "text/html" }, cache: "no-store",
                                                      credentials: "same-origin" });
    if (reply.ok && !reply.redirected) merge(new DOMParser().parseFromString(await reply.text(), "text/html"));
  } catch (error) {
    // offline for a moment: the next event, the reconnect or the poll tries again
  } finally {
    busy = false;
    if (again) { again = false; schedule(); }
  }
}

// Bring the page up to date with a fresh copy of itself; returns how many answers were added.
function merge(fresh) {
  for (const id of ["count-answers", "count-finals", "count-disagreements"]) {
    const here = document.getElementById(id);
    const there = fresh.getElementById(id);
    if (here && there) here.textContent = there.textContent;
  }
  let added = 0;
  let previousSection = null;
  for (const section of fresh.querySelectorAll("section.question")) {
    const mine = document.getElementById(section.id);
    const items = section.querySelectorAll("li.answer");
    if (!mine) {  // a question not listed yet: in the fresh page's order
      const node = document.importNode(section, true);
      if (previousSection) previousSection.after(node);
      else document.querySelector("nav.filters").after(node);
      node.querySelectorAll("li.answer").forEach((item) => item.classList.add("arrived"));
      added += items.length;
      previousSection = node;
      continue;
    }
    previousSection = mine;
    const list = mine.querySelector("ul.answers");
    if (!list) {  // "no answers here" until now: nothing in it can be in the middle of an edit
      if (items.length) {
        const node = document.importNode(section, true);
        node.querySelectorAll("li.answer").forEach((item) => item.classList.add("arrived"));
        mine.replaceWith(node);
        previousSection = node;
        added += items.length;
      }
      continue;
    }
    let previous = null;
    for (const item of items) {
      const existing = document.getElementById(item.id);
      if (existing) {
        const text = existing.querySelector(".answer-text");
        const freshText = item.querySelector(".answer-text");
        if (text && freshText && text.textContent !== freshText.textContent) {
          text.textContent = freshText.textContent;
          existing.classList.add("arrived");
        }
        previous = existing;
        continue;
      }
      const node = document.importNode(item, true);
      node.classList.add("arrived");
      if (previous) previous.after(node);
      else list.prepend(node);
      previous = node;
      added += 1;
    }
  }
  if (added) say(format(added === 1 ? words.arrived_one : words.arrived, { count: added }));
  return added;
}

let online = false;
let snapshots = 0;
new Connection({
  auth: { code: boot.code, role: "host" },
  key: `grading:${boot.code}`,
  // A snapshot after the first one (a reconnect, or a gap in the versions) may hold answers this page missed.
  onView: (_data, event) => {
    if (event === null ? snapshots++ > 0 : event === "answer" || event === "answers") schedule();
  },
  onConnection: (connected) => { online = connected; say(connected ? words.live : words.offline); },
  onRefused: () => { online = false; say(words.offline); },  // signed out: polling only
});
repeatWhileShown(() => { if (!online) refresh(); }, POLL_MS);
