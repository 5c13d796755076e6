/* The Python side of the site: Pyodide + numpy + chapter2 in a Web Worker, so the page never freezes.
 * One worker per lane (runtime.js: calculators in one, snippets and run() in another).
 *
 * In:  {kind: "init", gen, config}                      boot (once)
 *      {kind: "run" | "exec" | "calc", id, ...}          one request at a time (runtime.js waits for each answer)
 * Out: {gen, kind: "progress", step, phase, loaded, total}   while booting or loading on-demand data
 *      {gen, kind: "ready", versions, timings} | {gen, kind: "boot-failed", error, download}
 *      {gen, id, kind: "started"} / {gen, id, kind: "paused"}  a request's Python starts / waits for a download
 *      {gen, id, kind: "done", ok: true, value} | {gen, id, kind: "done", ok: false, error, traceback, oom, fatal}
 *
 * Files: every file is fetched once by this worker (all of a lane's files in parallel, counted for the
 * progress bar; in CDN mode with fetch's `integrity` check) and Pyodide is handed those same bytes:
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
const t0 = performance.now();
const marks = {};
const mark = (name) => { marks[name] = Math.round(performance.now() - t0); };

function post(msg) { self.postMessage({ gen, ...msg }); }

// ------------------------------------------------------------------ downloads

class DownloadError extends Error {
  constructor(message) { super(message); this.name = "DownloadError"; }
}

const CONTENT_TYPES = { wasm: "application/wasm", js: "text/javascript", json: "application/json" };

class Download {
  constructor(name, spec) {
    this.name = name;
    this.url = spec.url;
    this.size = spec.size || 0;
    this.integrity = spec.integrity || null;
    this.step = spec.step || "runtime";
    this.loaded = 0;
    this.chunks = [];
    this.done = false;
    this.error = null;
    this.waiters = [];
    this.finished = null;
  }

  start(onChunk) {
    if (this.finished) return this.finished;
    this.finished = (async () => {
      let response;
      try {
        response = await realFetch(this.url, this.integrity ? { integrity: this.integrity } : {});
      } catch (err) {
        throw this.fail(this.integrity
          ? `integrity check failed for ${this.url}: it could not be downloaded (offline or blocked?), or its sha256 differs from the hash pinned when the site was built`
          : `could not download ${this.url}: ${err.message || err} (offline, or blocked?)`);
      }
      if (!response.ok) throw this.fail(`could not download ${this.url}: HTTP ${response.status} ${response.statusText}`.trim());
      const reader = response.body.getReader();
      for (;;) {
        let part;
        try {
          part = await reader.read();
        } catch (err) {
          throw this.fail(`the download of ${this.url} broke off: ${err.message || err} (offline?)`);
        }
        if (part.done) break;
        this.chunks.push(part.value);
        this.loaded += part.value.length;
        this.wake();
        if (onChunk) onChunk();
      }
      this.done = true;
      this.wake();
      if (onChunk) onChunk();
    })();
    this.finished.catch(() => {});
    return this.finished;
  }

  fail(message) {
    this.error = new DownloadError(message);
    this.wake();
    return this.error;
  }

  wake() { this.waiters.splice(0).forEach((fn) => fn()); }

  /** A Response that streams the bytes as they arrive (so the wasm compiles while it downloads). */
  response() {
    this.start();
    let i = 0;
    const body = new ReadableStream({
      pull: async (controller) => {
        while (i >= this.chunks.length && !this.done && !this.error) await new Promise((r) => this.waiters.push(r));
        if (i < this.chunks.length) controller.enqueue(this.chunks[i++]);
        else if (this.error) controller.error(this.error);
        else controller.close();
      },
    });
    const ext = this.name.split(".").pop();
    return new Response(body, { headers: { "Content-Type": CONTENT_TYPES[ext] || "application/octet-stream" } });
  }

  async bytes() {
    await this.start();
    const out = new Uint8Array(this.loaded);
    let at = 0;
    for (const c of this.chunks) { out.set(c, at); at += c.length; }
    return out;
  }

  release() { this.chunks = []; this.released = true; }
}

const downloads = new Map();  // virtual URL (config.base + name) -> Download

