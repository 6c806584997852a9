"""The admin page, driven through headless Chromium with Selenium (as
test_browser.py): the users table changes a quota, a role, disables and
enables, sets a password, ends sessions, lists, creates and revokes API keys
(a revoked key then gets 401); the usage charts are drawn after an answer,
for each figure; a DOCX uploaded through the page shows its progress,
finishes "done" and is then cited; a refused file shows the server's
reason; a long upload is cancelled while indexed; a file dropped on the
drop zone and a folder are uploaded; the documents list is searched, sorted
and a document re-indexed; the status panel shows the models and the time to
first token. Screenshots go to build/test-artifacts/admin-*.png.
"""
import json
import os
import tempfile

import pytest
import requests

from conftest import ROOT, TEST_LLM, Server
from test_browser import ARTIFACTS, assert_page_clean, by_testid, driver, last_screen, one, open_page
from test_chat_browser import signed_in, wait

# The fixtures of test_browser.py (one Chromium for this module, its last
# screen kept after each test) and test_chat_browser.py (signed in as the
# admin, on this module's server).
assert driver and last_screen and signed_in

FIXTURES = os.path.join(ROOT, "tests", "data", "corpus")
DOCX_TITLE = "Beacon Handbook"  # sample.docx, made by tests/data/corpus/make_office.py
DOCX_QUESTION = "What is the quillon frequency of the Marlowe beacon?"
INGEST_TIMEOUT = 120
# Markup in names and titles must stay text (test_browser.assert_page_clean checks).
HOSTILE = '<img src=x onerror="window.__pwned=7"><script>window.__pwned=8</script>'
HARBOUR_TEXT = "The harbour ferry to Kell Island leaves at 07:40 and returns at 18:15 every weekday.\n"


@pytest.fixture(scope="module")
def web_server():
    # Short answers keep the module fast; one passage to start with: the tests upload the rest.
    with tempfile.TemporaryDirectory(prefix="ragd-admin-page-") as data:
        srv = Server(data, extra_args=["--set", "inference.max_tokens=16"]).wait_ready()
        # Something to answer from: with no passage at all, /v1/ask generates nothing.
        r = requests.post(srv.url + "/v1/documents", headers=srv.headers(), timeout=120,
                          json={"title": "Harbour timetable", "text": HARBOUR_TEXT})
        assert r.status_code == 201, r.text
        yield srv
        assert srv.stop() == 0, srv.output()


def screenshot(driver, name, show=None):
    """Saves the screen, scrolled to the element `show` when given."""
    if show is not None:
        driver.execute_script("arguments[0].scrollIntoView({block: 'start'})", show)
    os.makedirs(ARTIFACTS, exist_ok=True)
    assert driver.save_screenshot(os.path.join(ARTIFACTS, name))


def call(server, method, path, key=None, **kw):
    return requests.request(method, server.url + path, headers=server.headers(key) if key else server.headers(),
                            timeout=120, **kw)


def api(server, method, path, **kw):
    r = call(server, method, path, **kw)
    assert r.status_code < 300, r.text
    return r.json()


def make_user(server, name):
    body = api(server, "POST", "/v1/users", json={"username": name, "password": "password-" + name})
    return body["user"]["id"], body["api_key"]


def me(server, key):
    return call(server, "GET", "/v1/me", key).status_code


def user_json(server, name):
    return next(u for u in api(server, "GET", "/v1/users")["users"] if u["username"] == name)


def user_row(driver, name):
    rows = [r for r in by_testid(driver, "user-row") if r.get_attribute("data-username") == name]
    return rows[0] if rows else None


def row_status(driver, name):
    row = user_row(driver, name)
    return one(row, "user-status").text if row else ""


def admin_page(driver, server):
    open_page(driver, server, "/admin", "whoami")


def answer(server, key, question="When does the harbour ferry to Kell Island leave?", **extra):
    r = call(server, "POST", "/v1/ask", key, json={"question": question, "max_tokens": 8, **extra})
    assert r.status_code == 200, r.text
    return r.json()


