"""The browser pages, driven through headless Chromium with Selenium.

Signs in through /login, uploads documents on /admin through the file input,
asks about them on /, opens a citation, and checks that hostile document text
and titles are shown as text, never run or turned into elements.

Needs Debian's `chromium` and `chromium-driver`; the tests FAIL when they are
missing. A screenshot of the chat page goes to build/test-artifacts/browser.png.
"""
import os
import shutil
import tempfile

import pytest

from conftest import ADMIN_PASSWORD, ADMIN_USER, ROOT, Server

CHROMIUM = os.environ.get("RAGD_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("RAGD_CHROMEDRIVER", "/usr/bin/chromedriver")
ARTIFACTS = os.path.join(ROOT, "build", "test-artifacts")
ANSWER_TIMEOUT = 240  # seconds for one streamed answer on a slow, shared machine
PAGE_TIMEOUT = 30  # seconds for a page, a sign-in or an upload

LIGHTHOUSE_TITLE = "Quillfeather Lighthouse"
LIGHTHOUSE_TEXT = (
    "The Quillfeather lighthouse on Marrow Island was built in 1873 by the engineer Odile Brack.\n"
    "Its lamp burns blue and can be seen from 31 kilometres away on a clear night.\n"
)

LIGHTHOUSE_QUESTION = "Who built the Quillfeather lighthouse on Marrow Island? Cite the source."

SCRIPT_PAYLOAD = "<script>window.__pwned=1</script>"
IMG_PAYLOAD = '<img src=x onerror="window.__pwned=2">'
HOSTILE_TITLE = '<img src=x onerror="window.__pwned=3"> Zephyr vault notes'
HOSTILE_TEXT = (
    "The Zephyr vault code word is marmalade-47; the Zephyr vault opens only at dawn.\n"
    f"Zephyr vault markup sample: {SCRIPT_PAYLOAD} and {IMG_PAYLOAD} end of sample.\n"
)
HOSTILE_QUESTION = "What is the Zephyr vault code word? Cite the source."
# A question carrying markup: shown as typed; its answer may echo the markup.
MARKUP_QUESTION = ('Quote the Zephyr vault markup sample: <img src=x onerror="window.__pwned=4"> '
                   "<script>window.__pwned=5</script>")


# Records Content-Security-Policy violations of the current page (an inline
# script or event handler the page was tricked into creating would show here).
WATCH_CSP = """
window.__csp = window.__csp || [];
if (!window.__cspWatch) {
  window.__cspWatch = true;
  document.addEventListener('securitypolicyviolation', function (e) {
    window.__csp.push(e.violatedDirective + ' ' + e.blockedURI);
  });
}
"""


# ------------------------------------------------------------------ fixtures

@pytest.fixture(scope="module")
def web_server():
    # Short answers keep the module fast; the page itself sends no max_tokens.
    with tempfile.TemporaryDirectory(prefix="ragd-browser-") as data:
        srv = Server(data, extra_args=["--set", "inference.max_tokens=48"],
                     ingest=os.path.join(ROOT, "docs", "sample")).wait_ready()
        yield srv
        assert srv.stop() == 0, srv.output()


@pytest.fixture(scope="module")
def driver():
    # Fail (never skip) when the browser is missing: CI installs it.
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            pytest.fail(f"{path} is missing: apt-get install -y {package}")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # console, for failure messages
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900",
                "--disable-gpu", "--no-first-run", "--disable-extensions", "--lang=en-US"):
        options.add_argument(arg)
    profile = tempfile.mkdtemp(prefix="ragd-chromium-")
    options.add_argument(f"--user-data-dir={profile}")
    # An explicit driver path: Selenium Manager is never consulted (no downloads).
    drv = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    drv.set_page_load_timeout(PAGE_TIMEOUT)
    drv.set_script_timeout(PAGE_TIMEOUT)
    try:
        yield drv
    finally:
        drv.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def files():
    with tempfile.TemporaryDirectory(prefix="ragd-browser-files-") as folder:
        paths = {}
        for name, text in (("quillfeather.txt", LIGHTHOUSE_TEXT), ("zephyr-vault.txt", HOSTILE_TEXT)):
            paths[name] = os.path.join(folder, name)
            with open(paths[name], "w", encoding="utf-8") as f:
                f.write(text)
        yield paths


