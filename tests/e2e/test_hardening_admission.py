"""Admission before work, caps on user text, the per-user in-flight cap, and
cancellation at every stage (queued, in prefill) of a client that goes away.

One server with one sequence in the batch (so a second request queues), a
small per-minute request rate and two requests in flight per user.
"""
import json
import os
import socket
import tempfile
import time

import pytest

from conftest import ADMIN_KEY, ROOT, Server
from hardening import make_user, metric, post, wait_for


@pytest.fixture(scope="module")
def srv():
    with tempfile.TemporaryDirectory(prefix="ragd-e2e-admission-") as data:
        s = Server(data, ingest=os.path.join(ROOT, "docs", "sample"),
                   extra_args=["--set", "inference.max_batch=1", "--set", "inference.step_tokens=8",
                               "--set", "quota.requests_per_minute=6", "--set", "quota.max_in_flight=2"]).wait_ready()
        yield s
        assert s.stop() == 0, s.output()


def open_stream(server, key, path, body):
    """Sends a streamed request on a raw socket and reads the response head
    (sent as soon as the request is queued); returns the socket."""
    payload = json.dumps(dict(body, stream=True)).encode()
    s = socket.create_connection(("127.0.0.1", server.port))
    s.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n"
              f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n".encode() + payload)
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(4096)
        assert chunk, head
        head += chunk
    assert head.startswith(b"HTTP/1.1 200"), head
    return s


def log_lines(server):
    with open(os.path.join(server.data_dir, "requests.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


LONG = {"prompt": "Once upon a time", "max_tokens": 3000, "temperature": 0.8, "seed": 1}


# --- admission before work ----------------------------------------------------

def test_exhausted_user_is_refused_before_retrieval(srv):
    key = make_user(srv, "exhausted", quota=1)
    searched = metric(srv, "ragd_retrieval_latency_seconds_count")
    for path, body in [("/v1/ask", {"question": "How do I change the port?"}),
                       ("/v1/chat/completions", {"model": "ragd-rag",
                                                 "messages": [{"role": "user", "content": "How do I change the port?"}]})]:
        r = post(srv, path, body, key=key)
        assert r.status_code == 429, r.text
        assert r.json()["error"]["type"] == "quota_exceeded"
    assert metric(srv, "ragd_retrieval_latency_seconds_count") == searched  # nothing was searched


def test_rag_chat_question_is_capped(srv):
    r = post(srv, "/v1/chat/completions", {"model": "ragd-rag",
                                           "messages": [{"role": "user", "content": "why " * 3000}]})
    assert r.status_code == 400, r.text
    assert "8192" in r.json()["error"]["message"]


def test_tokenize_is_capped_and_rate_limited(srv):
    key = make_user(srv, "tokenizer")
    r = post(srv, "/tokenize", {"content": "x" * (300 << 10)}, key=key)
    assert r.status_code == 400 and "content" in r.json()["error"]["message"], r.text
    codes = [post(srv, "/tokenize", {"content": "hello"}, key=key).status_code for _ in range(8)]
    assert codes.count(429) >= 2, codes  # 6 requests a minute, one spent above
    r = post(srv, "/detokenize", {"tokens": [1, 2]}, key=key)
    assert r.status_code == 429 and r.json()["error"]["type"] == "rate_limit_error"
    assert int(r.headers["Retry-After"]) >= 1


def test_one_user_holds_at_most_two_requests(srv):
    key = make_user(srv, "greedy")
    first = open_stream(srv, key, "/v1/completions", LONG)
    second = open_stream(srv, key, "/v1/completions", LONG)
    try:
        r = post(srv, "/v1/completions", {"prompt": "Hi", "max_tokens": 2}, key=key)
        assert r.status_code == 429, r.text
        assert r.json()["error"]["type"] == "rate_limit_error"
        assert "running or queued" in r.json()["error"]["message"]
        # Another user still gets in (it queues behind the first).
        other = make_user(srv, "patient")
        third = open_stream(srv, other, "/v1/completions", {"prompt": "Hi", "max_tokens": 2})
        third.close()
    finally:
        first.close()
        second.close()
    assert wait_for(lambda: metric(srv, "ragd_requests_running") == 0 and metric(srv, "ragd_requests_waiting") == 0)
    r = post(srv, "/v1/completions", {"prompt": "Hi", "max_tokens": 2}, key=key)
    assert r.status_code == 200, r.text


# --- cancellation at every stage ---------------------------------------------

def test_queued_request_whose_client_leaves_frees_its_place(srv):
    running = open_stream(srv, ADMIN_KEY, "/v1/completions", LONG)
    try:
        assert wait_for(lambda: metric(srv, "ragd_requests_running") == 1)
        ended = metric(srv, "ragd_generations_total")
        queued = open_stream(srv, make_user(srv, "leaver"), "/v1/completions", LONG)
        assert wait_for(lambda: metric(srv, "ragd_requests_waiting") == 1)
        queued.close()
        # The place is freed while the first request still runs, not when it ends.
        assert wait_for(lambda: metric(srv, "ragd_requests_waiting") == 0, seconds=10)
        assert metric(srv, "ragd_requests_running") == 1
        assert metric(srv, "ragd_generations_total") == ended + 1
    finally:
        running.close()
    assert wait_for(lambda: metric(srv, "ragd_requests_running") == 0)


def test_request_whose_client_leaves_in_prefill_stops_before_its_first_token(srv):
    # Eight tokens a step: a prompt of a few thousand tokens is prefilled over
    # hundreds of steps, and the client leaves in the first of them.
    s = open_stream(srv, ADMIN_KEY, "/v1/completions",
                    {"prompt": "The quick brown fox jumps over the lazy dog. " * 300, "max_tokens": 8})
    s.close()
    assert wait_for(lambda: metric(srv, "ragd_requests_running") == 0 and metric(srv, "ragd_requests_waiting") == 0)
    assert wait_for(lambda: any(l["route"] == "/v1/completions" and l["prompt_tokens"] > 2000
                                for l in log_lines(srv)))
    line = [l for l in log_lines(srv) if l["route"] == "/v1/completions" and l["prompt_tokens"] > 2000][-1]
    assert line["status"] == 499 and line["finish_reason"] == "cancelled", line
    assert line["completion_tokens"] == 0, line
