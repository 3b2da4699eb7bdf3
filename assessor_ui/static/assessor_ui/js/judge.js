// The judging page: wires the keymap, relevance buttons, nugget panel, timer and saver,
// and moves through the queue without a full page load: the documents next to the one
// shown are fetched ahead (text and state, as JSON), a move swaps them in and pushes a
// history entry, and saves go through the autosave queue without holding the move up.

import { AdvanceOnGrade } from "./advance.js";
import { markReady, readJson, serverRules } from "./common.js";
import { DocClock } from "./doc_clock.js";
import { DocumentCache } from "./doc_cache.js";
import { WorkHistory } from "./history.js";
import { JudgmentSync } from "./judgment_sync.js";
import { bindKeymap } from "./keymap.js";
import { guardLeaving } from "./leaving.js";
import { keySelect, snapSelection, wordOffsets } from "./keyselect.js";
import { Saver } from "./net.js";
import { NuggetPanel } from "./nuggets.js";
import {
  highlightTerms,
  renderSegments,
  segmentsFromDom,
  selectionOffsets,
  tooShort,
  trimSpan,
} from "./selection.js";
import { ActiveTimer } from "./timer.js";

const config = readJson("judge-config");
const rules = serverRules();
const root = document.getElementById("doc-text");
const statusEl = document.getElementById("save-status");
const help = document.getElementById("help");
let frame = document.getElementById("doc-html");
const originalButton = document.getElementById("original-toggle");
const prevLink = document.getElementById("prev-link");
const nextLink = document.getElementById("next-link");
const judgedCount = document.getElementById("judged-count");
const positions = config.positions;
const judged = new Set(config.judged);
const AHEAD = 2;

function status(kind, message) {
  statusEl.textContent = message;
  statusEl.dataset.kind = kind;
}

// The document's sentence nearest to each nugget comes once per sentence, by its start
// offset (a topic's hundreds of nuggets share a document's few sentences).
function withSentences(nuggets, sentences) {
  for (const n of nuggets) {
    const sentence = n.semantic && sentences ? sentences[n.semantic.start] : undefined;
    if (sentence !== undefined) n.semantic.sentence = sentence;
  }
  return nuggets;
}

const urlFor = (name, position) => config.urls[name].replace(config.urls.mark, String(position));
const saver = new Saver({ csrfUrl: config.urls.csrf, loginUrl: config.urls.login, onStatus: status });
const timer = new ActiveTimer(config.idleSeconds);
let current = config.doc;
const panel = new NuggetPanel({ config, saver, root, status, urlFor, onChange: () => nuggetsChanged() });
panel.reset(current.document, current.position, withSentences(readJson("judge-nuggets"), current.sentences));
const sync = new JudgmentSync({ config, saver, status, urlFor, shown: () => current, onTheirs: (position, state) => takeGrade(position, state) });
saver.unresolved = () => panel.conflicts.size + sync.conflicts.size;
const workHistory = new WorkHistory({ config, saver, status, urlFor, sync, onUndone: (position, body) => undone(position, body) });

function neighbours(position) {
  const i = positions.indexOf(position);
  return { index: i, previous: i > 0 ? positions[i - 1] : null, next: i + 1 < positions.length ? positions[i + 1] : null };
}

function nextUnjudged(position) {
  const i = positions.indexOf(position);
  const later = [...positions.slice(i + 1), ...positions.slice(0, i)];
  return later.find((p) => !judged.has(p)) ?? null;
}

function showRelevance() {
  for (const b of document.querySelectorAll("button.grade")) {
    b.setAttribute("aria-pressed", String(Number(b.dataset.grade) === current.relevance));
  }
  judgedCount.textContent = String(judged.size);
}

// Record a grade (null: seen but skipped). The save is queued with the time spent so
// far, for this document, whatever the page shows by the time it is sent.
function judge(value) {
  if (config.readonly) return;
  const position = current.position;
  current.relevance = value === null ? null : Number(value);
  if (current.relevance !== null) judged.add(position);
  showRelevance();
  sync.save(position, current.relevance, timer.take()).then(() => {
    if (position === current.position) workHistory.refresh(position);
  });
}

function flushTime() {
  if (config.readonly) return;
  const seconds = timer.take();
  if (seconds > 0) saver.post(urlFor("time", current.position), { seconds: String(seconds) });
}

