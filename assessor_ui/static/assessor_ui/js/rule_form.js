// Decision rule forms show only the fields their kind reads: the threshold for the
// paper rule and "p >= threshold", N for "top N", neither for "best expected F1"
// (without JavaScript every field stays visible; the server ignores the others), and
// beside the rule's short name only the description of the rule chosen.

import { markReady, serverRules } from "./common.js";

const USES = serverRules().ruleFields || {};

function sync(form) {
  const kind = form.querySelector('[name="kind"]').value;
  for (const name of ["threshold", "n"]) {
    const input = form.querySelector(`[name="${name}"]`);
    const row = input && input.closest("p");
    if (row) row.hidden = !(USES[kind] || []).includes(name);
  }
  for (const text of form.querySelectorAll("[data-rule-description]")) {
    text.hidden = text.dataset.ruleDescription !== kind;
  }
}

for (const form of document.querySelectorAll("form[data-rule-form]")) {
  form.querySelector('[name="kind"]').addEventListener("change", () => sync(form));
  sync(form);
}
markReady();
