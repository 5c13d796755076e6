/* chapter2: share a calculator. Its inputs live in the page's URL (a permalink), with a "Copy link" button; its
 * inputs and numbers download as CSV or JSON; "Copy as Python" copies (and shows) the script that prints its results.
 * Loaded by runtime.js after runtime-core.js (whose listeners recompute a calculator when its inputs change).
 *
 * The URL. Each calculator whose inputs differ from its defaults has one query parameter, named after the
 * calculator, listing only the fields that differ, in form order:
 *
 *     /llm-inference/?kv_cache=context:65536,batch:4&prefill_decode=n_steps:6#calculator-kv_cache
 *
 * A value is encodeURIComponent of what the field holds (so "," and ":" inside a value are %2C and %3A, and a
 * leading "~" is %7E); a value that begins with "~" is one of two marks instead:
 *     ~z<base64url>   the text deflated (CompressionStream "deflate-raw"), for a long text (a pasted
 *                     config.json, a prompt) whenever that is shorter than the text itself;
 *     ~x              a text the link had to leave out: the whole URL would have passed URL_LIMIT.
 * The query, not the hash: the hash is the page's anchors (a section, a glossary term, `#calculator-NAME`),
 * which go on working beside it; a static host serves the same page whatever the query.
 *
 * The address bar follows the reader: after each change (WRITE_MS after the last one) the parameter is
 * rewritten with history.replaceState, so no history entry piles up and Back leaves the page as before. Back or
 * Forward between anchors of the page keeps the inputs as they are and writes them into the address again (the
 * entry returned to holds the inputs of when it was left).
 * "Copy link" copies a link to that one calculator: its parameter alone, and `#calculator-NAME`, so the link
 * scrolls to it. Opening a link sets the inputs it names (every other field back to its default, whatever the
 * browser restored), opens the closed block (a workbench's <details>) around the calculator, and lets the
 * runtime compute them: the results shown are the live ones for those inputs, marked stale until then.
 * A Hub model id (hub.js) travels once it has been looked up, and a link that names one looks it up on opening
 * (the reader asked for that model by opening the link): the results are then those of the fetched config.
 *
 * Export: JSON holds the calculator, its title, a link to it, its inputs as Python parsed them (named with their
 * units, "context (tokens)"), its results as shown ({label: text}, a bar chart as [[label, value]]) and its numbers
 * (calculators.NUMBERS: every number shown, full precision, base units in the names); CSV one header row and one
 * row of values, "inputs.NAME (UNIT)" then "numbers.NAME (UNIT)" (a list as its JSON text). Python: the script
 * of chapter2.calculators._script, which Python writes with each result (the build's for the defaults).
 *
 * window.chapter2Share.bind(root): binds every calculator under `root` (the document by default) once; a
 * second call binds only calculators it has not seen (a page swapped in by instant navigation).
 */
