// The launch form shows the Pool field only for source "pool" and the Sample field
// only for source "sample" (without JavaScript both stay visible; the server checks).

import { markReady } from "./common.js";

const form = document.getElementById("launch-form");

function sync() {
  const source = form.querySelector('[name="source"]').value;
  for (const name of ["pool", "sample"]) {
    const row = form.querySelector(`[data-field="${name}"]`);
    if (row) row.hidden = source !== name;
  }
}

if (form) {
  form.querySelector('[name="source"]').addEventListener("change", sync);
  sync();
}
markReady();
