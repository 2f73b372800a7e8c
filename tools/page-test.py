#!/usr/bin/env python3
"""The management page in a real browser: headless Chromium driven by selenium (chromedriver).

tools/page-test.py [--scanout .build/debug/scanout] [--fixtures .fixtures] [--screenshot docs/page.png]
                   [--load-limit-ms 300] [--keep]

Starts `scanout serve` headless on a free loopback port (no Unix socket, a scratch state
directory) playing .fixtures/counter.mp4 in a loop (a schedule's default, with an event years
away that plays counter_open_long.ts), opens http://127.0.0.1:PORT/ in Chromium at
1280x800, and fails unless:
  - the first load is under --load-limit-ms (Navigation Timing: the load event's end, from the
    navigation's start; every phase is printed);
  - the page shows what GET /state says (state, current item, repeat, output);
  - the event stream is read (an event is listed in the page's log);
  - the schedule is shown (the rule playing; the schedule in its editor), and saved back unchanged
    it is the same (GET /schedule);
  - the snapshot the page shows changes between two reads a second and a half apart (the clip
    moves), and has a text alternative;
  - a playlist replaced through the page's form takes effect: GET /state plays the new clip, and
    the page lists it;
  - axe-core (3.1 and 4.4) finds no serious or critical accessibility violation (every violation
    is printed);
  - the browser logged no error (SEVERE) the whole time: no failed request, no CSP refusal, no
    script error;
  - from this machine's non-loopback address (a second service, with a token), the page loads,
    asks for the token when the API refuses it (401; axe-core checks the form too), and with it
    shows the state.
With --screenshot, the page is saved there as a PNG (the README's picture) once it has run a few
seconds. Needs chromium and chromium-driver (Debian), selenium, axe-selenium-python and
axe-core-python (tools/setup-page-test.sh makes a venv with them; run this with its python) and the fixtures
(tools/make-fixtures.sh).
"""
import argparse, hashlib, json, os, re, shutil, subprocess, sys, tempfile, time, urllib.request

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from axe_selenium_python import Axe
except ImportError as e:
    sys.exit(f"page-test: {e.name} is missing; run with the python of $(tools/setup-page-test.sh)")


class Failed(Exception):
    pass


def check(ok, message):
    if not ok:
        raise Failed(message)
    print(f"page-test: ok: {message}")


