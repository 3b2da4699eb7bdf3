// Nugget editors (autosaved, versioned), the topic's nugget list, live match counts.

import { uuid4 } from "./net.js";
import { markNugget, segmentsOf, unmarkNugget } from "./selection.js";

// A debounced call that can also be run at once (when the page moves on).
const debounce = (fn, ms, pending) => {
  let timer = null;
  const run = () => {
    clearTimeout(timer);
    timer = null;
    pending.delete(run);
    fn();
  };
  return () => {
    clearTimeout(timer);
    timer = setTimeout(run, ms);
    pending.add(run);
  };
};

const fill = (template) => template.content.firstElementChild.cloneNode(true);
const UNDO_MS = 5000;

// A few words of a text for the status line.
export function quote(text, max = 60) {
  const flat = text.replace(/\s+/g, " ").trim();
  return `“${flat.length > max ? `${flat.slice(0, max - 1)}…` : flat}”`;
}

const keywordList = (value) => value.split(",").map((w) => w.trim()).filter(Boolean);

// How an aspect reads in a select (as the server's _aspect_label.html renders it).
const aspectLabel = (a) => {
  const text = a.text && a.text !== a.id ? a.text : "";
  return text ? `${a.id}: ${text.length > 60 ? `${text.slice(0, 59)}…` : text}` : a.id;
};

// Refill an aspect select with the topic's aspects, keeping its value.
const fillAspects = (select, aspects) => {
  const value = select.value;
  select.replaceChildren(new Option("none", ""), ...aspects.map((a) => new Option(aspectLabel(a), a.id)));
  select.value = aspects.some((a) => a.id === value) ? value : "";
};

export class NuggetPanel {
  constructor({ config, saver, root, status, urlFor, onChange }) {
    this.config = config;
    this.saver = saver;
    this.root = root;
    this.status = status;
    this.urlFor = urlFor;
    this.onChange = onChange || (() => {});
    this.aspects = new Map();
    this.docList = document.getElementById("doc-nuggets");
    this.topicList = document.getElementById("topic-nuggets");
    this.editorTemplate = document.getElementById("nugget-editor");
    this.itemTemplate = document.getElementById("nugget-item");
    this.undoButton = document.getElementById("undo");
    this.nuggets = new Map();
    this.pending = new Set();
    this.deletes = new Map();
    // Deleted by this page: a document fetched before the delete still lists them.
    this.gone = new Set();
    this.conflicts = new Set();
    this.aspectCard = document.getElementById("topic-aspects");
    if (this.undoButton) this.undoButton.addEventListener("click", () => this.undoDelete());
  }

  // Show the nuggets of another document. Edits still waiting for their debounce are
  // saved first; a local copy newer than the given one (a save in flight) is kept.
  reset(documentId, position, nuggets) {
    this.flush();
    this.document = documentId;
    this.position = position;
    const next = new Map();
    for (const n of nuggets) {
      const mine = this.nuggets.get(n.id);
      next.set(n.id, mine && mine.version > n.version ? { ...mine, score: n.score, semantic: n.semantic, semantic_pending: n.semantic_pending } : n);
    }
    for (const id of [...this.deletes.keys(), ...this.gone]) next.delete(id);
    this.nuggets = next;
    this.docList.replaceChildren();
    this.render();
  }

  flush() {
    for (const run of Array.from(this.pending)) run();
    for (const id of Array.from(this.deletes.keys())) this.commitDelete(id);
  }

  list() {
    return Array.from(this.nuggets.values());
  }

  // Fresh matcher scores for this document (after a nugget changed). `whole`: the list
  // is the topic's as of now (nothing changed on this page since it was asked for), so
  // a nugget missing from it was deleted elsewhere.
  updateScores(nuggets, { whole = false } = {}) {
    for (const n of nuggets) {
      const mine = this.nuggets.get(n.id);
      if (mine) Object.assign(mine, { score: n.score, semantic: n.semantic, semantic_pending: n.semantic_pending });
      else if (!this.hidden(n.id)) this.nuggets.set(n.id, n);
    }
    if (whole) {
      const listed = new Set(nuggets.map((n) => n.id));
      for (const id of Array.from(this.nuggets.keys()).filter((x) => !listed.has(x))) {
        this.nuggets.delete(id);
        unmarkNugget(this.root, id);
        const li = this.docList.querySelector(`[data-id="${id}"]`);
        if (li) li.remove();
      }
    }
    this.render();
  }

  // Deleted on this page (or waiting for its Undo time to pass).
  hidden(id) {
    return this.deletes.has(id) || this.gone.has(id);
  }