def watch_uploads(driver):
    """Records, from the DOM, every progress bar and phase an upload showed
    (a poll may come too late to see a short one)."""
    driver.execute_script("""
        window.__progressSeen = false;
        window.__phases = [];
        var box = document.getElementById('uploads');
        new MutationObserver(function (records) {
          records.forEach(function (r) {
            if (r.type === 'attributes' && r.attributeName === 'data-phase')
              window.__phases.push(r.target.getAttribute('data-phase'));
            (r.addedNodes || []).forEach(function (n) {
              if (n.querySelector && n.querySelector('progress[data-testid="upload-progress"]'))
                window.__progressSeen = true;
            });
          });
        }).observe(box, {childList: true, subtree: true, attributes: true, attributeFilter: ['data-phase']});""")


def finished_item(driver, before, name):
    def named(d):
        items = by_testid(d, "upload-item")[:len(by_testid(d, "upload-item")) - before]  # newest first
        return next((i for i in items if name in one(i, "upload-item-name").text), None)
    item = wait(driver, named, message=f"no upload item for {name} appeared")
    wait(driver, lambda d: item.get_attribute("data-state") != "uploading", timeout=INGEST_TIMEOUT,
         message=f"upload of {name} never finished")
    return item


def document_titles(driver):
    return [t.text for t in by_testid(driver, "document-title")]


# ------------------------------------------------------------------ users

def test_quota_role_and_account_controls(web_server, signed_in):
    driver = signed_in
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select
    uid, key = make_user(web_server, "quinn")
    admin_page(driver, web_server)
    wait(driver, lambda d: user_row(d, "quinn") is not None, message="user not listed")

    # Quota, edited in place: a number, then empty (back to the default).
    one(user_row(driver, "quinn"), "user-quota-edit").click()
    box = one(user_row(driver, "quinn"), "user-quota-input")
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys("12345")
    one(user_row(driver, "quinn"), "user-quota-save").click()
    wait(driver, lambda d: one(user_row(d, "quinn"), "user-quota").text == "12,345", message="quota not shown")
    assert user_json(web_server, "quinn")["token_quota"] == 12345
    assert one(user_row(driver, "quinn"), "user-left").text == "12,345"
    one(user_row(driver, "quinn"), "user-quota-edit").click()
    box = one(user_row(driver, "quinn"), "user-quota-input")
    assert box.get_attribute("value") == "12345"
    box.send_keys(Keys.CONTROL, "a", Keys.DELETE)
    box.send_keys(Keys.ENTER)
    wait(driver, lambda d: one(user_row(d, "quinn"), "user-quota").text == "default", message="quota not reset")
    assert user_json(web_server, "quinn")["token_quota"] is None
    # A wrong figure is refused in the page, and nothing changes.
    one(user_row(driver, "quinn"), "user-quota-edit").click()
    driver.execute_script("arguments[0].value = '-5'", one(user_row(driver, "quinn"), "user-quota-input"))
    one(user_row(driver, "quinn"), "user-quota-save").click()
    wait(driver, lambda d: "whole number" in row_status(d, "quinn"), message="bad quota not refused")
    one(user_row(driver, "quinn"), "user-quota-cancel").click()
    assert user_json(web_server, "quinn")["token_quota"] is None

    # Role.
    Select(one(user_row(driver, "quinn"), "user-role-select")).select_by_value("admin")
    wait(driver, lambda d: row_status(d, "quinn") == "Saved.", message="role not saved")
    assert user_json(web_server, "quinn")["role"] == "admin"
    Select(one(user_row(driver, "quinn"), "user-role-select")).select_by_value("user")
    wait(driver, lambda d: row_status(d, "quinn") == "Saved." and user_json(web_server, "quinn")["role"] == "user",
         message="role not saved back")
    # The server's refusal shows in the row: the last admin cannot stop being one.
    Select(one(user_row(driver, "admin"), "user-role-select")).select_by_value("user")
    wait(driver, lambda d: one(user_row(d, "admin"), "user-status").get_attribute("data-error") == "1",
         message="refusal not shown")
    assert Select(one(user_row(driver, "admin"), "user-role-select")).first_selected_option.get_attribute(
        "value") == "admin"
    assert user_json(web_server, "admin")["role"] == "admin"

    # Disable (the key stops working), enable (it works again).
    one(user_row(driver, "quinn"), "user-disable").click()
    wait(driver, lambda d: user_row(d, "quinn").get_attribute("data-disabled") == "1", message="not disabled")
    assert user_json(web_server, "quinn")["disabled"] is True and me(web_server, key) == 401
    assert one(user_row(driver, "quinn"), "user-disable").text == "Enable"
    one(user_row(driver, "quinn"), "user-disable").click()
    wait(driver, lambda d: user_row(d, "quinn").get_attribute("data-disabled") == "0", message="not enabled")
    assert me(web_server, key) == 200

    # A new password; then every session of the user ends.
    one(user_row(driver, "quinn"), "user-password-button").click()
    one(driver, "user-password-input").send_keys("a-brand-new-password", Keys.ENTER)
    wait(driver, lambda d: "Password changed" in row_status(d, "quinn"), message="password not changed")
    login = requests.post(web_server.url + "/v1/auth/login", timeout=60,
                          json={"username": "quinn", "password": "a-brand-new-password"})
    assert login.status_code == 200, login.text
    cookie = login.headers["Set-Cookie"].split(";")[0]
    assert requests.get(web_server.url + "/v1/me", headers={"Cookie": cookie}, timeout=60).status_code == 200
    end = one(user_row(driver, "quinn"), "user-end-sessions")
    end.click()
    assert end.get_attribute("data-armed") == "1"  # the first click only asks
    assert requests.get(web_server.url + "/v1/me", headers={"Cookie": cookie}, timeout=60).status_code == 200
    end.click()
    wait(driver, lambda d: "session" in row_status(d, "quinn"), message="sessions not ended")
    assert requests.get(web_server.url + "/v1/me", headers={"Cookie": cookie}, timeout=60).status_code == 401
    screenshot(driver, "admin-users.png", one(driver, "users"))


