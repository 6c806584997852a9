"""RAG answers with citations, documents, users, quotas, auth, bad input."""
import concurrent.futures
import json
import re
import time

import pytest
import requests

from conftest import ADMIN_KEY, abandon_stream


def post(server, path, body, key=ADMIN_KEY, **kw):
    return requests.post(server.url + path, headers={"Authorization": f"Bearer {key}"}, json=body, timeout=300, **kw)


def make_user(server, name, quota=None, role="user"):
    body = {"username": name, "password": "password-" + name, "role": role}
    if quota is not None:
        body["token_quota"] = quota
    r = post(server, "/v1/users", body)
    assert r.status_code == 201, r.text
    return r.json()["api_key"]


def test_ask_cites_the_sample_corpus(server):
    r = post(server, "/v1/ask", {"question": "How do I change the port ragd listens on?", "max_tokens": 32})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["usage"]["prompt_tokens"] > 100
    assert body["usage"]["completion_tokens"] <= 32
    for c in body["citations"]:
        assert c["n"] >= 1 and c["title"] and c["text"] and c["document_id"] > 0
        assert re.search(r"\[[\d ,]*\b%d\b[\d ,]*\]" % c["n"], body["answer"]), (c["n"], body["answer"])


def test_a_question_in_another_language_is_translated_before_retrieval(server):
    """The fast model translates a Portuguese question for retrieval
    (services/query_translation.h) and the time it took is in the timings;
    an English question goes straight to retrieval."""
    pt = post(server, "/v1/ask", {"question": "Como mudo a porta em que o ragd escuta?", "max_tokens": 8})
    assert pt.status_code == 200, pt.text
    assert pt.json()["timings"]["translation_ms"] > 0, pt.json()["timings"]
    en = post(server, "/v1/ask", {"question": "How do I change the port ragd listens on?", "max_tokens": 8})
    assert en.status_code == 200, en.text
    assert en.json()["timings"]["translation_ms"] == 0, en.json()["timings"]


def test_ask_stream_sends_sources_first(server):
    r = post(server, "/v1/ask", {"question": "What file formats can be uploaded?", "stream": True, "max_tokens": 16},
             stream=True)
    assert r.status_code == 200
    events = []
    for line in r.iter_lines(decode_unicode=True):
        if line.startswith("data: "):
            events.append(line[6:])
    assert events[-1] == "[DONE]"
    parsed = [json.loads(e) for e in events[:-1]]
    assert parsed[0]["type"] == "citations" and len(parsed[0]["citations"]) >= 1
    assert parsed[0]["citations"][0]["n"] == 1
    assert parsed[-1]["type"] == "done" and parsed[-1]["usage"]["completion_tokens"] <= 16
    assert all(p["type"] == "delta" for p in parsed[1:-1])


def test_documents_upload_search_delete(server):
    text = "The zorblax frequency of the Kestrel array is 4411 hertz, set by the calibration ritual."
    files = {"file": ("kestrel.txt", text.encode(), "text/plain")}
    r = requests.post(server.url + "/v1/documents", headers=server.headers(), files=files, timeout=120)
    assert r.status_code == 201, r.text
    doc = r.json()["document"]
    assert doc["chunks"] >= 1 and doc["title"]
    # The same bytes again are recognised, not duplicated.
    r = requests.post(server.url + "/v1/documents", headers=server.headers(), files=files, timeout=120)
    assert r.status_code == 200 and r.json()["duplicate"] is True
    ids = [d["id"] for d in requests.get(server.url + "/v1/documents", headers=server.headers()).json()["documents"]]
    assert doc["id"] in ids
    r = post(server, "/v1/ask", {"question": "What is the zorblax frequency of the Kestrel array?", "max_tokens": 8})
    sources = r.json()["citations"]
    r2 = post(server, "/v1/ask", {"question": "What is the zorblax frequency of the Kestrel array?", "max_tokens": 1,
                                  "stream": True}, stream=True)
    first = json.loads(next(l for l in r2.iter_lines(decode_unicode=True) if l.startswith("data: "))[6:])
    assert first["citations"][0]["document_id"] == doc["id"]
    r = requests.delete(f"{server.url}/v1/documents/{doc['id']}", headers=server.headers())
    assert r.status_code == 200
    assert requests.get(f"{server.url}/v1/documents/{doc['id']}", headers=server.headers()).status_code == 404