  // The text was rendered again: the nugget whose editor has focus is marked again.
  reflash() {
    const li = document.activeElement && document.activeElement.closest(".nugget-editor");
    if (li && this.docList.contains(li)) this.flash(li.dataset.id, true);
  }

  url(name, id) {
    return this.config.urls[name].replace("/0/", `/${id}/`);
  }

  render() {
    this.topicList.replaceChildren();
    const all = Array.from(this.nuggets.values());
    for (const n of all) this.topicList.append(this.item(n));
    for (const n of all) {
      if (n.document === this.document && !this.docList.querySelector(`[data-id="${n.id}"]`)) {
        this.docList.append(n.mine && !this.config.readonly ? this.editor(n) : this.item(n));
      }
    }
    for (const li of this.docList.querySelectorAll(".nugget-item")) {
      const n = this.nuggets.get(Number(li.dataset.id));
      if (n) li.replaceWith(this.item(n));
    }
  }

  // The topic's aspects changed (this assessor added one, or the server says others
  // did): every select, the editor template and the topic card show them. Text only,
  // never markup. Aspects are only ever added, and a document fetched before this page
  // added one can answer after it: the lists are merged, so a late answer cannot drop
  // the new aspect (and with it the value a select was just given).
  setAspects(given) {
    for (const a of given) this.aspects.set(a.id, a);
    const aspects = Array.from(this.aspects.values());
    const template = this.editorTemplate.content.querySelector("[name=aspect]");
    if (template) fillAspects(template, aspects);
    for (const select of this.docList.querySelectorAll("[name=aspect]")) fillAspects(select, aspects);
    if (!this.aspectCard) return;
    const list = this.aspectCard.querySelector("ul");
    list.replaceChildren(
      ...aspects.map((a) => {
        const li = document.createElement("li");
        const id = document.createElement("strong");
        id.textContent = a.id;
        li.append(id, ` ${a.text || ""}`);
        return li;
      }),
    );
    this.aspectCard.hidden = aspects.length === 0;
  }

