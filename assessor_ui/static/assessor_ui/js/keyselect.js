// Keyboard selection by words, sentences and paragraphs over the canonical text's
// offsets (not Selection.modify, which counts punctuation and line breaks as words).
// A selection starts where the assessor is reading: the first line of the document
// in view, unless a selection is already in view. A mouse selection is snapped to the
// same words (snapSelection), so a drag that stops mid-word never makes a nugget of a
// word's half, which could never match.

import { boundaryOffset, pointAt, selectionOffsets, textBetween, textLength } from "./selection.js";

const WORD = /[\p{L}\p{N}]+(?:['’-][\p{L}\p{N}]+)*/gu;
// A sentence ends at . ! ? (closing quotes or brackets included) before white space.
const SENTENCE_END = /[.!?]+["'’”)\]]*(?=\s|$)/gu;
const PARAGRAPH_BREAK = /\n[ \t\r]*\n\s*/gu;

// The text with a map from UTF-16 index to code point offset, and back.
function canonical(root) {
  const text = textBetween(root, 0, textLength(root));
  const cp = new Uint32Array(text.length + 1);
  let n = 0;
  for (let i = 0; i < text.length; i += 1) {
    cp[i] = n;
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      i += 1;
      cp[i] = n;
    }
    n += 1;
  }
  cp[text.length] = n;
  return { text, cp, unit: (offset) => cp.findIndex((v) => v >= offset) };
}

function spans(regex, text) {
  return Array.from(text.matchAll(regex), (m) => [m.index, m.index + m[0].length]);
}

// Sentences as [start, end) UTF-16 ranges from their first word to their end mark.
function sentences(text) {
  const out = [];
  let from = 0;
  const ends = [...spans(SENTENCE_END, text), ...spans(PARAGRAPH_BREAK, text).map(([a]) => [a, a])];
  ends.sort((x, y) => x[1] - y[1]);
  for (const [, end] of [...ends, [text.length, text.length]]) {
    const first = text.slice(from, end).search(/[\p{L}\p{N}]/u);
    if (first >= 0 && end > from) out.push([from + first, end]);
    from = Math.max(from, end);
  }
  return out;
}

function paragraphs(text) {
  const out = [];
  let from = 0;
  for (const [a, b] of [...spans(PARAGRAPH_BREAK, text), [text.length, text.length]]) {
    const first = text.slice(from, a).search(/[\p{L}\p{N}]/u);
    if (first >= 0) out.push([from + first, a]);
    from = b;
  }
  return out;
}

// The code point offset where the assessor is reading: the start of the first line
// of the document text in view.
export function readingOffset(root) {
  const box = root.getBoundingClientRect();
  const y = Math.min(Math.max(box.top, 0) + 8, window.innerHeight - 1);
  const x = box.left + 4;
  const range = document.caretRangeFromPoint ? document.caretRangeFromPoint(x, y) : null;
  if (!range || !root.contains(range.startContainer)) return 0;
  return boundaryOffset(root, range.startContainer, range.startOffset);
}

function inView() {
  const sel = window.getSelection();
  if (!sel.rangeCount) return false;
  const r = sel.getRangeAt(0).getBoundingClientRect();
  return r.bottom > 0 && r.top < window.innerHeight;
}

// [start, end) of `text` (UTF-16 indices) widened to whole words: a bound inside a
// word (between two of its characters) moves out to that word's edge; a bound
// between words stays where it is.
export function snapToWords(text, start, end) {
  let a = start;
  let b = end;
  for (const [x, y] of spans(WORD, text)) {
    if (x < start && start < y) a = x;
    if (x < end && end < y) b = y;
    if (x >= end) break;
  }
  return [a, b];
}

// Code-point offsets {start, end} of the text in root widened to whole words.
export function wordOffsets(root, start, end) {
  const doc = canonical(root);
  const [a, b] = snapToWords(doc.text, doc.unit(start), doc.unit(end));
  return { start: doc.cp[a], end: doc.cp[b] };
}

// The selection in root (a mouse drag) widened to whole words, as the keys select.
export function snapSelection(root) {
  const sel = selectionOffsets(root);
  if (!sel) return;
  const doc = canonical(root);
  const [a, b] = snapToWords(doc.text, doc.unit(sel.start), doc.unit(sel.end));
  if (doc.cp[a] !== sel.start || doc.cp[b] !== sel.end) select(root, doc, a, b, { scroll: false });
}

function select(root, doc, a, b, { scroll = true } = {}) {
  const start = pointAt(root, doc.cp[a]);
  const end = pointAt(root, doc.cp[b]);
  if (!start || !end) return;
  window.getSelection().setBaseAndExtent(start.node, start.offset, end.node, end.offset);
  if (!scroll) return;
  const node = window.getSelection().focusNode;
  const el = node && (node.nodeType === Node.TEXT_NODE ? node.parentElement : node);
  if (el) el.scrollIntoView({ block: "nearest" });
}

// The current selection as UTF-16 [start, end) of `doc`, or null (none, or out of view).
function current(root, doc) {
  const sel = selectionOffsets(root);
  if (!sel || !inView()) return null;
  return [doc.unit(sel.start), doc.unit(sel.end)];
}

// Where a new selection starts: after the one in view, or at the reading position.
function origin(root, doc) {
  const sel = current(root, doc);
  return sel ? sel[1] : doc.unit(readingOffset(root));
}

// how: "start" (the next word), "word"/"back" (grow or shrink by a word), "sentence"
// (grow to the sentence end), "next-sentence" (select the next whole sentence),
// "paragraph" (grow to the paragraph end), "next-paragraph" (the next paragraph's
// first sentence).
export function keySelect(root, how) {
  const doc = canonical(root);
  const text = doc.text;
  const sel = current(root, doc);
  const from = origin(root, doc);
  const after = (list, at) => list.find(([a]) => a >= at) || null;
  // Without a selection in view, growing one starts it: w or b select a word, ) and }
  // select from a word to the end of its sentence or paragraph.
  if (how === "start" || (!sel && ["word", "back", "sentence", "paragraph"].includes(how))) {
    const word = after(spans(WORD, text), from);
    if (word) select(root, doc, word[0], word[1]);
    if (!word || ["start", "word", "back"].includes(how)) return;
    keySelect(root, how);
    return;
  }
  if (how === "word") {
    const word = after(spans(WORD, text), sel[1]);
    if (word) select(root, doc, sel[0], word[1]);
  } else if (how === "back") {
    const words = spans(WORD, text).filter(([, b]) => b > sel[0] && b < sel[1]);
    if (words.length) select(root, doc, sel[0], words.at(-1)[1]);
  } else if (how === "sentence") {
    const within = sentences(text).find(([, b]) => b > sel[1]) || sentences(text).at(-1);
    if (within) select(root, doc, sel[0], Math.max(within[1], sel[1]));
  } else if (how === "paragraph") {
    // The paragraph the selection ends in: at its end already, } stays there rather
    // than crossing the blank line into the next one (] goes to the next paragraph).
    const list = paragraphs(text);
    const within = list.find(([, b]) => b >= sel[1]) || list.at(-1);
    if (within) select(root, doc, sel[0], Math.max(within[1], sel[1]));
  } else if (how === "next-sentence" || how === "next-paragraph") {
    const list = how === "next-sentence" ? sentences(text) : paragraphs(text);
    // The first one starting after the selection in view; from the reading position,
    // the first sentence starting there, or the paragraph after the one being read.
    const found = how === "next-paragraph" && !sel ? list.find(([a]) => a > from) || null : after(list, from);
    if (!found) return;
    const [a, b] = how === "next-sentence" ? found : sentences(text).find(([x]) => x >= found[0]) || found;
    select(root, doc, a, b);
  }
}
