/* Recall check (docs/hooks/recall.py renders the cards).
 *
 * Each card is a button with aria-expanded controlling its answer region; selecting it
 * shows or hides the answer. The first time an answer is shown on a day, the card is marked
 * seen. Progress lives in this browser's localStorage only (key below), never sent anywhere:
 *   { "version": 1, "cards": { "<card id>": "YYYY-MM-DD" (last seen, local date) } }
 * The status line shows the last review date and suggests coming back `data-review-days`
 * later (spaced repetition beats rereading).
 */
(function () {
  "use strict";
  // The page carries this script in its content: instant navigation runs it again on each visit; once is enough.
  if (window.chapter2Recall) return;
  window.chapter2Recall = true;
  const KEY = "chapter2.recall.v1";
  let shown = null;  // the cards on screen: {root, reload}

  function pad(n) { return String(n).padStart(2, "0"); }
  function isoDate(d) { return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`; }
  function fromIso(s) {
    const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(String(s));
    return m ? new Date(+m[1], +m[2] - 1, +m[3]) : null;
  }
  function addDays(s, days) { const d = fromIso(s); d.setDate(d.getDate() + days); return isoDate(d); }
  function human(s) { return fromIso(s).toLocaleDateString(undefined, { year: "numeric", month: "long", day: "numeric" }); }

  function load() {
    try {
      const data = JSON.parse(window.localStorage.getItem(KEY) || "null");
      if (data && data.version === 1 && data.cards && typeof data.cards === "object") {
        const cards = {};
        for (const [id, day] of Object.entries(data.cards)) if (fromIso(day)) cards[id] = day;
        return { ok: true, cards };
      }
      return { ok: true, cards: {} };
    } catch (err) {
      return { ok: false, cards: {} };  // storage blocked (privacy settings) or corrupt: start empty
    }
  }

  function save(cards) {
    try {
      window.localStorage.setItem(KEY, JSON.stringify({ version: 1, cards }));
      return true;
    } catch (err) {
      return false;
    }
  }

  function setup(root) {
    if (root.dataset.recallReady) return;
    root.dataset.recallReady = "true";
    const days = +root.dataset.reviewDays || 7;
    const status = root.querySelector("[data-recall-status]");
    const reset = root.querySelector("[data-recall-reset]");
    const cards = [...document.querySelectorAll("[data-recall-card]")];
    const ids = new Set(cards.map((c) => c.dataset.recallCard));
    let state = load();
    let storable = state.ok;

    function render() {
      const seen = Object.entries(state.cards).filter(([id]) => ids.has(id));
      const last = seen.map(([, day]) => day).sort().pop();
      for (const card of cards) {
        const day = state.cards[card.dataset.recallCard];
        const note = card.querySelector("[data-recall-seen]");
        card.classList.toggle("c2-recall__card--seen", !!day);
        note.hidden = !day;
        note.textContent = day ? `Seen ${day === isoDate(new Date()) ? "today" : "on " + human(day)}` : "";
      }
      reset.hidden = !seen.length;
      if (!storable) {
        status.textContent = "This browser does not let the page keep your progress; the cards still work.";
      } else if (!last) {
        delete root.dataset.lastReviewed;
        delete root.dataset.comeBack;
        status.textContent = `No cards seen yet in this browser (${cards.length} cards). Your progress is kept here only, never sent anywhere.`;
      } else {
        const back = addDays(last, days);
        root.dataset.lastReviewed = last;
        root.dataset.comeBack = back;
        const due = isoDate(new Date()) >= back;
        status.textContent = `Last reviewed ${human(last)}: ${seen.length} of ${cards.length} cards seen. ` +
          (due ? "A week or more has passed: a good time to go through the cards again."
               : `Come back after ${human(back)} to check what stayed with you.`);
      }
    }

    function toggle(card, button, answer) {
      const open = button.getAttribute("aria-expanded") !== "true";
      button.setAttribute("aria-expanded", String(open));
      answer.hidden = !open;
      card.classList.toggle("c2-recall__card--open", open);
      if (open) {
        state.cards[card.dataset.recallCard] = isoDate(new Date());
        storable = save(state.cards);
        render();
      }
    }

    for (const card of cards) {
      const button = card.querySelector("button[aria-controls]");
      const answer = document.getElementById(button.getAttribute("aria-controls"));
      button.addEventListener("click", () => toggle(card, button, answer));
    }
    reset.addEventListener("click", () => {
      state = { ok: true, cards: {} };
      try { window.localStorage.removeItem(KEY); storable = true; } catch (err) { storable = false; }
      render();
      status.focus();
    });
    status.tabIndex = -1;
    shown = { root, reload() { state = load(); render(); } };
    render();
  }

  // another tab of this site reviewed cards: show it here too
  window.addEventListener("storage", (e) => { if (e.key === KEY && shown && shown.root.isConnected) shown.reload(); });
  // runtime.js: this page, and every page instant navigation swaps in
  window.chapter2.onPage("recall", () => document.querySelectorAll("[data-recall]").forEach(setup));
})();
