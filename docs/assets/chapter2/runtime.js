/* chapter2 in-browser runtime: the page side.
 *
 * Public contract (for tests and for anyone embedding the runtime):
 *   window.chapter2.ready        Promise, resolved once Python, numpy and chapter2 are loaded
 *                                (reading it starts the runtime if it has not started yet)
 *   window.chapter2.run(code)    Promise of the JSON value of the last expression of `code`;
 *                                rejects with the Python error (or a timeout) as an Error
 *   window.chapter2.timeoutMs    time limit per request; past it the worker is stopped and a fresh one starts
 *
 * Calculators: [data-calculator="NAME"] with named inputs and [data-output="KEY"] results;
 * snippets: [data-snippet="NAME"] with Run / Edit / Reset. Python starts lazily, on the first
 * interaction with a calculator or snippet (pointer, focus or key), never on plain page load.
 */
(function () {
  "use strict";
  const cfg = window.CHAPTER2_CONFIG;
  const script = document.currentScript;
  const siteRoot = new URL("../../", script.src);  // this file lives at assets/chapter2/runtime.js
  const abs = (path) => new URL(path, siteRoot).href;

  let worker = null;
  let booting = null;
  let nextId = 1;
  const pending = new Map();
  const listeners = new Set();
  let state = "idle";  // idle | loading | ready | failed

  function setState(s, detail) {
    state = s;
    listeners.forEach((fn) => fn(s, detail));
  }

  function workerConfig() {
    const c = { packages: cfg.packages, lockFileURL: cfg.lockFileURL ? abs(cfg.lockFileURL) : null };
    c.indexURL = /^https?:/.test(cfg.indexURL) ? cfg.indexURL : abs(cfg.indexURL);
    if (cfg.mode === "cdn") { c.extraWheels = [abs(cfg.wheel)]; c.integrity = cfg.integrity; }
    return c;
  }

  function spawn() {
    worker = new Worker(abs("assets/chapter2/worker.js"));
    worker.onmessage = (event) => {
      const msg = event.data;
      const entry = pending.get(msg.id);
      if (!entry) return;
      pending.delete(msg.id);
      clearTimeout(entry.timer);
      if (msg.ok) entry.resolve(msg.value);
      else {
        const err = new Error(msg.error);
        err.name = "PythonError";
        err.traceback = msg.traceback;
        entry.reject(err);
      }
    };
    worker.onerror = (event) => {
      event.preventDefault();
      failAll(new Error("the Python worker crashed: " + (event.message || "unknown error")));
      restart();
    };
  }

  function failAll(err) {
    for (const [id, entry] of pending) {
      clearTimeout(entry.timer);
      entry.reject(err);
      pending.delete(id);
    }
  }

  function request(msg, timeoutMs) {
    return new Promise((resolve, reject) => {
      const id = nextId++;
      const entry = { resolve, reject, timer: null };
      if (timeoutMs) {
        entry.timer = setTimeout(() => {
          pending.delete(id);
          const err = new Error(`stopped after ${(timeoutMs / 1000).toFixed(timeoutMs % 1000 ? 1 : 0)} s without finishing; the Python runtime was restarted`);
          err.name = "TimeoutError";
          reject(err);
          restart();
        }, timeoutMs);
      }
      pending.set(id, entry);
      worker.postMessage({ ...msg, id });
    });
  }

  function start() {
    if (booting) return booting;
    setState("loading");
    spawn();
    const t0 = performance.now();
    booting = request({ kind: "init", config: workerConfig() }, 120000).then(
      (versions) => {
        setState("ready", { ms: performance.now() - t0, versions });
        return versions;
      },
      (err) => {
        setState("failed", { error: err });
        booting = null;
        if (worker) worker.terminate();
        worker = null;
        throw err;
      });
    return booting;
  }

  function restart() {
    if (worker) worker.terminate();
    worker = null;
    failAll(new Error("the Python runtime was restarted"));
    booting = null;
    setState("idle");
    return start();
  }

  async function call(msg, timeoutMs) {
    await start();
    return request(msg, timeoutMs === undefined ? api.timeoutMs : timeoutMs);
  }

  const api = {
    get ready() { return start().then(() => true); },
    get state() { return state; },
    timeoutMs: cfg.timeoutMs || 10000,
    run: (code, opts = {}) => call({ kind: "run", code: String(code) }, opts.timeoutMs),
    exec: (code, opts = {}) => call({ kind: "exec", code: String(code) }, opts.timeoutMs),
    calc: (name, inputs, opts = {}) => call({ kind: "calc", name, inputs }, opts.timeoutMs),
    onState: (fn) => { listeners.add(fn); fn(state); return () => listeners.delete(fn); },
    restart,
  };
  window.chapter2 = api;

  // ------------------------------------------------------------ status text
  function statusText(s, detail) {
    if (s === "loading") return "Loading Python (Pyodide, numpy, chapter2)…";
    if (s === "failed") return "Python could not start: " + (detail && detail.error ? detail.error.message : "unknown error");
    return null;
  }

  // ------------------------------------------------------------ calculators
  function readInputs(form) {
    const values = {};
    for (const el of form.elements) if (el.name) values[el.name] = el.value;
    return values;
  }

  function barValueText(v) {  // same rule as bar_value_text in docs/hooks/directives.py
    if (Math.abs(v) < 1000) return v.toFixed(4);
    const exp = Math.floor(Math.log10(Math.abs(v)));
    return (v / 10 ** exp).toFixed(3) + "e" + exp;
  }

  function renderBars(dd, pairs) {
    const top = Math.max(1e-300, ...pairs.map((p) => p[1]));
    const wrap = document.createElement("div");
    wrap.className = "c2-bars";
    for (const [label, value] of pairs) {
      const row = document.createElement("div");
      row.className = "c2-bar";
      const l = document.createElement("span");
      l.className = "c2-bar__label";
      l.textContent = label;
      const m = document.createElement("meter");
      m.min = 0; m.max = top; m.value = value;
      const v = document.createElement("span");
      v.className = "c2-bar__value";
      v.textContent = barValueText(value);
      row.append(l, m, v);
      wrap.append(row);
    }
    dd.replaceChildren(wrap);
  }

  function setupCalculator(root) {
    const name = root.dataset.calculator;
    const form = root.querySelector("form");
    const message = root.querySelector("[data-calc-message]");
    const status = root.querySelector("[data-calc-status]");
    let inFlight = false;
    let dirty = false;

    form.addEventListener("submit", (e) => e.preventDefault());
    for (const out of root.querySelectorAll("output[data-field-value]")) {
      const input = form.elements[out.dataset.fieldValue];
      input.addEventListener("input", () => { out.textContent = input.value; });
    }

    function showError(field, text) {
      message.textContent = text;
      message.hidden = false;
      root.classList.add("c2-calc--stale");
      for (const el of form.elements) el.removeAttribute("aria-invalid");
      if (field && form.elements[field]) form.elements[field].setAttribute("aria-invalid", "true");
    }

    function clearError() {
      message.hidden = true;
      message.textContent = "";
      root.classList.remove("c2-calc--stale");
      for (const el of form.elements) el.removeAttribute("aria-invalid");
    }

    async function recompute() {
      if (inFlight) { dirty = true; return; }
      inFlight = true;
      dirty = false;
      root.setAttribute("aria-busy", "true");
      const t0 = performance.now();
      try {
        const result = await api.calc(name, readInputs(form));
        if (dirty) return;  // a newer input is waiting; skip painting stale results
        if (!result.ok) { showError(result.field, result.message); status.textContent = "Fix the highlighted input; the results above are from the last valid inputs."; return; }
        clearError();
        for (const dd of root.querySelectorAll("[data-output]")) {
          const value = result.outputs[dd.dataset.output];
          if (dd.dataset.kind === "bars") renderBars(dd, value);
          else dd.textContent = value;
        }
        status.textContent = `Computed in your browser by chapter2 (${Math.round(performance.now() - t0)} ms).`;
        root.dataset.computed = String((+root.dataset.computed || 0) + 1);
      } catch (err) {
        showError(null, "Could not compute: " + err.message);
      } finally {
        inFlight = false;
        root.removeAttribute("aria-busy");
        if (dirty) recompute();
      }
    }

    form.addEventListener("input", recompute);
    form.addEventListener("change", recompute);
    api.onState((s, detail) => {
      const text = statusText(s, detail);
      if (text) status.textContent = text;
    });
  }

  // ------------------------------------------------------------ snippets
  function setupSnippet(root) {
    const editor = root.querySelector("[data-snippet-source]");
    const original = editor.value;
    const output = root.querySelector("[data-snippet-output]");
    const buildOutput = output.textContent;
    const status = root.querySelector("[data-snippet-status]");
    const code = root.querySelector(".highlight");
    const editBtn = root.querySelector('[data-action="edit"]');
    const runBtn = root.querySelector('[data-action="run"]');

    function setEditing(on) {
      editor.hidden = !on;
      if (code) code.hidden = on;
      editBtn.setAttribute("aria-pressed", String(on));
      editBtn.textContent = on ? "View" : "Edit";
      if (on) {
        editor.rows = Math.min(30, editor.value.split("\n").length + 1);
        editor.focus();
      }
    }

    editBtn.addEventListener("click", () => setEditing(editor.hidden));
    root.querySelector('[data-action="reset"]').addEventListener("click", () => {
      editor.value = original;
      output.textContent = buildOutput;
      output.classList.remove("c2-snippet__output--error");
      status.textContent = "Reset to the original code; output from CPython at build time.";
    });
    runBtn.addEventListener("click", async () => {
      runBtn.disabled = true;
      status.textContent = api.state === "ready" ? "Running…" : "Loading Python, then running…";
      const t0 = performance.now();
      try {
        const result = await api.exec(editor.value);
        output.textContent = result.stdout + (result.error ? (result.stdout ? "\n" : "") + result.error : "");
        output.classList.toggle("c2-snippet__output--error", !!result.error);
        status.textContent = (result.error ? "Finished with an error" : "Ran in your browser") + ` (${Math.round(performance.now() - t0)} ms).`;
      } catch (err) {
        output.textContent = err.message;
        output.classList.add("c2-snippet__output--error");
        status.textContent = err.name === "TimeoutError" ? "Stopped: the code ran too long." : "Failed.";
      } finally {
        runBtn.disabled = false;
      }
    });
    editor.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); runBtn.click(); }
    });
  }

  // ------------------------------------------------------------ lazy start
  function warmOnInteraction(root) {
    const go = () => start().catch(() => {});
    for (const type of ["pointerenter", "focusin", "touchstart", "keydown"]) root.addEventListener(type, go, { once: true, passive: true });
  }

  function init() {
    document.querySelectorAll("[data-calculator]").forEach((el) => { setupCalculator(el); warmOnInteraction(el); });
    document.querySelectorAll("[data-snippet]").forEach((el) => { setupSnippet(el); warmOnInteraction(el); });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
