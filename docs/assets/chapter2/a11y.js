/* Keyboard access to scrollable boxes: a box that scrolls (a wide table in Material's wrapper, a
 * notebook's code cell or output, an equation wider than the column) gets tabindex="0" so it can be focused and scrolled with the arrow
 * keys (axe rule scrollable-region-focusable), as Material already does for its own code blocks.
 * Rechecked when the window is resized, since what overflows depends on the width. */
(function () {
  "use strict";
  const SELECTOR = ".md-typeset__scrollwrap, .jupyter-wrapper pre, .md-typeset div.arithmatex";

  function update() {
    for (const el of document.querySelectorAll(SELECTOR)) {
      const scrolls = el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1;
      if (scrolls && !el.hasAttribute("tabindex")) {
        el.setAttribute("tabindex", "0");
        el.dataset.c2Focusable = "true";
      } else if (!scrolls && el.dataset.c2Focusable) {
        el.removeAttribute("tabindex");
        delete el.dataset.c2Focusable;
      }
    }
  }

  let timer = null;
  window.addEventListener("resize", () => { clearTimeout(timer); timer = setTimeout(update, 150); });
  if (window.document$ && typeof window.document$.subscribe === "function") window.document$.subscribe(() => setTimeout(update, 0));
  else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", update);
  else update();
})();