def test_keys_are_listed_created_and_revoked(web_server, signed_in):
    driver = signed_in
    uid, key = make_user(web_server, "kim")
    assert me(web_server, key) == 200
    hostile_key = api(web_server, "POST", f"/v1/users/{uid}/keys", json={"name": HOSTILE})["api_key"]
    admin_page(driver, web_server)
    wait(driver, lambda d: user_row(d, "kim") is not None, message="user not listed")
    one(user_row(driver, "kim"), "user-keys-button").click()
    wait(driver, lambda d: len(by_testid(d, "key-row")) == 2, message="keys not listed")
    row = next(r for r in by_testid(driver, "key-row") if one(r, "key-name").text != HOSTILE)
    assert key.startswith(row.get_attribute("data-prefix"))
    assert one(row, "key-prefix").text.startswith(row.get_attribute("data-prefix"))
    assert HOSTILE in [one(r, "key-name").text for r in by_testid(driver, "key-row")]
    assert_page_clean(driver)
    # Revoke the hostile one (two clicks); the list is drawn again.
    hostile = next(r for r in by_testid(driver, "key-row") if one(r, "key-name").text == HOSTILE)
    one(hostile, "key-revoke").click()
    one(hostile, "key-revoke").click()
    wait(driver, lambda d: len(by_testid(d, "key-row")) == 1, message="revoked key still listed")
    assert me(web_server, hostile_key) == 401

    # A new key, shown once, works at once.
    one(driver, "key-name-input").send_keys("laptop")
    one(driver, "key-create").click()
    wait(driver, lambda d: by_testid(d, "user-new-key") and one(d, "user-new-key").text.startswith("rk-"),
         message="new key not shown")
    new_key = one(driver, "user-new-key").text
    assert me(web_server, new_key) == 200
    wait(driver, lambda d: len(by_testid(d, "key-row")) == 2, message="new key not listed")
    assert "laptop" in [one(r, "key-name").text for r in by_testid(driver, "key-row")]
    screenshot(driver, "admin-keys.png", user_row(driver, "kim"))
    one(driver, "user-key-done").click()
    assert not by_testid(driver, "user-new-key")

    # Revoke the first key: two clicks, then 401 for it; the other still works.
    first = next(r for r in by_testid(driver, "key-row") if key.startswith(r.get_attribute("data-prefix")))
    revoke = one(first, "key-revoke")
    revoke.click()
    assert revoke.text == "Confirm revoke" and me(web_server, key) == 200
    revoke.click()
    wait(driver, lambda d: len(by_testid(d, "key-row")) == 1, message="revoked key still listed")
    assert me(web_server, key) == 401
    assert me(web_server, new_key) == 200
    assert len(api(web_server, "GET", f"/v1/users/{uid}/keys")["keys"]) == 1
    assert "revoked" in row_status(driver, "kim")


