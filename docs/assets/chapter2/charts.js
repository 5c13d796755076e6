/* chapter2 live charts: the page side.
 *
 * The charts and the bars are drawn in Python (chapter2.charts.render and render_bars), at build time into
 * the page and, after an input change, in the worker by calculators.compute_json: the runtime
 * (runtime-core.js) hands each chart or bars output's HTML fragment to window.chapter2Charts.update(dd, html),
 * which swaps it in. Nothing is drawn here, so the build-time and the recomputed drawings come from one
 * renderer.
 *
 * Also here: the steppers' controls. A step slider (a range field with stepper=True) has a Back and a
 * Forward button ([data-step="-1" | "1"], aria-controls naming the slider), and a long one −10 and +10
 * ([data-step="-10" | "10"]): a press moves the slider by that many steps (within its range) and fires its
 * input event, so the calculator recomputes as after a drag or an arrow key. A
 * button at the end of the range is marked aria-disabled (it stays focusable; a press does nothing). A
 * slider with data-max-from="FIELD" takes that field's value as its max whenever the field changes
 * (the browser then clamps the slider's value), before the calculator recomputes.
 *
 * And: a calculator's on-request button ([data-calc-action="module:function"], e.g. "Measure
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

  function setupStepper(slider) {
    const form = slider.form;
    const shown = form.querySelector(`output[data-field-value="${slider.name}"]`);
    const buttons = [...form.querySelectorAll(`button[data-step][aria-controls="${slider.id}"]`)];
    const ends = () => {
      for (const b of buttons) {
        const atEnd = +b.dataset.step < 0 ? +slider.value <= +slider.min : +slider.value >= +slider.max;
        b.setAttribute("aria-disabled", String(atEnd));
      }
    };
    const moved = () => {
      if (shown) shown.textContent = slider.value;
      ends();
      slider.dispatchEvent(new Event("input", { bubbles: true }));
    };
    for (const b of buttons) {
      b.addEventListener("click", () => {
        const before = slider.value;
        const to = +slider.value + +b.dataset.step * (+slider.step || 1);  // ±1 or ±10 steps, kept within the range
        slider.value = String(Math.min(+slider.max, Math.max(+slider.min, to)));
        if (slider.value !== before) moved();
        b.dataset.presses = String((+b.dataset.presses || 0) + 1);  // handled (tests wait on it, not on a timer)
      });
    }
    let wanted = +slider.value;  // the step the reader chose; a smaller max only hides it for a while
    slider.addEventListener("input", () => { wanted = +slider.value; ends(); });
    const source = slider.dataset.maxFrom && form.elements[slider.dataset.maxFrom];
    if (source) {
      const follow = () => {
        const top = Number(String(source.value).trim().replace(/[_,]/g, ""));
        if (!Number.isInteger(top) || top < +slider.min) return;  // a bad value: the calculator says why
        slider.max = String(top);
        slider.value = String(Math.min(wanted, top));  // the browser keeps it within [min, max]
        if (shown) shown.textContent = slider.value;
        ends();
      };
      // on the field itself, so it runs before the form's listener recomputes with the slider's value
      source.addEventListener("input", follow);
      source.addEventListener("change", follow);
    }
    ends();
  }

  const bound = new WeakSet();
  const once = (setup) => (el) => { if (!bound.has(el)) { bound.add(el); setup(el); } };

  window.chapter2Charts = { update };
  // this page's buttons and step sliders, and those of every page instant navigation swaps in (runtime.js)
  window.chapter2.onPage("charts", () => {
    document.querySelectorAll("[data-calc-action]").forEach(once(setupAction));
    document.querySelectorAll(".c2-calc__field--stepper input[type=range]").forEach(once(setupStepper));
  });
})();
