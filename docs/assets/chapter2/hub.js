/* chapter2: a calculator's Hugging Face model id (field "model_id"), looked up only when the reader asks.
 * A calculator that compares two choices (calculators/_compare.py) has a second one, B's ("model_id_b"), with
 * its own Look up button and its own record.
 *
 * Loaded with the runtime's core (runtime.js), before runtime-core.js. A calculator whose form has a model id
 * field has a Look up button beside it ([data-hub-lookup], with the lookup's kind: "llm" or "pipeline"); the
 * build leaves both out of a site built with the Hub turned off (extra.hub: false, CHAPTER2_HUB=off).
 *
 * Nothing is fetched while the reader types: typing in the field does not recompute the calculator. Look up
 * (the button, or Enter in the field) runs the lookup that chapter2.hub.plan describes, in the calculators'
 * worker: Python says which files or byte ranges it needs, this page fetches them from the Hub with the
 * browser's fetch (so the page's Content-Security-Policy applies: connect-src names the Hub's hosts and no
 * other), Python reads what came back and asks for more, until it has a record (the config.json text and the
 * checkpoint's summed safetensors headers) or an error, which is shown under the field. A range request the
 * server answers with the whole file is cut off after the bytes asked for.
 *
 * window.chapter2Hub.records(form, inputs): the records to send with a recompute of that form ({id: record}, for
 * each model id field in `inputs`), called by runtime-core.js; an id typed but not looked up yet is sent as ""
 * (the calculator then uses the pasted config or the select, as before), so a half-typed id never blocks the
 * other inputs.
 */
(function () {
  "use strict";
  const FIELDS = ["model_id", "model_id_b"];  // A's id, and B's where the calculator compares two choices
  const MAX_FILE = 100 * 1000 * 1000;  // the safetensors format's own limit on a header; a config is far smaller
  const looked = new WeakMap();  // model id input -> {typed, id, record}

  const api = () => window.chapter2;

  function toBase64(bytes) {
    let text = "";
    for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
    return btoa(text);
  }

  /** One request of the lookup: {key, url, range} -> {status, body (base64), error_code}; status 0 when no answer
   * came (offline, blocked, refused by the page's policy). */
  async function fetchOne(req) {
    const headers = req.range ? { Range: req.range } : {};
    let response;
    try {
      response = await fetch(req.url, { headers, mode: "cors", credentials: "omit", redirect: "follow", cache: "no-store" });
    } catch (err) {
      return { status: 0, body: "", error_code: "" };
    }
    const code = response.headers.get("X-Error-Code") || "";
    if (!response.ok) return { status: response.status, body: "", error_code: code };
    const want = req.range ? Number(req.range.split("-")[1]) - Number(req.range.split("=")[1].split("-")[0]) + 1 : MAX_FILE;
    const chunks = [];
    let got = 0;
    const reader = response.body.getReader();
    try {
      while (got < want) {
        const part = await reader.read();
        if (part.done) break;
        chunks.push(part.value);
        got += part.value.length;
      }
    } catch (err) {
      return { status: 0, body: "", error_code: "" };
    } finally {
      reader.cancel().catch(() => {});  // a server that ignored the range: stop after the bytes asked for
    }
    const bytes = new Uint8Array(Math.min(got, want));
    let at = 0;
    for (const c of chunks) {
      const take = c.subarray(0, Math.min(c.length, bytes.length - at));
      bytes.set(take, at);
      at += take.length;
      if (at >= bytes.length) break;
    }
    return { status: response.status, body: toBase64(bytes), error_code: code };
  }

  async function lookup(input, button, status, kind) {
    const typed = input.value;
    if (!typed.trim()) {  // an empty id: back to the pasted config or the select
      looked.delete(input);
      status.textContent = "";
      input.removeAttribute("aria-invalid");
      input.dispatchEvent(new Event("change", { bubbles: true }));
      return;
    }
    button.disabled = true;
    status.dataset.state = "busy";
    status.textContent = `Looking ${typed.trim()} up on the Hub…`;
    const replies = {};
    let fetched = 0;
    try {
      for (;;) {
        const step = await api().hubStep(typed, kind, replies);
        if (step.error) throw Object.assign(new Error(step.error), { hub: true });
        if (step.record) {
          looked.set(input, { typed, id: step.record.id, record: step.record });
          status.dataset.state = "done";
          const ck = step.record.checkpoint;
          status.textContent = `Fetched ${step.record.id} from the Hub (${fetched} requests)` +
            (kind === "llm" ? (ck ? `: config.json and ${ck.files.length} safetensors header${ck.files.length === 1 ? "" : "s"}.` : `: config.json; ${step.record.note}`)
              : `: model_index.json and the config.json of ${Object.keys(step.record.components).sort().join(", ") || "no component"}.`);
          input.removeAttribute("aria-invalid");
          input.dispatchEvent(new Event("change", { bubbles: true }));  // the calculator recomputes with it
          return;
        }
        status.textContent = `Looking ${typed.trim()} up on the Hub: ${step.fetch.map((r) => r.path + (r.range ? ` (${r.range})` : "")).join(", ")}…`;
        const answers = await Promise.all(step.fetch.map(fetchOne));
        step.fetch.forEach((r, i) => { replies[r.key] = answers[i]; });
        fetched += step.fetch.length;
      }
    } catch (err) {
      looked.delete(input);
      status.dataset.state = "error";
      status.textContent = err.hub ? err.message : `The lookup failed: ${err.message}`;
      input.setAttribute("aria-invalid", "true");
    } finally {
      button.disabled = false;
    }
  }

  function bind(root) {
    for (const button of root.querySelectorAll("[data-hub-lookup]")) bindField(button);
  }

  function bindField(button) {
    const field = button.closest(".c2-calc__field");
    const input = field && field.querySelector("input[type=text]");
    if (!input || !FIELDS.includes(input.name) || button.dataset.bound) return;
    button.dataset.bound = "true";
    const status = field.querySelector("[data-hub-status]");
    const kind = button.dataset.hubLookup || "llm";
    // typing an id recomputes nothing and fetches nothing: only Look up or Enter does
    input.addEventListener("input", (e) => e.stopPropagation());
    input.addEventListener("change", (e) => { if (!e.isTrusted) return; e.stopPropagation(); });
    input.addEventListener("keydown", (e) => {
      if (e.key === "Enter") { e.preventDefault(); button.click(); }
    });
    button.addEventListener("click", () => lookup(input, button, status, kind));
  }

  window.chapter2Hub = {
    records(form, inputs) {
      const found = {};
      for (const name of FIELDS.filter((n) => n in inputs && form.elements[n])) {
        const mine = looked.get(form.elements[name]);
        if (!mine || inputs[name] !== mine.typed) inputs[name] = "";
        else found[mine.id] = mine.record;
      }
      return Object.keys(found).length ? JSON.stringify(found) : null;
    },
  };

  // this page's calculators, and those of every page instant navigation swaps in (runtime.js)
  window.chapter2.onPage("hub", () => document.querySelectorAll("[data-calculator]").forEach(bind));
})();
