// Live progress of a staff task (import, pool, sample): polls the JSON endpoint while
// the tab is visible; when the status changes the page reloads to show what the task
// found (check summary and problems, result). Text only (textContent).
import { markReady, showBar, showField } from "./common.js";
import { pollProgress } from "./progress_poll.js";

const PERIOD_MS = 1000;

const box = document.getElementById("task-progress");

const show = (name, value) => showField(box, name, value);

function render(p) {
  showBar(box, p.done, p.total);
  show("status_text", p.status_text);
  show("done", p.done);
  show("total", p.total);
  show("phase", p.phase);
  show("seconds", p.seconds != null ? `${p.seconds.toFixed(1)} s` : "–");
  show("error", p.error || "");
}

if (box && box.dataset.final !== "1" && box.dataset.status !== "checked") {
  pollProgress(box, PERIOD_MS, (progress) => {
    render(progress);
    if (progress.status === box.dataset.status) return false;
    window.location.reload();
    return true;
  });
}
markReady();