# ------------------------------------------------------------------ usage

def test_usage_charts_after_an_answer(web_server, signed_in):
    driver = signed_in
    _, key = make_user(web_server, "ursula")
    spent = answer(web_server, key)["usage"]
    assert spent["total_tokens"] > 0
    admin_page(driver, web_server)
    wait(driver, lambda d: by_testid(d, "usage-user-row"), message="usage table not drawn")
    chart = one(driver, "usage-chart")
    assert chart.tag_name == "svg" and chart.get_attribute("role") == "img"
    assert "Tokens per day" in chart.get_attribute("aria-label")
    bars = by_testid(chart, "usage-bar")
    assert len(bars) == 1, "one day with use: today"  # every test of this module ran today
    assert bars[0].tag_name == "rect" and int(bars[0].get_attribute("data-value")) >= spent["total_tokens"]
    assert float(bars[0].get_attribute("height")) > 0
    # Each bar says its figures in a <title>.
    assert "tokens" in driver.execute_script("return arguments[0].parentNode.querySelector('title').textContent",
                                             bars[0])
    row = next(r for r in by_testid(driver, "usage-user-row") if r.get_attribute("data-username") == "ursula")
    assert int(one(row, "usage-tokens").get_attribute("data-value")) == spent["total_tokens"]
    assert one(row, "usage-requests").text == "1"
    assert one(row, "usage-answers").text == "1"
    assert one(row, "usage-per-answer").text == f"{spent['total_tokens']:,}"
    per_user = one(driver, "user-usage-chart")
    assert "ursula" in [b.get_attribute("data-label") for b in by_testid(per_user, "user-usage-bar")]
    screenshot(driver, "admin-usage.png", one(driver, "usage-summary"))

    # The other figures, per day and per user.
    from selenium.webdriver.support.ui import Select
    for metric, value in (("requests", 1), ("answers", 1), ("per_answer", spent["total_tokens"])):
        Select(one(driver, "usage-metric")).select_by_value(metric)
        bars = by_testid(one(driver, "usage-chart"), "usage-bar")
        assert [int(b.get_attribute("data-value")) for b in bars] == [value], metric
        user_bars = {b.get_attribute("data-label"): int(b.get_attribute("data-value"))
                     for b in by_testid(one(driver, "user-usage-chart"), "user-usage-bar")}
        assert user_bars == {"ursula": value}, (metric, user_bars)


# ------------------------------------------------------------------ uploads

