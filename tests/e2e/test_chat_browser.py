"""The chat page's conversations, citations, document filter and answer
actions, driven through headless Chromium with Selenium (as test_browser.py).

A conversation of three turns survives a reload; the sidebar renames,
searches, reopens and deletes; a citation opens its passage highlighted in
its document with its section, and a PDF's with its page; a document filter
keeps retrieval to the chosen document; an answer is copied, rated (the
admin page lists the rating), regenerated, and its question edited; the
question box refuses what the server would. Screenshots go to
build/test-artifacts/chat-*.png.
"""
import os
import tempfile

import pytest
import requests

from conftest import ADMIN_KEY, ADMIN_PASSWORD, ADMIN_USER, ROOT, Server
from test_browser import ARTIFACTS, ask, by_testid, driver, last_screen, one, open_page, path_of, wait

# The fixtures of test_browser.py: one Chromium for this module, and its last
# screen kept after each test.
assert driver and last_screen

QUESTIONS = ["How do I change the port ragd listens on?", "And its default?", "Where does ragd keep its data?"]
PDF_TITLE = "Solar Handbook"


@pytest.fixture(scope="module")
def web_server():
    with tempfile.TemporaryDirectory(prefix="ragd-chat-browser-") as data:
        srv = Server(data, extra_args=["--set", "inference.max_tokens=24"],
                     ingest=os.path.join(ROOT, "docs", "sample")).wait_ready()
        with open(os.path.join(ROOT, "tests", "data", "corpus", "sample.pdf"), "rb") as f:
            r = requests.post(srv.url + "/v1/documents", headers=srv.headers(), timeout=300,
                              files={"file": ("solar-handbook.pdf", f, "application/pdf")})
        assert r.status_code == 201, r.text
        yield srv
        assert srv.stop() == 0, srv.output()


@pytest.fixture(scope="module")
def signed_in(web_server, driver):
    driver.get(web_server.url + "/login")
    wait(driver, lambda d: by_testid(d, "login-form"))
    one(driver, "login-username").send_keys(ADMIN_USER)
    one(driver, "login-password").send_keys(ADMIN_PASSWORD)
    one(driver, "login-submit").click()
    wait(driver, lambda d: path_of(d) == "/" and one(d, "whoami").text == ADMIN_USER, message="not signed in")
    return driver


def screenshot(driver, name):
    os.makedirs(ARTIFACTS, exist_ok=True)
    assert driver.save_screenshot(os.path.join(ARTIFACTS, name))


def api(server, method, path, **kw):
    r = requests.request(method, server.url + path, headers=server.headers(), timeout=60, **kw)
    assert r.status_code < 300, r.text
    return r.json()


def start_new(driver, server):
    open_page(driver, server, "/", "whoami")
    one(driver, "new-conversation").click()
    wait(driver, lambda d: not by_testid(d, "turn") and "#c=" not in d.current_url, message="not a new page")


def conversation_id(driver):
    wait(driver, lambda d: "#c=" in d.current_url, message="no conversation in the URL")
    return int(driver.current_url.split("#c=")[1])


def stored(turn):
    """Waits until the answer's ids are known (its actions include rating)."""
    wait(turn.parent, lambda d: by_testid(turn, "feedback-up"), message="the answer was not stored")
    return turn


def sidebar_item(driver, cid):
    items = [i for i in by_testid(driver, "conversation-item") if i.get_attribute("data-id") == str(cid)]
    return items[0] if items else None


def choose_documents(driver, titles):
    one(driver, "doc-filter-button").click()
    wait(driver, lambda d: by_testid(d, "doc-filter-option"), message="no documents to choose from")
    one(driver, "doc-filter-clear").click()
    ids = []
    for option in by_testid(driver, "doc-filter-option"):
        if option.text.strip() in titles:
            one(option, "doc-filter-checkbox").click()
            ids.append(option.get_attribute("data-id"))
    assert len(ids) == len(titles), [o.text for o in by_testid(driver, "doc-filter-option")]
    one(driver, "doc-filter-done").click()
    assert one(driver, "doc-filter-button").text == f"Documents: {len(ids)} chosen"
    assert sorted(c.get_attribute("data-id") for c in by_testid(driver, "doc-filter-chip")) == sorted(ids)
    return ids