@pytest.fixture(autouse=True)
def last_screen(request, driver):
    # Whatever happens, the last screen of each test is kept for a look.
    yield
    os.makedirs(ARTIFACTS, exist_ok=True)
    driver.save_screenshot(os.path.join(ARTIFACTS, f"browser-last-{request.node.name}.png"))


# ------------------------------------------------------------------ helpers

def wait(driver, condition, timeout=PAGE_TIMEOUT, message=""):
    # A condition that walks a list the page redraws meanwhile (the document
    # list after an upload) meets removed elements: poll again rather than fail.
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait
    return WebDriverWait(driver, timeout, poll_frequency=0.2,
                         ignored_exceptions=[StaleElementReferenceException]).until(condition, message)


def by_testid(root, testid):
    from selenium.webdriver.common.by import By
    return root.find_elements(By.CSS_SELECTOR, f'[data-testid="{testid}"]')


def one(root, testid):
    found = by_testid(root, testid)
    assert len(found) == 1, f"expected one [data-testid={testid}], found {len(found)}"
    return found[0]


def path_of(driver):
    from urllib.parse import urlparse
    return urlparse(driver.current_url).path


def open_page(driver, server, path, ready_testid):
    driver.get(server.url + path)
    wait(driver, lambda d: by_testid(d, ready_testid) and by_testid(d, ready_testid)[0].text.strip() == ADMIN_USER,
         message=f"{path}: signed-in user never shown")
    driver.execute_script(WATCH_CSP)


def assert_page_clean(driver):
    """No payload ran, no element came out of text, no CSP violation."""
    state = driver.execute_script("""
        return {
          pwned: typeof window.__pwned,
          imgs: document.querySelectorAll('img').length,
          scripts: Array.prototype.map.call(document.scripts, function (s) { return s.getAttribute('src'); }),
          handlers: document.querySelectorAll('[onerror], [onload], [onclick]').length,
          csp: window.__csp || [],
        };""")
    assert state["pwned"] == "undefined", state
    assert state["imgs"] == 0, state
    assert all(src and src.startswith("/static/") for src in state["scripts"]), state
    assert state["handlers"] == 0, state
    assert state["csp"] == [], state


def upload(driver, path, title):
    """Uploads one file through the admin form; returns the finished upload item."""
    from selenium.webdriver.common.by import By
    # The item and its <progress> bar can be gone before a poll sees them: watch the DOM.
    driver.execute_script("""
        window.__progressSeen = false;
        var box = document.getElementById('uploads');
        new MutationObserver(function (records) {
          records.forEach(function (r) {
            r.addedNodes.forEach(function (n) {
              if (n.querySelector && n.querySelector('progress[data-testid="upload-progress"]'))
                window.__progressSeen = true;
            });
          });
        }).observe(box, {childList: true, subtree: true});""")
    before = len(by_testid(driver, "upload-item"))
    one(driver, "file-input").send_keys(path)
    title_box = one(driver, "upload-title")
    title_box.clear()
    title_box.send_keys(title)
    one(driver, "upload-button").click()
    wait(driver, lambda d: len(by_testid(d, "upload-item")) > before, message="no upload item appeared")
    item = by_testid(driver, "upload-item")[0]  # newest first
    wait(driver, lambda d: item.get_attribute("data-state") != "uploading", timeout=120,
         message="upload never finished")
    status = one(item, "upload-status").text
    assert item.get_attribute("data-state") == "done", status
    assert "passage" in status, status
    assert driver.execute_script("return window.__progressSeen") is True, "no progress bar was shown"
    assert not item.find_elements(By.TAG_NAME, "progress"), "progress bar left behind"
    assert os.path.basename(path) in item.text
    # The list is reloaded after the upload: the new document is in it.
    wait(driver, lambda d: any(t.text == title for t in by_testid(d, "document-title")),
         message=f"{title!r} not in the document list")
    row = next(r for r in by_testid(driver, "document-row") if one(r, "document-title").text == title)
    assert one(row, "document-type").text == "text/plain"
    assert int(one(row, "document-size").get_attribute("data-bytes")) == os.path.getsize(path)
    assert int(one(row, "document-chunks").text.replace(",", "")) >= 1
    return row


