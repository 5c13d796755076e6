/* chapter2 in-browser runtime: the loader, the only part every page carries.
 *
 * Until a reader shows interest in a calculator or a snippet (pointer over it, focus, touch, a key),
 * or a calculator comes into view, a page loads nothing of the runtime but this file. On that first sign it loads, in order,
 * assets/chapter2/config.js (the site's Python files and their hashes), charts.js and runtime-core.js
 * (the workers, the calculators, the snippets), and the core starts the Python worker at once.
 * A calculator scrolling into view starts the calculators' worker only (not the snippets'), in the
 * background, so a changed input usually finds Python ready; not when navigator.connection asks to save
 * data or is slow (saveData, or effectiveType slow-2g/2g/3g): there only a sign of interest loads it.
 *
 * Nothing the reader does meanwhile is lost: a form submit is held back (it would reload the page), and
 * the last input/change of each field and every button press inside a calculator or snippet are played
 * again once the core has set up its listeners. If the core cannot be loaded (offline, blocked), the
 * status line of what the reader touched says so, with a button to try again.
 *
 * window.chapter2 is made here and completed by runtime-core.js (its comment has the whole contract):
 * load() resolves once the core runs; run/exec/calc/restart/retry and `ready` wait for it; settings set
 * before then (timeoutMs, clock, ...) are kept.
 */
(function () {
  "use strict";
  const here = new URL("./", document.currentScript.src);  // assets/chapter2/
  const CORE = ["config.js", "charts.js", "runtime-core.js"];  // run in this order
  const ROOTS = "[data-calculator], [data-snippet]";
  const SIGNS = ["pointerover", "focusin", "touchstart", "keydown", "input", "change", "click", "submit"];
  const touched = [];  // roots that showed interest before the core ran, in order
  const held = new Map();  // "input"/"change" per field (the last one), and button presses: to play again
  let loading = null;
  let handOver = null;

  function inject(name) {
    return new Promise((resolve, reject) => {
      const s = document.createElement("script");
      s.src = new URL(name, here).href;
      s.async = false;  // executed in insertion order
      s.onload = resolve;
      s.onerror = () => { s.remove(); reject(new Error(`could not load ${s.src} (offline, or blocked?)`)); };
      document.head.append(s);
    });
  }

  function load() {
    if (loading) return loading;
    const domReady = document.readyState === "loading"
      ? new Promise((r) => document.addEventListener("DOMContentLoaded", r, { once: true })) : Promise.resolve();
    loading = domReady.then(() => Promise.all(CORE.map(inject))).then(() => {
      if (!handOver) throw new Error("runtime-core.js ran without handing over");
      // from here on the core listens for itself: the page stops watching every pointer move and key
      for (const type of SIGNS) document.removeEventListener(type, interest, { capture: true });
      handOver(touched.splice(0));
      for (const [target, type] of held.values()) {
        if (type === "click") target.click();
        else target.dispatchEvent(new Event(type, { bubbles: true }));
      }
      held.clear();
    });
    loading.catch((err) => {
      loading = null;  // a later sign of interest, or the button, tries again
      for (const root of touched) showFailure(root, err);
    });
    return loading;
  }

  function showFailure(root, err) {
    const status = root.querySelector("[data-calc-status], [data-snippet-status]");
    if (!status) return;
    const button = document.createElement("button");
    button.type = "button";
    button.className = "md-button c2-load__retry";
    button.dataset.action = "retry";
    button.textContent = "Try again";
    button.addEventListener("click", () => { load().catch(() => {}); });
    status.replaceChildren(`The calculator runtime could not load: ${err.message}. `, button);
  }

  function interest(event) {
    const root = event.target instanceof Element && event.target.closest(ROOTS);
    if (!root) return;
    if (event.type === "submit") event.preventDefault();
    if (event.type === "input" || event.type === "change") held.set(event.target, [event.target, event.type]);
    if (event.type === "click") {
      const button = event.target.closest("button");
      if (button && button.dataset.action !== "retry") held.set(Symbol("click"), [button, "click"]);
    }
    if (!touched.includes(root)) touched.push(root);
    load().catch(() => {});
  }

  for (const type of SIGNS) document.addEventListener(type, interest, { capture: true, passive: type !== "submit" });

  const link = navigator.connection || {};
  if (!link.saveData && !/^(slow-2g|2g|3g)$/.test(link.effectiveType || "") && window.IntersectionObserver) {
    const seen = new IntersectionObserver((entries) => {
      const entry = entries.find((e) => e.isIntersecting);
      if (!entry) return;
      seen.disconnect();  // once: the calculators share one worker
      const lane = window.chapter2.lanes && window.chapter2.lanes.calc;  // set once the core runs
      if (lane) { if (lane.state === "idle") lane.start().catch(() => {}); return; }
      if (!touched.includes(entry.target)) touched.push(entry.target);
      load().catch(() => {});
    });
    const watch = () => document.querySelectorAll("[data-calculator]").forEach((el) => seen.observe(el));
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", watch, { once: true });
    else watch();
  }

  const notYet = (name) => (...args) => load().then(() => api[name](...args));
  const api = {
    load,
    get ready() { return load().then(() => api.ready); },
    get state() { return "idle"; },
    run: notYet("run"),
    exec: notYet("exec"),
    calc: notYet("calc"),
    restart: notYet("restart"),
    retry: notYet("retry"),
    _loaded(fn) { handOver = fn; },  // runtime-core.js: how it learns what happened before it ran
  };
  window.chapter2 = api;
})();
