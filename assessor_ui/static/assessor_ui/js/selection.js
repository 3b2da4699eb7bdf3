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

// The DOM point (node, UTF-16 offset) of code point `offset` of the canonical text.
export function pointAt(root, offset) {
  const seg = segAt(root, offset);
  if (!seg) return null;
  const node = seg.firstChild;
  if (!node || isInvisible(seg)) return { node: seg, offset: 0 };
  return { node, offset: unitIndex(node.data, Math.max(0, offset - segStart(seg))) };
}

// Topic terms: painted with the CSS Custom Highlight API over the [start, end) offsets
// the server found with the matcher's own tokenizer, stopwords and stemmer, so the DOM
// (and with it every offset) stays untouched; browsers without it show no highlights.
export function highlightTerms(root, spans, on) {
  if (!window.CSS || !CSS.highlights) return false;
  CSS.highlights.delete("topic-terms");
  if (!on || !spans.length || !root.firstElementChild) return true;
  const ranges = [];
  for (const [start, end] of spans) {
    const a = pointAt(root, start);
    const b = pointAt(root, end - 1);
    if (!a || !b) continue;
    const range = new Range();
    range.setStart(a.node, a.offset);
    // The end is one code point past the last one (which may be 2 UTF-16 units).
    const last = b.node.nodeType === Node.TEXT_NODE ? b.node.data.codePointAt(b.offset) : 0;
    range.setEnd(b.node, b.offset + (last > 0xffff ? 2 : b.node.nodeType === Node.TEXT_NODE ? 1 : 0));
    ranges.push(range);
  }
  CSS.highlights.set("topic-terms", new Highlight(...ranges));
  return true;
}

// Segments as the data endpoint sends them: [start, text, nugget ids, match, invisible,
// code]. Text goes in as text (textContent), never as markup.
export function renderSegments(root, segments) {
  const out = document.createDocumentFragment();
  for (const [start, text, nuggets, match, invisible, code] of segments) {
    const seg = document.createElement("span");
    seg.className = "seg";
    if (nuggets.length) {
      seg.classList.add("hl");
      seg.dataset.n = nuggets.join(" ");
    }
    if (match) seg.classList.add("match");
    seg.dataset.o = String(start);
    if (invisible) {
      seg.classList.add("inv");
      seg.dataset.c = String(code);
    } else {
      seg.textContent = text;
    }
    out.append(seg);
  }
  root.replaceChildren(out);
}

// The segments of the text as shown now (nugget marks made since the load included).
export function segmentsFromDom(root) {
  return segs(root).map((seg) => [
    segStart(seg),
    isInvisible(seg) ? "" : seg.textContent,
    idsOf(seg).map(Number),
    seg.classList.contains("match"),
    isInvisible(seg),
    isInvisible(seg) ? Number(seg.dataset.c) : 0,
  ]);
}

const SPACE = /\s/u;

// [start, end) narrowed to exclude whitespace at both ends (code points).
export function trimSpan(root, start, end) {
  const chars = Array.from(textBetween(root, start, end));
  let a = 0;
  let b = chars.length;
  while (a < b && SPACE.test(chars[a])) a += 1;
  while (b > a && SPACE.test(chars[b - 1])) b -= 1;
  return { start: start + a, end: start + b, text: chars.slice(a, b).join("") };
}

// The rule the server applies (its numbers come with the page, serverRules()): a
// nugget span holds at least minSpanChars characters and minSpanWords words.
export function tooShort(text, { minSpanChars, minSpanWords }) {
  const words = text.match(/[\p{L}\p{N}]+/gu) || [];
  return Array.from(text).length < minSpanChars || words.length < minSpanWords;
}
