/* The Python side of the site: Pyodide + numpy + chapter2 in a Web Worker, so the page never freezes.
 * One worker per lane (runtime.js: calculators in one, snippets and run() in another).
 *
 * In:  {kind: "init", gen, config}                      boot (once)
 *      {kind: "run" | "exec" | "calc" | "hub", id, ...}  one request at a time (runtime.js waits for each answer)
 * Out: {gen, kind: "progress", step, phase, loaded, total}   while booting or loading on-demand data
 *      {gen, kind: "ready", versions, timings} | {gen, kind: "boot-failed", error, download}
 *      {gen, id, kind: "started"} / {gen, id, kind: "paused"}  a request's Python starts / waits for a download
 *      {gen, id, kind: "done", ok: true, value} | {gen, id, kind: "done", ok: false, error, traceback, oom, fatal}
 *
 * Files: every file is fetched once by this worker (all of a lane's files in parallel, counted for the
 * progress bar; with fetch's `integrity` check where the build pinned a sha256: CDN files, packages)
 * and Pyodide is handed those same responses:
 * pyodide.js and pyodide.asm.js run from them (blob URLs), and fetch() is wrapped so that Pyodide's own
 * requests (the wasm, the standard library, the lock, the packages) are answered from them. Pyodide
 * sees one folder, config.base; where each file really comes from (the site, the CDN) is config.files.
 */
"use strict";

const realFetch = self.fetch.bind(self);
let gen = 0;
let cfg = null;
let pyodide = null;
let helpers = null;
let calcModules = {};  // calculator -> its module (calculators' worker), from config.calcIndex
const t0 = performance.now();
const marks = {};
const mark = (name) => { marks[name] = Math.round(performance.now() - t0); };

function post(msg) { self.postMessage({ gen, ...msg }); }

// ------------------------------------------------------------------ downloads

class DownloadError extends Error {
  constructor(message) { super(message); this.name = "DownloadError"; }
}


/** One file, fetched once, its Response handed on as it is (the wasm compiles while it streams in,
 * natively); a clone of it is read here only to count bytes for the progress bar. */
class Download {
  constructor(name, spec) {
    this.name = name;
    this.url = spec.url;
    this.size = spec.size || 0;
    this.integrity = spec.integrity || null;
    this.step = spec.step || "runtime";
    this.loaded = 0;
    this.done = false;
    this.error = null;
    this.finished = null;
    this.resp = null;
    this.listeners = [];
  }

  start(onProgress) {
    if (onProgress) this.listeners.push(onProgress);
    if (this.finished) return this.finished;
    const url = this.url;
    const progress = () => this.listeners.forEach((fn) => fn());
    this.resp = realFetch(url, this.integrity ? { integrity: this.integrity } : {}).then(
      (r) => {
        if (!r.ok) throw this.fail(`could not download ${url}: HTTP ${r.status} ${r.statusText}`.trim());
        return r;
      },
      () => {
        throw this.fail(this.integrity
          ? `integrity check failed for ${url}: it could not be downloaded (offline or blocked?), or its sha256 differs from the hash pinned when the site was built`
          : `could not download ${url} (offline, or blocked?)`);
      });
    this.resp.catch(() => {});
    this.finished = this.resp.then(async (r) => {
      const reader = r.clone().body.getReader();
      for (;;) {
        let part;
        try {
          part = await reader.read();
        } catch (err) {
          throw this.fail(`the download of ${url} broke off (offline?)`);
        }
        if (part.done) break;
        this.loaded += part.value.length;
        progress();
      }
      this.done = true;
      progress();
    });
    this.finished.catch(() => {});
    return this.finished;
  }

  fail(message) {
    this.error = this.error || new DownloadError(message);
    return this.error;
  }

  response() {
    this.start();
    if (this.used) return this.resp.then((r) => r.clone());
    this.used = true;
    return this.resp;
  }

  async bytes() { return new Uint8Array(await (await this.response()).arrayBuffer()); }

  release() { this.released = true; }
}

const downloads = new Map();  // virtual URL (config.base + name) -> Download

