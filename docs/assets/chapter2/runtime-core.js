/* chapter2 in-browser runtime: the page side, loaded on first use by runtime.js (the loader every page
 * carries), together with config.js and charts.js. It completes the window.chapter2 object the loader
 * made (the loader's settings and the events it saw before this file ran are kept).
 *
 * Public contract (for tests and for anyone embedding the runtime):
 *   window.chapter2.load()       Promise, resolved once this file has run (the loader's; anything below
 *                                that is called before then waits for it)
 *   window.chapter2.ready        Promise, resolved once Python, numpy and chapter2 are loaded in the worker
 *                                that runs code (reading it starts that worker if it has not started yet)
 *   window.chapter2.run(code)    Promise of the JSON value of the last expression of `code`;
 *   window.chapter2.exec(code)   Promise of {stdout, error} of `code` run as a script (what snippets use);
 *                                both reject with an Error whose name says what happened: PythonError (an
 *                                exception), TimeoutError, OutOfMemoryError, CrashError, DownloadError, StoppedError
 *   window.chapter2.calc(name, inputs)   a calculator's result, computed in the calculators' own worker
 *   window.chapter2.timeoutMs    time limit of one request, counted from the moment its Python starts
 *                                (never while it waits behind another); past it the worker is stopped
 *                                and a fresh one starts. Also: bootStallMs (a boot with no progress for
 *                                that long is a crash), crashLimit within crashWindowMs (then it stops
 *                                restarting), clock (setTimeout/clearTimeout/now, replaceable by tests),
 *                                playMs (how long a playing stepper shows each step once it is drawn).
 *                                Settings given before this file ran are kept.
 *   window.chapter2.lanes.calc / .code   the two workers: state, detail, onState(fn), start(), retry(), restart()
 *                                (only once loaded: `await window.chapter2.load()` first)
 *
 * Two workers ("lanes"), each with its own Pyodide: calculators run in one, snippets and run()/exec()
 * in the other, so code a reader types can never change what a calculator shows, and a long snippet
 * never delays a calculator. Each starts lazily, on the first sign of interest in a calculator or a
 * snippet (pointer, focus, touch or key), never on plain page load.
 *
 * Lane state machine (gen = generation of the current worker; every handler and timer carries the
 * gen it was made for and does nothing once it is stale):
 *   idle -> loading        start(): spawn a worker (gen+1), send init, arm the stall timer
 *   loading -> ready       "ready" from the worker; queued requests are sent, one at a time
 *   loading -> failed      a download failed (offline, blocked, wrong hash): no automatic retry, a button
 *   any -> (restart)       a request's time limit, or it ran out of memory: that request fails, the worker
 *                          is replaced at once, requests still queued move to the new worker (once)
 *   any -> (crash)         the worker died, Pyodide failed fatally, or a boot stalled: the running request
 *                          fails, the worker is replaced after a backoff (0 s, then 1 s, 2 s, ...)
 *   (crash) -> stopped     the crashLimit-th crash within crashWindowMs: everything queued fails; a button
 *   failed/stopped -> loading   retry() (the button)
 */
