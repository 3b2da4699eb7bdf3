// Nugget editors (autosaved, versioned), the topic's nugget list, live match counts.

import { uuid4 } from "./net.js";
import { markNugget, segmentsOf, unmarkNugget } from "./selection.js";

const debounce = (fn, ms) => {
  let timer = null;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
};

const fill = (template) => template.content.firstElementChild.cloneNode(true);

export class NuggetPanel {
  constructor({ config, saver, root, status }) {
    this.config = config;
    this.saver = saver;
    this.root = root;
    this.status = status;
    this.docList = document.getElementById("doc-nuggets");
    this.topicList = document.getElementById("topic-nuggets");
    this.editorTemplate = document.getElementById("nugget-editor");
    this.itemTemplate = document.getElementById("nugget-item");
    this.nuggets = new Map();
  }

  load(nuggets) {
    for (const n of nuggets) this.nuggets.set(n.id, n);
    this.render();
  }

  url(name, id) {
    return this.config.urls[name].replace("/0/", `/${id}/`);
  }

  render() {
    this.topicList.replaceChildren();
    const all = Array.from(this.nuggets.values());
    for (const n of all) this.topicList.append(this.item(n));
    for (const n of all) {
      if (n.document === this.config.document && !this.docList.querySelector(`[data-id="${n.id}"]`)) {
        this.docList.append(n.mine && !this.config.readonly ? this.editor(n) : this.item(n));
      }
    }
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
    }
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
    const data = () => ({
      version: this.nuggets.get(n.id).version,
      text: fields.text.value,
      keywords: JSON.stringify(fields.keywords.value.split(",").map((w) => w.trim()).filter(Boolean)),
      grade: fields.grade.value,
      aspect: fields.aspect.value,
    });
    const save = async () => {
      statusEl.textContent = "saving…";
      const { status, body } = await this.saver.post(this.url("nugget", n.id), data);
      if (status === 200) {
        this.nuggets.set(n.id, { ...this.nuggets.get(n.id), ...body, score: this.nuggets.get(n.id).score });
        statusEl.textContent = `saved (v${body.version})`;
        conflict.hidden = true;
        this.render();
      } else if (status === 409) {
        this.conflictCopy = body.current;
        conflict.hidden = false;
        statusEl.textContent = "conflict";
      } else {
        statusEl.textContent = body.error || `error ${status}`;
        this.status("error", body.error || `Nugget not saved (${status})`);
      }
    };
    const saveSoon = debounce(save, 400);
    const preview = debounce(() => this.preview(li, fields), 600);
    for (const el of Object.values(fields)) {
      el.addEventListener("input", () => {
        statusEl.textContent = "editing…";
        saveSoon();
        if (el === fields.text || el === fields.keywords) preview();
      });
    }
    li.querySelector(".keep-mine").addEventListener("click", () => {
      this.nuggets.set(n.id, { ...this.nuggets.get(n.id), version: this.conflictCopy.version });
      save();
    });
    li.querySelector(".take-theirs").addEventListener("click", () => {
      this.nuggets.set(n.id, { ...this.nuggets.get(n.id), ...this.conflictCopy });
      show(this.conflictCopy);
      conflict.hidden = true;
      statusEl.textContent = `v${this.conflictCopy.version}`;
    });
    li.querySelector(".delete").addEventListener("click", () => this.remove(n.id, li));
    li.addEventListener("focusin", () => this.flash(n.id, true));
    li.addEventListener("focusout", () => this.flash(n.id, false));
    return li;
  }

  flash(id, on) {
    for (const seg of segmentsOf(this.root, id)) seg.classList.toggle("focus", on);
  }

  async preview(li, fields) {
    const out = li.querySelector(".preview");
    const text = fields.text.value.trim();
    if (!text) return;
    const query = new URLSearchParams({
      text,
      keywords: JSON.stringify(fields.keywords.value.split(",").map((w) => w.trim()).filter(Boolean)),
    });
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
    const { status, body } = await this.saver.post(this.config.urls.nuggets, payload);
    if (status !== 201 && status !== 200) {
      this.status("error", body.error || `Nugget not saved (${status})`);
      return null;
    }
    this.nuggets.set(body.id, body);
    markNugget(this.root, body.id, body.start, body.end);
    this.render();
    this.status("saved", `Nugget saved at ${body.start}–${body.end}`);
    return body;
  }

  async remove(id, li) {
    const { status, body } = await this.saver.post(this.url("nuggetDelete", id), { version: this.nuggets.get(id).version });
    if (status !== 200 && status !== 404) {
      this.status("error", body.error || `Nugget not deleted (${status})`);
      return;
    }
    this.nuggets.delete(id);
    unmarkNugget(this.root, id);
    li.remove();
    this.render();
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
