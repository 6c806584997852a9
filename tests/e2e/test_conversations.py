"""Conversations, document filters, ratings and the read-only library.

Against a real `ragd serve` on the sample corpus with the small test model:
conversations are kept per user (another user's answer 404), /v1/ask with a
conversation_id answers exactly as with the same turns given as messages
and stores the turn, replace_from regenerates or edits, documents=[...]
restricts retrieval, ratings reach the admin list and the eval export, PDF
passages carry their page.
"""
import json
import os
import socket
import subprocess
import tempfile
import time

import pytest
import requests

from conftest import ADMIN_KEY, RAGD, ROOT, TEST_LLM

FIRST = "How do I change the port ragd listens on?"
FOLLOW_UP = "And its default?"


def call(server, method, path, key=ADMIN_KEY, **kw):
    return requests.request(method, server.url + path, headers={"Authorization": f"Bearer {key}"}, timeout=300,
                            **kw)


@pytest.fixture(scope="module")
def users(server):
    keys = {}
    for name in ("alice", "bob"):
        r = call(server, "POST", "/v1/users", json={"username": name, "role": "user"})
        assert r.status_code == 201, r.text
        keys[name] = r.json()["api_key"]
    return keys


def ask(server, key, body):
    body = dict({"max_tokens": 12}, **body)
    r = call(server, "POST", "/v1/ask", key, json=body)
    assert r.status_code == 200, r.text
    return r.json()


def stream_events(server, key, body):
    r = call(server, "POST", "/v1/ask", key, json=dict({"max_tokens": 4}, **body, stream=True), stream=True)
    assert r.status_code == 200, r.text
    return [json.loads(line[6:]) for line in r.iter_lines(decode_unicode=True)
            if line.startswith("data: ") and line != "data: [DONE]"]


def retrieved(server, key, body):
    """Every passage retrieved for the question (the stream's first event)."""
    first = stream_events(server, key, body)[0]
    assert first["type"] == "citations", first
    return first["citations"]


def new_conversation(server, key, **body):
    r = call(server, "POST", "/v1/conversations", key, json=body)
    assert r.status_code == 201, r.text
    return r.json()["id"]


def messages_of(server, key, cid):
    r = call(server, "GET", f"/v1/conversations/{cid}", key)
    assert r.status_code == 200, r.text
    return r.json()["messages"]


def test_create_rename_search_delete(server, users):
    alice = users["alice"]
    a = new_conversation(server, alice, title="Backups of the data folder")
    b = new_conversation(server, alice)
    listed = call(server, "GET", "/v1/conversations", alice).json()["conversations"]
    assert [c["id"] for c in listed][:2] == [b, a]  # newest first
    r = call(server, "PATCH", f"/v1/conversations/{b}", alice, json={"title": "Ports and TLS"})
    assert r.status_code == 200 and r.json()["title"] == "Ports and TLS", r.text
    found = call(server, "GET", "/v1/conversations", alice, params={"q": "backup"}).json()["conversations"]
    assert [c["id"] for c in found] == [a]
    assert call(server, "GET", "/v1/conversations", alice, params={"q": "nothing like it"}).json() == {
        "conversations": []}
    assert call(server, "DELETE", f"/v1/conversations/{a}", alice).status_code == 200
    assert call(server, "GET", f"/v1/conversations/{a}", alice).status_code == 404
    assert call(server, "DELETE", f"/v1/conversations/{a}", alice).status_code == 404


@pytest.mark.parametrize("method,path,body", [
    ("GET", "/v1/conversations/{id}", None),
    ("PATCH", "/v1/conversations/{id}", {"title": "mine now"}),
    ("DELETE", "/v1/conversations/{id}", None),
    ("POST", "/v1/ask", {"question": FIRST, "conversation_id": "{id}"}),
])
def test_another_users_conversation_is_not_found(server, users, method, path, body):
    cid = new_conversation(server, users["alice"], title="Alice's")
    if body and body.get("conversation_id") == "{id}":
        body = dict(body, conversation_id=cid)
    r = call(server, method, path.format(id=cid), users["bob"], json=body)
    assert r.status_code == 404, r.text
    assert r.json()["error"]["message"] == f"no conversation {cid}"
    # Nothing of Alice's changed.
    r = call(server, "GET", f"/v1/conversations/{cid}", users["alice"])
    assert r.status_code == 200 and r.json()["title"] == "Alice's" and r.json()["messages"] == []
    assert cid not in [c["id"] for c in call(server, "GET", "/v1/conversations", users["bob"]).json()["conversations"]]


