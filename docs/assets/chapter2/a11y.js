/* Keyboard access to scrollable boxes: a box that scrolls (a wide table in Material's wrapper, a
 * notebook's code cell or output, an equation wider than the column) gets tabindex="0" so it can be focused and scrolled with the arrow
 * keys (axe rule scrollable-region-focusable), as Material already does for its own code blocks.
 * Rechecked when the window is resized and when web fonts finish loading, since what overflows depends
 * on the width and the glyphs, and on every page instant navigation swaps in. Each check leaves data-c2-scrollables="checked" on <html> ("pending" while
 * fonts are still loading): what tests wait on instead of a timer. */
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
    document.documentElement.dataset.c2Scrollables = document.fonts && document.fonts.status === "loading" ? "pending" : "checked";
  }

  let timer = null;
  if (document.fonts) {
    document.fonts.addEventListener("loadingstart", () => { document.documentElement.dataset.c2Scrollables = "pending"; });
    document.fonts.addEventListener("loadingdone", () => setTimeout(update, 0));
  }
  window.addEventListener("resize", () => { clearTimeout(timer); timer = setTimeout(update, 150); });
  window.chapter2.onPage("a11y", () => {  // runtime.js: this page and every one swapped in
    document.documentElement.dataset.c2Scrollables = "pending";
    setTimeout(update, 0);
  });
})();
