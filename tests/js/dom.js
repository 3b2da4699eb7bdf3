// A browser document for the page scripts' unit tests (jsdom): `window`, `document`,
// `Node` and friends as globals, as the scripts find them in the browser.
import { JSDOM } from "jsdom";

export function installDom(html = "<!DOCTYPE html><body></body>") {
  const dom = new JSDOM(html, { url: "http://127.0.0.1/" });
  for (const name of ["window", "document", "Node", "Range", "Text", "HTMLElement"]) {
    globalThis[name] = name === "window" ? dom.window : dom.window[name];
  }
  return dom;
}
