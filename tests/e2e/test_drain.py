"""Graceful drain on SIGTERM: a replica being replaced stops taking new work at
once (/readyz 503, new work refused with 503 "draining") and lets the requests
already running finish within server.drain_timeout_s; what still runs after it
is cancelled (the stream ends with an error event and is charged only what it
sent), and the process exits 0."""
import json
import re
import signal
import tempfile
import threading

import pytest
import requests

from conftest import ADMIN_KEY, Server
from hardening import make_user, metric, post, wait_for

# Counting goes on for thousands of tokens without an end-of-turn, so an
# answer runs for seconds whatever the machine.
COUNT = [{"role": "user", "content": "Count from 1 to 100000, separated by commas."}]


class Stream:
    """A streamed chat completion read on its own thread: its content chunks,
    its usage block, whether it ended with [DONE], and its error event."""

    def __init__(self, server, key, max_tokens):
        self.chunks, self.usage, self.done, self.error = 0, None, False, None
        self.started = threading.Event()
        self.response = post(server, "/v1/chat/completions",
                             {"messages": COUNT, "max_tokens": max_tokens, "temperature": 0, "stream": True,
                              "stream_options": {"include_usage": True}}, key=key, stream=True)
        assert self.response.status_code == 200, self.response.text
        self.thread = threading.Thread(target=self._read)
        self.thread.start()

    def _read(self):
        for line in self.response.iter_lines(decode_unicode=True):
            if not line.startswith("data: "):
                continue
            if line == "data: [DONE]":
                self.done = True
                continue
            event = json.loads(line[6:])
            if "error" in event:
                self.error = event["error"]
                continue
            if event.get("usage"):
                self.usage = event["usage"]
            if any(c["delta"].get("content") for c in event["choices"]):
                self.chunks += 1
                self.started.set()
        self.started.set()

    def join(self, timeout=300):
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the stream never ended"


def start(*settings, data=None):
    args = []
    for s in settings:
        args += ["--set", s]
    tmp = None
    if data is None:
        tmp = tempfile.TemporaryDirectory(prefix="ragd-e2e-drain-")
        data = tmp.name
    srv = Server(data, extra_args=args).wait_ready()
    srv.tmp = tmp
    return srv


def test_sigterm_lets_running_and_queued_streams_finish_and_refuses_new_work():
    # One sequence at a time: the second stream waits in the queue, admitted.
    srv = start("server.drain_timeout_s=120", "inference.max_batch=1")
    try:
        running = Stream(srv, ADMIN_KEY, max_tokens=2500)
        assert running.started.wait(60)
        queued = Stream(srv, ADMIN_KEY, max_tokens=100)
        assert wait_for(lambda: metric(srv, "ragd_requests_waiting") >= 1), "the second stream was not queued"
        srv.proc.send_signal(signal.SIGTERM)

        assert wait_for(lambda: requests.get(srv.url + "/readyz", timeout=5).status_code == 503)
        ready = requests.get(srv.url + "/readyz", timeout=5)
        assert ready.json()["error"]["type"] == "draining", ready.text
        refused = post(srv, "/v1/chat/completions", {"messages": COUNT, "max_tokens": 8})
        assert refused.status_code == 503, refused.text
        err = refused.json()["error"]
        assert err["code"] == 503 and err["type"] == "draining" and "shutting down" in err["message"], err
        assert int(refused.headers["Retry-After"]) >= 1
        for path, body in [("/v1/completions", {"prompt": "Hi", "max_tokens": 4}),
                           ("/v1/embeddings", {"input": "hello"}),
                           ("/v1/ask", {"question": "Which port?"}),
                           ("/v1/documents", {"title": "late.txt", "text": "An upload during the drain."})]:
            r = post(srv, path, body)
            assert r.status_code == 503 and r.json()["error"]["type"] == "draining", (path, r.text)
        # Reads still answer, and the first stream is still being generated.
        assert requests.get(srv.url + "/v1/me", headers=srv.headers(), timeout=5).status_code == 200
        assert metric(srv, "ragd_requests_running") == 1 and not running.done

        for stream in (running, queued):
            stream.join()
            assert stream.done and stream.error is None, (stream.error, srv.output())
            assert 0 < stream.chunks <= stream.usage["completion_tokens"], stream.usage
        assert running.usage["completion_tokens"] == 2500  # it ran to max_tokens, not cut short
        assert srv.proc.wait(timeout=60) == 0, srv.output()
        log = srv.output()
        # The two streams, and at most the GET /metrics above whose answer
        # the client has but whose handler has not yet returned.
        assert re.search(r"SIGTERM received, shutting down: draining [23] running requests", log), log
        assert "(all finished): 0 requests still running" in log, log
    finally:
        srv.stop()
        srv.tmp.cleanup()