def browser_log(driver):
    try:
        return [f"{e.get('level')} {e.get('message')}" for e in driver.get_log("browser")]
    except Exception as err:  # only ever used to explain a failure
        return [f"(no console log: {err})"]


def ask(driver, server, question):
    """Asks on the chat page; waits for the answer to finish; returns its turn."""
    before = len(by_testid(driver, "turn"))
    box = one(driver, "question")
    box.clear()
    box.send_keys(question)
    one(driver, "send").click()
    wait(driver, lambda d: len(by_testid(d, "turn")) > before, message="no turn appeared")
    turn = by_testid(driver, "turn")[-1]
    answer = one(turn, "answer")
    wait(driver, lambda d: answer.get_attribute("data-state") not in ("waiting", "streaming"),
         timeout=ANSWER_TIMEOUT, message="answer never finished")
    if answer.get_attribute("data-state") != "done":
        errors = [e.text for e in by_testid(turn, "answer-error")]
        pytest.fail(f"answer {answer.get_attribute('data-state')}: {errors} {answer.text!r}\n"
                    f"browser console: {browser_log(driver)}\nserver log tail:\n{server.output()[-3000:]}")
    assert one(turn, "asked").text == question
    assert answer.text.strip(), "empty answer"
    usage = one(turn, "answer-usage").text
    assert "prompt" in usage and "completion tokens" in usage, usage
    # Ready for the next question.
    wait(driver, lambda d: one(d, "send").is_displayed() and not one(d, "stop").is_displayed())
    return turn


def open_source(driver, turn, title):
    """Opens the citation of the document `title`: its chip if the answer has one,
    else its source item. Returns the citation number.

    The page lists the cited sources under a finished answer, or all of the
    retrieved ones when the answer cites none (see Turn.showSources in
    web/static/chat.js), so this does not depend on the model's wording."""
    sources = one(turn, "sources")
    assert sources.is_displayed(), (
        f"no sources under the answer {one(turn, 'answer').text!r}: an answer that cites none must list "
        "all retrieved sources (Turn.showSources)")
    items = by_testid(sources, "source-item")
    assert items, "no source items"
    mine = [i for i in items if i.text.endswith("] " + title)]
    assert mine, f"{title!r} not among the sources {[i.text for i in items]}"
    n = mine[0].get_attribute("data-n")
    chips = [c for c in by_testid(one(turn, "answer"), "citation-chip") if c.get_attribute("data-n") == n]
    (chips[0] if chips else mine[0]).click()
    panel = one(driver, "citation-panel")
    wait(driver, lambda d: "hidden" not in panel.get_attribute("class").split() and panel.is_displayed(),
         message="citation panel did not open")
    assert panel.get_attribute("data-n") == n
    assert one(panel, "citation-number").text == n
    assert one(panel, "citation-title").text == title
    assert "document" in one(panel, "citation-meta").text
    return n


# ------------------------------------------------------------------ tests

def test_sign_in(web_server, driver):
    driver.get(web_server.url + "/admin")
    # Not signed in: the admin page sends the browser to the sign-in page.
    wait(driver, lambda d: path_of(d) == "/login", message="/admin did not send to /login")
    wait(driver, lambda d: by_testid(d, "login-form"))
    one(driver, "login-username").send_keys(ADMIN_USER)
    one(driver, "login-password").send_keys("not the password")
    one(driver, "login-submit").click()
    error = one(driver, "login-error")
    wait(driver, lambda d: error.is_displayed() and error.text, message="no sign-in error shown")
    assert "Wrong username or password" in error.text
    password = one(driver, "login-password")
    password.clear()
    password.send_keys(ADMIN_PASSWORD)
    one(driver, "login-submit").click()
    wait(driver, lambda d: path_of(d) == "/admin", message="sign-in did not lead back to /admin")
    wait(driver, lambda d: one(d, "whoami").text == ADMIN_USER, message="signed-in user not shown")
    assert any(c["name"] == "ragd_session" for c in driver.get_cookies())