def test_docx_upload_shows_progress_and_is_then_cited(web_server, signed_in):
    driver = signed_in
    admin_page(driver, web_server)
    watch_uploads(driver)
    before = len(by_testid(driver, "upload-item"))
    one(driver, "file-input").send_keys(os.path.join(FIXTURES, "sample.docx"))
    one(driver, "upload-button").click()
    item = finished_item(driver, before, "sample.docx")
    status = one(item, "upload-status").text
    assert item.get_attribute("data-state") == "done", status
    assert "passage" in status, status
    assert driver.execute_script("return window.__progressSeen") is True, "no progress bar was shown"
    phases = driver.execute_script("return window.__phases")
    assert "queued" in phases or "running" in phases, phases  # the ingestion job was followed
    assert not by_testid(item, "upload-progress"), "progress bar left behind"
    doc_id = int(item.get_attribute("data-document"))
    wait(driver, lambda d: DOCX_TITLE in document_titles(d), message="the DOCX is not in the document list")
    screenshot(driver, "admin-upload.png", one(driver, "upload-form"))

    # The streamed answer's first event lists the passages it may cite
    # (whether the small test model cites one is not this test's business).
    r = requests.post(web_server.url + "/v1/ask", headers=web_server.headers(), timeout=300, stream=True,
                      json={"question": DOCX_QUESTION, "max_tokens": 1, "stream": True})
    assert r.status_code == 200, r.text
    first = json.loads(next(line for line in r.iter_lines(decode_unicode=True) if line.startswith("data: "))[6:])
    r.close()
    cited = [c for c in first["citations"] if c["document_id"] == doc_id]
    assert cited and first["citations"][0]["document_id"] == doc_id, first["citations"]
    assert cited[0]["title"] == DOCX_TITLE and "7719 hertz" in " ".join(c["text"] for c in cited)

    # The same file again is recognised as already there.
    before = len(by_testid(driver, "upload-item"))
    one(driver, "file-input").send_keys(os.path.join(FIXTURES, "sample.docx"))
    one(driver, "upload-button").click()
    wait(driver, lambda d: len(by_testid(d, "upload-item")) > before)
    item = by_testid(driver, "upload-item")[0]
    wait(driver, lambda d: item.get_attribute("data-state") != "uploading", timeout=INGEST_TIMEOUT)
    assert item.get_attribute("data-state") == "duplicate", one(item, "upload-status").text
    assert DOCX_TITLE in one(item, "upload-status").text


def test_a_refused_file_shows_the_servers_reason(web_server, signed_in):
    driver = signed_in
    admin_page(driver, web_server)
    before = len(by_testid(driver, "upload-item"))
    one(driver, "file-input").send_keys(os.path.join(FIXTURES, "sheet.xlsx"))
    one(driver, "upload-button").click()
    item = finished_item(driver, before, "sheet.xlsx")
    assert item.get_attribute("data-state") == "error"
    job = api(web_server, "GET", f"/v1/documents/jobs/{item.get_attribute('data-job')}")["job"]
    assert job["state"] == "failed" and job["error"]
    assert job["error"] in one(item, "upload-status").text
    screenshot(driver, "admin-upload-refused.png", one(driver, "upload-form"))


def test_an_upload_is_cancelled_while_it_is_indexed(web_server, signed_in):
    driver = signed_in
    admin_page(driver, web_server)
    with tempfile.TemporaryDirectory(prefix="ragd-admin-big-") as folder:
        # Thousands of passages: seconds of embedding, time enough to cancel.
        path = os.path.join(folder, "long-survey.txt")
        with open(path, "w") as f:
            for i in range(20000):
                f.write(f"Survey line {i}: the lighthouse keeper logged wind {i % 37} knots from bearing {i % 360}.\n")
        before = len(by_testid(driver, "upload-item"))
        one(driver, "file-input").send_keys(path)
        one(driver, "upload-button").click()
        wait(driver, lambda d: len(by_testid(d, "upload-item")) > before, message="no upload item appeared")
        item = by_testid(driver, "upload-item")[0]
        # The bar follows the passages embedded.
        wait(driver, lambda d: item.get_attribute("data-phase") == "running" and
             float(one(item, "upload-progress").get_attribute("max")) > 1, timeout=INGEST_TIMEOUT,
             message="indexing progress not shown")
        assert "passages" in one(item, "upload-status").text
        one(item, "upload-cancel").click()
        wait(driver, lambda d: item.get_attribute("data-state") != "uploading", timeout=INGEST_TIMEOUT)
    assert item.get_attribute("data-state") == "cancelled", one(item, "upload-status").text
    job = api(web_server, "GET", f"/v1/documents/jobs/{item.get_attribute('data-job')}")["job"]
    assert job["state"] == "cancelled" and job["chunks_done"] < job["chunks_total"], job
    assert "long-survey" not in [d["title"] for d in api(web_server, "GET", "/v1/documents")["documents"]]


