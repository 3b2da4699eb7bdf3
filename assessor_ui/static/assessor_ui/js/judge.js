// The judging page: wires the keymap, relevance buttons, nugget panel, timer and saver.

import { bindKeymap } from "./keymap.js";
import { Saver } from "./net.js";
import { NuggetPanel } from "./nuggets.js";
import { highlightTerms, keyboardSelect, selectionOffsets, textBetween } from "./selection.js";
import { ActiveTimer } from "./timer.js";

const config = JSON.parse(document.getElementById("judge-config").textContent);
const root = document.getElementById("doc-text");
const statusEl = document.getElementById("save-status");
const help = document.getElementById("help");

function status(kind, message) {
  statusEl.textContent = message;
  statusEl.dataset.kind = kind;
}

const saver = new Saver({ csrfUrl: config.urls.csrf, loginUrl: config.urls.login, onStatus: status });
const timer = new ActiveTimer(config.idleSeconds);
const panel = new NuggetPanel({ config, saver, root, status });
panel.load(JSON.parse(document.getElementById("judge-nuggets").textContent));
let relevance = config.relevance;

function showRelevance() {
  for (const b of document.querySelectorAll("button.grade")) {
    b.setAttribute("aria-pressed", String(Number(b.dataset.grade) === relevance));
  }
}

const judgedCount = document.getElementById("judged-count");

async function judge(value) {
  if (config.readonly) return;
  if (relevance === null && value !== null) judgedCount.textContent = String(Number(judgedCount.textContent) + 1);
  relevance = value === null ? null : Number(value);
  showRelevance();
  const { status: code, body } = await saver.post(config.urls.judgment, () => ({
    relevance: relevance === null ? "" : String(relevance),
    seconds: String(timer.take()),
  }));
  if (code !== 200) status("error", body.error || `Judgment not saved (${code})`);
  else document.body.dataset.relevance = String(body.relevance);
}

async function flushTime() {
  if (config.readonly) return;
  const seconds = timer.take();
  if (seconds > 0) await saver.post(config.urls.time, { seconds: String(seconds) });
}

async function go(url) {
  if (!url) {
    status("info", "No more documents this way.");
    return;
  }
  await flushTime();
  await saver.idle();
  window.location.assign(url);
}

async function makeNugget() {
  if (config.readonly) return;
  if (root.hidden) {
    status("error", "Switch back to the text view (o) to highlight.");
    return;
  }
  const span = selectionOffsets(root);
  if (!span) {
    status("error", "Select some text of the document first.");
    return;
  }
  const created = await panel.create(span.start, span.end, textBetween(root, span.start, span.end));
  if (created) window.getSelection().removeAllRanges();
}

function toggleHelp(force) {
  help.hidden = force === undefined ? !help.hidden : !force;
  if (!help.hidden) document.getElementById("help-close").focus();
}

function toggleOriginal() {
  const frame = document.getElementById("doc-html");
  if (!frame) return;
  frame.hidden = !frame.hidden;
  root.hidden = !frame.hidden;
  document.getElementById("original-toggle").setAttribute("aria-pressed", String(!frame.hidden));
}

const termsBox = document.getElementById("terms-toggle");
function toggleTerms(force) {
  termsBox.checked = force === undefined ? !termsBox.checked : force;
  if (!highlightTerms(root, config.terms, termsBox.checked)) status("info", "This browser cannot highlight terms.");
}

bindKeymap(config.keymap, {
  grade: (value) => judge(value),
  next: () => go(config.urls.next),
  previous: () => go(config.urls.previous),
  "next-unjudged": () => go(config.urls.nextUnjudged || config.urls.home),
  skip: async () => {
    if (relevance === null) await judge(null);
    go(config.urls.next || config.urls.home);
  },
  "select-start": () => keyboardSelect(root, "start"),
  "select-word": () => keyboardSelect(root, "word"),
  "select-back": () => keyboardSelect(root, "back"),
  "select-sentence": () => keyboardSelect(root, "sentence"),
  nugget: () => makeNugget(),
  "edit-last": () => panel.focusLast(),
  terms: () => toggleTerms(),
  original: () => toggleOriginal(),
  help: () => toggleHelp(),
  escape: () => {
    toggleHelp(false);
    window.getSelection().removeAllRanges();
  },
});

for (const b of document.querySelectorAll("button.grade")) b.addEventListener("click", () => judge(b.dataset.grade));
document.getElementById("skip").addEventListener("click", () => {
  if (relevance === null) judge(null);
  go(config.urls.next || config.urls.home);
});
const makeButton = document.getElementById("make-nugget");
if (makeButton) {
  // mousedown would collapse the selection before click: keep it.
  makeButton.addEventListener("mousedown", (e) => e.preventDefault());
  makeButton.addEventListener("click", makeNugget);
}
document.getElementById("help-button").addEventListener("click", () => toggleHelp());
document.getElementById("help-close").addEventListener("click", () => toggleHelp(false));
const originalButton = document.getElementById("original-toggle");
if (originalButton) originalButton.addEventListener("click", toggleOriginal);
termsBox.addEventListener("change", () => toggleTerms(termsBox.checked));
root.addEventListener("click", (event) => {
  const seg = event.target.closest(".seg.hl");
  if (seg && window.getSelection().isCollapsed) panel.focusNugget(seg.dataset.n.split(" ")[0]);
});
for (const link of document.querySelectorAll("#prev-link, #next-link")) {
  link.addEventListener("click", (event) => {
    event.preventDefault();
    go(link.href);
  });
}

// Heartbeats while working; a beacon when the tab is hidden or closed.
if (!config.readonly) {
  setInterval(flushTime, 30000);
  const farewell = () => {
    const seconds = timer.take();
    if (seconds > 0) saver.beacon(config.urls.time, { seconds: String(seconds) });
  };
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "hidden") farewell();
  });
  window.addEventListener("pagehide", farewell);
}
document.body.dataset.ready = "1";