@pytest.mark.parametrize("method,path,body,status", [
    ("GET", "/v1/conversations/abc", None, 400),
    ("GET", "/v1/conversations/0", None, 400),
    ("GET", "/v1/conversations/999999", None, 404),
    ("PATCH", "/v1/conversations/{id}", {"title": ""}, 400),
    ("PATCH", "/v1/conversations/{id}", {"title": "x" * 201}, 400),
    ("PATCH", "/v1/conversations/{id}", {"title": 7}, 400),
    ("PATCH", "/v1/conversations/{id}", {}, 400),
    ("POST", "/v1/conversations", {"title": "a\nb"}, 400),
    ("POST", "/v1/ask", {"question": FIRST, "conversation_id": "seven"}, 400),
    ("POST", "/v1/ask", {"question": FIRST, "replace_from": 3}, 400),
    ("POST", "/v1/ask", {"messages": [{"role": "user", "content": FIRST}], "conversation_id": "{id}"}, 400),
    ("POST", "/v1/ask", {"question": FIRST, "conversation_id": "{id}", "replace_from": 999999}, 400),
    ("POST", "/v1/ask", {"question": FIRST, "documents": [999999]}, 400),
    ("POST", "/v1/ask", {"question": FIRST, "documents": "all"}, 400),
    ("POST", "/v1/ask", {"question": FIRST, "documents": [1.5]}, 400),
])
def test_bad_conversation_requests_are_refused(server, users, method, path, body, status):
    cid = new_conversation(server, users["alice"])
    if body:
        body = {k: (cid if v == "{id}" else v) for k, v in body.items()}
    r = call(server, method, path.format(id=cid), users["alice"], json=body)
    assert r.status_code == status, r.text
    assert r.json()["error"]["message"]
    assert messages_of(server, users["alice"], cid) == []  # nothing stored


def test_a_conversation_answers_as_its_messages_would(server, users):
    alice = users["alice"]
    cid = new_conversation(server, alice)
    first = ask(server, alice, {"question": FIRST, "conversation_id": cid})
    assert first["conversation_id"] == cid and first["message_id"] > first["question_id"]
    follow = ask(server, alice, {"question": FOLLOW_UP, "conversation_id": cid})
    # The same turns sent as messages: the same search, prompt and answer.
    same = ask(server, alice, {"messages": [{"role": "user", "content": FIRST},
                                            {"role": "assistant", "content": first["answer"]},
                                            {"role": "user", "content": FOLLOW_UP}]})
    assert follow["usage"]["prompt_tokens"] == same["usage"]["prompt_tokens"]
    assert follow["answer"] == same["answer"]
    assert [c["chunk_id"] for c in follow["citations"]] == [c["chunk_id"] for c in same["citations"]]
    # Without the conversation the follow-up is another question.
    alone = ask(server, alice, {"question": FOLLOW_UP})
    assert alone["usage"]["prompt_tokens"] != follow["usage"]["prompt_tokens"]

    messages = messages_of(server, alice, cid)
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    assert [m["content"] for m in messages] == [FIRST, first["answer"], FOLLOW_UP, follow["answer"]]
    assert messages[3]["id"] == follow["message_id"]
    answer = messages[1]
    assert answer["finish_reason"] in ("stop", "length") and answer["feedback"] is None
    assert {"citations", "cited", "sentences", "grounded"} <= set(answer)
    assert all({"n", "document_id", "title", "section", "start", "end", "text"} <= set(c) for c in answer["citations"])
    listed = call(server, "GET", "/v1/conversations", alice).json()["conversations"]
    mine = next(c for c in listed if c["id"] == cid)
    assert mine["title"] == FIRST and mine["message_count"] == 4


def test_streamed_done_event_names_the_stored_turn(server, users):
    alice = users["alice"]
    cid = new_conversation(server, alice)
    events = stream_events(server, alice, {"question": FIRST, "conversation_id": cid, "max_tokens": 8})
    done = events[-1]
    assert done["type"] == "done" and done["conversation_id"] == cid, done
    assert all("section" in c for c in events[0]["citations"])
    text = "".join(e["content"] for e in events if e["type"] == "delta")
    messages = messages_of(server, alice, cid)
    assert [m["id"] for m in messages] == [done["question_id"], done["message_id"]]
    assert messages[1]["content"] == text


