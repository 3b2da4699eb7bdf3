// Live progress of a dashboard computation: polls the page's progress endpoint every
// few seconds while the tab is visible and reloads the page once the results are kept.
import { showBar, showField } from "./common.js";
import { pollProgress } from "./progress_poll.js";

const PERIOD_MS = 2000;
const box = document.getElementById("computing");

const show = (name, value) => showField(box, name, value);

if (box) {
  pollProgress(box, PERIOD_MS, (progress) => {
    if (progress.status !== "running") {
      window.location.reload();
      return true;
    }
    showBar(box, progress.done, progress.total);
    show("done", progress.done);
    show("total", progress.total);
    return false;
  });
}
