// Character offsets between the DOM and the canonical text.
//
// The document text is a row of <span class="seg" data-o="N"> elements, each holding one
// text node that starts at code point N of the canonical text. Characters an HTML parser
// would drop or rewrite (CR, NUL) are empty "inv" segments of length 1 with their code in
// data-c. Offsets are code points (as Python counts), not UTF-16 units (as JS does).

export function cpLength(s) {
  let n = 0;
  for (let i = 0; i < s.length; i += 1) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i += 1;
    }
    n += 1;
  }
  return n;
}

// UTF-16 index of code point `cp` in `s`.
function unitIndex(s, cp) {
  let i = 0;
  for (let n = 0; n < cp && i < s.length; n += 1) {
    const c = s.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < s.length ? 2 : 1;
  }
  return i;
}

const isInvisible = (seg) => seg.classList.contains("inv");
export const segStart = (seg) => Number(seg.dataset.o);
export const segLength = (seg) => (isInvisible(seg) ? 1 : cpLength(seg.textContent));
const segs = (root) => Array.from(root.children);

export function textLength(root) {
  const last = root.lastElementChild;
  return last ? segStart(last) + segLength(last) : 0;
}

// Offset of a DOM boundary point (node, offset); points outside root are clamped.
export function boundaryOffset(root, node, offset) {
  if (!root.contains(node)) {
    const before = node.compareDocumentPosition(root) & Node.DOCUMENT_POSITION_FOLLOWING;
    return before ? 0 : textLength(root);
  }
  if (node.nodeType === Node.TEXT_NODE) {
    const seg = node.parentElement.closest(".seg");
    return segStart(seg) + cpLength(node.data.slice(0, offset));
  }
  if (node === root) {
    const child = root.children[offset];
    return child ? segStart(child) : textLength(root);
  }
  const seg = node.closest(".seg");
  return offset === 0 ? segStart(seg) : segStart(seg) + segLength(seg);
}

// [start, end) of the current selection inside root, or null when there is none.
export function selectionOffsets(root) {
  const sel = window.getSelection();
  if (!sel || sel.rangeCount === 0 || sel.isCollapsed) return null;
  const range = sel.getRangeAt(0);
  if (!range.intersectsNode(root)) return null;
  const start = boundaryOffset(root, range.startContainer, range.startOffset);
  const end = boundaryOffset(root, range.endContainer, range.endOffset);
  return end > start ? { start, end } : null;
}

// The canonical text of [start, end), rebuilt from the segments (exact, CR included).
export function textBetween(root, start, end) {
  let out = "";
  for (const seg of segs(root)) {
    const s = segStart(seg);
    const len = segLength(seg);
    if (s + len <= start || s >= end) continue;
    if (isInvisible(seg)) {
      out += String.fromCharCode(Number(seg.dataset.c));
      continue;
    }
    const text = seg.textContent;
    out += text.slice(unitIndex(text, Math.max(0, start - s)), unitIndex(text, Math.min(len, end - s)));
  }
  return out;
}

// The segment containing offset (binary search: segments are in offset order).
function segAt(root, offset) {
  const all = root.children;
  let lo = 0;
  let hi = all.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (segStart(all[mid]) <= offset) lo = mid;
    else hi = mid - 1;
  }
  return all[lo];
}

// Make offset a segment boundary, splitting the segment that straddles it.
function splitAt(root, offset) {
  if (offset <= 0 || offset >= textLength(root)) return;
  const seg = segAt(root, offset);
  const s = segStart(seg);
  if (s === offset || isInvisible(seg)) return;
  const text = seg.textContent;
  const cut = unitIndex(text, offset - s);
  const tail = seg.cloneNode(false);
  tail.dataset.o = String(offset);
  tail.textContent = text.slice(cut);
  seg.textContent = text.slice(0, cut);
  seg.after(tail);
}

function setIds(seg, ids) {
  if (ids.length) seg.dataset.n = ids.join(" ");
  else delete seg.dataset.n;
  seg.classList.toggle("hl", ids.length > 0);
}

const idsOf = (seg) => (seg.dataset.n ? seg.dataset.n.split(" ") : []);

// Highlight nugget `id` over [start, end).
export function markNugget(root, id, start, end) {
  splitAt(root, start);
  splitAt(root, end);
  for (const seg of segs(root)) {
    const s = segStart(seg);
    if (s >= start && s < end) setIds(seg, [...new Set([...idsOf(seg), String(id)])]);
  }
}

export function unmarkNugget(root, id) {
  for (const seg of root.querySelectorAll(".seg[data-n]")) {
    setIds(seg, idsOf(seg).filter((x) => x !== String(id)));
  }
}

export function segmentsOf(root, id) {
  return Array.from(root.querySelectorAll(".seg[data-n]")).filter((seg) => idsOf(seg).includes(String(id)));
}

// Keyboard selection: "v" selects the next word, "w"/"b" grow or shrink by a word,
// ")" grows to the end of the sentence (Selection.modify, supported by the major engines).
export function keyboardSelect(root, how) {
  const sel = window.getSelection();
  const inside = sel.rangeCount > 0 && root.contains(sel.anchorNode);
  if (how === "start" || !inside) {
    if (inside) sel.collapseToEnd();
    else placeCaretAtFirstVisible(root, sel);
    sel.modify("move", "forward", "word");
    sel.modify("extend", "backward", "word");
    const r = sel.getRangeAt(0);
    sel.setBaseAndExtent(r.startContainer, r.startOffset, r.endContainer, r.endOffset);
  } else if (how === "word") {
    sel.modify("extend", "forward", "word");
  } else if (how === "back") {
    sel.modify("extend", "backward", "word");
  } else if (how === "sentence") {
    sel.modify("extend", "forward", "sentenceboundary");
  }
  const node = sel.focusNode && sel.focusNode.parentElement;
  if (node) node.scrollIntoView({ block: "nearest" });
}

function placeCaretAtFirstVisible(root, sel) {
  const first = segs(root).find((seg) => seg.getBoundingClientRect().bottom > 0 && seg.firstChild) || root.firstElementChild;
  sel.collapse(first.firstChild || first, 0);
}

// Topic terms: painted with the CSS Custom Highlight API, so the DOM (and with it every
// offset) stays untouched; browsers without it simply show no term highlights.
export function highlightTerms(root, terms, on) {
  if (!window.CSS || !CSS.highlights) return false;
  CSS.highlights.delete("topic-terms");
  if (!on || !terms.length) return true;
  const escaped = terms.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const pattern = new RegExp(`\\b(?:${escaped.join("|")})`, "giu");
  const ranges = [];
  for (const seg of segs(root)) {
    const node = seg.firstChild;
    if (!node) continue;
    for (const m of node.data.matchAll(pattern)) {
      const range = new Range();
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      ranges.push(range);
    }
  }
  CSS.highlights.set("topic-terms", new Highlight(...ranges));
  return true;
}