def test_upload_and_list(web_server, driver, files):
    open_page(driver, web_server, "/admin", "whoami")
    wait(driver, lambda d: by_testid(d, "document-row"), message="sample documents not listed")
    row = upload(driver, files["quillfeather.txt"], LIGHTHOUSE_TITLE)
    count = one(driver, "doc-count").text
    assert count == f"({len(by_testid(driver, 'document-row'))})", count
    one(row, "view-document").click()
    view = one(driver, "doc-view")
    wait(driver, lambda d: view.is_displayed() and "Odile Brack" in one(d, "doc-view-text").text,
         message="document text not shown")
    assert one(driver, "doc-view-title").text == LIGHTHOUSE_TITLE
    assert_page_clean(driver)


def test_ask_and_open_citation(web_server, driver):
    open_page(driver, web_server, "/", "whoami")
    assert one(driver, "admin-link").is_displayed()
    quota_before = int(one(driver, "quota").get_attribute("data-remaining"))
    turn = ask(driver, web_server, LIGHTHOUSE_QUESTION)
    open_source(driver, turn, LIGHTHOUSE_TITLE)
    passage = one(driver, "citation-text").text
    assert "built in 1873 by the engineer Odile Brack" in passage and "burns blue" in passage, passage
    # The quota display and the last-usage line follow the answer.
    last = one(driver, "last-usage")
    wait(driver, lambda d: last.get_attribute("data-completion-tokens"), message="last usage not shown")
    spent = int(last.get_attribute("data-prompt-tokens")) + int(last.get_attribute("data-completion-tokens"))
    assert spent > 0
    quota = one(driver, "quota")
    wait(driver, lambda d: int(quota.get_attribute("data-remaining")) < quota_before,
         message="quota display not refreshed")
    assert_page_clean(driver)
    os.makedirs(ARTIFACTS, exist_ok=True)
    assert driver.save_screenshot(os.path.join(ARTIFACTS, "browser.png"))
    # Escape closes the panel.
    from selenium.webdriver.common.keys import Keys
    driver.switch_to.active_element.send_keys(Keys.ESCAPE)
    panel = one(driver, "citation-panel")
    wait(driver, lambda d: "hidden" in panel.get_attribute("class").split(), message="Escape did not close")


def test_hostile_text_stays_text(web_server, driver, files):
    from selenium.webdriver.common.by import By
    open_page(driver, web_server, "/admin", "whoami")
    row = upload(driver, files["zephyr-vault.txt"], HOSTILE_TITLE)
    one(row, "view-document").click()
    wait(driver, lambda d: "marmalade-47" in one(d, "doc-view-text").text, message="document text not shown")
    shown = one(driver, "doc-view-text").text
    assert SCRIPT_PAYLOAD in shown and IMG_PAYLOAD in shown, shown
    assert one(driver, "doc-view-title").text == HOSTILE_TITLE
    assert_page_clean(driver)

    open_page(driver, web_server, "/", "whoami")
    turn = ask(driver, web_server, HOSTILE_QUESTION)
    open_source(driver, turn, HOSTILE_TITLE)
    passage = one(driver, "citation-text").text
    assert SCRIPT_PAYLOAD in passage and IMG_PAYLOAD in passage, passage
    assert "marmalade-47" in passage
    for container in (one(turn, "answer"), one(turn, "sources"), one(driver, "citation-panel")):
        assert not container.find_elements(By.CSS_SELECTOR, "script, img, iframe, object, embed")
    assert_page_clean(driver)
    os.makedirs(ARTIFACTS, exist_ok=True)
    driver.save_screenshot(os.path.join(ARTIFACTS, "browser-hostile.png"))

    # Markup typed into the question stays text, in the question and in its answer.
    turn = ask(driver, web_server, MARKUP_QUESTION)
    for container in by_testid(driver, "turn") + [one(driver, "citation-panel")]:
        assert not container.find_elements(By.CSS_SELECTOR, "script, img, iframe, object, embed")
    assert_page_clean(driver)
