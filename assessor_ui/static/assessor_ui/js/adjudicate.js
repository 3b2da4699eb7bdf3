// The adjudication page from the keyboard: a grade key submits the decision (the
// server moves on to the next document of the queue), j/k move, o shows the
// original, ? the keys. The keymap comes from the server, like the judging page's.
import { bindKeymap } from "./keymap.js";

const config = JSON.parse(document.getElementById("adjudicate-config").textContent);
const form = document.getElementById("decision-form");
const help = document.getElementById("help");
const frame = document.getElementById("doc-html");
const text = document.getElementById("doc-text");
const originalButton = document.getElementById("original-toggle");

function follow(id) {
  const link = document.getElementById(id);
  if (link && link.href && !link.hidden) window.location.assign(link.href);
}

function decide(value) {
  const button = form.querySelector(`button[data-grade="${value}"]`);
  if (button) form.requestSubmit(button);
}

function toggleHelp(force) {
  help.hidden = force === undefined ? !help.hidden : !force;
  if (!help.hidden) document.getElementById("help-close").focus();
}

function toggleOriginal() {
  if (originalButton.hidden) return;
  const on = frame.hidden;
  frame.hidden = !on;
  text.hidden = on;
  originalButton.setAttribute("aria-pressed", String(on));
}

bindKeymap(config.keymap, {
  grade: (value) => decide(value),
  next: () => follow("next-link"),
  previous: () => follow("prev-link"),
  original: () => toggleOriginal(),
  help: () => toggleHelp(),
  escape: () => toggleHelp(false),
});
document.getElementById("help-button").addEventListener("click", () => toggleHelp());
document.getElementById("help-close").addEventListener("click", () => toggleHelp(false));
originalButton.addEventListener("click", () => toggleOriginal());
document.body.dataset.ready = "1";
