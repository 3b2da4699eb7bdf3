// Live progress of a dashboard computation: polls the page's progress endpoint every
// few seconds while the tab is visible and reloads the page once the results are kept.
import { pollProgress, showField } from "./progress_poll.js";

const PERIOD_MS = 2000;
const box = document.getElementById("computing");

const show = (name, value) => showField(box, name, value);

if (box) {
  pollProgress(box, PERIOD_MS, (progress) => {
    if (progress.status !== "running") {
      window.location.reload();
      return true;
    }
    const bar = box.querySelector('[data-field="bar"]');
    bar.max = progress.total;
    bar.value = progress.done;
    show("done", progress.done);
    show("total", progress.total);
    return false;
  });
}