def test_a_stopped_answer_is_kept_as_far_as_it_went(server, users):
    alice = users["alice"]
    cid = new_conversation(server, alice)
    body = json.dumps({"question": "Tell me everything about configuring ragd, in detail.", "stream": True,
                       "conversation_id": cid, "max_tokens": 400}).encode()
    s = socket.create_connection(("127.0.0.1", server.port))
    s.sendall(b"POST /v1/ask HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + alice.encode() +
              b"\r\nContent-Type: application/json\r\nContent-Length: " + str(len(body)).encode() +
              b"\r\n\r\n" + body)
    got = b""
    while got.count(b'"type":"delta"') < 2:
        got += s.recv(4096)
    s.close()  # the Stop button
    deadline = time.time() + 60
    while time.time() < deadline and not messages_of(server, alice, cid):
        time.sleep(0.2)
    messages = messages_of(server, alice, cid)
    assert [m["role"] for m in messages] == ["user", "assistant"], messages
    assert messages[1]["finish_reason"] == "cancelled" and messages[1]["content"], messages[1]


def test_replace_from_regenerates_and_edits(server, users):
    alice = users["alice"]
    cid = new_conversation(server, alice)
    first = ask(server, alice, {"question": FIRST, "conversation_id": cid})
    second = ask(server, alice, {"question": FOLLOW_UP, "conversation_id": cid})
    # Regenerate the last answer: its question is asked again in its place.
    again = ask(server, alice, {"question": FOLLOW_UP, "conversation_id": cid,
                                "replace_from": second["question_id"]})
    messages = messages_of(server, alice, cid)
    assert [m["id"] for m in messages] == [first["question_id"], first["message_id"], again["question_id"],
                                           again["message_id"]]
    assert again["question_id"] > second["message_id"]
    # Edit the first question: it and everything after it are replaced.
    edited = ask(server, alice, {"question": "Where does ragd keep its data?", "conversation_id": cid,
                                 "replace_from": first["question_id"]})
    messages = messages_of(server, alice, cid)
    assert [m["content"] for m in messages] == ["Where does ragd keep its data?", edited["answer"]]


def test_documents_restrict_retrieval(server, users):
    docs = call(server, "GET", "/v1/library", users["alice"]).json()["documents"]
    assert len(docs) >= 2, docs
    chosen = next(d for d in docs if "users" in d["title"].lower() or "quota" in d["title"].lower())
    # Asked about ports, answered from the users-and-quotas guide only.
    only = retrieved(server, users["alice"], {"question": FIRST, "documents": [chosen["id"]]})
    assert only and all(c["document_id"] == chosen["id"] for c in only), only
    cid = new_conversation(server, users["alice"])
    ask(server, users["alice"], {"question": FIRST, "documents": [chosen["id"]], "conversation_id": cid})
    assert messages_of(server, users["alice"], cid)[1]["documents"] == [chosen["id"]]
    everything = retrieved(server, users["alice"], {"question": FIRST})
    assert any(c["document_id"] != chosen["id"] for c in everything), everything


def test_library_shows_a_document_with_its_passages(server, users):
    docs = call(server, "GET", "/v1/library", users["bob"]).json()["documents"]
    doc = call(server, "GET", f"/v1/library/{docs[0]['id']}", users["bob"]).json()
    text = doc["text"].encode()
    assert doc["passages"] and doc["title"] == docs[0]["title"]
    for p in doc["passages"]:
        assert 0 <= p["start"] < p["end"] <= len(text)
        assert "page" not in p  # Markdown has no pages
    assert any(p["section"] for p in doc["passages"])
    assert call(server, "GET", "/v1/library/999999", users["bob"]).status_code == 404
    assert call(server, "GET", "/v1/library/x", users["bob"]).status_code == 400
    assert requests.get(server.url + "/v1/library", timeout=30).status_code == 401


def test_pdf_passages_carry_their_page(server, users):
    with open(os.path.join(ROOT, "tests", "data", "corpus", "sample.pdf"), "rb") as f:
        r = requests.post(server.url + "/v1/documents", headers={"Authorization": f"Bearer {ADMIN_KEY}"},
                          files={"file": ("solar-handbook.pdf", f, "application/pdf")}, timeout=300)
    assert r.status_code in (200, 201), r.text
    doc_id = r.json()["document"]["id"]
    doc = call(server, "GET", f"/v1/library/{doc_id}", users["alice"]).json()
    pages = {p["page"] for p in doc["passages"]}
    assert pages and min(pages) == 1, doc["passages"]
    text = doc["text"].encode()
    for p in doc["passages"]:
        assert p["page"] == 1 + text[:p["start"]].count(b"\f")
    assert doc["text"].count("\f") == 1  # two pages
    cited = retrieved(server, users["alice"], {"question": "How often should the solar panels be cleaned?",
                                               "documents": [doc_id]})
    assert cited and all(c["page"] == 1 + text[:c["start"]].count(b"\f") for c in cited), cited