def test_bad_uploads_are_refused(server):
    h = server.headers()
    r = requests.post(server.url + "/v1/documents", headers=h, files={"file": ("x.bin", bytes(range(256)) * 8)})
    assert r.status_code in (400, 415), r.text
    r = requests.post(server.url + "/v1/documents", headers=h, files={"file": ("empty.txt", b"   \n")})
    assert r.status_code == 400
    r = requests.post(server.url + "/v1/documents", headers=h, json={"title": "t"})
    assert r.status_code == 400 and "text" in r.json()["error"]["message"]


def test_quota_exhaustion_refuses_before_generating(server):
    key = make_user(server, "smallquota", quota=60)
    r = post(server, "/v1/chat/completions", {"messages": [{"role": "user", "content": "Hello"}], "max_tokens": 200},
             key=key)
    assert r.status_code == 429
    err = r.json()["error"]
    assert err["type"] == "quota_exceeded" and err["remaining_tokens"] == 60
    assert int(r.headers["Retry-After"]) >= 1
    usage = requests.get(server.url + "/v1/usage", headers={"Authorization": f"Bearer {key}"}).json()
    assert usage["used"] == 0  # nothing was generated or charged


# A request the quota refuses must give back what the rate limiter took for it,
# or refused requests alone would lock the user out for a minute. Each case
# asks for more than one minute's token allowance (quota.tokens_per_minute,
# 50000 by default) in requests the quota refuses, then for a small one that
# both limits allow.
REFUND_CASES = {
    # 7 prompts of 8000 + a few tokens: the context allows no more per request.
    "chat": ("/v1/chat/completions", {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 8000}, 7,
             {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1}),
    # 256 inputs of 250 tokens: 64000 tokens in one request.
    "embeddings": ("/v1/embeddings", {"input": [" ".join(["hello"] * 250)] * 256}, 1, {"input": "hello"}),
}


@pytest.mark.parametrize("case", sorted(REFUND_CASES))
def test_quota_refusal_refunds_the_rate_limit(server, case):
    path, large, repeats, small = REFUND_CASES[case]
    key = make_user(server, "refund-" + case, quota=60)
    for _ in range(repeats):
        r = post(server, path, large, key=key)
        assert r.status_code == 429 and r.json()["error"]["type"] == "quota_exceeded", r.text
    r = post(server, path, small, key=key)
    assert r.status_code == 200, r.text


def test_concurrent_requests_never_exceed_the_budget(server):
    budget = 200
    key = make_user(server, "concurrent", quota=budget)

    def one(i):
        return post(server, "/v1/chat/completions",
                    {"messages": [{"role": "user", "content": f"Say the number {i}."}], "max_tokens": 24}, key=key)

    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(one, range(8)))
    ok = [r for r in results if r.status_code == 200]
    refused = [r for r in results if r.status_code == 429]
    assert len(ok) + len(refused) == 8 and ok and refused
    spent = sum(r.json()["usage"]["total_tokens"] for r in ok)
    assert spent <= budget
    usage = requests.get(server.url + "/v1/usage", headers={"Authorization": f"Bearer {key}"}).json()
    assert usage["used"] == spent  # the ledger equals the sum of the usage blocks
    assert usage["reserved"] == 0


def test_disconnect_mid_stream_frees_the_slot(server):
    abandon_stream(server, ADMIN_KEY)
    deadline = time.time() + 30
    while time.time() < deadline:
        metrics = requests.get(server.url + "/metrics").text
        running = [l for l in metrics.splitlines() if l.startswith("ragd_requests_running{")]
        if running and float(running[0].split()[1]) == 0:
            break
        time.sleep(0.2)
    else:
        pytest.fail("the cancelled generation kept running")
    assert 'ragd_generations_total{model="gemma-3-270m-q4_k_m",finish_reason="cancelled"}' in \
        requests.get(server.url + "/metrics").text


PROTECTED = [("GET", "/v1/models"), ("POST", "/v1/chat/completions"), ("POST", "/v1/completions"),
             ("POST", "/v1/embeddings"), ("POST", "/v1/ask"), ("POST", "/tokenize"), ("POST", "/detokenize"),
             ("GET", "/v1/me"), ("GET", "/v1/usage"), ("GET", "/v1/documents"), ("POST", "/v1/documents"),
             ("GET", "/v1/documents/1"), ("DELETE", "/v1/documents/1"), ("POST", "/v1/users"), ("GET", "/v1/users"),
             ("GET", "/v1/users/1/usage")]
