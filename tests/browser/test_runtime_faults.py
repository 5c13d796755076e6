"""The runtime's state machine under faults, driven deterministically: a fake Worker and a manual clock.

A fake Worker class replaces the real one before the runtime's scripts run (an init script); each test drives it:
the worker "boots" when told, answers requests when told, crashes when told. Time limits are set small
through window.chapter2's settings and the runtime's clock is a manual one (window.__clock), so a time
limit or a boot stall fires exactly when the test advances the clock: no sleeps, no timing luck. The
test waits only on explicit events (window.__until(predicate), which the fake resolves as it changes).
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

FAKE = """(() => {
  const waiters = [];
  window.__notify = () => { waiters.splice(0).forEach((fn) => fn()); };
  // a safety net only (a failing test should fail, not hang): nothing waits on real time otherwise
  window.__until = (pred) => new Promise((resolve, reject) => {
    const check = () => (pred() ? resolve(true) : waiters.push(check));
    setTimeout(() => reject(new Error('never happened: ' + pred)), 30000);
    check();
  });
  window.__workers = [];
  const RealWorker = window.Worker;
  window.Worker = class FakeWorker {
    constructor(url, options) {
      if (!String(url).includes('assets/chapter2/worker.js')) return new RealWorker(url, options);  // Material's search
      this.url = url; this.sent = []; this.terminated = false; window.__workers.push(this); window.__notify();
    }
    postMessage(msg) { this.sent.push(msg); window.__notify(); }
    terminate() { this.terminated = true; window.__notify(); }
    get gen() { const init = this.sent.find((m) => m.kind === 'init'); return init ? init.config.gen : undefined; }
    // what a real worker would send; a stale (terminated) worker can still deliver messages already queued
    emit(data) { if (this.onmessage) this.onmessage({ data: { gen: this.gen, ...data } }); window.__notify(); }
    ready() { this.emit({ kind: 'ready', versions: { chapter2: '0.1.0', numpy: '2.0.2' }, timings: {} }); }
    request(i) { return this.sent.filter((m) => m.kind !== 'init')[i]; }
    started(i) { this.emit({ id: this.request(i).id, kind: 'started' }); }
    done(i, value) { this.emit({ id: this.request(i).id, kind: 'done', ok: true, value }); }
    crash(message) { if (this.onerror) this.onerror({ message, preventDefault() {} }); window.__notify(); }
  };
  window.__clock = {
    t: 0, timers: [], next: 1,
    setTimeout(fn, ms) { const id = this.next++; this.timers.push({ id, at: this.t + (ms || 0), fn }); return id; },
    clearTimeout(id) { this.timers = this.timers.filter((x) => x.id !== id); },
    now() { return this.t; },
    advance(ms) {
      this.t += ms;
      for (;;) {
        const due = this.timers.filter((x) => x.at <= this.t).sort((a, b) => a.at - b.at)[0];
        if (!due) break;
        this.timers = this.timers.filter((x) => x !== due);
        due.fn();
      }
      window.__notify();
    },
  };
  // settle every promise a test starts, so it can look at the outcome later: window.__results[key]
  window.__results = {};
  window.__track = (key, promise) => promise.then(
    (v) => { window.__results[key] = { ok: true, value: v }; window.__notify(); },
    (e) => { window.__results[key] = { ok: false, name: e.name, message: e.message }; window.__notify(); });
})();"""

# settings first (the core keeps what the loader's object already holds), then the core itself
SETUP = """(s) => { Object.assign(window.chapter2, s, { clock: window.__clock }); return window.chapter2.load(); }"""


@pytest.fixture
def fake(watched):
    watched.page.context.add_init_script(FAKE)
    page = watched.goto("neural-networks/")
    page.evaluate(SETUP, {"timeoutMs": 1000, "bootStallMs": 5000, "crashLimit": 3, "crashWindowMs": 60000})
    return page


def _js(page, code, arg=None):
    return page.evaluate(f"(arg) => {{ {code} }}", arg)


def _until(page, predicate: str):
    page.evaluate(f"() => window.__until(() => {{ return {predicate}; }})")


def _result(page, key):
    _until(page, f"'{key}' in window.__results")
    return page.evaluate("(k) => window.__results[k]", key)


def _pending(page, key) -> bool:
    return page.evaluate("(k) => !(k in window.__results)", key)


def test_a_time_limit_counts_only_the_requests_own_run(fake):
    page = fake
    _js(page, "__track('a', chapter2.run('long')); __track('b', chapter2.run('queued'));")
    _until(page, "__workers.length === 1 && __workers[0].gen !== undefined")
    _js(page, "__workers[0].ready();")
    _until(page, "__workers[0].request(0)")
    _js(page, "__workers[0].started(0); __clock.advance(900); __workers[0].done(0, 'a done');")
    assert _result(page, "a") == {"ok": True, "value": "a done"}
    _until(page, "__workers[0].request(1)")  # b is sent only now, and its own clock starts with its run
    _js(page, "__workers[0].started(1); __clock.advance(900);")
    assert _pending(page, "b"), "b was stopped before its own time limit: its wait behind a counted"
    _js(page, "__workers[0].done(1, 'b done');")
    assert _result(page, "b") == {"ok": True, "value": "b done"}
    assert page.evaluate("() => __workers.length") == 1 and page.evaluate("() => __workers[0].terminated") is False
    fake_clean = page.evaluate("() => window.chapter2.lanes.code.state")
    assert fake_clean == "ready"


def test_a_timeout_fails_only_its_request_and_the_others_move_to_the_new_worker(fake):
    page = fake
    _js(page, "__track('a', chapter2.run('while True: pass')); __track('b', chapter2.run('b')); __track('c', chapter2.run('c'));")
    _until(page, "__workers.length === 1 && __workers[0].gen !== undefined")
    _js(page, "__workers[0].ready();")
    _until(page, "__workers[0].request(0)")
    _js(page, "__workers[0].started(0); __clock.advance(1000);")
    a = _result(page, "a")
    assert a["ok"] is False and a["name"] == "TimeoutError" and "stopped after 1 s" in a["message"]
    _until(page, "__workers.length === 2")
    assert page.evaluate("() => __workers[0].terminated") is True
    assert page.evaluate("() => __workers[0].request(1)") is None, "b was never sent to the stopped worker"
    assert _pending(page, "b") and _pending(page, "c"), "the restart must not fail the requests that waited"
    _until(page, "__workers[1].gen !== undefined")
    _js(page, "__workers[1].ready();")
    _until(page, "__workers[1].request(0)")
    assert page.evaluate("() => __workers[1].request(0).code") == "b"
    _js(page, "__workers[1].started(0); __workers[1].done(0, 'b on the new worker');")
    _until(page, "__workers[1].request(1)")
    _js(page, "__workers[1].started(1); __workers[1].done(1, 'c on the new worker');")
    assert _result(page, "b") == {"ok": True, "value": "b on the new worker"}
    assert _result(page, "c") == {"ok": True, "value": "c on the new worker"}
    assert page.evaluate("() => window.chapter2.lanes.code.crashes.length") == 0, "a time limit is not a crash"


def test_a_request_waiting_for_on_demand_data_is_not_timed(fake):
    page = fake
    _js(page, "__track('a', chapter2.calc('prefill_decode', {}));")
    _until(page, "__workers.length === 1 && __workers[0].gen !== undefined")
    _js(page, "__workers[0].ready();")
    _until(page, "__workers[0].request(0)")
    _js(page, "const w = __workers[0], id = w.request(0).id; w.emit({ id, kind: 'paused' }); "
              "w.emit({ kind: 'progress', phase: 'data', steps: ['tiny model'], loaded: 1, total: 2 }); __clock.advance(5000);")
    assert _pending(page, "a"), "the download of the data a calculator needs is not part of its run time"
    # that download belongs to the request that asked for it: another calculator's status line does not show it
    status = page.locator('[data-calculator="activations"] [data-calc-status]')
    assert "tiny model" not in status.inner_text() and not status.locator(".c2-load__bar").count()
    _js(page, "const w = __workers[0]; w.started(0); __clock.advance(999); w.done(0, {ok: true, outputs: {}});")
    assert _result(page, "a")["ok"] is True


def test_a_boot_that_stalls_restarts_and_stale_handlers_do_nothing(fake):
    page = fake
    _js(page, "__track('ready', window.chapter2.ready); __track('a', chapter2.run('a'));")
    _until(page, "__workers.length === 1 && __workers[0].gen !== undefined")
    _js(page, "__workers[0].emit({ kind: 'progress', phase: 'download', steps: ['runtime'], loaded: 5, total: 10 }); __clock.advance(4999);")
    assert page.evaluate("() => __workers.length") == 1, "progress re-arms the stall timer"
    _js(page, "__clock.advance(1);")  # 5 s without progress: a stalled boot is a crash, and the runtime restarts
    _until(page, "__workers.length === 2")
    assert page.evaluate("() => __workers[0].terminated") is True
    _until(page, "__workers[1].gen !== undefined")
    old_gen, new_gen = page.evaluate("() => [__workers[0].gen, __workers[1].gen]")
    assert new_gen > old_gen
    # the old boot answers late: an error, a failure report, even "ready"; none of it may touch the new worker
    _js(page, "const w = __workers[0]; w.crash('late error of the old boot'); "
              "w.emit({ kind: 'boot-failed', error: 'old boot failed', download: false }); w.ready();")
    assert page.evaluate("() => [__workers[1].terminated, window.chapter2.lanes.code.state, __workers.length]") == [False, "loading", 2]
    assert _pending(page, "ready") and _pending(page, "a")
    _js(page, "__workers[1].ready();")
    assert _result(page, "ready") == {"ok": True, "value": True}
    _until(page, "__workers[1].request(0)")
    _js(page, "__clock.advance(600000);")  # any orphaned timer fires now; none may stop the working worker
    assert page.evaluate("() => [__workers[1].terminated, __workers.length, window.chapter2.lanes.code.state]") == [False, 2, "ready"]
    _js(page, "__workers[1].started(0); __workers[1].done(0, 42);")
    assert _result(page, "a") == {"ok": True, "value": 42}


def test_a_crash_fails_the_running_request_requeues_the_rest_and_three_crashes_stop_the_runtime(fake):
    page = fake
    _js(page, "__track('a', chapter2.run('crashes')); __track('b', chapter2.run('b'));")
    _until(page, "__workers.length === 1 && __workers[0].gen !== undefined")
    _js(page, "__workers[0].ready();")
    _until(page, "__workers[0].request(0)")
    _js(page, "__workers[0].started(0); __workers[0].crash('boom');")
    a = _result(page, "a")
    assert a["ok"] is False and a["name"] == "CrashError" and "boom" in a["message"]
    _js(page, "__clock.advance(0);")  # the first restart comes at once
    _until(page, "__workers.length === 2 && __workers[1].gen !== undefined")
    _js(page, "__workers[1].ready();")
    _until(page, "__workers[1].request(0)")
    _js(page, "__workers[1].started(0); __workers[1].done(0, 'b survived');")
    assert _result(page, "b") == {"ok": True, "value": "b survived"}

    # second crash: the restart waits (backoff), a third within the minute stops the runtime
    _js(page, "__workers[1].crash('boom 2'); __clock.advance(999);")
    assert page.evaluate("() => __workers.length") == 2, "backoff: no restart before 1 s"
    _js(page, "__clock.advance(1);")
    _until(page, "__workers.length === 3 && __workers[2].gen !== undefined")
    _js(page, "__track('c', chapter2.run('c')); __workers[2].crash('boom 3');")
    c = _result(page, "c")
    assert c["ok"] is False and c["name"] == "StoppedError" and "3 crashes" in c["message"]
    _js(page, "__clock.advance(600000);")
    assert page.evaluate("() => [__workers.length, window.chapter2.lanes.code.state]") == [3, "stopped"]
    d = page.evaluate("() => window.chapter2.run('d').then(() => 'ran', (e) => e.name)")
    assert d == "StoppedError", "a stopped runtime refuses at once, without restarting"

    # the page says so, with a button; the button starts a fresh runtime
    status = page.locator('[data-snippet="collapse_linear"] [data-snippet-status]')
    assert "stopped after 3 crashes" in status.inner_text()
    status.get_by_role("button", name="Try again").click()
    _until(page, "__workers.length === 4 && __workers[3].gen !== undefined")
    _js(page, "__workers[3].ready(); __track('e', chapter2.run('e'));")
    _until(page, "__workers[3].request(0)")
    _js(page, "__workers[3].started(0); __workers[3].done(0, 'back');")
    assert _result(page, "e") == {"ok": True, "value": "back"}


def test_crashes_spread_over_more_than_a_minute_never_stop_the_runtime(fake):
    page = fake
    _js(page, "__track('boot', window.chapter2.ready);")
    for i in range(5):
        _until(page, f"__workers.length === {i + 1} && __workers[{i}].gen !== undefined")
        _js(page, f"__workers[{i}].ready(); __clock.advance(61000); __workers[{i}].crash('rare crash'); __clock.advance(0);")
    _until(page, "__workers.length === 6")
    assert page.evaluate("() => window.chapter2.lanes.code.state") == "loading"


def test_fatal_errors_are_crashes_but_running_out_of_memory_is_not(fake):
    page = fake
    _js(page, "__track('oom', chapter2.run('huge')); __track('next', chapter2.run('next'));")
    _until(page, "__workers.length === 1 && __workers[0].gen !== undefined")
    _js(page, "const w = __workers[0]; w.ready();")
    _until(page, "__workers[0].request(0)")
    _js(page, "const w = __workers[0]; w.started(0); "
              "w.emit({ id: w.request(0).id, kind: 'done', ok: false, oom: true, error: 'MemoryError' });")
    oom = _result(page, "oom")
    assert oom["name"] == "OutOfMemoryError" and oom["message"].startswith("this run needed more memory than the browser allows")
    _until(page, "__workers.length === 2 && __workers[1].gen !== undefined")  # fresh memory, at once
    assert page.evaluate("() => [__workers[0].terminated, window.chapter2.lanes.code.crashes.length]") == [True, 0]
    _js(page, "__workers[1].ready();")
    _until(page, "__workers[1].request(0)")
    _js(page, "const w = __workers[1]; w.started(0); "
              "w.emit({ id: w.request(0).id, kind: 'done', ok: false, fatal: true, error: 'NoGilError: Attempted to use PyProxy when Python GIL not held' });")
    nxt = _result(page, "next")
    assert nxt["name"] == "CrashError" and "NoGilError" in nxt["message"]
    assert page.evaluate("() => window.chapter2.lanes.code.crashes.length") == 1
    _js(page, "__clock.advance(0);")
    _until(page, "__workers.length === 3")


def test_a_failed_boot_download_is_reported_with_a_button_and_no_restart_loop(fake):
    page = fake
    calc = page.locator('[data-calculator="activations"]')
    calc.locator('input[name="x"]').fill("1.5")
    _until(page, "__workers.length === 1 && __workers[0].gen !== undefined")
    _js(page, "__workers[0].emit({ kind: 'boot-failed', download: true, "
              "error: 'could not download http://example.invalid/pyodide.asm.wasm (offline, or blocked?)' });")
    status = calc.locator("[data-calc-status]")
    assert "could not download" in status.inner_text() and "offline" in status.inner_text()
    _js(page, "__clock.advance(600000);")
    assert page.evaluate("() => [__workers.length, window.chapter2.lanes.calc.state]") == [1, "failed"]
    assert calc.locator("[data-calc-message]").is_hidden(), "the status line explains it; no error on the inputs"
    status.get_by_role("button", name="Try again").click()
    _until(page, "__workers.length === 2 && __workers[1].gen !== undefined")
    _js(page, "__workers[1].ready();")
    _until(page, "__workers[1].request(0)")  # the calculator asks again by itself once Python is there
    assert page.evaluate("() => __workers[1].request(0).name") == "activations"
