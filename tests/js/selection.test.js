// The offset maths of selection.js: code points (as Python counts) against UTF-16
// units, invisible segments, splitting segments for nugget marks, trimming a span.
import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";

import { installDom } from "./dom.js";

installDom();
const sel = await import("../../assessor_ui/static/assessor_ui/js/selection.js");

// "a😀b\rc d": the emoji is 1 code point and 2 UTF-16 units; CR is an invisible segment.
const SEGMENTS = [
  [0, "a😀b", [], false, false, 0],
  [3, "", [], false, true, 13],
  [4, "c déjà vu", [], false, false, 0],
];
let root;

beforeEach(() => {
  document.body.replaceChildren();
  root = document.createElement("div");
  document.body.append(root);
  sel.renderSegments(root, SEGMENTS);
});

test("cpLength counts code points, not UTF-16 units", () => {
  assert.equal(sel.cpLength("a😀b"), 3);
  assert.equal("a😀b".length, 4);
  assert.equal(sel.cpLength(""), 0);
  assert.equal(sel.cpLength("\ud83d"), 1); // a lone surrogate is one code point
});

test("textLength and textBetween rebuild the canonical text, CR included", () => {
  assert.equal(sel.textLength(root), 13);
  assert.equal(sel.textBetween(root, 0, 13), "a😀b\rc déjà vu");
  assert.equal(sel.textBetween(root, 1, 2), "😀");
  assert.equal(sel.textBetween(root, 2, 5), "b\rc");
});

test("boundaryOffset turns a DOM point into a code-point offset", () => {
  const text = root.children[2].firstChild;
  assert.equal(sel.boundaryOffset(root, text, 2), 6);
  const emoji = root.children[0].firstChild;
  // UTF-16 offset 3 (after the surrogate pair) is code point 2.
  assert.equal(sel.boundaryOffset(root, emoji, 3), 2);
  assert.equal(sel.boundaryOffset(root, root, 1), 3);
  assert.equal(sel.boundaryOffset(root, root, 3), 13);
  const outside = document.createElement("p");
  document.body.append(outside);
  assert.equal(sel.boundaryOffset(root, outside, 0), 13);
});

test("selectionOffsets reads the window's selection inside the root", () => {
  const range = document.createRange();
  range.setStart(root.children[0].firstChild, 1);
  range.setEnd(root.children[2].firstChild, 3);
  window.getSelection().removeAllRanges();
  window.getSelection().addRange(range);
  assert.deepEqual(sel.selectionOffsets(root), { start: 1, end: 7 });
  window.getSelection().removeAllRanges();
  assert.equal(sel.selectionOffsets(root), null);
});

test("markNugget splits segments at code points and keeps the text", () => {
  sel.markNugget(root, 7, 2, 8);
  assert.equal(sel.textBetween(root, 0, 13), "a😀b\rc déjà vu");
  const marked = sel.segmentsOf(root, 7).map((s) => sel.segStart(s));
  assert.deepEqual(marked, [2, 3, 4]);
  assert.deepEqual(
    sel.segmentsFromDom(root).map(([start, text, ids]) => [start, text, ids]),
    [
      [0, "a😀", []],
      [2, "b", [7]],
      [3, "", [7]],
      [4, "c dé", [7]],
      [8, "jà vu", []],
    ],
  );
  sel.unmarkNugget(root, 7);
  assert.equal(sel.segmentsOf(root, 7).length, 0);
});

test("pointAt is the inverse of boundaryOffset", () => {
  for (const offset of [0, 1, 2, 4, 6, 12]) {
    const { node, offset: unit } = sel.pointAt(root, offset);
    assert.equal(sel.boundaryOffset(root, node, unit), offset, `offset ${offset}`);
  }
});

test("trimSpan drops white space at both ends", () => {
  sel.renderSegments(root, [[0, "  two words \n", [], false, false, 0]]);
  assert.deepEqual(sel.trimSpan(root, 0, 13), { start: 2, end: 11, text: "two words" });
});

test("tooShort applies the server's rule", () => {
  const rules = { minSpanChars: 3, minSpanWords: 2 };
  assert.equal(sel.tooShort("one", rules), true);
  assert.equal(sel.tooShort("a b", rules), false);
  assert.equal(sel.tooShort("déjà vu", rules), false);
  assert.equal(sel.tooShort("ab", { minSpanChars: 3, minSpanWords: 1 }), true);
  assert.equal(sel.tooShort("one two", { minSpanChars: 3, minSpanWords: 3 }), true);
});