  // The nugget form's "New aspect": the server adds it to the topic, and this nugget
  // is tagged with it at once (a label the topic has already selects that aspect).
  wireNewAspect(li, select) {
    const toggle = li.querySelector(".new-aspect");
    const form = li.querySelector(".new-aspect-form");
    if (!toggle || !form) return;
    const input = form.querySelector("[name=aspect_text]");
    const statusEl = li.querySelector(".nugget-status");
    toggle.addEventListener("click", () => {
      form.hidden = !form.hidden;
      toggle.setAttribute("aria-expanded", String(!form.hidden));
      if (!form.hidden) input.focus();
    });
    const add = async () => {
      const { status, body } = await this.saver.post(this.config.urls.aspects, { aspect_text: input.value });
      if (status === 201) this.setAspects(body.aspects);
      else if (status !== 409 || !body.aspect) {
        statusEl.textContent = body.error || `aspect not added (${status})`;
        this.status("error", body.error || `Aspect not added (${status})`);
        return;
      }
      select.value = body.aspect.id;
      select.dispatchEvent(new Event("input"));
      statusEl.textContent = status === 201 ? `aspect ${body.aspect.id} added` : body.error;
      input.value = "";
      form.hidden = true;
      toggle.setAttribute("aria-expanded", "false");
      select.focus();
    };
    form.querySelector(".add-aspect").addEventListener("click", add);
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        add();
      }
    });
  }

  item(n) {
    const li = fill(this.itemTemplate);
    li.dataset.id = n.id;
    li.querySelector(".text").textContent = n.text;
    li.querySelector(".by").textContent = n.mine ? "(mine)" : `(${n.assessor})`;
    const score = li.querySelector(".score");
    if (n.score) {
      score.textContent = n.score.toFixed(2);
      li.classList.add(n.score >= 0.5 ? "found" : "partial");
    } else {
      score.textContent = "–";
      score.title = "Not found in this document";
    }
    // Semantic evidence: the document's sentence nearest to the nugget in meaning.
    if (n.semantic) {
      const nearest = li.querySelector(".nearest");
      nearest.hidden = false;
      nearest.querySelector(".sem").textContent = `≈ ${n.semantic.similarity.toFixed(2)}`;
      nearest.querySelector("q").textContent = n.semantic.sentence;
      nearest.dataset.span = `${n.semantic.start}-${n.semantic.end}`;
    }
    // Its text is embedded after the save, in the background: say so until it is.
    li.querySelector(".embedding-pending").hidden = !n.semantic_pending;
    return li;
  }

  editor(n) {
    const li = fill(this.editorTemplate);
    li.dataset.id = n.id;
    li.querySelector(".span-text").textContent = n.span_text;
    const fields = {
      text: li.querySelector("[name=text]"),
      keywords: li.querySelector("[name=keywords]"),
      grade: li.querySelector("[name=grade]"),
      aspect: li.querySelector("[name=aspect]"),
    };
    const show = (m) => {
      fields.text.value = m.text;
      fields.keywords.value = m.keywords.join(", ");
      fields.grade.value = m.grade === null ? "" : String(m.grade);
      fields.aspect.value = m.aspect;
    };
    show(n);
    const statusEl = li.querySelector(".nugget-status");
    const conflict = li.querySelector(".conflict");
    let theirs = null;
    const data = () => ({
      version: this.nuggets.get(n.id) ? this.nuggets.get(n.id).version : n.version,
      text: fields.text.value,
      keywords: JSON.stringify(keywordList(fields.keywords.value)),
      grade: fields.grade.value,
      aspect: fields.aspect.value,
    });
    const resolved = () => {
      conflict.hidden = true;
      theirs = null;
      if (this.conflicts.delete(n.id) && this.conflicts.size === 0 && this.saver.pending === 0) {
        this.status("saved", "All changes saved");
      }
    };
    const save = async () => {
      statusEl.textContent = "saving…";
      const { status, body } = await this.saver.post(this.url("nugget", n.id), data);
      if (status === 200) {
        const before = this.nuggets.get(n.id) || n;
        this.nuggets.set(n.id, { ...before, ...body, score: before.score });
        statusEl.textContent = `saved (v${body.version})`;
        resolved();
        this.warnTwin(body, statusEl);
        this.render();
        this.onChange();
      } else if (status === 409) {
        // Another tab saved first: show its version beside ours and let the assessor
        // choose; the page does not claim everything is saved meanwhile.
        theirs = body.current;
        this.conflicts.add(n.id);
        conflict.querySelector(".theirs-text").textContent = theirs.text;
        conflict.querySelector(".theirs-keywords").textContent = theirs.keywords.length ? theirs.keywords.join(", ") : "none";
        conflict.querySelector(".theirs-version").textContent = `v${theirs.version}`;
        conflict.hidden = false;
        statusEl.textContent = "not saved: changed in another tab";
        this.status("conflict", "Not saved: a nugget changed in another tab. Keep yours or take theirs.");
      } else {
        statusEl.textContent = body.error || `error ${status}`;
        this.status("error", body.error || `Nugget not saved (${status})`);
      }
    };
    const saveSoon = debounce(save, 400, this.pending);
    const preview = debounce(() => this.preview(li, fields), 600, new Set());
    for (const el of Object.values(fields)) {
      el.addEventListener("input", () => {
        statusEl.textContent = "editing…";
        saveSoon();
        if (el === fields.text || el === fields.keywords) preview();
      });
    }
    li.querySelector(".keep-mine").addEventListener("click", () => {
      if (!theirs) return;
      this.nuggets.set(n.id, { ...this.nuggets.get(n.id), version: theirs.version });
      save();
    });
    li.querySelector(".take-theirs").addEventListener("click", () => {
      if (!theirs) return;
      this.nuggets.set(n.id, { ...this.nuggets.get(n.id), ...theirs, score: (this.nuggets.get(n.id) || n).score });
      show(theirs);
      statusEl.textContent = `saved (v${theirs.version}, theirs)`;
      resolved();
      this.render();
    });
    this.wireNewAspect(li, fields.aspect);
    li.querySelector(".delete").addEventListener("click", () => this.remove(n.id, li));
    li.addEventListener("focusin", () => this.flash(n.id, true));
    li.addEventListener("focusout", () => this.flash(n.id, false));
    return li;
  }

  // Saved, but the topic has a nugget with the same text: say so.
  warnTwin(body, statusEl) {
    if (!body.warning) return;
    if (statusEl) statusEl.textContent = `saved (v${body.version}); ${body.warning}`;
    this.status("warning", `Nugget saved, but ${body.warning}.`);
  }

  flash(id, on) {
    for (const seg of segmentsOf(this.root, id)) seg.classList.toggle("focus", on);
  }

  async preview(li, fields) {
    const out = li.querySelector(".preview");
    const text = fields.text.value.trim();
    if (!text) return;
    const query = new URLSearchParams({ text, keywords: JSON.stringify(keywordList(fields.keywords.value)) });
    try {
      const r = await fetch(`${this.config.urls.preview}?${query}`, { credentials: "same-origin" });
      if (!r.ok) return;
      const c = await r.json();
      out.textContent = `Would match ${c.relevant} of ${c.judged_relevant} judged relevant and ${c.nonrelevant} of ${c.judged_nonrelevant} judged non-relevant documents.`;
      out.classList.toggle("warn", c.nonrelevant > 0);
    } catch (err) {
      out.textContent = "";
    }
  }

  async create(start, end, spanText) {
    const payload = {
      start: String(start),
      end: String(end),
      span_text: spanText,
      text: spanText.trim(),
      client_uuid: uuid4(),
    };
    const documentId = this.document;
    const { status, body } = await this.saver.post(this.urlFor("nuggets", this.position), payload);
    if (status !== 201 && status !== 200) {
      this.status("error", body.error || `Nugget not saved (${status})`);
      return null;
    }
    this.nuggets.set(body.id, body);
    if (documentId === this.document) markNugget(this.root, body.id, body.start, body.end);
    this.render();
    this.reveal(this.docList.querySelector(`[data-id="${body.id}"]`));
    this.status("saved", `Nugget saved: ${quote(body.span_text)}`);
    this.warnTwin(body, this.docList.querySelector(`[data-id="${body.id}"] .nugget-status`));
    this.onChange();
    return body;
  }

  // Deleting hides the nugget at once and sends the delete after a few seconds, unless
  // the assessor takes it back (Undo); moving on sends it straight away.
  remove(id, li) {
    const n = this.nuggets.get(id);
    if (!n) return;
    for (const other of Array.from(this.deletes.keys())) this.commitDelete(other);
    const timer = setTimeout(() => this.commitDelete(id), UNDO_MS);
    this.deletes.set(id, { n, timer, documentId: this.document });
    this.nuggets.delete(id);
    unmarkNugget(this.root, id);
    const hadFocus = li.contains(document.activeElement);
    li.remove();
    if (hadFocus) this.focusAfterRemoval();
    this.render();
    this.status("info", `Nugget deleted: ${quote(n.text)}.`);
    if (this.undoButton) this.undoButton.hidden = false;
  }

  undoDelete() {
    const [id, entry] = Array.from(this.deletes.entries()).pop() || [];
    if (id === undefined) return;
    clearTimeout(entry.timer);
    this.deletes.delete(id);
    if (this.undoButton) this.undoButton.hidden = true;
    this.nuggets.set(id, entry.n);
    if (entry.documentId === this.document) markNugget(this.root, id, entry.n.start, entry.n.end);
    this.render();
    this.status("info", `Nugget kept: ${quote(entry.n.text)}.`);
  }

  async commitDelete(id) {
    const entry = this.deletes.get(id);
    if (!entry) return;
    clearTimeout(entry.timer);
    this.deletes.delete(id);
    this.gone.add(id);
    if (this.undoButton && this.deletes.size === 0) this.undoButton.hidden = true;
    const { status, body } = await this.saver.post(this.url("nuggetDelete", id), { version: entry.n.version });
    if (status !== 200 && status !== 404) {
      this.status("error", body.error || `Nugget not deleted (${status})`);
      this.gone.delete(id);
      this.nuggets.set(id, entry.n);
      if (entry.documentId === this.document) markNugget(this.root, id, entry.n.start, entry.n.end);
      this.render();
      return;
    }
    this.onChange();
  }

  // A new nugget's editor (its text, grade and aspect) scrolled into the nugget panel's
  // view: on a short window it opened below the panel's fold. Never past its top.
  reveal(li) {
    // The panel scrolls, or below 1100 pixels the column holding topic and nuggets.
    const scrolls = (el) => el && getComputedStyle(el).overflowY !== "visible";
    const panel = li && [li.closest(".nugget-panel"), li.closest(".side")].find(scrolls);
    if (!panel) return;
    const box = panel.getBoundingClientRect();
    const r = li.getBoundingClientRect();
    if (r.bottom > box.bottom) panel.scrollTop += Math.min(r.bottom - box.bottom, r.top - box.top);
  }

  // The focus was in the editor just removed (a delete by keyboard): the document text
  // takes it, where reading and the shortcuts go on, instead of the page body.
  focusAfterRemoval() {
    this.root.focus({ preventScroll: true });
  }

  focusLast() {
    const editors = this.docList.querySelectorAll(".nugget-editor textarea");
    if (editors.length) editors[editors.length - 1].focus();
  }

  focusNugget(id) {
    const field = this.docList.querySelector(`[data-id="${id}"] textarea`);
    if (field) field.focus();
  }
}