(function () {
  "use strict";
  const URL_LIMIT = 2000;  // characters of a whole link; see the README ("Share a calculator") for why
  const WRITE_MS = 250;  // the address bar is rewritten this long after the last change (a slider drags on)
  const PACK_FROM = 60;  // a value shorter than this (encoded) is never worth deflating
  const PACKED = "~z";
  const LEFT_OUT = "~x";
  const MODEL_ID = "model_id";  // a Hub model id (hub.js): looked up when a link names it, as Look up would
  const MODEL_IDS = [MODEL_ID, MODEL_ID + "_b"];  // A's, and B's where a calculator compares two choices
  const isModelId = (name) => MODEL_IDS.includes(name);
  const bound = new WeakSet();

  // ------------------------------------------------------------ one value in the URL
  const plain = (text) => encodeURIComponent(text).replace(/^~/, "%7E");

  function base64url(bytes) {
    let text = "";
    for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
    return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  function unbase64url(text) {
    const bin = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
    return Uint8Array.from(bin, (c) => c.charCodeAt(0));
  }

  async function through(bytes, stream) {
    return new Uint8Array(await new Response(new Blob([bytes]).stream().pipeThrough(stream)).arrayBuffer());
  }

  async function pack(text) {
    if (!window.CompressionStream) return null;
    return PACKED + base64url(await through(new TextEncoder().encode(text), new CompressionStream("deflate-raw")));
  }

  /** The text a value of the URL stands for; null for LEFT_OUT. Throws on a value it cannot read. */
  async function unpack(value) {
    if (value === LEFT_OUT) return null;
    if (value.startsWith(PACKED)) {
      if (!window.DecompressionStream) throw new Error("this browser cannot inflate it (no DecompressionStream)");
      const bytes = await through(unbase64url(value.slice(PACKED.length)), new DecompressionStream("deflate-raw"));
      return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    }
    return decodeURIComponent(value);
  }

  // ------------------------------------------------------------ a calculator's inputs
  const formOf = (root) => root.querySelector("form");

  /** The named controls of a form that are in use (a field shown only for some inputs, Field.show_when, and
   * hidden now does not count). */
  function controls(form) {
    return [...form.elements].filter((el) => el.name && !(el.closest("[data-show-field]") || {}).hidden);
  }

  function defaultOf(el) {
    if (el.tagName === "SELECT") {
      const option = [...el.options].find((o) => o.defaultSelected) || el.options[0];
      return option ? option.value : "";
    }
    return el.defaultValue;
  }

  /** Whether a control holding `value` holds `other`: a slider's value is a number the browser rewrites ("0.0" is 0). */
  const same = (el, value, other) => value === other || (el.type === "range" && value !== "" && other !== "" && Number(value) === Number(other));

  /** Whether a model id field holds an id the results are about: one looked up (hub.js), not one half typed. */
  function lookedUp(form, el) {
    const hub = window.chapter2Hub;
    return !!(hub && hub.records(form, { [el.name]: el.value }));
  }

  /** [[field, value]] of the fields whose value differs from the default, in form order. */
  function changed(root) {
    const form = formOf(root);
    return controls(form).filter((el) => !same(el, el.value, defaultOf(el)) && (!isModelId(el.name) || lookedUp(form, el)))
      .map((el) => [el.name, el.value]);
  }

  /** Encoded parts {field, plain, packed} of a calculator's changed fields. */
  async function parts(root) {
    const out = [];
    for (const [field, value] of changed(root)) {
      const p = plain(value);
      const packed = p.length >= PACK_FROM ? await pack(value) : null;
      out.push({ field, plain: p, packed: packed && packed.length < p.length ? packed : null });
    }
    return out;
  }

  const param = (items) => items.map((x) => `${x.field}:${x.value}`).join(",");

  /**
   * The query of a link carrying `entries` ([{name, parts}]) beside `keep` (the query's other parameters, as
   * they were), each text as short as it goes; texts are left out, the longest first, while the link
   * (`prefix` + query + `hash`) passes URL_LIMIT. Returns {search, leftOut: [{name, field, chars}]}.
   */
  function compose(prefix, keep, entries, hash) {
    const chosen = entries.map((e) => ({ name: e.name, items: e.parts.map((p) => ({ ...p, value: p.packed || p.plain })) }));
    const search = () => {
      const own = chosen.filter((e) => e.items.length).map((e) => `${e.name}=${param(e.items)}`);
      const all = keep.concat(own);
      return all.length ? `?${all.join("&")}` : "";
    };
    const leftOut = [];
    while ((prefix + search() + hash).length > URL_LIMIT) {
      let longest = null;
      for (const e of chosen) for (const item of e.items) {
        if (item.value !== LEFT_OUT && (!longest || item.value.length > longest.item.value.length)) longest = { e, item };
      }
      if (!longest || longest.item.value.length <= LEFT_OUT.length) break;  // nothing left to leave out
      leftOut.push({ name: longest.e.name, field: longest.item.field, chars: longest.item.value.length });
      longest.item.value = LEFT_OUT;
    }
    return { search: search(), leftOut };
  }

  /** The query's parameters as [key, raw value] pairs (neither decoded). */
  function query(search) {
    return search.replace(/^\?/, "").split("&").filter(Boolean).map((p) => {
      const at = p.indexOf("=");
      return at < 0 ? [p, ""] : [p.slice(0, at), p.slice(at + 1)];
    });
  }

  const prefixOf = (loc) => loc.origin + loc.pathname;
  const pageRoots = () => [...document.querySelectorAll("[data-calculator]")];

  /** A link to this page with the inputs of `roots` (the others' parameters dropped unless `keepOthers`). */
  async function link(roots, hash, keepOthers) {
    const ours = new Set(pageRoots().map((r) => r.dataset.calculator));
    const keep = keepOthers ? query(location.search).filter(([k]) => !ours.has(k)).map(([k, v]) => `${k}=${v}`) : [];
    const entries = [];
    for (const root of roots) entries.push({ name: root.dataset.calculator, parts: await parts(root) });
    const { search, leftOut } = compose(prefixOf(location), keep, entries, hash);
    return { url: prefixOf(location) + search + hash, leftOut };
  }

  // ------------------------------------------------------------ the address bar follows the inputs
  let writeTimer = null;
  let writing = 0;

  function scheduleWrite() {
    clearTimeout(writeTimer);
    const page = location.pathname;
    writeTimer = setTimeout(() => writeAddress(page), WRITE_MS);
  }

  async function writeAddress(page) {
    const mine = ++writing;
    const roots = pageRoots();
    const { url, leftOut } = await link(roots, location.hash, true);
    if (mine !== writing) return;  // a newer change is being written
    // the reader went to another page meanwhile (instant navigation: the address is already that page's)
    if (location.pathname !== page || !roots.every((root) => root.isConnected)) return;
    if (url !== location.href) history.replaceState(history.state, "", url);
    document.documentElement.dataset.c2Address = String(mine);  // written (tests wait on it, not on a timer)
    for (const root of roots) {
      const out = leftOut.filter((x) => x.name === root.dataset.calculator);
      note(root, "address", out.length ? leftOutText(out, "The address bar") : "");
    }
  }

  function leftOutText(out, what) {
    const fields = out.map((x) => `${label(x.name, x.field)} (${x.chars.toLocaleString("en-US")} characters, compressed)`);
    return `${what} cannot carry ${fields.join(" and ")}: a link stays under ${URL_LIMIT.toLocaleString("en-US")} ` +
      "characters. Whoever opens it gets the other inputs, and pastes that text again.";
  }

  function label(name, field) {
    const root = document.querySelector(`[data-calculator="${name}"]`);
    const el = root && formOf(root).elements[field];
    const text = el && el.labels && el.labels[0] ? el.labels[0].textContent.trim() : field;
    return `“${text}”`;
  }

  /** A line in the calculator's share row; each `kind` (restore, address, copy) keeps its own sentence. */
  function note(root, kind, text) {
    const status = root.querySelector("[data-share-status]");
    if (!status) return;
    const notes = JSON.parse(status.dataset.notes || "{}");
    if (text) notes[kind] = text;
    else delete notes[kind];
    status.dataset.notes = JSON.stringify(notes);
    status.textContent = Object.values(notes).join(" ");
  }

  // ------------------------------------------------------------ opening a link: restore the inputs
  /** The link's fields for calculator `name` on this page: {field: raw value}, or null when it has none. */
  function linked(name, search) {
    const found = query(search).find(([k]) => k === name);
    if (!found) return null;
    const fields = {};
    for (const item of found[1].split(",").filter(Boolean)) {
      const at = item.indexOf(":");
      if (at > 0) fields[item.slice(0, at)] = item.slice(at + 1);
    }
    return fields;
  }

  function openAround(root) {
    for (let d = root.closest("details"); d; d = d.parentElement && d.parentElement.closest("details")) d.open = true;
  }

  async function restore(root, fields) {
    const form = formOf(root);
    const problems = [];
    const values = {};
    for (const [field, raw] of Object.entries(fields)) {
      const el = form.elements[field];
      if (!el || !el.name) {
        problems.push(isModelId(field) ? "it names a Hub model id, and this site is built without Hub lookups"
          : `the link names a field “${field}” this calculator does not have`);
        continue;
      }
      try {
        const text = await unpack(raw);
        if (text === null) problems.push(`the link could not carry ${label(root.dataset.calculator, field)}: paste it again`);
        else values[field] = text;
      } catch (err) {
        problems.push(`the link's ${label(root.dataset.calculator, field)} could not be read (${err.message})`);
      }
    }
    const moved = [];
    for (const el of [...form.elements].filter((x) => x.name)) {
      const want = el.name in values ? values[el.name] : defaultOf(el);
      if (el.tagName === "SELECT" && ![...el.options].some((o) => o.value === want)) {
        problems.push(`${label(root.dataset.calculator, el.name)} has no choice “${want}”; it stays at ${el.value}`);
        continue;
      }
      if (el.type === "range" && el.dataset.maxFrom && form.elements[el.dataset.maxFrom]) {
        const top = Number(String(values[el.dataset.maxFrom] ?? defaultOf(form.elements[el.dataset.maxFrom])).replace(/[_,]/g, ""));
        if (Number.isInteger(top) && top >= +el.min) el.max = String(top);  // before the value, which it bounds
      }
      if (same(el, el.value, want)) continue;
      el.value = want;
      moved.push(el);
    }
    const lookups = moved.filter((el) => isModelId(el.name)).map((el) => el.closest(".c2-calc__field"))
      .map((field) => field && field.querySelector("[data-hub-lookup]")).filter(Boolean);
    if (problems.length) note(root, "restore", `From the link: ${problems.join("; ")}.`);
    if (!moved.length) return;
    root.classList.add("c2-calc--stale");  // the results are the defaults' until the restored inputs are computed
    const status = root.querySelector("[data-calc-status]");
    if (status) status.textContent = "Inputs from the link: computing their results…";
    // a slider whose top follows another field first (charts.js then keeps the value it holds), then the rest
    const first = moved.filter((el) => el.dataset.maxFrom);
    for (const el of first.concat(moved.filter((el) => !el.dataset.maxFrom && !isModelId(el.name)))) {
      el.dispatchEvent(new Event(el.tagName === "SELECT" ? "change" : "input", { bubbles: true }));
    }
    for (const lookup of lookups) lookup.click();  // the link asks for that model: hub.js fetches it, then the calculator recomputes
  }

  // ------------------------------------------------------------ copy link
  async function copyText(text) {
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch (err) {
      return false;  // no clipboard here (an insecure page, a refused permission): the link is shown instead
    }
  }

  async function copyLink(root, button) {
    const { url, leftOut } = await link([root], `#${root.id}`, false);
    button.dataset.link = url;
    const copied = await copyText(url);
    const said = copied ? `Link copied (${url.length.toLocaleString("en-US")} characters).`
      : `Copy this link: ${url}`;
    note(root, "copy", leftOut.length ? `${said} ${leftOutText(leftOut, "It")}` : said);
    button.dataset.copies = String((+button.dataset.copies || 0) + 1);  // handled (tests wait on it)
  }

  // ------------------------------------------------------------ what the calculator shows now: its record
  // {inputs, numbers, script}: the parsed inputs Python computed with, its numbers and its Python script. The
  // build's (the defaults') is in the page; each result Python paints brings its own ("chapter2:painted"); a step
  // drawn at build time (a stepper's frame) brings none, and the record is asked of Python when it is needed.
  const records = new WeakMap();  // root -> {built, current (null: ask Python), columns, labels, title}

  function recordOf(root) {
    let rec = records.get(root);
    if (!rec) {
      const el = root.querySelector("[data-calc-record]");
      const data = el ? JSON.parse(el.dataset.calcRecord) : { inputs: {}, numbers: {}, columns: {}, labels: {}, title: "" };
      const pre = root.querySelector("[data-python-script]");
      const built = { inputs: data.inputs, numbers: data.numbers, script: pre ? pre.textContent : "" };
      rec = { built, current: built, columns: data.columns, labels: data.labels, title: data.title };
      records.set(root, rec);
    }
    return rec;
  }

  function painted(root, answer) {
    const rec = recordOf(root);
    rec.current = answer ? { inputs: answer.inputs, numbers: answer.numbers, script: answer.script }
      : changed(root).length ? null : rec.built;  // a prebuilt step: the defaults' record, or ask Python
    showScript(root);
  }

  /** The record of what the calculator shows, asking Python for it if a prebuilt step is shown. */
  async function current(root) {
    const rec = recordOf(root);
    if (rec.current) return rec.current;
    const form = formOf(root);
    const inputs = {};
    for (const el of form.elements) if (el.name) inputs[el.name] = el.value;
    const hub = window.chapter2Hub ? window.chapter2Hub.records(form, inputs) : null;
    const answer = await window.chapter2.calc(root.dataset.calculator, inputs, { hub });
    if (!answer.ok) throw new Error(answer.message);
    rec.current = { inputs: answer.inputs, numbers: answer.numbers, script: answer.script };
    return rec.current;
  }

  // ------------------------------------------------------------ export: CSV and JSON
  /** The results as the page shows them: {label: text} (a bar chart: [[label, value]]); charts are drawings. */
  function shownResults(root) {
    const { labels } = recordOf(root);
    const out = {};
    for (const dd of root.querySelectorAll("[data-output]")) {
      const label = labels[dd.dataset.output] || dd.dataset.output;
      if (dd.dataset.kind === "bars") {
        out[label] = [...dd.querySelectorAll(".c2-bar")].map((b) => [b.querySelector(".c2-bar__label").textContent, +b.dataset.value]);
      } else if (dd.dataset.kind !== "chart") out[label] = dd.textContent;
    }
    return out;
  }

  /** {column: value}: the inputs by their columns ("context (tokens)"), as Python parsed them. */
  function inputColumns(rec, inputs) {
    return Object.fromEntries(Object.entries(inputs).map(([k, v]) => [rec.columns[k] || k, v]));
  }

  async function exported(root) {
    const rec = recordOf(root);
    const now = await current(root);
    const { url } = await link([root], `#${root.id}`, false);
    return { calculator: root.dataset.calculator, title: rec.title, link: url, inputs: inputColumns(rec, now.inputs),
             results: shownResults(root), numbers: now.numbers };
  }

  const cell = (v) => {
    const text = v === null || v === undefined ? "" : typeof v === "string" ? v : Array.isArray(v) ? JSON.stringify(v) : String(v);
    return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  };

  /** One header row and one row of values: every input ("inputs.context (tokens)") and number ("numbers.kv_cache (B)"). */
  function csv(data) {
    const columns = [...Object.keys(data.inputs).map((k) => [`inputs.${k}`, data.inputs[k]]),
                     ...Object.keys(data.numbers).map((k) => [`numbers.${k}`, data.numbers[k]])];
    return columns.map(([k]) => cell(k)).join(",") + "\r\n" + columns.map(([, v]) => cell(v)).join(",") + "\r\n";
  }

  function download(filename, type, text) {
    const url = URL.createObjectURL(new Blob([text], { type }));
    const a = document.createElement("a");
    a.href = url;
    a.download = filename;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 0);
  }

  async function exportAs(root, kind, button) {
    note(root, "export", kind === "csv" ? "Preparing the CSV…" : "Preparing the JSON…");
    try {
      const data = await exported(root);
      const name = root.dataset.calculator;
      if (kind === "csv") download(`${name}.csv`, "text/csv", csv(data));
      else download(`${name}.json`, "application/json", JSON.stringify(data, null, 2) + "\n");
      note(root, "export", `Downloaded ${name}.${kind}: ${Object.keys(data.inputs).length} inputs, ` +
        `${Object.keys(data.numbers).length} numbers at full precision.`);
    } catch (err) {
      note(root, "export", `Could not export: ${err.message}.`);
    } finally {
      button.dataset.exports = String((+button.dataset.exports || 0) + 1);  // handled (tests wait on it)
    }
  }

  // ------------------------------------------------------------ copy as Python
  function showScript(root) {
    const panel = root.querySelector(".c2-share__python");
    const pre = root.querySelector("[data-python-script]");
    if (!panel || !pre) return;
    const rec = recordOf(root);
    if (rec.current) {
      if (pre.textContent !== rec.current.script) pre.textContent = rec.current.script;
      pre.dataset.state = "current";
    } else {
      pre.dataset.state = "stale";  // a prebuilt step: the script for it comes from Python when shown
      if (!panel.hidden) current(root).then(() => showScript(root), () => {});
    }
  }

  async function copyPython(root, button) {
    const panel = root.querySelector(".c2-share__python");
    panel.hidden = false;
    button.setAttribute("aria-expanded", "true");
    try {
      const rec = await current(root);
      showScript(root);
      const copied = await copyText(rec.script);
      note(root, "copy", copied ? "Python script copied: it prints these results with the chapter2 wheel."
        : "Select the script below to copy it.");
    } catch (err) {
      note(root, "copy", `The script could not be made: ${err.message}.`);
    } finally {
      button.dataset.copies = String((+button.dataset.copies || 0) + 1);
    }
  }

  // ------------------------------------------------------------ binding
  function bindCalculator(root) {
    if (bound.has(root)) return;
    bound.add(root);
    const form = formOf(root);
    if (!form) return;
    for (const type of ["input", "change"]) form.addEventListener(type, scheduleWrite);
    recordOf(root);
    root.addEventListener("chapter2:painted", (event) => painted(root, event.detail));
    const button = root.querySelector('[data-share="link"]');
    if (button) button.addEventListener("click", () => { copyLink(root, button).catch(() => {}); });
    for (const kind of ["csv", "json"]) {
      const b = root.querySelector(`[data-share="${kind}"]`);
      if (b) b.addEventListener("click", () => exportAs(root, kind, b));
    }
    const python = root.querySelector('[data-share="python"]');
    if (python) python.addEventListener("click", () => copyPython(root, python));
    const fields = linked(root.dataset.calculator, location.search);
    if (fields) {
      openAround(root);
      // once the loader has handed over and played again what the reader did meanwhile: the link's inputs win
      const loaded = window.chapter2 && window.chapter2.load ? window.chapter2.load() : Promise.resolve();
      loaded.then(() => restore(root, fields))
        .catch((err) => note(root, "restore", `The link's inputs could not be set: ${err.message}.`));
    }
  }

  function bind(scope) {
    const roots = [...(scope || document).querySelectorAll("[data-calculator]")];
    if (scope && scope.matches && scope.matches("[data-calculator]")) roots.unshift(scope);
    roots.forEach(bindCalculator);
  }

  // Back or Forward between the anchors of the page bound now: the entry returned to holds the inputs of when it was
  // left; the address follows the inputs shown. (To another page: its content is swapped in and its calculators
  // restored from that address by bind.) A popstate the head's guard kept from Material reaches no listener after
  // it; the guard says so with chapter2:popstate (docs/hooks/build_site.py, POPSTATE_GUARD).
  const followHistory = () => {
    if (location.pathname === document.documentElement.dataset.c2Page && pageRoots().length) scheduleWrite();
  };
  for (const type of ["popstate", "chapter2:popstate"]) window.addEventListener(type, followHistory);

  window.chapter2Share = { bind, URL_LIMIT };
  // Only where the core ran (it sets lanes): when it could not load, the loader says so and offers to try again,
  // which loads this file again. Bound now, before the loader plays again the presses it held (Copy link, CSV, ...);
  // a link's inputs are restored once it has (bindCalculator), so that they are the last word. On every page
  // instant navigation swaps in too (runtime.js's onPage): a link to another page that carries its calculators'
  // inputs restores them there.
  if (window.chapter2 && window.chapter2.lanes) window.chapter2.onPage("share", () => bind(document));
})();
