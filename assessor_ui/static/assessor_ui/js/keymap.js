// Single-key shortcuts from the page's keymap table (the same table the help overlay is
// rendered from). Ignored while focus is in a text field, and with Ctrl/Alt/Meta held.

export function isTextField(el) {
  if (!el) return false;
  if (el.isContentEditable) return true;
  const tag = el.tagName;
  if (tag === "TEXTAREA" || tag === "SELECT") return true;
  if (tag !== "INPUT") return false;
  return !["button", "checkbox", "radio", "submit", "reset"].includes(el.type);
}

export function bindKeymap(keymap, handlers) {
  const byKey = new Map();
  for (const entry of keymap) for (const key of entry.keys) byKey.set(key, entry.action);
  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.altKey || event.metaKey || event.isComposing) return;
    const target = event.target;
    if (isTextField(target)) {
      if (event.key === "Escape") target.blur();
      return;
    }
    // Enter on a focused button or link keeps its usual meaning.
    if (event.key === "Enter" && target && target.closest && target.closest("button, a")) return;
    const action = byKey.get(event.key);
    if (!action) return;
    const [name, arg] = action.split(":");
    const handler = handlers[name];
    if (!handler) return;
    event.preventDefault();
    handler(arg);
  });
}