function download(name) {
  const url = cfg.base + name;
  if (!downloads.has(url) || downloads.get(url).error) {  // (a failed one is tried afresh)
    const spec = cfg.files[name];
    if (!spec) throw new Error(`no file ${name} in the site's configuration`);
    downloads.set(url, new Download(name, spec));
  }
  return downloads.get(url);
}

// Pyodide's own requests for our files are answered from the bytes fetched above. A request that
// asks for another integrity value than the one we checked goes to the network as it is.
self.fetch = (input, init) => {
  const url = typeof input === "string" ? input : (input && input.url) || String(input);
  const d = downloads.get(url);
  if (d && !d.error && !d.released && (!init || !init.integrity || init.integrity === d.integrity)) return d.response();
  return realFetch(input, init);
};

/** Download `groups` of files, one group after the other (the Python runtime first: Python starts while
 * the packages still download), reporting progress over all of them: bytes so far, of the total, and
 * which steps are still loading. `failed` rejects at the first download that fails. */
function fetchAll(groups, phase) {
  const list = groups.flat().map(download);
  const total = list.reduce((s, d) => s + d.size, 0);
  let last = 0;
  const report = (force) => {
    const now = performance.now();
    if (!force && now - last < 100) return;
    last = now;
    const loaded = list.reduce((s, d) => s + (d.done ? d.size || d.loaded : Math.min(d.loaded, d.size || d.loaded)), 0);
    const open = list.filter((d) => !d.done);
    const active = open.filter((d) => d.finished);  // what is downloading now; else what is still to come
    const steps = [...new Set((active.length ? active : open).map((d) => d.step))];
    post({ kind: "progress", phase, steps, step: steps[0] || "starting", loaded, total });
  };
  let fail;
  const failed = new Promise((_, reject) => { fail = reject; });
  failed.catch(() => {});
  report(true);
  const all = (async () => {
    for (const names of groups) {
      const started = names.map((n) => download(n).start(() => report(false)));
      started.forEach((p) => p.catch(fail));
      await Promise.all(started);
    }
    report(true);
  })();
  all.catch(() => {});
  return { list, all, failed };
}

async function scriptFrom(name) {
  const url = URL.createObjectURL(new Blob([await download(name).bytes()], { type: "text/javascript" }));
  try {
    importScripts(url);
  } finally {
    URL.revokeObjectURL(url);
  }
}

// ------------------------------------------------------------------ Python
// What the worker runs in Python is the package's module chapter2._browser (run, run_script, calc, versions:
// each returns a JSON string); with lazyCalculators, only the module of the calculator a page runs is imported.

// ------------------------------------------------------------------ boot

async function init(c) {
  cfg = c;
  gen = c.gen;
  mark("init");
  const core = cfg.core;
  const packageFiles = cfg.lanePackages.map((p) => cfg.packages[p]).concat(cfg.lazyCalculators ? [cfg.calcIndex] : []);
  // A failed download fails the boot at once (Pyodide itself would wait forever for a wasm that never compiles).
  const { list, all, failed } = fetchAll([[core.loader, core.asm, core.wasm, core.stdlib, core.lock], packageFiles], "download");
  all.then(() => mark("downloaded"), () => {});
  const boot = (async () => {
    await scriptFrom(core.loader);
    await scriptFrom(core.asm);  // defines _createPyodideModule, so loadPyodide does not fetch pyodide.asm.js again
    mark("scripts");
    pyodide = await loadPyodide({
      indexURL: cfg.base, stdLibURL: cfg.base + core.stdlib, lockFileURL: cfg.base + core.lock,
      fullStdLib: false, stdout: () => {}, stderr: (s) => console.warn(s),
    });
    mark("python");
    post({ kind: "progress", phase: "install", step: "numpy", loaded: 1, total: 1 });
    await loadPackages(cfg.lanePackages);
    mark("packages");
    post({ kind: "progress", phase: "import", step: "chapter2", loaded: 1, total: 1 });
    pyodide.pyimport("numpy").destroy();
    mark("numpy");
    const browser = pyodide.pyimport("chapter2._browser");
    if (cfg.lazyCalculators) calcModules = JSON.parse(new TextDecoder().decode(await download(cfg.calcIndex).bytes()));
    mark("chapter2");
    helpers = { run: browser.run, exec: browser.run_script, calc: browser.calc, hub: browser.hub };
    mark("imports");
    return JSON.parse(browser.versions());
  })();
  const versions = await Promise.race([boot, failed]);
  list.forEach((d) => d.release());
  return versions;
}

