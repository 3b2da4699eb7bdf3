// Staff forms show only the fields that apply (without JavaScript every field stays
// visible and the server checks): a pool's list of runs while "All runs" is unticked,
// a sample's per-run quota for statAP only (unticked when it stops applying).

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

const pool = document.getElementById("pool-form");
if (pool) toggle(pool, "all_runs", "runs", (all) => !all.checked);
const sample = document.getElementById("sample-form");
if (sample) toggle(sample, "method", "per_run_quota", (method) => method.value === "statap");
markReady();
