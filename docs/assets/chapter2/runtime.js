/* chapter2 in-browser runtime: the loader, the only part every page carries.
 *
 * Until a reader shows interest in a calculator or a snippet (pointer over it, focus, touch, a key),
 * or a calculator comes into view, a page loads nothing of the runtime but this file. On that first sign it loads, in order,
 * assets/chapter2/config.js (the site's Python files and their hashes), charts.js, hub.js (a calculator's Hub
 * model id, looked up only when the reader asks), runtime-core.js (the workers, the calculators, the snippets)
 * and share.js (a calculator's inputs in the page's URL), and the core starts the Python worker at once. A page
 * opened from a link that carries a calculator's inputs loads them at once (fromLink).
 * A calculator scrolling into view starts the calculators' worker only (not the snippets'), in the
 * background, so a changed input usually finds Python ready; not when navigator.connection asks to save
 * data or is slow (saveData, or effectiveType slow-2g/2g/3g): there only a sign of interest loads it.
 *
 * Nothing the reader does meanwhile is lost: a form submit is held back (it would reload the page), and
 * the last input/change of each field and every button press inside a calculator or snippet are played
 * again once the core has set up its listeners (an Enter in a Hub id field counts as a press of its Look up).
 * If the core cannot be loaded (offline, blocked), the status line of what the reader touched says so, with a
 * button to try again.
 *
 * window.chapter2 is made here and completed by runtime-core.js (its comment has the whole contract):
 * load() resolves once the core runs; run/exec/calc/restart/retry and `ready` wait for it; settings set
 * before then (timeoutMs, clock, ...) are kept.
 *
 * Every page script binds through chapter2.onPage(name, bind). The site turns on Material's instant navigation
 * (navigation.instant): a click on a link to another page of the site fetches that page and swaps its content
 * into this document instead of loading a new one, so the workers, and the Python started in them, live on
 * from page to page. What a script set up on the old content went with it: onPage calls bind() once the page's
 * DOM is there (Material's document$, at DOMContentLoaded) and again after every swap, and at once when the
 * name is registered after that. bind must be idempotent: it sets up what it has not seen (a WeakSet or a data-
 * mark per element), since it runs again on content it already bound when a script registers mid-page. A name
 * registered twice keeps the first (a page script that ran again). After each round of binds,
 * <html data-c2-page> holds the page's path and data-c2-pages counts the pages bound in this document
 * (what tests wait on; a new document starts again at 1); data-c2-clicks counts the clicks taken here.
 *
 * Material takes a click only when the link's URL is in the site's sitemap.xml, as written for site_url's host
 * name, port and path; this site sets no site_url (its sitemap is empty) so that it works under any path
 * (GitHub Pages serves it under /<repo>/) and on any port. So a click on a link to another page under this
 * site's root that Material left alone is handed to Material's own pipeline here (the same history entries
 * it writes, then its location$), and everything after that is Material's: the fetch, the swap, scrolling to
 * the link's anchor, Back and Forward (popstate), and a full load when the fetch fails. A link to an anchor of
 * this page is the browser's, with the address's query kept (anchorHere), and until Material has navigated this
 * document the head's guard keeps the popstates within the loaded page from it (docs/hooks/build_site.py).
 */