def wait(what, predicate, timeout=10.0, every=0.1):
    """predicate()'s first truthy value within timeout seconds; fails naming `what`."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = predicate()
            if last:
                return last
        except Exception as e:   # the page or the API not there yet: try again
            last = e
        time.sleep(every)
    raise Failed(f"{what}: not within {timeout} s (last: {last!r})")


class Serve:
    """`scanout serve` headless on a free loopback port, stopped (SIGTERM) by close()."""

    def __init__(self, exe, clip, work, host="127.0.0.1", token=None, config=None):
        name = "serve" if token is None else "serve-token"
        self.log = os.path.join(work, f"{name}.log")
        args = [exe, "serve", "--host", host, "--port", "0", "--no-socket", "--output", "headless",
                "--state-dir", os.path.join(work, name), "--repeat", "all", clip]
        if config is not None:
            path = os.path.join(work, f"{name}.json")
            with open(path, "w") as f:
                json.dump(config, f)
            args[2:2] = ["--config", path]
        env = dict(os.environ)
        env.pop("SCANOUT_TOKEN", None)
        if token:
            env["SCANOUT_TOKEN"] = token
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=open(self.log, "w"), env=env)
        self.port = wait("scanout serve listening", self.listening, timeout=30)
        self.base = f"http://127.0.0.1:{self.port}"

    def listening(self):
        if self.proc.poll() is not None:
            raise Failed(f"scanout serve exited with {self.proc.returncode}:\n{open(self.log).read()}")
        m = re.search(r"listening on http://[^ ]*:(\d+)", open(self.log).read())
        return int(m.group(1)) if m else None

    def get(self, path):
        with urllib.request.urlopen(self.base + path, timeout=5) as r:
            return json.load(r)

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(15)


class Browser:
    """Headless Chromium at 1280x800 whose console messages are all kept (`log`)."""

    def __init__(self):
        options = webdriver.ChromeOptions()
        options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
        for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,800",
                  "--no-first-run", "--disable-extensions", "--hide-scrollbars"]:
            options.add_argument(a)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver = shutil.which("chromedriver") or "/usr/bin/chromedriver"
        self.driver = webdriver.Chrome(options=options, service=Service(driver))
        # The viewport, not the window, 1280x800: the window's frame is added to it.
        inner = self.driver.execute_script("return [window.outerWidth - window.innerWidth, window.outerHeight - window.innerHeight]")
        self.driver.set_window_size(1280 + inner[0], 800 + inner[1])
        self.log = []

    def drain(self):
        self.log += self.driver.get_log("browser")
        return self.log

    def text(self, css):
        return self.driver.find_element(By.CSS_SELECTOR, css).text

    def close(self):
        self.driver.quit()


def first_load(browser, url, limit_ms):
    browser.driver.get(url)
    timing = wait("the load event", lambda: browser.driver.execute_script(
        "const n = performance.getEntriesByType('navigation')[0]; return n && n.loadEventEnd > 0 ? n.toJSON() : null"))
    phases = {k: round(timing[k], 1) for k in ["requestStart", "responseStart", "responseEnd", "domInteractive",
                                              "domContentLoadedEventEnd", "loadEventEnd"]}
    print(f"page-test: first load (ms from navigation start): {json.dumps(phases)}; {timing['transferSize']} bytes of HTML")
    check(timing["loadEventEnd"] < limit_ms, f"first load {timing['loadEventEnd']:.1f} ms < {limit_ms} ms")
    return timing["loadEventEnd"]


def shows_state(browser, serve):
    def agrees():
        state = serve.get("/state")
        source = state["playlist"][state["item"]]["source"] if state["item"] is not None else None
        shown = browser.text('[data-fact="state"]'), browser.text('[data-fact="item"]'), browser.text('[data-fact="repeat"]'), browser.text('[data-fact="output"]')
        return shown[0] == state["state"] and source is not None and source in shown[1] and shown[2] == state["repeat"] and shown[3] == state["output"] and state
    state = wait("the page shows GET /state", agrees)
    check(True, f"the page shows GET /state: {state['state']}, {state['playlist'][state['item']]['source']}, repeat {state['repeat']}, {state['output']}")


SNAPSHOT_PIXELS = """
const img = document.getElementById('snapshot');
if (!img.complete || img.naturalWidth === 0 || !img.src.startsWith('blob:')) return null;
const c = document.createElement('canvas');
c.width = img.naturalWidth; c.height = img.naturalHeight;
c.getContext('2d').drawImage(img, 0, 0);
return [img.src, img.alt, c.toDataURL('image/png')];
"""


def schedule(clip, other):
    """A schedule whose default is `clip`, and a one-off event, years away, playing `other`."""
    return {"timeZone": "UTC", "default": [clip],
            "events": [{"id": "launch", "start": "2036-01-01T10:00:00", "end": "2036-01-01T11:00:00",
                        "playlist": [{"source": other, "scaling": "fill"}]}]}


def schedule_round_trip(browser, serve, clip, other):
    wait("the schedule's rule on the page", lambda: browser.text("#schedule-now").startswith("Playing the default"))
    shown = json.loads(wait("the schedule in its editor", lambda: browser.driver.find_element(By.ID, "schedule-json").get_attribute("value")))
    check(shown["default"] == [clip] and shown["events"][0]["id"] == "launch", "the page shows GET /schedule in the form PUT takes")
    before = serve.get("/schedule")
    browser.driver.find_element(By.CSS_SELECTOR, "#schedule-form button[type=submit]").click()
    wait("the schedule saved", lambda: browser.text("#status") == "Schedule saved.")
    after = serve.get("/schedule")
    check(after == before and after["events"][0]["playlist"][0]["source"] == other and after["events"][0]["playlist"][0]["scaling"] == "fill",
          "the schedule saved back from the page unchanged is the same schedule (GET /schedule)")
    wait("the default playing again", lambda: serve.get("/state")["state"] == "playing")


def snapshot_changes(browser):
    first = wait("a snapshot on the page", lambda: browser.driver.execute_script(SNAPSHOT_PIXELS))
    time.sleep(1.5)
    second = wait("a newer snapshot", lambda: (lambda s: s if s and s[0] != first[0] else None)(browser.driver.execute_script(SNAPSHOT_PIXELS)))
    a, b = (hashlib.sha256(s[2].encode()).hexdigest()[:12] for s in (first, second))
    check(a != b, f"the snapshot changes between two reads ({a} then {b})")
    check(second[1].startswith("The screen at"), f"the snapshot's text alternative: {second[1]!r}")


def playlist_edit(browser, serve, clip):
    form = browser.driver.find_element(By.ID, "playlist-sources")
    form.clear()
    form.send_keys(clip)
    browser.driver.find_element(By.CSS_SELECTOR, "#playlist-form button[type=submit]").click()
    def plays_it():
        s = serve.get("/state")
        return s["state"] == "playing" and [i["source"] for i in s["playlist"]] == [clip] and s["item"] == 0 and s
    wait("GET /state plays the playlist the form sent", plays_it)
    check(True, f"a playlist replaced through the page's form plays: {clip}")
    wait("the page lists the new playlist", lambda: browser.text("#playlist li") .startswith(clip))
    wait("the status line says so", lambda: "Playlist replaced" in browser.text("#status"))
    check(True, "the page lists the new playlist and says it was replaced")


def events_listed(browser):
    text = wait("an event in the page's log", lambda: browser.text("#events li"), timeout=10)
    check(True, f"the event stream is read: {text[:80]!r}")


def axe_scripts():
    """axe-core's scripts to run: axe-selenium-python's own (3.1), and axe-core-python's (4.4, the
    newer rules) when it is installed."""
    scripts = [None]
    try:
        import axe_core_python
        scripts.append(os.path.join(os.path.dirname(axe_core_python.__file__), "axe.min.js"))
    except ImportError:
        print("page-test: axe-core-python is missing: only axe-selenium-python's axe-core runs")
    return scripts


def accessibility(browser, script):
    axe = Axe(browser.driver, script) if script else Axe(browser.driver)
    axe.inject()
    results = axe.run()
    for v in results["violations"]:
        print(f"page-test: axe: {v['impact']}: {v['id']}: {v['help']} ({len(v['nodes'])} node(s): "
              f"{', '.join(n['target'][0] for n in v['nodes'][:5])})")
    serious = [v["id"] for v in results["violations"] if v["impact"] in ("serious", "critical")]
    engine = results.get("testEngine", {}).get("version") or browser.driver.execute_script("return axe.version")
    print(f"page-test: axe-core {engine}: {len(results['violations'])} violation(s), "
          f"{len(results['passes'])} rule(s) passed, {len(results['incomplete'])} to review")
    check(not serious, f"no serious or critical accessibility violation (found: {serious})")
    return results


def console_clean(browser):
    severe = [e for e in browser.drain() if e["level"] == "SEVERE"]
    for e in browser.log:
        print(f"page-test: console: {e['level']}: {e['message']}")
    check(not severe, f"no console error ({len(browser.log)} console message(s) in all)")


def non_loopback_address():
    """An IPv4 address of this machine other than loopback, or None."""
    out = subprocess.run(["ip", "-4", "-o", "addr", "show", "scope", "global"], capture_output=True, text=True).stdout
    m = re.search(r"inet (\d+\.\d+\.\d+\.\d+)/", out)
    return m.group(1) if m else None


def token_asked(browser, exe, clip, work, config):
    """From another machine's view (this one's non-loopback address): the page loads without the
    token, asks for it when the API refuses, and with it shows the state. The one console error
    allowed is that refusal (401)."""
    address = non_loopback_address()
    if not address:
        print("page-test: skipped the token check: this machine has no non-loopback IPv4 address")
        return
    browser.drain()
    before = len(browser.log)
    serve = Serve(exe, clip, work, host="0.0.0.0", token="page-test-token", config=config)
    try:
        browser.driver.get(f"http://{address}:{serve.port}/")
        wait("the token form", lambda: browser.driver.find_element(By.ID, "token-form").is_displayed())
        check(not browser.driver.find_element(By.ID, "panels").is_displayed(), "from another address the page asks for the token first")
        for script in axe_scripts():
            accessibility(browser, script)
        browser.driver.find_element(By.ID, "token-input").send_keys("page-test-token")
        browser.driver.find_element(By.CSS_SELECTOR, "#token-form button[type=submit]").click()
        wait("the state with the token", lambda: browser.text('[data-fact="state"]') == "playing")
        stored = browser.driver.execute_script("return sessionStorage.getItem('scanout.token')")
        check(stored == "page-test-token", "with the token given, the page shows the state and keeps the token in sessionStorage")
    finally:
        serve.close()
    errors = [e for e in browser.drain()[before:] if e["level"] == "SEVERE"]
    unexpected = [e["message"] for e in errors if "401" not in e["message"]]
    check(errors and not unexpected, f"the only console errors are the refusals that asked for the token ({len(errors)})")


def main():
    a = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    a.add_argument("--scanout", default=".build/debug/scanout")
    a.add_argument("--fixtures", default=".fixtures")
    a.add_argument("--screenshot")
    a.add_argument("--load-limit-ms", type=float, default=300)
    a.add_argument("--keep", action="store_true", help="keep the scratch directory (the service's log)")
    o = a.parse_args()
    clip = os.path.abspath(os.path.join(o.fixtures, "counter.mp4"))
    other = os.path.abspath(os.path.join(o.fixtures, "counter_open_long.ts"))
    for f in (o.scanout, clip, other):
        if not os.path.exists(f):
            sys.exit(f"page-test: {f} is missing (swift build; tools/make-fixtures.sh)")
    work = tempfile.mkdtemp(prefix="scanout-page-")
    serve = browser = None
    try:
        serve = Serve(os.path.abspath(o.scanout), clip, work, config={"schedule": schedule(clip, other)})
        wait("the clip playing", lambda: serve.get("/state")["state"] == "playing")
        browser = Browser()
        first_load(browser, serve.base + "/", o.load_limit_ms)
        shows_state(browser, serve)
        events_listed(browser)
        schedule_round_trip(browser, serve, clip, other)
        snapshot_changes(browser)
        playlist_edit(browser, serve, other)
        shows_state(browser, serve)
        if o.screenshot:
            time.sleep(15)   # plots with some seconds in them
            browser.driver.execute_script("document.activeElement.blur(); window.scrollTo(0, 0)")
            browser.driver.save_screenshot(o.screenshot)
            check(os.path.getsize(o.screenshot) > 0, f"screenshot written to {o.screenshot}")
        for script in axe_scripts():
            accessibility(browser, script)
        console_clean(browser)
        token_asked(browser, os.path.abspath(o.scanout), clip, work, {"schedule": schedule(clip, other)})
        print("page-test: passed")
    except Failed as e:
        print(f"page-test: FAILED: {e}", file=sys.stderr)
        if browser:
            for entry in browser.drain():
                print(f"page-test: console: {entry['level']}: {entry['message']}", file=sys.stderr)
        if serve:
            print(open(serve.log).read()[-4000:], file=sys.stderr)
        return 1
    finally:
        if browser:
            browser.close()
        if serve:
            serve.close()
        if o.keep:
            print(f"page-test: scratch directory {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
