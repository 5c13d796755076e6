/* chapter2 live charts: the page side.
 *
 * The charts are drawn in Python (chapter2.charts.render), at build time into the page and, after an
 * input change, in the worker by calculators.compute_json: the runtime (runtime.js) hands each chart
 * output's HTML fragment to window.chapter2Charts.update(dd, html), which swaps it in. Nothing is
 * drawn here, so the build-time and the recomputed drawings come from one renderer.
 *
 * Also here: a calculator's on-request button ([data-calc-action="module:function"], e.g. "Measure
 * this device"): on click it runs that function in Python, puts the {field: value} it returns into the
 * form and lets the calculator recompute. It never runs on page load.
 */
(function () {
  "use strict";

  function update(dd, html) {
    // The fragment is built by chapter2.charts from numbers and escaped labels (no scripts, no styles).
    dd.innerHTML = html;
  }

  function setupAction(button) {
    const root = button.closest("[data-calculator]");
    const form = root.querySelector("form");
    const status = root.querySelector("[data-calc-action-status]");
    const call = button.dataset.calcAction;
    const m = /^([A-Za-z_][\w.]*):([A-Za-z_]\w*)$/.exec(call);
    if (!m) return;
    const code = `import importlib\nimportlib.import_module(${JSON.stringify(m[1])}).${m[2]}()`;
    const label = button.textContent;
    button.addEventListener("click", async () => {
      const api = window.chapter2;
      button.disabled = true;
      button.textContent = button.dataset.busy || "Running…";
      try {
        if (api.state !== "ready") {
          if (status) status.textContent = "Loading Python first…";
          await api.ready;
        }
        if (status) status.textContent = "";
        const t0 = performance.now();
        const values = await api.run(code);
        for (const [name, value] of Object.entries(values)) {
          if (form.elements[name]) form.elements[name].value = String(value);
        }
        form.dispatchEvent(new Event("change", { bubbles: true }));
        if (status) status.textContent = `Done in your browser in ${Math.round(performance.now() - t0)} ms.`;
      } catch (err) {
        if (status) status.textContent = "Could not run: " + err.message;
      } finally {
        button.disabled = false;
        button.textContent = label;
      }
    });
  }

  function init() {
    document.querySelectorAll("[data-calc-action]").forEach(setupAction);
  }

  window.chapter2Charts = { update };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