(function () {
  "use strict";
  const here = new URL("./", document.currentScript.src);  // assets/chapter2/
  const CORE = ["config.js", "charts.js", "hub.js", "runtime-core.js", "share.js"];  // run in this order
  const ROOTS = "[data-calculator], [data-snippet]";
  const SIGNS = ["pointerover", "focusin", "touchstart", "keydown", "input", "change", "click", "submit"];
  const touched = [];  // roots that showed interest before the core ran, in order
  const held = new Map();  // "input"/"change" per field (the last one), and button presses: to play again
  let loading = null;
  let handOver = null;
  // Binds registered while the core loads (charts.js, hub.js, runtime-core.js, share.js run one by one) wait for
  // the hand-over: until then `interest` still holds each press to replay it, so a press that met a bound button
  // would count twice (a stepper moved two steps for one tap).
  let deferred = null;

  function inject(name) {
    return new Promise((resolve, reject) => {
      const s = document.createElement("script");
      s.src = new URL(name, here).href;
      s.async = false;  // executed in insertion order
      s.onload = resolve;
      s.onerror = () => { s.remove(); reject(new Error(`could not load ${s.src} (offline, or blocked?)`)); };
      document.head.append(s);
    });
  }

  function load() {
    if (loading) return loading;
    const domReady = document.readyState === "loading"
      ? new Promise((r) => document.addEventListener("DOMContentLoaded", r, { once: true })) : Promise.resolve();
    loading = domReady.then(() => { deferred = deferred || []; return Promise.all(CORE.map(inject)); }).then(() => {
      if (!handOver) throw new Error("runtime-core.js ran without handing over");
      // from here on the core listens for itself: the page stops watching every pointer move and key
      for (const type of SIGNS) document.removeEventListener(type, interest, { capture: true });
      bindDeferred();
      handOver(touched.splice(0));
      for (const [target, type] of held.values()) {
        if (type === "click") target.click();
        else target.dispatchEvent(new Event(type, { bubbles: true }));
      }
      held.clear();
    });
    loading.catch((err) => {
      bindDeferred();  // the page's other scripts bind anyway
      loading = null;  // a later sign of interest, or the button, tries again
      for (const root of touched) showFailure(root, err);
    });
    return loading;
  }

  function showFailure(root, err) {
    const status = root.querySelector("[data-calc-status], [data-snippet-status]");
    if (!status) return;
    const button = document.createElement("button");
    button.type = "button";
    button.className = "md-button c2-load__retry";
    button.dataset.action = "retry";
    button.textContent = "Try again";
    button.addEventListener("click", () => { load().catch(() => {}); });
    status.replaceChildren(`The calculator runtime could not load: ${err.message}. `, button);
  }

  function interest(event) {
    const root = event.target instanceof Element && event.target.closest(ROOTS);
    if (!root) return;
    if (event.type === "submit") event.preventDefault();
    if (event.type === "input" || event.type === "change") held.set(event.target, [event.target, event.type]);
    if (event.type === "click") {
      const button = event.target.closest("button");
      if (button && button.dataset.action !== "retry") held.set(Symbol("click"), [button, "click"]);
    }
    // Enter in a Hub id field asks for its lookup (hub.js, once bound): held as a press of its Look up button
    const hub = event.type === "keydown" && event.key === "Enter" && event.target.closest(".c2-hub");
    const lookup = hub && hub.querySelector("[data-hub-lookup]");
    if (lookup) {
      event.preventDefault();  // (no implicit submission meanwhile)
      held.set(Symbol("enter"), [lookup, "click"]);
    }
    if (!touched.includes(root)) touched.push(root);
    load().catch(() => {});
  }

  for (const type of SIGNS) document.addEventListener(type, interest, { capture: true, passive: type !== "submit" && type !== "keydown" });

  // ------------------------------------------------------------ every page: onPage, instant navigation
  const binders = new Map();  // name -> bind, in registration order
  let pageReady = false;
  let pages = 0;

  function runBind(bind) {
    try { bind(); } catch (err) { setTimeout(() => { throw err; }); }  // one script's bug stops no other
  }

  function onPage(name, bind) {
    if (binders.has(name)) return false;
    binders.set(name, bind);
    if (deferred) deferred.push(bind);
    else if (pageReady) runBind(bind);
    return true;
  }

  function bindDeferred() {
    const binds = deferred || [];
    deferred = null;
    if (pageReady) binds.forEach(runBind);  // (before the page is ready, eachPage runs every bind)
  }

  function eachPage() {
    pageReady = true;
    for (const bind of binders.values()) runBind(bind);
    document.documentElement.dataset.c2Page = location.pathname;
    document.documentElement.dataset.c2Pages = String(++pages);
    landOnAnchor();
  }

  const siteRoot = new URL("../../", here);
  function instantOn() {
    try {
      const config = JSON.parse(document.getElementById("__config").textContent);
      return config.features.includes("navigation.instant") && !!window.location$ && location.protocol !== "file:";
    } catch (e) { return false; }
  }
  const instant = instantOn();

  let clicks = 0;
  // Whether Material has seen a location in this document (chapter2.navigated): until then the guard that every
  // page's <head> carries (docs/hooks/build_site.py, POPSTATE_GUARD) keeps a popstate within the loaded page from
  // Material, which would fetch this very page and swap it in again.
  let navigated = false;
  if (instant) window.location$.subscribe(() => { navigated = true; });
  let landing = null;  // the URL of a click taken here, while its page is on its way

  // A click taken here on a link with an anchor lands on it. Material scrolls to the anchor of a new history entry
  // (its state null), but it also writes the scroll position into the current entry 100 ms after the last scroll:
  // a click within 100 ms of a scroll (a reader clicking while the page still glides) gets that position written
  // into the new entry, and Material then restores it instead. So, in the frame after Material's scroll, the
  // anchor is followed again as Material follows it (a click on a detached link to the same anchor: the browser
  // scrolls to it with its :target margin, and writes no history entry for the URL it is already at).
  function landOnAnchor() {
    const url = landing;
    landing = null;
    if (!url || !url.hash || location.pathname !== url.pathname || location.hash !== url.hash) return;
    requestAnimationFrame(() => {
      if (location.href !== url.href) return;  // the reader moved on
      followHash(url.hash);
    });
  }

  /** Follows `hash` as a fragment of the current address (its query kept): a click on a detached relative link,
   * so the browser scrolls with its :target margin and writes a history entry only if the hash changes. */
  function followHash(hash) {
    const a = document.createElement("a");
    a.href = hash;
    a.click();
  }

  /** A plain link of this origin (an <a>, opening here, not a download): its URL, else null. */
  function sameOriginLink(a) {
    if (!(a instanceof HTMLAnchorElement) || a.target || a.hasAttribute("download")) return null;
    const url = new URL(a.href);
    return url.origin === location.origin ? url : null;
  }

  /** A link to another page of this site (not a file, not this page): the URL, else null. */
  function pageLink(a) {
    const url = sameOriginLink(a);
    if (!url || !url.pathname.startsWith(siteRoot.pathname)) return null;
    if (url.pathname === location.pathname) return null;  // an anchor on this page (anchorHere, else the browser's)
    if (/\.[^/]*$/.test(url.pathname) && !url.pathname.endsWith(".html")) return null;  // a figure, a download
    return url;
  }

  // An anchor of this page keeps the address's query (a calculator's inputs, written by share.js). Material writes
  // every link of a page as an absolute URL without a query, so a click on a table-of-contents entry while the
  // address carried ?kv_cache=... went to another URL: the browser loaded the page again without the inputs (and
  // Back loaded it once more). Such a link is followed here as a fragment of the address the reader is at.
  function anchorHere(a) {
    const url = location.search ? sameOriginLink(a) : null;
    if (!url || url.pathname !== location.pathname || url.search || !url.hash) return null;
    return url.hash;
  }

  document.addEventListener("click", (event) => {
    if (!instant || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const a = event.target instanceof Element ? event.target.closest("a[href]") : null;
    const hash = anchorHere(a);
    if (hash) {
      event.preventDefault();
      followHash(hash);
      return;
    }
    const url = pageLink(a);
    if (!url) return;
    event.preventDefault();
    history.replaceState({ x: Math.max(0, scrollX), y: Math.max(0, scrollY) }, "");  // where Back returns to
    history.pushState(null, "", url.href);
    landing = url;
    window.location$.next(url);  // Material fetches the page and swaps it in (a full load if that fails)
    document.documentElement.dataset.c2Clicks = String(++clicks);  // taken here, not by Material (tests)
  });

  // A link that carries a calculator's inputs (?NAME=..., written by share.js): the block around that calculator
  // opens (a workbench), the page goes back to the link's anchor (the block moved it), and the core loads at once
  // to restore the inputs and compute them.
  function fromLink() {
    const names = new Set(location.search.slice(1).split("&").map((p) => p.split("=")[0]));
    const roots = [...document.querySelectorAll("[data-calculator]")].filter((el) => names.has(el.dataset.calculator));
    if (!roots.length) return;
    for (const root of roots) {
      for (let d = root.closest("details"); d; d = d.parentElement && d.parentElement.closest("details")) d.open = true;
      if (!touched.includes(root)) touched.push(root);
    }
    let target = null;
    try { target = location.hash && document.getElementById(decodeURIComponent(location.hash.slice(1))); } catch (e) { /* a bad hash */ }
    if (target) target.scrollIntoView();
    load().catch(() => {});
  }
  onPage("link", fromLink);  // also a page swapped in from such a link

  const link = navigator.connection || {};
  if (!link.saveData && !/^(slow-2g|2g|3g)$/.test(link.effectiveType || "") && window.IntersectionObserver) {
    let warmed = false;
    const seen = new IntersectionObserver((entries) => {
      const entry = entries.find((e) => e.isIntersecting);
      if (!entry) return;
      warmed = true;
      seen.disconnect();  // once: the calculators share one worker, which lives on from page to page
      const lane = window.chapter2.lanes && window.chapter2.lanes.calc;  // set once the core runs
      if (lane) { if (lane.state === "idle") lane.start().catch(() => {}); return; }
      if (!touched.includes(entry.target)) touched.push(entry.target);
      load().catch(() => {});
    });
    onPage("warm", () => {  // this page's calculators, until one has been seen on some page
      if (warmed) return;
      seen.disconnect();
      document.querySelectorAll("[data-calculator]").forEach((el) => seen.observe(el));
    });
  }

  const notYet = (name) => (...args) => load().then(() => api[name](...args));
  const api = {
    load,
    onPage,
    get ready() { return load().then(() => api.ready); },
    get state() { return "idle"; },
    get navigated() { return navigated; },
    run: notYet("run"),
    exec: notYet("exec"),
    calc: notYet("calc"),
    restart: notYet("restart"),
    retry: notYet("retry"),
    _loaded(fn) { handOver = fn; },  // runtime-core.js: how it learns what happened before it ran
  };
  window.chapter2 = api;

  // Material's document$ emits at DOMContentLoaded and after every swap (without Material: the DOM, once)
  if (window.document$ && typeof window.document$.subscribe === "function") window.document$.subscribe(eachPage);
  else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", eachPage, { once: true });
  else eachPage();
})();