def test_ratings_reach_admins_and_the_eval_export(server, users):
    alice, bob = users["alice"], users["bob"]
    cid = new_conversation(server, alice)
    answer = ask(server, alice, {"question": FIRST, "conversation_id": cid})
    mid = answer["message_id"]
    r = call(server, "POST", "/v1/feedback", alice, json={"message_id": mid, "rating": "down"})
    assert r.status_code == 200 and r.json()["rating"] == -1, r.text
    r = call(server, "POST", "/v1/feedback", alice,
             json={"message_id": mid, "rating": "up", "comment": "names the setting"})
    assert r.status_code == 200 and r.json()["rating"] == 1, r.text
    assert messages_of(server, alice, cid)[1]["feedback"]["comment"] == "names the setting"
    for body, status in (({"message_id": mid, "rating": "up"}, 404),):  # bob cannot rate Alice's answer
        assert call(server, "POST", "/v1/feedback", bob, json=body).status_code == status
    for bad in ({"message_id": mid}, {"message_id": mid, "rating": "meh"}, {"message_id": mid, "rating": 2},
                {"rating": "up"}, {"message_id": answer["question_id"], "rating": "up"},
                {"message_id": mid, "rating": "up", "comment": "x" * 4001}):
        r = call(server, "POST", "/v1/feedback", alice, json=bad)
        assert r.status_code == 400, (bad, r.text)
    assert call(server, "GET", "/v1/feedback", alice).status_code == 403
    listed = call(server, "GET", "/v1/feedback").json()["feedback"]
    mine = [f for f in listed if f["message_id"] == mid]
    assert len(mine) == 1 and mine[0]["username"] == "alice" and mine[0]["question"] == FIRST
    assert mine[0]["comment"] == "names the setting" and mine[0]["answer"] == answer["answer"]
    cited_titles = sorted({c["title"] for c in answer["citations"]})
    assert sorted(mine[0]["documents"]) == cited_titles
    bobs = ask(server, bob, {"question": FOLLOW_UP, "conversation_id": new_conversation(server, bob)})
    r = call(server, "POST", "/v1/feedback", bob, json={"message_id": bobs["message_id"], "rating": "down",
                                                         "comment": "no idea what it means"})
    assert r.status_code == 200, r.text
    # The rating outlives its conversation.
    assert call(server, "DELETE", f"/v1/conversations/{cid}", alice).status_code == 200
    export = call(server, "GET", "/v1/feedback/export")
    assert export.status_code == 200 and export.headers["Content-Type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in export.text.splitlines()]
    line = next(x for x in lines if x["question"] == FIRST and x.get("comment") == "names the setting")
    assert line["id"].startswith("feedback-") and line["category"] == "feedback_up"
    assert sorted(line["documents"]) == cited_titles == sorted(line["cited_documents"])
    assert line["key_phrases"] == []
    down = next(x for x in lines if x.get("comment") == "no idea what it means")
    assert down["category"] == "feedback_down" and down["documents"] == [] and down["question"] == FOLLOW_UP
    assert call(server, "GET", "/v1/feedback/export", alice).status_code == 403
    # `ragd eval` reads the export as its labelled set: the rated question is
    # retrieved for and its cited documents count as the relevant ones.
    with tempfile.TemporaryDirectory(prefix="ragd-e2e-eval-") as folder:
        path = os.path.join(folder, "feedback.jsonl")
        with open(path, "w") as f:
            f.write(export.text)
        args = [RAGD, "eval", "--data", os.path.join(folder, "data"), "--ingest", os.path.join(ROOT, "docs", "sample"),
                "-k", "5", "--answer", "none", "--min-recall", "0", "--min-mrr", "0", "--json", path]
        run = subprocess.run(args, capture_output=True, text=True, timeout=300,
                             env=dict(os.environ, RAGD_MODELS_LLM=TEST_LLM))
    assert run.returncode == 0, run.stderr[-2000:]
    evaluated = {q["id"]: q for q in json.loads(run.stdout)["questions"]}
    assert set(evaluated) == {x["id"] for x in lines}
    if cited_titles:
        assert evaluated[line["id"]]["first_relevant_rank"] >= 1, evaluated[line["id"]]


def test_question_limit_is_served_and_enforced(server, users):
    limits = call(server, "GET", "/v1/chat/limits", users["bob"]).json()
    limit = limits["max_question_bytes"]
    assert limit == 8192
    r = call(server, "POST", "/v1/ask", users["bob"], json={"question": "é" * (limit // 2) + "x", "max_tokens": 1})
    assert r.status_code == 400 and str(limit) in r.json()["error"]["message"], r.text