// --- The queue: prefetched documents and moves without a page load ------------------
const cache = new DocumentCache((position) => urlFor("data", position));

function prefetch(position) {
  if (position !== null && position !== current.position) cache.prefetch(position);
}

function prefetchAround(position) {
  const { index } = neighbours(position);
  const wanted = [positions[index + 1], positions[index - 1]];
  for (let k = 2; k <= AHEAD; k += 1) wanted.push(positions[index + k]);
  const unjudged = nextUnjudged(position);
  if (unjudged !== null) wanted.push(unjudged);
  for (const p of wanted) if (p !== undefined) prefetch(p);
}

// Keep what the page shows of the document being left: going back is instant too. A
// refresh still due for it is dropped, and the copy kept as stale instead.
function leave() {
  flushTime();
  panel.flush();
  clearTimeout(refreshTimer);
  const doc = { ...current, segments: segmentsFromDom(root), nuggets: panel.list(), judged: undefined };
  cache.keep(current.position, doc, currentStale);
}

function setLink(link, position) {
  link.hidden = position === null;
  if (position === null) link.removeAttribute("href");
  else link.href = urlFor("page", position);
  link.dataset.position = position === null ? "" : String(position);
}

function show(doc) {
  current = { ...doc, segments: undefined, nuggets: undefined };
  if (doc.judged && !config.readonly) {
    // The server's view, plus what this tab judged and may still be saving.
    for (const p of doc.judged) judged.add(p);
  }
  if (doc.relevance !== null) judged.add(doc.position);
  const { index, previous, next } = neighbours(doc.position);
  document.getElementById("docno").textContent = doc.docno;
  document.getElementById("doc-title").textContent = doc.title || "(untitled)";
  document.getElementById("doc-index").textContent = String(index + 1);
  document.title = document.title.replace(/^(.*? · ).*?( · [^·]*)$/, `$1${doc.docno}$2`);
  setLink(prevLink, previous);
  setLink(nextLink, next);
  renderSegments(root, doc.segments);
  // A new frame, not a new srcdoc: navigating the frame would add an entry to the
  // session history, and Back would then step through frames instead of documents.
  const fresh = frame.cloneNode(false);
  fresh.srcdoc = doc.html;
  frame.replaceWith(fresh);
  frame = fresh;
  originalButton.hidden = !doc.html;
  if (!doc.html) toggleOriginal(false);
  showRelevance();
  panel.reset(doc.document, doc.position, withSentences(doc.nuggets, doc.sentences));
  if (doc.aspects) panel.setAspects(doc.aspects);
  if (termsBox.checked) highlightTerms(root, current.terms, true);
  window.scrollTo(0, 0);
  document.body.dataset.position = String(doc.position);
  shownAgain(doc);
  document.dispatchEvent(new CustomEvent("judge:shown", { detail: { position: doc.position, seconds: doc.seconds } }));
}

let moves = 0;
async function go(position, { push = true } = {}) {
  if (position === null || position === undefined) {
    status("info", "No more documents this way.");
    return;
  }
  const move = ++moves;
  if (position !== current.position) leave();
  let loaded;
  try {
    loaded = await cache.load(position);
  } catch (err) {
    // The data endpoint failed (offline, a new login needed): a plain page load shows
    // the server's answer; the autosave queue is flushed first.
    await saver.idle();
    window.location.assign(urlFor("page", position));
    return;
  }
  if (move !== moves) return; // a later key press won
  show(loaded.doc);
  currentStale = loaded.stale;
  if (push) history.pushState({ position }, "", urlFor("page", position));
  if (currentStale) refreshShown();
  prefetchAround(position);
}

// --- Nugget changes: the scores of every document may change ------------------------
// The documents kept are marked stale rather than dropped (their text stays the same)
// and are refreshed when shown; the one shown now is refreshed after a short debounce.
let changes = 0;
let currentStale = false;
let refreshTimer = null;
function nuggetsChanged() {
  changes += 1;
  currentStale = true;
  cache.markStale();
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(refreshShown, 300);
}

