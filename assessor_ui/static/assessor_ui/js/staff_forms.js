// Staff forms show only the fields that apply (without JavaScript every field stays
// visible and the server checks): a sample's per-run quota for statAP only (unticked
// when it stops applying). A pool's list of runs stays in view, so the choice is seen,
// its boxes live only while "All runs" is unticked.

import { markReady } from "./common.js";

function toggle(form, controller, target, applies) {
  const control = form.querySelector(`[name="${controller}"]`);
  const field = form.querySelector(`[name="${target}"]`);
  const row = field && (field.closest("[data-field]") || field.closest(".field, p"));
  if (!control || !row) return;
  const sync = () => {
    row.hidden = !applies(control);
    if (row.hidden && field.type === "checkbox") field.checked = false;
  };
  control.addEventListener("change", sync);
  sync();
}

function enable(form, controller, target, applies) {
  const control = form.querySelector(`[name="${controller}"]`);
  const boxes = form.querySelectorAll(`[name="${target}"]`);
  if (!control) return;
  const sync = () => {
    for (const box of boxes) box.disabled = !applies(control);
  };
  control.addEventListener("change", sync);
  sync();
}

const pool = document.getElementById("pool-form");
if (pool) enable(pool, "all_runs", "runs", (all) => !all.checked);
const sample = document.getElementById("sample-form");
if (sample) toggle(sample, "method", "per_run_quota", (method) => method.value === "statap");
markReady();