def test_dropped_files_and_folders_are_uploaded(web_server, signed_in):
    driver = signed_in
    admin_page(driver, web_server)
    before = len(by_testid(driver, "upload-item"))
    # A drop as the browser delivers it, with a file made in the page.
    driver.execute_script("""
        var dt = new DataTransfer();
        dt.items.add(new File(['The Ostrava ferry leaves pier 9 at dawn; its captain is Lena Vosk.\\n'],
                              'ferry-notes.txt', {type: 'text/plain'}));
        dt.items.add(new File(['ignored'], 'table.xlsx'));
        var zone = document.getElementById('drop-zone');
        zone.dispatchEvent(new DragEvent('dragover', {dataTransfer: dt, bubbles: true, cancelable: true}));
        zone.dispatchEvent(new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true}));""")
    item = finished_item(driver, before, "ferry-notes.txt")
    assert item.get_attribute("data-state") == "done", one(item, "upload-status").text
    assert "Left out 1 file" in one(driver, "upload-note").text
    wait(driver, lambda d: "ferry-notes" in document_titles(d), message="dropped file not listed")

    # The drop zone's own picker uploads at once too.
    with tempfile.TemporaryDirectory(prefix="ragd-admin-pick-") as folder:
        path = os.path.join(folder, "orchard.txt")
        with open(path, "w") as f:
            f.write("The Brisk orchard grows 214 quince trees on its south slope.\n")
        before = len(by_testid(driver, "upload-item"))
        one(driver, "drop-input").send_keys(path)
        item = finished_item(driver, before, "orchard.txt")
    assert item.get_attribute("data-state") == "done", one(item, "upload-status").text

    # A folder: its supported files, with their paths inside it.
    with tempfile.TemporaryDirectory(prefix="ragd-admin-folder-") as folder:
        os.makedirs(os.path.join(folder, "inner"))
        with open(os.path.join(folder, "inner", "glacier.md"), "w") as f:
            f.write("# Glacier log\n\nThe Tarn glacier retreated 41 metres in the survey year.\n")
        # Several at once: their jobs are followed through one list request.
        for n in range(5):
            with open(os.path.join(folder, f"moraine-{n}.txt"), "w") as f:
                f.write(f"Moraine stone {n} weighs {100 + n} tonnes and lies {n + 3} metres from the cairn.\n" * 40)
        with open(os.path.join(folder, "picture.bin"), "wb") as f:
            f.write(b"\x00\x01")
        before = len(by_testid(driver, "upload-item"))
        one(driver, "folder-input").send_keys(folder)
        item = finished_item(driver, before, "glacier.md")
        wait(driver, lambda d: len(by_testid(d, "upload-item")) == before + 6, message="not every file uploaded")
        items = by_testid(driver, "upload-item")[:6]
        wait(driver, lambda d: all(i.get_attribute("data-state") != "uploading" for i in items),
             timeout=INGEST_TIMEOUT, message="folder uploads never finished")
    assert item.get_attribute("data-state") == "done", one(item, "upload-status").text
    assert "inner/glacier.md" in one(item, "upload-item-name").text
    assert [i.get_attribute("data-state") for i in items] == ["done"] * 6
    assert "Left out 1 file" in one(driver, "upload-note").text
    wait(driver, lambda d: "Glacier log" in document_titles(d) and "moraine-4" in document_titles(d),
         message="folder files not listed")


# ------------------------------------------------------------------ documents