(function () {
  "use strict";
  const cfg = window.CHAPTER2_CONFIG;
  const script = document.currentScript;
  const siteRoot = new URL("../../", script.src);  // this file lives at assets/chapter2/runtime-core.js
  const abs = (path) => new URL(path, siteRoot).href;

  function error(name, message, extra) {
    const err = new Error(message);
    err.name = name;
    return Object.assign(err, extra || {});
  }

  const seconds = (ms) => `${(ms / 1000).toFixed(ms % 1000 ? 1 : 0)} s`;
  const OOM_TEXT = "this run needed more memory than the browser allows";

  function workerConfig(packages, calculators) {
    const files = {};
    for (const [name, f] of Object.entries(cfg.files)) files[name] = { ...f, url: abs(f.url) };
    return { base: abs(cfg.base), files, core: cfg.core, packages: cfg.packages, calcData: cfg.calcData,
             calcIndex: cfg.calcIndex, lazyCalculators: calculators && !!cfg.calcIndex, lanePackages: packages };
  }

  let nextId = 1;
  const globalListeners = new Set();

  class Lane {
    constructor(name, packages, calculators) {
      this.name = name;
      this.packages = packages;
      this.calculators = calculators;
      this.state = "idle";  // idle | loading | ready | failed | stopped
      this.detail = {};
      this.gen = 0;
      this.worker = null;
      this.queue = [];
      this.current = null;
      this.crashes = [];
      this.waiters = [];
      this.listeners = new Set();
      this.stallTimer = null;
      this.backoffTimer = null;
      this.versions = null;
      this.timings = null;
      this.counts = { sent: 0, started: 0, done: 0 };  // requests: for tests and for anyone curious
      this.total = [cfg.core.loader, cfg.core.asm, cfg.core.wasm, cfg.core.stdlib, cfg.core.lock,
        ...packages.map((p) => cfg.packages[p]), ...(calculators && cfg.calcIndex ? [cfg.calcIndex] : [])].reduce((s, n) => s + ((cfg.files[n] || {}).size || 0), 0);
    }

    set(state, detail) {
      this.state = state;
      this.detail = detail || {};
      for (const fn of [...this.listeners]) fn(state, this.detail, this);
      for (const fn of [...globalListeners]) fn(state, this.detail, this);
    }

    onState(fn) { this.listeners.add(fn); fn(this.state, this.detail, this); return () => this.listeners.delete(fn); }

    // ---------------------------------------------------------------- boot

    start() {
      if (this.state === "ready") return Promise.resolve(this.versions);
      if (this.state === "stopped") return Promise.reject(this.detail.error);
      const p = new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
      if (this.state === "idle" || this.state === "failed") this.spawn();
      return p;
    }

    spawn() {
      this.kill();
      const gen = ++this.gen;
      this.spawnedAt = performance.now();
      this.set("loading", { phase: "download", step: "runtime", loaded: 0, total: this.total });
      let w;
      try {
        w = new Worker(abs("assets/chapter2/worker.js"));
      } catch (err) {  // a browser or policy that refuses workers: nothing to retry automatically
        this.fail(error("BootError", `this browser would not start Python's worker (${err.message})`));
        return;
      }
      this.worker = w;
      w.onmessage = (event) => { if (gen === this.gen) this.receive(event.data || {}); };
      w.onerror = (event) => {
        if (event && event.preventDefault) event.preventDefault();
        if (gen === this.gen) this.crash(`the Python worker crashed: ${(event && event.message) || "unknown error"}`);
      };
      w.postMessage({ kind: "init", config: { ...workerConfig(this.packages, this.calculators), gen } });
      this.armStall();
    }

    armStall() {
      const gen = this.gen;
      api.clock.clearTimeout(this.stallTimer);
      this.stallTimer = api.clock.setTimeout(() => {
        if (gen === this.gen && this.state === "loading") this.crash(`starting Python made no progress for ${seconds(api.bootStallMs)}`);
      }, api.bootStallMs);
    }

    kill() {
      api.clock.clearTimeout(this.stallTimer);
      api.clock.clearTimeout(this.backoffTimer);
      if (this.current) api.clock.clearTimeout(this.current.timer);
      if (this.worker) this.worker.terminate();
      this.worker = null;
      this.gen++;  // whatever the old worker or its timers still do is now stale
    }

    settle(ok, value) {
      for (const w of this.waiters.splice(0)) ok ? w.resolve(value) : w.reject(value);
    }

    receive(msg) {
      if (msg.gen !== undefined && msg.gen !== this.gen) return;
      const req = this.current && this.current.id === msg.id ? this.current : null;
      switch (msg.kind) {
        case "progress":
          if (this.state === "loading") { this.armStall(); this.set("loading", msg); }
          else if (this.current) this.set(this.state, { ...msg, request: true });  // on-demand data of a request
          return;
        case "ready":
          if (this.state !== "loading") return;
          api.clock.clearTimeout(this.stallTimer);
          this.versions = msg.versions;
          // worker marks (ms since the worker started), the boot as the page saw it, and when it began
          this.timings = { ...msg.timings, page: Math.round(performance.now() - this.spawnedAt), spawnedAt: Math.round(this.spawnedAt) };
          this.set("ready", { versions: msg.versions, timings: this.timings });
          this.settle(true, msg.versions);
          this.pump();
          return;
        case "boot-failed":
          if (msg.download) this.fail(error("DownloadError", msg.error));
          else this.crash(`Python could not start: ${msg.error}`, msg.oom);
          return;
        case "started":
          if (req) { this.counts.started++; this.startClock(req); }
          return;
        case "paused":  // waiting for on-demand data: a download, not the request's own run time
          if (req) api.clock.clearTimeout(req.timer);
          return;
        case "done":
          if (req) { this.counts.done++; this.finish(req, msg); }
          return;
        default:
      }
    }

    fail(err) {
      this.kill();
      this.set("failed", { error: err });
      for (const r of this.queue.splice(0)) r.reject(err);
      this.settle(false, err);
    }

    crash(reason, oom) {
      const now = api.clock.now();
      this.crashes = this.crashes.filter((t) => now - t < api.crashWindowMs);
      this.crashes.push(now);
      const err = oom ? error("OutOfMemoryError", `${OOM_TEXT} (${reason})`) : error("CrashError", reason);
      const running = this.current;
      this.current = null;
      if (running) api.clock.clearTimeout(running.timer);
      this.kill();
      if (running) running.reject(err);  // it was running when the worker died
      if (this.crashes.length >= api.crashLimit) {
        const stopped = error("StoppedError", `Python stopped after ${this.crashes.length} crashes within ` +
          `${seconds(api.crashWindowMs)}; last: ${reason}`, { cause: err });
        this.set("stopped", { error: stopped, crashes: this.crashes.length });
        for (const r of this.queue.splice(0)) r.reject(stopped);
        this.settle(false, stopped);
        return;
      }
      this.requeue();
      const delay = this.crashes.length <= 1 ? 0 : Math.min(1000 * 2 ** (this.crashes.length - 2), 8000);
      const gen = this.gen;
      this.set("loading", { phase: "restart", error: err, delayMs: delay, loaded: 0, total: this.total });
      this.backoffTimer = api.clock.setTimeout(() => { if (gen === this.gen) this.spawn(); }, delay);
    }

    /** Replace the worker now (after a time limit, or an out-of-memory run); not a crash. */
    restart() {
      const running = this.current;
      this.current = null;
      if (running) running.reject(error("CrashError", "the Python runtime was restarted"));
      this.requeue();
      this.spawn();
      return this.start();
    }

    requeue() {
      // queued requests were never sent to the old worker: they wait for the new one, at most once
      const again = error("CrashError", "the Python runtime restarted twice while this waited; try again");
      this.queue = this.queue.filter((r) => (r.requeued ? (r.reject(again), false) : (r.requeued = true)));
    }

    retry() {
      if (this.state !== "failed" && this.state !== "stopped") return this.start();
      this.crashes = [];
      const p = new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
      this.spawn();
      return p;
    }

    // ---------------------------------------------------------------- requests

    request(msg, timeoutMs) {
      return new Promise((resolve, reject) => {
        if (this.state === "stopped" || this.state === "failed") { reject(this.detail.error); return; }
        this.queue.push({ id: nextId++, msg, timeoutMs, resolve, reject, requeued: false, timer: null });
        if (this.state === "idle") this.start().catch(() => {});
        else this.pump();
      });
    }

    pump() {
      if (this.state !== "ready" || this.current || !this.queue.length) return;
      const req = this.queue.shift();
      this.current = req;
      this.counts.sent++;
      this.worker.postMessage({ ...req.msg, id: req.id });
    }

    startClock(req) {
      const limit = req.timeoutMs === undefined ? api.timeoutMs : req.timeoutMs;
      api.clock.clearTimeout(req.timer);
      if (!limit) return;
      const gen = this.gen;
      req.timer = api.clock.setTimeout(() => {
        if (gen !== this.gen || this.current !== req) return;
        this.current = null;
        req.reject(error("TimeoutError", `stopped after ${seconds(limit)} without finishing; the Python runtime was restarted`));
        this.restart().catch(() => {});
      }, limit);
    }

    finish(req, msg) {
      api.clock.clearTimeout(req.timer);
      this.current = null;
      if (this.detail.request) this.detail = {};  // progress of on-demand data, now done
      if (msg.ok) req.resolve(msg.value);
      else if (msg.oom) {
        req.reject(error("OutOfMemoryError", `${OOM_TEXT} (${msg.error}); Python was restarted with fresh memory`));
        this.restart().catch(() => {});  // a fresh worker: grown wasm memory never shrinks
        return;
      } else if (msg.fatal) {
        this.crash(`Python failed: ${msg.error}`);
        req.reject(error("CrashError", `the Python runtime failed (${msg.error}) and was restarted`));
        return;
      } else if (msg.download) req.reject(error("DownloadError", msg.error));
      else req.reject(error("PythonError", msg.error, { traceback: msg.traceback }));
      this.pump();
    }
  }

  const lanes = {
    calc: new Lane("calc", cfg.lanes.calc, true),
    code: new Lane("code", cfg.lanes.code, false),
  };

  function overall() {
    const states = [lanes.code.state, lanes.calc.state];
    return ["loading", "stopped", "failed", "ready"].find((s) => states.includes(s)) || "idle";
  }

  // the loader's object (runtime.js), completed here; settings it already holds are kept
  const api = window.chapter2;
  const defaults = { timeoutMs: cfg.timeoutMs || 10000, bootStallMs: 60000, crashLimit: 3, crashWindowMs: 60000, playMs: 2000,
    clock: { setTimeout: (fn, ms) => window.setTimeout(fn, ms), clearTimeout: (t) => window.clearTimeout(t), now: () => Date.now() } };
  for (const [key, value] of Object.entries(defaults)) if (api[key] === undefined) api[key] = value;
  Object.defineProperties(api, {
    ready: { get: () => lanes.code.start().then(() => true), configurable: true },
    state: { get: overall, configurable: true },
  });
  Object.assign(api, {
    lanes,
    run: (code, opts = {}) => lanes.code.request({ kind: "run", code: String(code) }, opts.timeoutMs),
    exec: (code, opts = {}) => lanes.code.request({ kind: "exec", code: String(code) }, opts.timeoutMs),
    calc: (name, inputs, opts = {}) => lanes.calc.request({ kind: "calc", name, inputs, hub: opts.hub || null }, opts.timeoutMs),
    // one step of a Hub lookup in the calculators' worker (hub.js drives it; nothing is fetched here)
    hubStep: (modelId, lookup, replies) => lanes.calc.request({ kind: "hub", modelId, lookup, replies }),
    onState: (fn) => { globalListeners.add(fn); return () => globalListeners.delete(fn); },
    restart: () => lanes.code.restart(),
    retry: () => Promise.all(Object.values(lanes).filter((l) => l.state === "failed" || l.state === "stopped").map((l) => l.retry())),
  });

  // ------------------------------------------------------------ status: what is loading, how far, what failed

  const STEPS = { runtime: "the Python runtime", numpy: "numpy", chapter2: "chapter2", "tiny model": "the tiny model", starting: "starting" };
  const mb = (n) => (n / 1e6).toFixed(1);

  /** Render a lane's state into `el` (a status line); returns true if it wrote something. */
  function renderLane(el, lane, s, d) {
    el.dataset.runtime = s;
    if (s === "loading" || (d.request && d.phase)) {
      let text;
      if (d.phase === "restart") text = `${d.error ? d.error.message : "Python stopped"}. Starting a fresh Python runtime…`;
      else if (d.phase === "download" || d.phase === "data") {
        const steps = (d.steps || [d.step]).filter((x) => x && x !== "starting").map((x) => STEPS[x] || x);
        const what = steps.length > 1 ? `${steps.slice(0, -1).join(", ")} and ${steps[steps.length - 1]}` : steps[0];
        text = what ? `Loading ${what}: ${mb(d.loaded)} of ${mb(d.total)} MB` : "Downloaded; starting Python…";
      } else if (d.phase === "install") text = "Installing numpy and chapter2…";
      else if (d.phase === "import") text = "Importing chapter2…";
      else text = "Loading Python…";
      const label = document.createElement("span");
      label.textContent = text;
      const bar = document.createElement("progress");
      bar.className = "c2-load__bar";
      bar.max = d.total || 1;
      bar.value = d.phase === "download" || d.phase === "data" ? Math.min(d.loaded || 0, d.total || 1) : (d.total || 1);
      bar.setAttribute("aria-label", "Loading Python");
      el.dataset.phase = d.phase || "";
      el.dataset.step = (d.steps || [d.step]).filter(Boolean).join(" ");
      el.replaceChildren(label, " ", bar);
      return true;
    }
    if (s === "failed" || s === "stopped") {
      const label = document.createElement("span");
      label.textContent = s === "failed"
        ? `Python could not start: ${d.error ? d.error.message : "unknown error"}`
        : `${d.error ? d.error.message : "Python stopped"}.`;
      const button = document.createElement("button");
      button.type = "button";
      button.className = "md-button c2-load__retry";
      button.dataset.action = "retry";
      button.textContent = "Try again";
      button.addEventListener("click", () => { lane.retry().catch(() => {}); });
      el.replaceChildren(label, " ", button);
      return true;
    }
    return false;
  }

  // ------------------------------------------------------------ calculators
  function readInputs(form) {
    const values = {};
    for (const el of form.elements) if (el.name) values[el.name] = el.value;
    return values;
  }

  const WAIT_FOR_RUNTIME = new Set(["DownloadError", "StoppedError", "BootError"]);

  // A stepper's Play / Pause ([data-play], aria-controls naming the step slider; directives._stepper_html).
  // Play moves the slider one stride on (1; on a long stepper 2, 5, 10, ..., so that it takes at most
  // PLAY_STEPS steps from the first to the last and lands on the prebuilt ones), waits until that step is
  // drawn (a prebuilt frame at once, else Python's result), shows it for api.playMs, then moves again; it
  // stops at the last step (a press there starts again from the first). Pause, an error, or any input of
  // the reader's (Back, Forward, a key on the slider, another field) stops it. Nothing plays before a
  // press, and where the reader asks for reduced motion each step stays twice as long. The button's name
  // is its word, "Play" or "Pause"; data-playing says which.
  const PLAY_STEPS = 30;

  // A field's own "change" (a text field's or textarea's when it loses focus, a slider's when it is let go)
  // follows the "input" events that already computed its value: it is not a new input. Pressing Play after
  // typing a prompt used to recompute the prompt's step once more on the way (CI saw that paint first).
  // Changes dispatched by the site's scripts (a Hub lookup's records, a restored link) still count.
  const echoesInput = (e) => e.type === "change" && e.isTrusted && e.target.matches("input, textarea");
  const STRIDES = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000];

  function setupPlayer(form, button) {
    const slider = document.getElementById(button.getAttribute("aria-controls"));
    const word = button.querySelector(".c2-play__word");
    const reduced = window.matchMedia("(prefers-reduced-motion: reduce)");
    let playing = false;
    let timer = null;
    let own = false;  // the input event being dispatched is the player's own move
    let awaiting = false;  // a step was moved to and is not drawn yet

    const stride = () => { const span = +slider.max - +slider.min; return STRIDES.find((k) => span / k <= PLAY_STEPS) || span; };
    function show(on) {
      playing = on;
      button.dataset.playing = String(on);
      word.textContent = on ? "Pause" : "Play";
    }
    function stop() {
      api.clock.clearTimeout(timer);
      timer = null;
      awaiting = false;
      if (playing) show(false);
    }
    function move(to) {
      awaiting = true;
      own = true;
      try {
        slider.value = String(to);
        slider.dispatchEvent(new Event("input", { bubbles: true }));  // the calculator recomputes, as after a drag
      } finally { own = false; }
    }
    function next() {
      timer = null;
      if (!playing) return;
      if (!button.isConnected) { stop(); return; }  // its page was swapped out (instant navigation)
      const low = +slider.min, top = +slider.max, at = +slider.value, k = stride();
      if (at >= top) { stop(); return; }
      move(Math.min(top, low + (Math.floor((at - low) / k) + 1) * k));
    }
    function drawn() {  // the calculator painted a result: the step is on screen
      if (!playing || !awaiting) return;
      awaiting = false;
      if (+slider.value >= +slider.max) { stop(); return; }
      timer = api.clock.setTimeout(next, api.playMs * (reduced.matches ? 2 : 1));
    }
    button.addEventListener("click", () => {
      if (playing) { stop(); return; }
      show(true);
      if (+slider.value >= +slider.max) move(+slider.min);
      else next();
    });
    const reader = (e) => { if (!own && !echoesInput(e)) stop(); };
    form.addEventListener("input", reader);
    form.addEventListener("change", reader);
    for (const b of form.querySelectorAll("button[data-step]")) b.addEventListener("click", stop);
    return { drawn, stop };
  }

  function pastedName(text) {  // what the model select calls a pasted config.json: its repository, class or type
    try {
      const c = JSON.parse(text);
      const name = c && (c._name_or_path || (Array.isArray(c.architectures) && c.architectures[0]) || c.model_type);
      if (typeof name === "string" && name) return name;
    } catch (e) { /* not JSON (yet): the calculator's message says so */ }
    return "config.json";
  }

  // Controls that apply to some inputs only (Field.show_when: hidden, not just out of sight) and a model select
  // that follows a config.json pasted beside it (Field.paste: "pasted: <name>"; choosing a shipped model clears
  // the text). The build set both for the defaults; this keeps them in step before the inputs are read.
  function followInputs(form, event) {
    // the model select first: pasting or clearing a config.json changes it, and what it shows follows it
    for (const select of form.querySelectorAll("select[data-paste]")) {
      const text = form.elements[select.dataset.paste];
      const option = select.querySelector('option[value="pasted"]');
      if (event && event.target === select && select.value !== "pasted") text.value = "";
      const pasted = text.value.trim() !== "";
      if (pasted && select.value !== "pasted") select.dataset.before = select.value;
      option.hidden = !pasted;
      option.textContent = pasted ? `pasted: ${pastedName(text.value)}` : "pasted config.json";
      if (pasted) select.value = "pasted";
      else if (select.value === "pasted") select.value = select.dataset.before || select.options[0].value;
    }
    for (const el of form.querySelectorAll("[data-show-field]")) {  // in form order: a field before those it shows
      const control = form.elements[el.dataset.showField];
      const holder = control.closest("[data-show-field]");  // B's custom GPU numbers: only while B's GPU shows
      el.hidden = control.value !== el.dataset.showValue || !!(holder && holder.hidden);
    }
  }

  function setupCalculator(root) {
    const name = root.dataset.calculator;
    const form = root.querySelector("form");
    const message = root.querySelector("[data-calc-message]");
    const status = root.querySelector("[data-calc-status]");
    let inFlight = false;
    let dirty = false;
    let waiting = false;  // the last recompute could not run: Python failed to start; redo it when it is back
    const playButton = root.querySelector("button[data-play]");
    const player = playButton ? setupPlayer(form, playButton) : null;

    form.addEventListener("submit", (e) => e.preventDefault());
    for (const out of root.querySelectorAll("output[data-field-value]")) {
      const input = form.elements[out.dataset.fieldValue];
      const labels = input.dataset.labels ? JSON.parse(input.dataset.labels) : null;  // a slider over named positions
      input.addEventListener("input", () => {
        out.textContent = labels ? labels[input.value] : input.value;
        if (labels) input.setAttribute("aria-valuetext", out.textContent);
      });
    }

    function showError(field, text, link) {
      if (player) player.stop();
      message.textContent = text;
      if (link) {  // where the page says more (the families a config.json may be of)
        const a = document.createElement("a");
        a.href = abs(link.href);
        a.textContent = link.text;
        message.append(" (", a, ")");
      }
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

    // A stepper's prebuilt steps (directives.stepper_frames): every step of its default inputs, drawn when the
    // site was built. A frame holds the outputs that change with the step; the others are the build's (kept
    // here, so that coming back to the default inputs after other ones shows them again).
    // (A <template> holding a JSON <script>: instant navigation runs the scripts of a page it swaps in again,
    // without their type or data attributes, but leaves what a template holds alone.)
    const framesEl = root.querySelector("template[data-calc-frames]");
    const framesSrc = framesEl ? framesEl.dataset.src : null;
    let frames = framesEl && !framesSrc ? JSON.parse(framesEl.content.querySelector("script").textContent) : null;
    // Heavy prebuilt steps live in a file of their own (data-src, from the site's root): fetched when the
    // calculator comes near the screen or is first used, so a reader who never scrolls to it never downloads
    // them; a step asked for before they arrive waits for them (a file of this site), not for Python. A failed
    // fetch leaves every step to Python.
    let framesFetch = null;
    function loadFrames() {
      if (!framesFetch) {
        framesFetch = fetch(abs(framesSrc)).then((r) => (r.ok ? r.json() : null)).then((f) => { frames = f; }, () => {});
      }
      return framesFetch;
    }
    if (framesSrc) {
      const near = new IntersectionObserver((seen) => {
        if (seen.some((entry) => entry.isIntersecting)) { near.disconnect(); loadFrames(); }
      }, { rootMargin: "600px 0px" });
      near.observe(root);
    }
    const built = new Map([...root.querySelectorAll("[data-output]")].map((dd) => [dd, dd.dataset.kind ? dd.innerHTML : dd.textContent]));

    function frameFor(values) {
      if (!frames) return null;
      const same = (a, b) => a === b || (String(a).trim() !== "" && Number(a) === Number(b));  // "0" is "0.0"
      for (const [key, value] of Object.entries(frames.inputs)) if (!same(values[key], value)) return null;
      return frames.frames[values[frames.field]] || null;
    }

    const shown = new Map(built);  // what each output holds now: one that did not change is not written again

    // A beside B (a calculator registered with compare=; directives.compare_panel, calculators/_compare.py): the
    // panel shows while the toggle is on. It holds the table and drawings of the inputs in its data-inputs: first
    // the build's default comparison's table (its <template>: turning the toggle on answers at once), then the
    // worker's answer (one request computes A and B); dimmed while the form holds other inputs.
    const panel = root.querySelector("[data-compare-panel]");
    const builtCompare = root.querySelector("template[data-compare-built]");
    function followCompare() {
      if (!panel) return;
      const values = readInputs(form);
      panel.hidden = values.compare !== "on";
      if (!panel.hidden && !panel.dataset.inputs && builtCompare) {
        panel.replaceChildren(builtCompare.content.cloneNode(true));
        panel.dataset.inputs = builtCompare.dataset.inputs;
      }
      const had = JSON.parse(panel.dataset.inputs || "{}");
      const current = Object.entries(had).every(([key, value]) => values[key] === value) &&
        Object.keys(values).every((key) => key in had || (form.elements[key].closest("[data-show-field]") || {}).hidden);
      panel.classList.toggle("c2-compare--stale", !current);
    }
    function paintCompare(compare, values) {
      if (!panel || !compare) return;
      panel.innerHTML = compare.html;  // escaped text and chapter2.charts drawings, made in Python
      const used = {};
      for (const [key, value] of Object.entries(values)) if (!(form.elements[key].closest("[data-show-field]") || {}).hidden) used[key] = value;
      panel.dataset.inputs = JSON.stringify(used);
      followCompare();
    }

    // `answer`: Python's whole answer (its parsed inputs, numbers and script beside the outputs), null for a
    // prebuilt frame; share.js hears it as "chapter2:painted", before data-computed moves on
    function paint(outputs, fallback, answer) {
      for (const dd of root.querySelectorAll("[data-output]")) {
        const value = dd.dataset.output in outputs ? outputs[dd.dataset.output] : fallback.get(dd);
        if (shown.get(dd) === value) continue;  // (no new nodes, no layout for an output the input did not move)
        shown.set(dd, value);
        // charts and bars come drawn by chapter2.charts (the renderer the build used); charts.js swaps them in
        if (dd.dataset.kind === "chart" || dd.dataset.kind === "bars") window.chapter2Charts.update(dd, value);
        else dd.textContent = value;
      }
      root.dispatchEvent(new CustomEvent("chapter2:painted", { detail: answer || null }));
      root.dataset.computed = String((+root.dataset.computed || 0) + 1);
      if (player) player.drawn();
    }

    let latest = 0;  // the newest input's number: a result for an older one is not painted

    async function recompute() {
      const mine = ++latest;
      if (framesSrc && !frames) {
        await loadFrames();
        if (mine !== latest) return;  // a newer input came meanwhile: it paints
      }
      const frame = frameFor(readInputs(form));
      if (frame) {  // drawn at build time: painted at once, with or without Python (a running call is dropped)
        clearError();
        paint(frame, built);
        status.textContent = "This step was drawn when the site was built: no Python needed.";
        root.removeAttribute("aria-busy");
        return;
      }
      if (inFlight) { dirty = true; return; }
      inFlight = true;
      dirty = false;
      waiting = false;
      root.setAttribute("aria-busy", "true");
      const t0 = performance.now();
      try {
        const inputs = readInputs(form);  // the Hub records of a looked-up model id go with it (hub.js)
        const result = await api.calc(name, inputs, { hub: window.chapter2Hub ? window.chapter2Hub.records(form, inputs) : null });
        if (dirty || mine !== latest) return;  // a newer input is waiting, or was painted; skip stale results
        if (!result.ok) { showError(result.field, result.message, result.link); status.textContent = "Fix the highlighted input; the results above are from the last valid inputs."; return; }
        clearError();
        paintCompare(result.compare, inputs);
        paint(result.outputs, built, result);
        status.textContent = `Computed in your browser by chapter2 (${Math.round(performance.now() - t0)} ms).`;
      } catch (err) {
        const down = lanes.calc.state === "failed" || lanes.calc.state === "stopped";
        if (player) player.stop();
        if (WAIT_FOR_RUNTIME.has(err.name) && down) waiting = true;  // the status line says why, with a button
        else showError(null, "Could not compute: " + err.message);
      } finally {
        inFlight = false;
        if (mine === latest || dirty) root.removeAttribute("aria-busy");
        if (dirty) recompute();
      }
    }

    followInputs(form);  // inputs changed before this file loaded
    followCompare();
    for (const type of ["input", "change"]) form.addEventListener(type, (e) => { followInputs(form, e); followCompare(); });
    form.addEventListener("input", recompute);
    form.addEventListener("change", (e) => { if (!echoesInput(e)) recompute(); });
    let off = null;
    off = lanes.calc.onState((s, d) => {
      if (!root.isConnected) { if (off) off(); return; }  // its page was swapped out (instant navigation)
      if (d.request && !inFlight) return;  // another calculator's download (the tiny model): not this one's line
      if (renderLane(status, lanes.calc, s, d)) return;
      // a loading line left from the boot ("Importing chapter2…") says it is ready now
      if (s === "ready" && status.querySelector(".c2-load__bar")) status.textContent = "Python is ready: change an input to recompute in your browser.";
      if (s === "ready" && waiting && !inFlight) recompute();
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
    let running = false;

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
      running = true;
      status.textContent = lanes.code.state === "ready" ? "Running…" : "Loading Python, then running…";
      const t0 = performance.now();
      try {
        const result = await api.exec(editor.value);
        output.textContent = result.stdout + (result.error ? (result.stdout ? "\n" : "") + result.error : "");
        output.classList.toggle("c2-snippet__output--error", !!result.error);
        status.textContent = (result.error ? "Finished with an error" : "Ran in your browser") + ` (${Math.round(performance.now() - t0)} ms).`;
      } catch (err) {
        output.textContent = err.message;
        output.classList.add("c2-snippet__output--error");
        const s = lanes.code.state;
        if (!((s === "failed" || s === "stopped") && renderLane(status, lanes.code, s, lanes.code.detail))) {
          status.textContent = { TimeoutError: "Stopped: the code ran too long.", OutOfMemoryError: "Stopped: out of memory.",
            PythonError: "Failed." }[err.name] || "Failed.";
        }
      } finally {
        running = false;
        runBtn.disabled = false;
      }
    });
    editor.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); runBtn.click(); }
    });
    let off = null;
    off = lanes.code.onState((s, d) => {
      if (!root.isConnected) { if (off) off(); return; }  // its page was swapped out (instant navigation)
      if (running || s === "failed" || s === "stopped") renderLane(status, lanes.code, s, d);
      if (running && s === "ready") status.textContent = "Running…";
    });
  }

  // ------------------------------------------------------------ start, on intent
  // The loader saw the first sign of interest (that is why this file is running): the lanes it names
  // start now; later signs on other calculators or snippets start theirs.
  function warmOnInteraction(root, lane) {
    const go = () => { if (lane.state === "idle") lane.start().catch(() => {}); };
    for (const type of ["pointerenter", "focusin", "touchstart", "keydown"]) root.addEventListener(type, go, { once: true, passive: true });
  }

  const laneOf = (root) => (root.hasAttribute("data-calculator") ? lanes.calc : lanes.code);
  const bound = new WeakSet();
  // this page's calculators and snippets now, and those of every page instant navigation swaps in (runtime.js)
  api.onPage("calculators", () => {
    for (const el of document.querySelectorAll("[data-calculator], [data-snippet]")) {
      if (bound.has(el)) continue;
      bound.add(el);
      if (el.hasAttribute("data-calculator")) setupCalculator(el);
      else setupSnippet(el);
      warmOnInteraction(el, laneOf(el));
    }
  });
  api._loaded(function handOver(roots) {  // the roots touched before this file ran, in order
    for (const root of roots) { const lane = laneOf(root); if (lane.state === "idle") lane.start().catch(() => {}); }
  });
})();
