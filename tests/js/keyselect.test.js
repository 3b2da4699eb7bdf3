// Word snapping of keyselect.js: a selection's bounds inside a word move out to the
// word's edges (the words the keyboard selects), so a mouse drag that stops mid-word
// makes a nugget of whole words.
import assert from "node:assert/strict";
import { test } from "node:test";

import { installDom } from "./dom.js";

installDom();
const { snapToWords, wordOffsets } = await import("../../assessor_ui/static/assessor_ui/js/keyselect.js");
const { renderSegments } = await import("../../assessor_ui/static/assessor_ui/js/selection.js");

const LINE = "The Fennick saltmarsh beekeeping cooperative, founded in 1921.";
const cut = (text, [a, b]) => text.slice(a, b);

test("a bound inside a word moves out to the word's edge", () => {
  const end = LINE.indexOf("cooperative") + 4; // "coope|rative"
  assert.equal(cut(LINE, snapToWords(LINE, 0, end)), "The Fennick saltmarsh beekeeping cooperative");
  const start = LINE.indexOf("Fennick") + 3; // "Fen|nick"
  assert.equal(cut(LINE, snapToWords(LINE, start, end)), "Fennick saltmarsh beekeeping cooperative");
});

test("bounds at word edges or between words stay where they are", () => {
  const start = LINE.indexOf("saltmarsh");
  const end = start + "saltmarsh beekeeping".length;
  assert.deepEqual(snapToWords(LINE, start, end), [start, end]);
  // From the space before a word to the comma after one: trimming is not snapping.
  assert.deepEqual(snapToWords(LINE, start - 1, LINE.indexOf(",") + 1), [start - 1, LINE.indexOf(",") + 1]);
  assert.deepEqual(snapToWords(LINE, 0, LINE.length), [0, LINE.length]);
});

test("words are the keyboard's: letters and digits, joined by an apostrophe or hyphen", () => {
  const text = "a thermo-aeroelastic model's 3rd run";
  const at = text.indexOf("aeroelastic") + 2;
  assert.equal(cut(text, snapToWords(text, at, text.indexOf("model") + 2)), "thermo-aeroelastic model's");
  assert.equal(cut(text, snapToWords(text, text.indexOf("3rd") + 1, text.length - 1)), "3rd run");
  assert.equal(cut("déjà vu", snapToWords("déjà vu", 2, 6)), "déjà vu");
});

test("wordOffsets snaps code-point offsets of the page's text", () => {
  installDom();
  const root = document.createElement("div");
  document.body.append(root);
  // An astral character (2 UTF-16 units, 1 code point) before the words.
  renderSegments(root, [
    [0, "\u{1d518} Fennick salt", [], false, false, 0],
    [14, "marsh bees", [], false, false, 0],
  ]);
  // Code points: 𝔘=0, space=1, Fennick=2..9, salt=10..14 / marsh=14..19, bees=20..24.
  assert.deepEqual(wordOffsets(root, 4, 16), { start: 2, end: 19 });
  assert.deepEqual(wordOffsets(root, 2, 19), { start: 2, end: 19 });
  assert.deepEqual(wordOffsets(root, 21, 23), { start: 20, end: 24 });
});