ADMIN_ONLY = {"/v1/documents", "/v1/documents/1", "/v1/users", "/v1/users/1/usage"}


def test_auth_on_every_protected_route(server):
    user_key = make_user(server, "plainuser")
    for method, path in PROTECTED:
        r = requests.request(method, server.url + path, json={})
        assert r.status_code == 401, (method, path, r.status_code)
        assert r.json()["error"]["type"] == "authentication_error"
        r = requests.request(method, server.url + path, json={}, headers={"Authorization": "Bearer rk-wrong"})
        assert r.status_code == 401, (method, path)
        if path in ADMIN_ONLY:
            r = requests.request(method, server.url + path, json={}, headers={"Authorization": f"Bearer {user_key}"})
            assert r.status_code == 403, (method, path, r.status_code)


def test_browser_session_cookie(server):
    s = requests.Session()
    r = s.post(server.url + "/v1/auth/login", json={"username": "admin", "password": "wrong"})
    assert r.status_code == 401
    r = s.post(server.url + "/v1/auth/login", json={"username": "admin", "password": "correct horse battery staple"})
    assert r.status_code == 200
    cookie = r.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert s.get(server.url + "/v1/me").json()["role"] == "admin"
    s.post(server.url + "/v1/auth/logout")
    assert s.get(server.url + "/v1/me").status_code == 401


def test_malformed_and_oversized_bodies_are_4xx(server):
    h = dict(server.headers(), **{"Content-Type": "application/json"})
    for body in [b"{", b"[]", b"null", b'{"messages": 5}', b'{"messages": [{"role": "wizard", "content": "x"}]}',
                 b'{"question": 12}', b"\xff\xfe"]:
        for path in ["/v1/chat/completions", "/v1/ask", "/v1/embeddings", "/tokenize"]:
            r = requests.post(server.url + path, headers=h, data=body)
            assert 400 <= r.status_code < 500, (path, body, r.status_code, r.text)
    # Past server.max_json_bytes (1 MiB): 413, whatever the route.
    big = b'{"question": "' + b"a" * (2 << 20) + b'"}'
    r = requests.post(server.url + "/v1/ask", headers=h, data=big, timeout=60)
    assert r.status_code == 413 and r.json()["error"]["type"] == "invalid_request_error"
    assert requests.get(server.url + "/healthz", timeout=10).status_code == 200


def test_an_answer_waits_for_its_usage_row_while_the_database_is_held(server):
    """The ledger's rows are written by its own thread and the answer is held
    back until the prompt's row is in app.db (accounts/quota.h, Durability):
    while another process holds app.db's write lock no token goes out, the
    server keeps answering, and the stream goes on once the lock is gone."""
    import os
    import sqlite3
    import threading
    key = make_user(server, "heldback")
    holder = sqlite3.connect(os.path.join(server.data_dir, "app.db"), timeout=10, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    released_at = []
    got = {}

    def stream():
        r = requests.post(server.url + "/v1/chat/completions", headers={"Authorization": f"Bearer {key}"},
                          stream=True, timeout=60,
                          json={"messages": [{"role": "user", "content": "Count to twenty."}],
                                "max_tokens": 24, "stream": True, "stream_options": {"include_usage": True}})
        for line in r.iter_lines(decode_unicode=True):
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            if chunk["choices"] and chunk["choices"][0]["delta"].get("content") and "first" not in got:
                got["first"] = time.monotonic()
            if chunk.get("usage"):
                got["usage"] = chunk["usage"]

    t = threading.Thread(target=stream)
    t.start()
    time.sleep(1.5)
    assert "first" not in got, "a token went out before its usage row could be written"
    assert requests.get(server.url + "/healthz", timeout=5).status_code == 200
    released_at.append(time.monotonic())
    holder.execute("ROLLBACK")
    holder.close()
    t.join(60)
    assert got.get("first", 0) >= released_at[0] and got["usage"]["completion_tokens"] > 0, got
    # The finished answer's row holds exactly what its usage chunk said.
    db = sqlite3.connect(os.path.join(server.data_dir, "app.db"))
    rows = db.execute("SELECT u.prompt_tokens, u.completion_tokens, u.completed FROM usage u "
                      "JOIN users s ON s.id = u.user_id WHERE s.username = 'heldback'").fetchall()
    db.close()
    assert rows == [(got["usage"]["prompt_tokens"], got["usage"]["completion_tokens"], 1)], rows