def clear_documents(driver):
    one(driver, "doc-filter-button").click()
    wait(driver, lambda d: by_testid(d, "doc-filter-option"))
    one(driver, "doc-filter-clear").click()
    one(driver, "doc-filter-done").click()
    assert one(driver, "doc-filter-button").text == "Documents: all"


def open_item(driver, item):
    item.click()
    panel = one(driver, "citation-panel")
    wait(driver, lambda d: panel.is_displayed() and panel.get_attribute("data-n") == item.get_attribute("data-n"),
         message="citation panel did not open")
    wait(driver, lambda d: by_testid(d, "citation-highlight"), message="passage not shown in its document")
    mark = one(driver, "citation-highlight")
    passage = " ".join(one(driver, "citation-text").text.split())
    # The highlighted text, without the page markers drawn inside it.
    marked = driver.execute_script("""
        var c = arguments[0].cloneNode(true);
        c.querySelectorAll('.page-break').forEach(function (b) { b.remove(); });
        return c.textContent;""", mark)
    assert " ".join(marked.split()) == passage, (marked, passage)
    # The highlight is scrolled into the visible part of the document view.
    assert driver.execute_script("""
        var v = document.getElementById('document-view'), m = arguments[0];
        var a = v.getBoundingClientRect(), b = m.getBoundingClientRect();
        return b.bottom > a.top && b.top < a.bottom;""", mark), "highlight not scrolled into view"
    return mark


# ------------------------------------------------------------------ tests

def test_three_turns_survive_a_reload(web_server, signed_in):
    driver = signed_in
    start_new(driver, web_server)
    answers = []
    for q in QUESTIONS:
        turn = stored(ask(driver, web_server, q))
        answers.append(one(turn, "answer").text)
    cid = conversation_id(driver)
    messages = api(web_server, "GET", f"/v1/conversations/{cid}")["messages"]
    assert [m["content"] for m in messages if m["role"] == "user"] == QUESTIONS

    driver.refresh()
    wait(driver, lambda d: len(by_testid(d, "turn")) == 3, message="the conversation did not come back")
    turns = by_testid(driver, "turn")
    assert [one(t, "asked").text for t in turns] == QUESTIONS
    assert [one(t, "answer").text for t in turns] == answers
    assert all(one(t, "answer").get_attribute("data-state") == "done" for t in turns)
    assert all(by_testid(t, "sources") for t in turns)
    wait(driver, lambda d: sidebar_item(d, cid) is not None, message="not in the sidebar")
    item = sidebar_item(driver, cid)
    assert "active" in item.get_attribute("class").split()
    assert one(item, "conversation-title").text == QUESTIONS[0]
    screenshot(driver, "chat-conversation-reloaded.png")

    # A fourth question after the reload follows the same conversation.
    ask(driver, web_server, "Which file formats can I upload?")
    assert conversation_id(driver) == cid
    assert len(api(web_server, "GET", f"/v1/conversations/{cid}")["messages"]) == 8