// The shown document's nugget list, scores and aspects from one data request, applied
// only if the page still shows it. An answer asked for before a later nugget change
// may predate that change: its scores are taken (another refresh follows), but not its
// text highlights, nor its list as the whole truth.
async function refreshShown() {
  const move = moves;
  const seen = changes;
  let doc;
  try {
    doc = await cache.fetch(current.position);
  } catch (err) {
    return; // stays stale: refreshed when next shown
  }
  if (move !== moves) return;
  const whole = seen === changes;
  current.scores = doc.scores;
  current.sentences = doc.sentences;
  panel.updateScores(withSentences(doc.nuggets, doc.sentences), { whole });
  if (doc.aspects) panel.setAspects(doc.aspects);
  if (!whole) return;
  currentStale = false;
  redraw(doc.segments);
}

// The text again with the server's nugget highlights (less those deleted here, maybe
// still undoable) and matcher spans, unless they are what is shown or the assessor is
// selecting (a new rendering drops a selection).
function redraw(segments) {
  const shown = segments.map(([start, text, ids, ...rest]) => [start, text, ids.filter((id) => !panel.hidden(id)), ...rest]);
  if (selectionOffsets(root) || JSON.stringify(shown) === JSON.stringify(segmentsFromDom(root))) return;
  renderSegments(root, shown);
  if (termsBox.checked) highlightTerms(root, current.terms, true);
  panel.reflash();
}

// --- Versions, history and undo (judgment_sync.js, history.js) ---------------------
// A document shown: the newest version this page knows of its grade, then the stored
// grade and the history from the server.
function shownAgain(doc) {
  current.version = sync.seen(doc.position, doc.version ?? 0);
  workHistory.refresh(doc.position);
}

// The stored grade replaces the page's (taken from another tab, or an undo).
function takeGrade(position, state) {
  if (state.relevance === null) judged.delete(position);
  else judged.add(position);
  if (position !== current.position) return;
  current.relevance = state.relevance;
  current.version = state.version;
  showRelevance();
}

// Undo: a delete still in its few seconds is taken back here; any other change of
// this document on the server.
function undoLast() {
  if (config.readonly) return;
  if (panel.deletes.size > 0) panel.undoDelete();
  else workHistory.undo();
}

function undone(position, body) {
  const { kind, object } = body.undone;
  if (kind === "judgment") {
    sync.versions.set(position, body.judgment.version);
    takeGrade(position, body.judgment);
    return;
  }
  // The nugget as the server now has it: dropped here and listed again by the refresh.
  panel.gone.delete(object);
  panel.nuggets.delete(object);
  const li = document.querySelector(`#doc-nuggets [data-id="${object}"]`);
  if (li) li.remove();
  nuggetsChanged();
}

function goHome() {
  flushTime();
  saver.idle().then(() => window.location.assign(config.urls.home));
}

// --- Nuggets, help, views ------------------------------------------------------------
async function makeNugget() {
  if (config.readonly) return;
  if (root.hidden) {
    status("error", "Switch back to the text view (o) to highlight.");
    return;
  }
  const raw = selectionOffsets(root);
  if (!raw) {
    status("error", "Select some text of the document first.");
    return;
  }
  // Whole words, however the selection was made (a drag may stop mid-word).
  const words = wordOffsets(root, raw.start, raw.end);
  const span = trimSpan(root, words.start, words.end);
  if (tooShort(span.text, rules)) {
    status("error", `Select at least ${rules.minSpanWords} words for a nugget.`);
    return;
  }
  const created = await panel.create(span.start, span.end, span.text);
  if (created) window.getSelection().removeAllRanges();
}

function toggleHelp(force) {
  help.hidden = force === undefined ? !help.hidden : !force;
  if (!help.hidden) document.getElementById("help-close").focus();
}

const guidelines = document.getElementById("guidelines");
function toggleGuidelines(force) {
  guidelines.hidden = force === undefined ? !guidelines.hidden : !force;
  if (!guidelines.hidden) document.getElementById("guidelines-close").focus();
}

function toggleOriginal(force) {
  const on = force === undefined ? frame.hidden && Boolean(current.html) : force;
  frame.hidden = !on;
  root.hidden = on;
  originalButton.setAttribute("aria-pressed", String(on));
}

const termsBox = document.getElementById("terms-toggle");
function toggleTerms(force) {
  termsBox.checked = force === undefined ? !termsBox.checked : force;
  if (!highlightTerms(root, current.terms, termsBox.checked)) status("info", "This browser cannot highlight terms.");
}

function skip() {
  if (current.relevance === null) judge(null);
  const { next } = neighbours(current.position);
  if (next === null) goHome();
  else go(next);
}

