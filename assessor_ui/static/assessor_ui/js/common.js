// Small helpers the page scripts share, and the rules the server sends them.

// The parsed JSON of a <script type="application/json" id=...> island (Django's
// json_script), or `fallback` when the page has none.
export function readJson(id, fallback = null) {
  const el = typeof document === "undefined" ? null : document.getElementById(id);
  return el ? JSON.parse(el.textContent) : fallback;
}

// The rules the server applies (assessor_ui/templatetags/client.py, on every page):
// minSpanChars, minSpanWords, ruleFields (kind -> the fields it reads), jobFinal.
export function serverRules() {
  return readJson("app-rules", {});
}

// The page's scripts have run: the browser tests wait for this mark.
export function markReady() {
  document.body.dataset.ready = "1";
}

// Set the text of the box's [data-field=name] element, if it has one.
export function showField(box, name, value) {
  const el = box.querySelector(`[data-field="${name}"]`);
  if (el) el.textContent = value;
}

// Move the box's <progress data-field="bar"> to done of total (when total is known).
export function showBar(box, done, total) {
  const bar = box.querySelector('[data-field="bar"]');
  if (bar && total) {
    bar.max = total;
    bar.value = done;
  }
}
