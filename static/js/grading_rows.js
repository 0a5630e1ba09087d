// The grading page, row by row: a mark saved, a suggestion taken or a final mark set in an answer's row goes to the
// server with fetch, and the server's own drawing of the row (and of the Agreement card) replaces the old one, so a
// grader goes down thirty answers without a page load. The forms stay plain forms (their CSRF field is sent as
// it is): without this script they post and the page comes back at the answer. The server checks every write
// either way; a refusal is shown on the row.
const words = JSON.parse(document.getElementById("grading-rows-boot").textContent);

function drawn(html) {
  const holder = document.createElement("template");
  holder.innerHTML = html;
  return holder.content.firstElementChild;
}

// One line of news on the row, under the form it is about (or at the row's end).
function say(row, near, text, problem) {
  row.querySelectorAll(".row-status").forEach((node) => node.remove());
  const line = document.createElement("p");
  line.className = problem ? "row-status problem" : "row-status muted";
  line.setAttribute("role", problem ? "alert" : "status");
  line.textContent = text;
  if (near && row.contains(near)) near.after(line);
  else row.append(line);
}

function refusal(reply, status) {
  const error = reply && reply.error;
  if (!error) return `${words.not_saved} (HTTP ${status})`;
  return error.field ? `${words.not_saved} (${error.field}): ${error.message}` : `${words.not_saved}: ${error.message}`;
}

async function send(form, submitter) {
  const row = form.closest("li.answer");
  const action = form.getAttribute("action");
  const body = new FormData(form, submitter);
  // the button pressed names the verdict ("Take its scores: incorrect"); a browser that ignores FormData's
  // submitter argument leaves it out
  if (submitter && submitter.name && !body.has(submitter.name)) body.append(submitter.name, submitter.value);
  const buttons = [...row.querySelectorAll("button")];
  buttons.forEach((button) => { button.disabled = true; });
  say(row, form, words.saving, false);
  let response = null;
  let reply = null;
  try {
    response = await fetch(action, { method: "POST", body, credentials: "same-origin",
                                     headers: { Accept: "application/json" } });
    reply = await response.json();
  } catch (error) {
    reply = null;  // unreachable, or an answer that is not JSON (a login page, a proxy's error page)
  }
  if (!reply || !reply.ok) {
    buttons.forEach((button) => { button.disabled = false; });
    say(row, form, response ? refusal(reply, response.status) : words.offline, true);
    return;
  }
  const fresh = drawn(reply.row);
  row.replaceWith(fresh);
  const agreement = document.getElementById("agreement");
  if (agreement && reply.agreement) agreement.replaceWith(drawn(reply.agreement));
  const again = [...fresh.querySelectorAll("form")].find((other) => other.getAttribute("action") === action);
  say(fresh, again, reply.message, false);
  const button = again && again.querySelector("button");
  (button || fresh).focus({ preventScroll: true });
}

document.addEventListener("submit", (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement) || !form.closest("li.answer")) return;
  event.preventDefault();
  send(form, event.submitter);
});
