// The grading page, live: while the session runs, new answers (and a player's edits before answering closes)
// appear without a reload. The page connects to the live server as the host (the login cookie allows it) and, on
// an `answer` or `answers` event, fetches itself again and merges in what is new. What a grader is typing is
// never touched: answers already on the page keep their forms, only their text follows the player's edits.
// Without a connection (refused, or the server away) it looks again every POLL_MS.
import { io } from "../vendor/socket.io/socket.io.esm.min.js";
import { format } from "./client.js";

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

const socket = io({ auth: { code: boot.code, role: "host" }, transports: ["websocket", "polling"] });
let connectedBefore = false;
socket.on("connect", () => {
  say(words.live);
  if (connectedBefore) schedule(0);  // back after a break: catch up on what was missed
  connectedBefore = true;
});
socket.on("disconnect", () => say(words.offline));
socket.on("connect_error", (error) => {
  if (error && error.data && error.data.code) socket.disconnect();  // refused (signed out): polling only
  say(words.offline);
});
socket.on("answer", () => schedule());
socket.on("answers", () => schedule());
window.setInterval(() => { if (!socket.connected) refresh(); }, POLL_MS);
