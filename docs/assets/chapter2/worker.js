/* The Python side of the site: Pyodide + numpy + chapter2, in a Web Worker so
 * the page never freezes. Messages in:  {id, kind: "init"|"run"|"exec"|"calc", ...}
 * Messages out: {id, ok: true, value} or {id, ok: false, error, traceback}.
 */
"use strict";

let pyodide = null;
let helpers = null;

const BOOT = `
import contextlib, io, json, math, traceback
import numpy as np
import chapter2
from chapter2 import calculators as _c2_calculators
from pyodide.code import eval_code as _c2_eval_code

def _c2_jsonable(value):
    if isinstance(value, np.ndarray):
        return _c2_jsonable(value.tolist())
    if isinstance(value, np.generic):
        return _c2_jsonable(value.item())
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

def _c2_run(code):
    """Value of the last expression of code, as JSON."""
    return json.dumps(_c2_jsonable(_c2_eval_code(code, {"__name__": "__main__"})))

def _c2_exec(code):
    """Run code as a script; return what it printed and the error, if any."""
    out = io.StringIO()
    error = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            _c2_eval_code(code, {"__name__": "__main__"})
        except BaseException:
            error = traceback.format_exc(limit=-3)
    return json.dumps({"stdout": out.getvalue(), "error": error})

def _c2_calc(name, raw_json):
    return _c2_calculators.compute_json(name, raw_json)
`;

function lastLine(message) {
  const lines = String(message).trim().split("\n");
  return lines[lines.length - 1];
}

async function verified(url, integrity) {
  // fetch() with `integrity` rejects unless the bytes match the expected sha256 (SRI).
  try {
    return await fetch(url, { integrity, cache: "force-cache" });
  } catch (err) {
    throw new Error(`integrity check failed for ${url}: it could not be fetched, or its sha256 differs from the hash pinned at build time`);
  }
}

async function init(cfg) {
  if (cfg.integrity) {
    // CDN mode: check every core file against the hashes pinned at build time, then load
    // pyodide.js from the verified bytes (the others are served from the HTTP cache just filled).
    const names = Object.keys(cfg.integrity);
    const responses = await Promise.all(names.map((n) => verified(cfg.indexURL + n, cfg.integrity[n])));
    const loader = await responses[names.indexOf("pyodide.js")].text();
    importScripts(URL.createObjectURL(new Blob([loader], { type: "text/javascript" })));
  } else {
    importScripts(cfg.indexURL + "pyodide.js");
  }
  const options = { indexURL: cfg.indexURL, fullStdLib: false };
  if (cfg.integrity) options.lockFileURL = cfg.indexURL + "pyodide-lock.json";
  if (cfg.lockFileURL) options.lockFileURL = cfg.lockFileURL;
  pyodide = await loadPyodide(options);
  await pyodide.loadPackage(cfg.packages, { checkIntegrity: true });
  if (cfg.extraWheels) {
    for (const url of cfg.extraWheels) await pyodide.loadPackage(url);
  }
  pyodide.runPython(BOOT);
  helpers = {
    run: pyodide.globals.get("_c2_run"),
    exec: pyodide.globals.get("_c2_exec"),
    calc: pyodide.globals.get("_c2_calc"),
  };
  return pyodide.runPython("import chapter2, numpy; {'chapter2': chapter2.__version__, 'numpy': numpy.__version__}").toJs({ dict_converter: Object.fromEntries });
}

self.onmessage = async (event) => {
  const msg = event.data;
  try {
    let value;
    if (msg.kind === "init") value = await init(msg.config);
    else if (!helpers) throw new Error("the Python runtime is not initialised");
    else if (msg.kind === "run") value = JSON.parse(helpers.run(msg.code));
    else if (msg.kind === "exec") value = JSON.parse(helpers.exec(msg.code));
    else if (msg.kind === "calc") value = JSON.parse(helpers.calc(msg.name, JSON.stringify(msg.inputs)));
    else throw new Error("unknown request kind " + msg.kind);
    self.postMessage({ id: msg.id, ok: true, value });
  } catch (err) {
    const text = String((err && err.message) || err);
    self.postMessage({ id: msg.id, ok: false, error: lastLine(text), traceback: text });
  }
};
