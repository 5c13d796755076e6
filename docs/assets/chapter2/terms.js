/* Glossary terms on a touch screen. The first use of each term on a page links to its glossary entry and
 * carries its definition as a title (docs/hooks/glossary_links.py), which Material's tooltips
 * (content.tooltips) show on hover and on keyboard focus. A tap is not a hover: it would follow the link at
 * once. So the first tap on a term's link only focuses it, which shows the definition; a second tap on the
 * same link follows it. A mouse click follows the link as usual. (An abbreviation needs nothing: a tap
 * gives it the hover that shows its tooltip.) The listeners are the document's, so they serve every page
 * instant navigation swaps in; the first tap also stops there, so that instant navigation does not follow it. */
(function () {
  "use strict";
  let touch = false;
  let shown = null;
  document.addEventListener("pointerdown", (event) => { touch = event.pointerType !== "mouse"; }, true);
  document.addEventListener("click", (event) => {
    const link = event.target instanceof Element ? event.target.closest("a.c2-term") : null;
    if (!link || !touch || link === shown) {
      shown = null;
      return;
    }
    event.preventDefault();
    event.stopPropagation();
    shown = link;
    link.focus();
  }, true);
})();
