// Live progress of a matching job: polls the JSON endpoint every few seconds while
// the tab is visible, and stops once the job is finished. Text only (textContent).
const FINAL = new Set(["done", "failed", "cancelled"]);
const PERIOD_MS = 3000;

const box = document.getElementById("job-progress");

function show(name, value) {
  const el = box.querySelector(`[data-field="${name}"]`);
  if (el) el.textContent = value;
}

function render(p) {
  const bar = box.querySelector('[data-field="bar"]');
  bar.max = p.docs_total;
  bar.value = p.docs_done;
  show("status", p.status);
  show("chunks_done", p.chunks_done);
  show("docs_done", p.docs_done);
  show("rate", p.docs_per_second ? `${p.docs_per_second.toFixed(1)} documents/s` : "–");
  show("left", p.seconds_left != null ? `${Math.round(p.seconds_left)} s` : "–");
  show("error", p.error || "");
}

async function poll() {
  if (document.visibilityState !== "visible") return;
  try {
    const response = await fetch(box.dataset.url, { headers: { Accept: "application/json" } });
    if (!response.ok) return;
    const progress = await response.json();
    render(progress);
    if (FINAL.has(progress.status)) {
      clearInterval(timer);
      box.dataset.status = progress.status;
    }
  } catch (err) {
    // A network blip: the next tick tries again.
  }
}

let timer = null;
if (box && !FINAL.has(box.dataset.status)) {
  timer = setInterval(poll, PERIOD_MS);
  document.addEventListener("visibilitychange", poll);
}