def test_sidebar_renames_searches_reopens_and_deletes(web_server, signed_in):
    driver = signed_in
    from selenium.webdriver.common.keys import Keys
    start_new(driver, web_server)
    stored(ask(driver, web_server, "What does the Stop button do?"))
    cid = conversation_id(driver)
    wait(driver, lambda d: sidebar_item(d, cid) is not None and
         one(sidebar_item(d, cid), "conversation-title").text == "What does the Stop button do?",
         message="not in the sidebar")
    one(sidebar_item(driver, cid), "conversation-rename").click()
    # The title starts selected: typing replaces it (clear() would blur the box, which saves).
    one(driver, "conversation-rename-input").send_keys("Stopping answers", Keys.ENTER)
    wait(driver, lambda d: sidebar_item(d, cid) and one(sidebar_item(d, cid), "conversation-title").text ==
         "Stopping answers", message="rename not shown")
    assert api(web_server, "GET", f"/v1/conversations/{cid}")["title"] == "Stopping answers"

    search = one(driver, "conversation-search")
    search.send_keys("no such title anywhere")
    wait(driver, lambda d: not by_testid(d, "conversation-item") and one(d, "no-conversations").is_displayed())
    search.clear()
    search.send_keys("STOPPING")
    wait(driver, lambda d: [i.get_attribute("data-id") for i in by_testid(d, "conversation-item")] == [str(cid)],
         message="search by title did not find it")

    one(driver, "new-conversation").click()
    wait(driver, lambda d: not by_testid(d, "turn"))
    one(sidebar_item(driver, cid), "conversation-title").click()
    wait(driver, lambda d: len(by_testid(d, "turn")) == 1 and conversation_id(d) == cid, message="not reopened")

    delete = one(sidebar_item(driver, cid), "conversation-delete")
    delete.click()
    assert delete.text == "Delete?"  # a second click deletes
    delete.click()
    wait(driver, lambda d: sidebar_item(d, cid) is None and not by_testid(d, "turn"), message="not deleted")
    assert requests.get(web_server.url + f"/v1/conversations/{cid}", headers=web_server.headers(),
                        timeout=30).status_code == 404
    search.clear()


def test_citation_opens_its_passage_with_page_and_section(web_server, signed_in):
    driver = signed_in
    start_new(driver, web_server)
    # A PDF: the passage is highlighted inside the document and named by page.
    choose_documents(driver, [PDF_TITLE])
    turn = ask(driver, web_server, "How often should the solar panels be cleaned?")
    items = by_testid(turn, "source-item")
    assert items and all(i.text.startswith("[") and PDF_TITLE in i.text for i in items), [i.text for i in items]
    mark = open_item(driver, items[0])
    assert one(driver, "citation-title").text == PDF_TITLE
    assert "Page 1" in one(driver, "citation-location").text
    assert mark.get_attribute("data-page") == "1"
    breaks = by_testid(one(driver, "document-view"), "page-break")
    assert [b.text for b in breaks] == ["Page 2"]
    screenshot(driver, "chat-citation-pdf-page.png")

    # Markdown: named by its section.
    clear_documents(driver)
    turn = ask(driver, web_server, "How long does a browser session stay valid?")
    with_section = [i for i in by_testid(turn, "source-item")
                    if any("Section:" in w.text for w in by_testid(i, "source-where"))]
    assert with_section, [i.text for i in by_testid(turn, "source-item")]
    open_item(driver, with_section[0])
    location = one(driver, "citation-location").text
    assert location.startswith("Section: ") and "Page" not in location, location
    screenshot(driver, "chat-citation-section.png")
    one(driver, "citation-close").click()


def test_document_filter_keeps_to_the_chosen_documents(web_server, signed_in):
    driver = signed_in
    start_new(driver, web_server)
    docs = api(web_server, "GET", "/v1/library")["documents"]
    title = next(d["title"] for d in docs if "users" in d["title"].lower() or "quota" in d["title"].lower())
    [chosen] = choose_documents(driver, [title])
    turn = ask(driver, web_server, QUESTIONS[0])
    items = by_testid(turn, "source-item")
    assert items and all(i.get_attribute("data-document-id") == chosen for i in items), [i.text for i in items]
    assert "from 1 chosen document" in one(turn, "answer-usage").text
    screenshot(driver, "chat-document-filter.png")
    clear_documents(driver)
    turn = ask(driver, web_server, QUESTIONS[0])
    assert any(i.get_attribute("data-document-id") != chosen for i in by_testid(turn, "source-item"))