// Pyodide installs the packages from the bytes fetched above (its fetch with the lock's sha256 as
// `integrity` is answered by the Download fetched with that same integrity value).
const installed = new Set();

async function loadPackages(names) {
  const problems = [];
  await pyodide.loadPackage(names, { checkIntegrity: true, messageCallback: () => {}, errorCallback: (m) => problems.push(m) });
  const missing = names.filter((n) => !(n in pyodide.loadedPackages));
  if (missing.length) {
    const d = [...downloads.values()].find((x) => x.error);
    if (d) throw d.error;
    throw new Error(`could not install ${missing.join(", ")}: ${problems.join("; ") || "unknown error"}`);
  }
  names.forEach((n) => installed.add(n));
}

async function loadOnDemand(pkg) {
  if (installed.has(pkg)) return;
  const { list, failed } = fetchAll([[cfg.packages[pkg]]], "data");
  await Promise.race([loadPackages([pkg]), failed]);
  list.forEach((d) => d.release());
}

// ------------------------------------------------------------------ requests

function isFatal(err) {
  // A Python exception is a PythonError; anything else out of Pyodide (an abort, running out of wasm
  // memory, NoGilError after a fatal error) means this interpreter can no longer be trusted.
  return !(pyodide && err instanceof pyodide.ffi.PythonError);
}

const OOM = /out of memory|OOM|Cannot enlarge memory|Array buffer allocation failed|could not allocate memory|WebAssembly\.Memory|memory access out of bounds/i;

function call(fn, ...args) {
  return JSON.parse(fn(...args));
}

async function handle(msg) {
  if (!helpers) throw new Error("the Python runtime is not initialised");
  if (msg.kind !== "calc") post({ id: msg.id, kind: "started" });
  if (msg.kind === "run") return call(helpers.run, msg.code);
  if (msg.kind === "exec") return call(helpers.exec, msg.code);
  if (msg.kind === "calc") {
    const needs = ((cfg.calcData || {})[msg.name] || []).filter((p) => !installed.has(p));
    if (needs.length) {  // data this calculator reads, fetched on its first run (not counted in its time limit)
      post({ id: msg.id, kind: "paused", needs });
      for (const p of needs) await loadOnDemand(p);
    }
    post({ id: msg.id, kind: "started" });
    return call(helpers.calc, msg.name, JSON.stringify(msg.inputs), calcModules[msg.name] || null, msg.hub || null);
  }
  if (msg.kind === "hub") return call(helpers.hub, msg.modelId, msg.lookup, JSON.stringify(msg.replies || {}));
  throw new Error("unknown request kind " + msg.kind);
}

self.onmessage = async (event) => {
  const msg = event.data;
  if (msg.kind === "init") {
    try {
      const versions = await init(msg.config);
      post({ kind: "ready", versions, timings: marks });
    } catch (err) {
      post({ kind: "boot-failed", error: String((err && err.message) || err), download: err instanceof DownloadError,
             oom: OOM.test(String(err && err.message)) });
    }
    return;
  }
  try {
    const result = await handle(msg);
    if (result.ok) post({ id: msg.id, kind: "done", ok: true, value: result.value });
    else post({ id: msg.id, kind: "done", ok: false, error: result.error, traceback: result.traceback || "", oom: !!result.oom });
  } catch (err) {
    const text = String((err && err.message) || err);
    const fatal = isFatal(err) && !(err instanceof DownloadError);
    const lines = text.trim().split("\n");
    post({ id: msg.id, kind: "done", ok: false, error: lines[lines.length - 1], traceback: text,
           fatal, download: err instanceof DownloadError, oom: fatal && OOM.test(text) });
  }
};