// --- Grade-and-advance, time on the document ----------------------------------------
const advance = new AdvanceOnGrade({
  box: document.getElementById("advance-toggle"),
  saver,
  url: config.urls.preferences,
  status,
  onAdvance: () => {
    const { next } = neighbours(current.position);
    go(next ?? nextUnjudged(current.position));
  },
});
const gradeAndGo = (value) => {
  judge(value);
  if (!config.readonly) advance.after(value);
};
const clock = new DocClock(document.getElementById("doc-clock"), config.idleSeconds);
clock.show(current.position, current.seconds);

bindKeymap(config.keymap, {
  grade: (value) => gradeAndGo(value),
  next: () => go(neighbours(current.position).next),
  previous: () => go(neighbours(current.position).previous),
  "next-unjudged": () => {
    const p = nextUnjudged(current.position);
    if (p === null) goHome();
    else go(p);
  },
  skip: () => skip(),
  "select-start": () => keySelect(root, "start"),
  "select-word": () => keySelect(root, "word"),
  "select-back": () => keySelect(root, "back"),
  "select-sentence": () => keySelect(root, "sentence"),
  "select-next-sentence": () => keySelect(root, "next-sentence"),
  "select-paragraph": () => keySelect(root, "paragraph"),
  "select-next-paragraph": () => keySelect(root, "next-paragraph"),
  "advance-toggle": () => advance.toggle(),
  nugget: () => makeNugget(),
  "edit-last": () => panel.focusLast(),
  terms: () => toggleTerms(),
  original: () => toggleOriginal(),
  help: () => toggleHelp(),
  guidelines: () => toggleGuidelines(),
  undo: () => undoLast(),
  escape: () => {
    toggleHelp(false);
    toggleGuidelines(false);
    window.getSelection().removeAllRanges();
  },
});

for (const b of document.querySelectorAll("button.grade")) b.addEventListener("click", () => gradeAndGo(b.dataset.grade));
document.getElementById("skip").addEventListener("click", skip);
const makeButton = document.getElementById("make-nugget");
if (makeButton) {
  // mousedown would collapse the selection before click: keep it.
  makeButton.addEventListener("mousedown", (e) => e.preventDefault());
  makeButton.addEventListener("click", makeNugget);
}
document.getElementById("help-button").addEventListener("click", () => toggleHelp());
document.getElementById("help-close").addEventListener("click", () => toggleHelp(false));
document.getElementById("guidelines-button").addEventListener("click", () => toggleGuidelines());
document.getElementById("guidelines-close").addEventListener("click", () => toggleGuidelines(false));
originalButton.addEventListener("click", () => toggleOriginal());
termsBox.addEventListener("change", () => toggleTerms(termsBox.checked));
// A drag that ends mid-word shows at once the whole words a nugget will take.
document.addEventListener("mouseup", () => setTimeout(() => snapSelection(root), 0));
root.addEventListener("click", (event) => {
  const seg = event.target.closest(".seg.hl");
  if (seg && window.getSelection().isCollapsed) panel.focusNugget(seg.dataset.n.split(" ")[0]);
});
for (const link of [prevLink, nextLink]) {
  if (link.href) link.dataset.position = new URL(link.href).pathname.split("/").filter(Boolean).pop();
  link.addEventListener("click", (event) => {
    if (event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    go(Number(link.dataset.position));
  });
}

// Back and forward move through the documents seen; a reload shows the URL's document.
history.replaceState({ position: current.position }, "");
window.addEventListener("popstate", (event) => {
  const position = event.state && event.state.position;
  if (typeof position === "number") go(position, { push: false });
  else window.location.reload();
});

// Heartbeats while working; a beacon when the tab is hidden or closed.
if (!config.readonly) {
  guardLeaving({ saver, panel, sync });
  setInterval(flushTime, 30000);
  const farewell = () => {
    const seconds = timer.take();
    if (seconds > 0) saver.beacon(urlFor("time", current.position), { seconds: String(seconds) });
  };
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "hidden") farewell();
  });
  window.addEventListener("pagehide", farewell);
}
showRelevance();
shownAgain(current);
document.body.dataset.position = String(current.position);
markReady();
// The first neighbours are fetched once the page has settled.
setTimeout(() => prefetchAround(current.position), 200);