def test_copy_rate_regenerate_and_edit(web_server, signed_in):
    driver = signed_in
    start_new(driver, web_server)
    first = stored(ask(driver, web_server, QUESTIONS[0]))
    second = stored(ask(driver, web_server, QUESTIONS[1]))
    cid = conversation_id(driver)
    # Only the last answer can be regenerated.
    assert not one(first, "answer-regenerate").is_displayed()

    # Headless Chromium grants the clipboard only when asked; then the copy can be read back.
    driver.execute_cdp_cmd("Browser.grantPermissions", {
        "origin": web_server.url, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]})
    copy = one(second, "answer-copy")
    copy.click()
    wait(driver, lambda d: copy.get_attribute("data-copied") == "1", message=f"copy failed: {copy.text}")
    copied = driver.execute_async_script(
        "var done = arguments[0]; navigator.clipboard.readText().then(done, function (e) { done('!' + e); });")
    assert copied == api(web_server, "GET", f"/v1/conversations/{cid}")["messages"][3]["content"], copied

    one(second, "feedback-down").click()
    comment = one(second, "feedback-comment")
    wait(driver, lambda d: comment.is_displayed())
    comment.send_keys("misses the default")
    one(second, "feedback-send").click()
    status = one(second, "feedback-status")
    wait(driver, lambda d: status.get_attribute("data-saved") == "comment", message=status.text)
    assert one(second, "feedback-down").get_attribute("aria-pressed") == "true"
    rated = [f for f in api(web_server, "GET", "/v1/feedback")["feedback"] if f["comment"] == "misses the default"]
    assert len(rated) == 1 and rated[0]["rating"] == -1 and rated[0]["question"] == QUESTIONS[1]

    # Regenerate: the last turn is asked again in its place.
    one(second, "answer-regenerate").click()
    wait(driver, lambda d: len(by_testid(d, "turn")) == 2 and
         one(by_testid(d, "turn")[1], "answer").get_attribute("data-state") == "done", timeout=240,
         message="regenerated answer never finished")
    stored(by_testid(driver, "turn")[1])
    messages = api(web_server, "GET", f"/v1/conversations/{cid}")["messages"]
    assert [m["content"] for m in messages if m["role"] == "user"] == QUESTIONS[:2]

    # Edit the first question: it and the turn after it are replaced.
    one(by_testid(driver, "turn")[0], "edit-question").click()
    box = one(driver, "edit-input")
    box.clear()
    box.send_keys(QUESTIONS[2])
    one(driver, "edit-send").click()
    wait(driver, lambda d: len(by_testid(d, "turn")) == 1 and
         one(by_testid(d, "turn")[0], "answer").get_attribute("data-state") == "done", timeout=240,
         message="edited question never answered")
    assert one(by_testid(driver, "turn")[0], "asked").text == QUESTIONS[2]
    stored(by_testid(driver, "turn")[0])
    messages = api(web_server, "GET", f"/v1/conversations/{cid}")["messages"]
    assert [m["content"] for m in messages if m["role"] == "user"] == [QUESTIONS[2]]
    screenshot(driver, "chat-answer-actions.png")

    # The admin page lists the rating (it outlives the replaced turn).
    open_page(driver, web_server, "/admin", "whoami")
    wait(driver, lambda d: any(one(r, "feedback-comment").text == "misses the default"
                               for r in by_testid(d, "feedback-row")), message="rating not on the admin page")
    row = next(r for r in by_testid(driver, "feedback-row") if one(r, "feedback-comment").text == "misses the default")
    assert row.get_attribute("data-rating") == "-1" and one(row, "feedback-question").text == QUESTIONS[1]
    driver.execute_script("arguments[0].scrollIntoView()", row)
    screenshot(driver, "chat-admin-ratings.png")


def test_question_box_takes_the_servers_limit(web_server, signed_in):
    driver = signed_in
    open_page(driver, web_server, "/", "whoami")
    limit = api(web_server, "GET", "/v1/chat/limits")["max_question_bytes"]
    box = one(driver, "question")
    wait(driver, lambda d: box.get_attribute("data-max-bytes") == str(limit), message="limit not loaded")
    fill = "arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input'));"
    line = one(driver, "question-limit")
    driver.execute_script(fill, box, "é" * (limit // 2) + "x")  # one byte over, in two-byte characters
    wait(driver, lambda d: line.get_attribute("data-over") == "1" and line.is_displayed())
    assert str(limit) in line.text.replace(",", "") and not one(driver, "send").is_enabled()
    driver.execute_script(fill, box, "é" * (limit // 2))  # exactly the limit
    wait(driver, lambda d: line.get_attribute("data-over") == "0")
    assert one(driver, "send").is_enabled()
    driver.execute_script(fill, box, "")