function download(name) {
  const url = cfg.base + name;
  if (!downloads.has(url)) {
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
  if (d && !d.error && !d.released && (!init || !init.integrity || init.integrity === d.integrity)) return Promise.resolve(d.response());
  return realFetch(input, init);
};

/** Start every download of `names` now; report progress as one step (the largest not yet finished). */
function fetchAll(names, phase) {
  const list = names.map(download);
  const total = list.reduce((s, d) => s + d.size, 0);
  let last = 0;
  const report = (force) => {
    const now = performance.now();
    if (!force && now - last < 100) return;
    last = now;
    const loaded = list.reduce((s, d) => s + (d.done ? d.size || d.loaded : Math.min(d.loaded, d.size || d.loaded)), 0);
    const open = list.filter((d) => !d.done).sort((a, b) => (b.size - b.loaded) - (a.size - a.loaded));
    post({ kind: "progress", phase, step: open.length ? open[0].step : "starting", loaded, total });
  };
  report(true);
  const all = Promise.all(list.map((d) => d.start(() => report(false)))).then(() => report(true));
  all.catch(() => {});
  return { list, all };
}

async function scriptFrom(name) {
  const url = URL.createObjectURL(new Blob([await download(name).bytes()], { type: "text/javascript" }));
  try {
    importScripts(url);
  } finally {
    URL.revokeObjectURL(url);
  }
}

// ------------------------------------------------------------------ Python helpers

const BOOT = `
import contextlib, io, json, math, sys, traceback
from pyodide.code import eval_code as _c2_eval_code

def _c2_jsonable(value):
    if type(value).__module__ == "numpy":
        if hasattr(value, "tolist"):
            return _c2_jsonable(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {str(k): _c2_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_c2_jsonable(v) for v in value]
    if hasattr(value, "__dataclass_fields__"):
        import dataclasses
        return _c2_jsonable(dataclasses.asdict(value))
    return value

def _c2_error(err):
    """An exception as the page's error: its type, a one-line message, the traceback; MemoryError flagged."""
    if isinstance(err, MemoryError):
        return json.dumps({"ok": False, "oom": True, "error": type(err).__name__})
    text = "".join(traceback.format_exception_only(type(err), err)).strip().splitlines()
    return json.dumps({"ok": False, "error": text[-1] if text else type(err).__name__, "traceback": traceback.format_exc()})

def _c2_run(code):
    """Value of the last expression of code, as JSON."""
    try:
        return json.dumps({"ok": True, "value": _c2_jsonable(_c2_eval_code(code, {"__name__": "__main__"}))})
    except BaseException as err:
        return _c2_error(err)

def _c2_exec(code):
    """Run code as a script; what it printed and the error, if any."""
    out = io.StringIO()
    error = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            _c2_eval_code(code, {"__name__": "__main__"})
        except MemoryError as err:
            return _c2_error(err)
        except BaseException:
            error = traceback.format_exc(limit=-3)
    return json.dumps({"ok": True, "value": {"stdout": out.getvalue(), "error": error}})

def _c2_calc(name, raw_json):
    from chapter2 import calculators
    try:
        return '{"ok": true, "value": ' + calculators.compute_json(name, raw_json) + "}"
    except BaseException as err:
        return _c2_error(err)
`;

// ------------------------------------------------------------------ boot

async function init(c) {
  cfg = c;
  gen = c.gen;
  mark("init");
  const core = cfg.core;
  const packageFiles = cfg.lanePackages.map((p) => cfg.packages[p]);
  const { list, all } = fetchAll([core.loader, core.asm, core.wasm, core.stdlib, core.lock, ...packageFiles], "download");
  // A failed download fails the boot at once (Pyodide itself would wait forever for a wasm that never compiles).
  const failed = new Promise((_, reject) => list.forEach((d) => d.start().catch(reject)));
  failed.catch(() => {});
  all.then(() => mark("downloaded"), () => {});
  const boot = (async () => {
    await scriptFrom(core.loader);
    await scriptFrom(core.asm);  // defines _createPyodideModule, so loadPyodide does not fetch pyodide.asm.js again
    mark("scripts");
    pyodide = await loadPyodide({
      indexURL: cfg.base, stdLibURL: cfg.base + core.stdlib, lockFileURL: cfg.base + core.lock,
      fullStdLib: false, stdout: () => {}, stderr: (s) => console.warn(s),
      fsInit: async (FS, info) => { sitePackages = info.sitePackages; },
    });
    mark("python");
    post({ kind: "progress", phase: "install", step: "numpy", loaded: 1, total: 1 });
    await loadPackages(cfg.lanePackages);
    mark("packages");
    post({ kind: "progress", phase: "import", step: "chapter2", loaded: 1, total: 1 });
    pyodide.runPython("import numpy");
    mark("numpy");
    pyodide.runPython(cfg.imports || "import chapter2");
    mark("chapter2");
    pyodide.runPython(BOOT);
    helpers = { run: pyodide.globals.get("_c2_run"), exec: pyodide.globals.get("_c2_exec"), calc: pyodide.globals.get("_c2_calc") };
    mark("imports");
    return pyodide.runPython("import chapter2, numpy; {'chapter2': chapter2.__version__, 'numpy': numpy.__version__}")
      .toJs({ dict_converter: Object.fromEntries });
  })();
  const versions = await Promise.race([boot, failed]);
  list.forEach((d) => d.release());
  return versions;
}

// Packages are installed here rather than by pyodide.loadPackage: their bytes were already checked (fetch
// with the lock's sha256 as `integrity`), and unpacking with the browser's own inflate takes a fraction of
// the time Pyodide's Python unzip does. Extension modules (.so) load when Python first imports them.
const installed = new Set();
let sitePackages = "/lib/python3.12/site-packages";

async function inflate(data) {
  const stream = new Blob([data]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

async function unzipInto(bytes, target) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let end = -1;
  for (let i = bytes.length - 22; i >= Math.max(0, bytes.length - 22 - 0xffff); i--) {
    if (view.getUint32(i, true) === 0x06054b50) { end = i; break; }
  }
  if (end < 0) throw new Error("not a zip archive");
  const names = new TextDecoder();
  const entries = [];
  for (let n = 0, p = view.getUint32(end + 16, true); n < view.getUint16(end + 10, true); n++) {
    if (view.getUint32(p, true) !== 0x02014b50) throw new Error("damaged zip archive");
    const method = view.getUint16(p + 10, true);
    const size = view.getUint32(p + 20, true);
    const nameLen = view.getUint16(p + 28, true);
    const local = view.getUint32(p + 42, true);
    const name = names.decode(bytes.subarray(p + 46, p + 46 + nameLen));
    p += 46 + nameLen + view.getUint16(p + 30, true) + view.getUint16(p + 32, true);
    if (name.endsWith("/")) continue;
    if (name.startsWith("/") || name.split("/").includes("..")) throw new Error(`unsafe path in archive: ${name}`);
    const start = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true);
    if (method !== 0 && method !== 8) throw new Error(`unsupported compression in archive: ${name}`);
    entries.push({ name, method, data: bytes.subarray(start, start + size) });
  }
  const files = await Promise.all(entries.map(async (e) => [e.name, e.method === 8 ? await inflate(e.data) : e.data]));
  const FS = pyodide.FS;
  for (const [name, data] of files) {
    const path = `${target}/${name}`;
    FS.mkdirTree(path.slice(0, path.lastIndexOf("/")));
    FS.writeFile(path, data);
  }
}

async function loadPackages(names) {
  for (const name of names) {
    if (installed.has(name)) continue;
    await unzipInto(await download(cfg.packages[name]).bytes(), sitePackages);
    installed.add(name);
  }
  pyodide.runPython("import importlib; importlib.invalidate_caches()");
}

async function loadOnDemand(pkg) {
  if (installed.has(pkg)) return;
  const { list } = fetchAll([cfg.packages[pkg]], "data");
  const failed = new Promise((_, reject) => list.forEach((d) => d.start().catch(reject)));
  failed.catch(() => {});
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
      post({ id: msg.id, kind: "started" });
    }
    return call(helpers.calc, msg.name, JSON.stringify(msg.inputs));
  }
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