def test_documents_are_searched_sorted_and_reindexed(web_server, signed_in):
    driver = signed_in
    for title, text in (("Aardvark almanac", "Aardvarks dig burrows at night. " * 3),
                        ("Zebra zine", "Zebras live in herds on the plains. " * 40),
                        (HOSTILE, "Markup in a title stays text.")):
        api(web_server, "POST", "/v1/documents", json={"title": title, "text": text})
    admin_page(driver, web_server)
    wait(driver, lambda d: "Zebra zine" in document_titles(d), message="documents not listed")
    total = len(by_testid(driver, "document-row"))
    assert HOSTILE in document_titles(driver)
    assert_page_clean(driver)

    search = one(driver, "doc-search")
    search.send_keys("ZEBRA")
    wait(driver, lambda d: document_titles(d) == ["Zebra zine"], message="search did not filter")
    assert one(driver, "doc-count").text == f"(1 of {total})"
    search.clear()
    search.send_keys("no such document")
    wait(driver, lambda d: not by_testid(d, "document-row") and one(d, "no-matches").is_displayed())
    search.clear()
    search.send_keys(" ")  # an input event with an empty query: all again
    wait(driver, lambda d: len(by_testid(d, "document-row")) == total)

    def column(testid, attr=None):
        cells = [one(r, testid) for r in by_testid(driver, "document-row")]
        return [c.get_attribute(attr) if attr else c.text for c in cells]

    one(driver, "sort-title").click()
    titles = column("document-title")
    assert titles == sorted(titles, key=str.lower), titles
    one(driver, "sort-title").click()
    assert column("document-title") == list(reversed(titles))
    one(driver, "sort-size").click()
    sizes = [int(s) for s in column("document-size", "data-bytes")]
    assert sizes == sorted(sizes, reverse=True), sizes
    th = driver.execute_script("return arguments[0].closest('th')", one(driver, "sort-size"))
    assert th.get_attribute("aria-sort") == "descending"
    one(driver, "sort-size").click()
    assert [int(s) for s in column("document-size", "data-bytes")] == sorted(sizes)

    # Re-index: the job is followed; the document keeps its id and its passages.
    row = next(r for r in by_testid(driver, "document-row") if one(r, "document-title").text == "Zebra zine")
    doc_id = row.get_attribute("data-id")
    chunks = one(row, "document-chunks").text
    one(row, "reindex-document").click()

    def reindexed(d):
        rows = [r for r in by_testid(d, "document-row") if r.get_attribute("data-id") == doc_id]
        status = by_testid(rows[0], "reindex-status") if rows else []
        return status and status[0].get_attribute("data-state") not in ("running",) and status[0]
    status = wait(driver, reindexed, timeout=INGEST_TIMEOUT, message="re-index never finished")
    assert status.get_attribute("data-state") == "done", status.text
    row = next(r for r in by_testid(driver, "document-row") if r.get_attribute("data-id") == doc_id)
    assert one(row, "document-chunks").text == chunks
    jobs = api(web_server, "GET", "/v1/documents/jobs")["jobs"]
    assert any(j.get("kind") == "reindex" and j["state"] == "done" for j in jobs), jobs
    assert_page_clean(driver)
    screenshot(driver, "admin-documents.png", one(driver, "doc-search"))


# ------------------------------------------------------------------ status

def test_status_panel_shows_models_and_time_to_first_token(web_server, signed_in):
    driver = signed_in
    answer(web_server, None, "What is the Tarn glacier?")
    status = api(web_server, "GET", "/v1/admin/status")
    admin_page(driver, web_server)
    wait(driver, lambda d: by_testid(d, "status-model"), message="status panel not drawn")
    shown = [one(r, "status-model-id").text for r in by_testid(driver, "status-model")]
    assert shown == [m["id"] for m in status["models"]]
    assert TEST_LLM.removesuffix(".gguf") in shown, shown  # the model conftest's server runs
    assert "embedding" in [one(r, "status-model-role").text for r in by_testid(driver, "status-model")]
    p50 = one(driver, "status-ttft-p50")
    assert float(p50.get_attribute("data-value")) > 0 and p50.text.endswith("s"), p50.text
    assert int(one(driver, "status-generations").get_attribute("data-value")) >= 1
    assert one(driver, "status-version").text == status["version"]
    assert by_testid(driver, "status-kv"), "no KV cache meter"
    # Read again every 5 s: a new answer shows without a reload.
    before = int(one(driver, "status-generations").get_attribute("data-value"))
    answer(web_server, None, "And the Ostrava ferry?")
    wait(driver, lambda d: int(one(d, "status-generations").get_attribute("data-value")) > before, timeout=15,
         message="status not refreshed")
    screenshot(driver, "admin-status.png")
