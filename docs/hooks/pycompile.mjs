// Compile the Python sources of zip archives to CPython bytecode with Pyodide's own interpreter
// (called by docs/hooks/pycompile.py: `node pycompile.mjs JOBS.json`; see there for why).
//
// JOBS.json: {"indexURL": ".../node_modules/pyodide/", "jobs": [{"input", "output", "mode", "prefix", "drop"}]}
//   mode "sourceless": each NAME.py becomes NAME.pyc (the source is left out);
//   mode "cached":     each NAME.py is kept and __pycache__/NAME.cpython-312.pyc is added;
//   prefix: the folder the archive is unpacked or mounted at in the browser (the code objects' file names);
//   drop: file name endings left out of the output (headers, type stubs: unused at run time).
// Output archives are deterministic: sorted entries, fixed timestamps, unchecked hash-based .pyc
// (PEP 552: no source timestamps), a fixed hash seed.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const spec = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const { loadPyodide } = await import(pathToFileURL(path.join(spec.indexURL, "pyodide.mjs")).href);
const py = await loadPyodide({ indexURL: spec.indexURL, env: { PYTHONHASHSEED: "0" }, stdout: () => {}, stderr: (s) => console.error(s) });

py.runPython(`
import importlib._bootstrap_external as _be, importlib.util as _iu, sys, zipfile


def _c2_compile(inp, out, mode, prefix, drop):
    entries = []
    with zipfile.ZipFile(inp) as zin:
        for info in zin.infolist():
            name = info.filename
            if info.is_dir() or name.endswith(".pyc") or any(name.startswith(d) if d.endswith("/") else name.endswith(d) for d in drop):
                continue  # (bytecode in the input: stale, made here again)
            data = zin.read(info)
            if not name.endswith(".py"):
                entries.append((name, data))
                continue
            try:
                # docstrings stay: stripping them (a sixth of the bytes) breaks numpy, which adds
                # docstrings unless sys.flags.optimize says -OO
                code = compile(data, prefix + name, "exec", dont_inherit=True)
            except SyntaxError:  # not Python 3 (test data, templates): keep the file as it is
                entries.append((name, data))
                continue
            pyc = bytes(_be._code_to_hash_pyc(code, _iu.source_hash(data), checked=False))
            if mode == "sourceless":
                entries.append((name + "c", pyc))
            else:
                folder, _, stem = name.rpartition("/")
                entries.append((name, data))
                entries.append(((folder + "/" if folder else "") + f"__pycache__/{stem[:-3]}.{sys.implementation.cache_tag}.pyc", pyc))
    with zipfile.ZipFile(out, "w") as zout:
        for name, data in sorted(entries):
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zout.writestr(info, data)
    return len(entries)
`);
const compileZip = py.globals.get("_c2_compile");
for (const job of spec.jobs) {
  py.FS.writeFile("/tmp/in.zip", fs.readFileSync(job.input));
  compileZip("/tmp/in.zip", "/tmp/out.zip", job.mode, job.prefix, py.toPy(job.drop || []));
  fs.writeFileSync(job.output, py.FS.readFile("/tmp/out.zip"));
}