def used(srv, key):
    u = requests.get(srv.url + "/v1/usage", headers={"Authorization": f"Bearer {key}"}, timeout=30).json()
    assert u["reserved"] == 0, u
    return u["used"]


def test_drain_bound_cancels_the_stream_and_charges_what_was_sent():
    max_tokens = 8000
    with tempfile.TemporaryDirectory(prefix="ragd-e2e-drain-") as data:
        srv = start("server.drain_timeout_s=1", data=data)
        try:
            key = make_user(srv, "drained")
            # The prompt's size, from the same question answered with one token.
            one = post(srv, "/v1/chat/completions", {"messages": COUNT, "max_tokens": 1}, key=key).json()
            prompt = one["usage"]["prompt_tokens"]
            before = used(srv, key)
            stream = Stream(srv, key, max_tokens=max_tokens)
            assert stream.started.wait(60)
            srv.proc.send_signal(signal.SIGTERM)
            stream.join()
            assert srv.proc.wait(timeout=60) == 0, srv.output()
        finally:
            srv.stop()
        log = srv.output()
        assert "(server.drain_timeout_s reached): 1 request still running, cancelling them" in log, log
        assert not stream.done and stream.usage is None
        assert stream.error and stream.error["code"] == 503 and "shutting down" in stream.error["message"], \
            stream.error
        assert 0 < stream.chunks < max_tokens // 2

        # The ledger, read by the next server on the same data: the prompt and
        # the tokens sent (a few more may have been generated and held back,
        # fewer than accounts' checkpoint of 32), never the reserved maximum.
        again = start(data=data)
        try:
            charged = used(again, key) - before
        finally:
            assert again.stop() == 0, again.output()
        assert prompt + stream.chunks <= charged < prompt + stream.chunks + 32, (charged, prompt, stream.chunks)


def test_second_signal_stops_at_once():
    srv = start("server.drain_timeout_s=600")
    try:
        stream = Stream(srv, ADMIN_KEY, max_tokens=8000)
        assert stream.started.wait(60)
        srv.proc.send_signal(signal.SIGTERM)
        assert wait_for(lambda: requests.get(srv.url + "/readyz", timeout=5).status_code == 503)
        srv.proc.send_signal(signal.SIGTERM)
        stream.join(60)
        assert srv.proc.wait(timeout=30) == 0, srv.output()
        assert stream.error and stream.error["code"] == 503 and not stream.done
        assert "(second signal): 1 request still running, cancelling them" in srv.output()
    finally:
        srv.stop()
        srv.tmp.cleanup()


@pytest.mark.parametrize("value", ["-1", "86401"])
def test_drain_timeout_out_of_range_is_refused(value):
    import subprocess
    from conftest import RAGD
    with tempfile.TemporaryDirectory() as data:
        r = subprocess.run([RAGD, "serve", "--data", data, "--port", "0", "--set", "server.drain_timeout_s=" + value],
                           capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "server.drain_timeout_s" in r.stderr, r.stderr
