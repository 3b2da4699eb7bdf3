// Live progress of a matching job: polls the JSON endpoint every few seconds while
// the tab is visible, and stops once the job is finished. Text only (textContent).
import { markReady, serverRules, showBar, showField } from "./common.js";
import { pollProgress } from "./progress_poll.js";

const FINAL = new Set(serverRules().jobFinal || []);
const PERIOD_MS = 3000;

const box = document.getElementById("job-progress");

const show = (name, value) => showField(box, name, value);

function render(p) {
  showBar(box, p.docs_done, p.docs_total);
  show("status", p.state || p.status);
  show(
    "stalled",
    p.stalled
      ? `No chunk has moved for ${Math.round(p.quiet_seconds)} s: no worker is running it, ` +
          "or its messages were lost. Check the workers (/healthz), then re-run what is not done."
      : "",
  );
  show("chunks_done", p.chunks_done);
  show("docs_done", p.docs_done);
  show("rate", p.docs_per_second ? `${p.docs_per_second.toFixed(1)} documents/s` : "–");
  show("left", p.seconds_left != null ? `${Math.round(p.seconds_left)} s` : "–");
  // Time left means nothing once the job stopped.
  const left = box.querySelector('[data-tile="left"]');
  if (left) left.hidden = !p.can_cancel;
  show("error", p.error || "");
  // Only the controls that apply now: Cancel while the job runs, Re-run once it
  // stopped short (or a live chunk shows no sign of life), Re-score once it is done.
  const apply = { cancel: p.can_cancel, resume: p.can_resume, rescore: p.can_rescore };
  for (const form of document.querySelectorAll("form[data-action]")) {
    form.hidden = !apply[form.dataset.action];
  }
}

if (box && !FINAL.has(box.dataset.status)) {
  pollProgress(box, PERIOD_MS, (progress) => {
    render(progress);
    if (!FINAL.has(progress.status)) return false;
    box.dataset.status = progress.status;
    return true;
  });
}
markReady();
