"""A ragd gateway in front of a pool of two upstream ragd processes.

The upstreams serve the OpenAI API with the small local model; the gateway
names them in models.llm as a pool (config/llm_entry.h) and keeps the
tokenizer, the quota and the accounting. Real processes on loopback ports:
one upstream is killed mid-run and started again on the same port.
"""
import concurrent.futures
import json
import os
import re
import signal
import tempfile
import threading
import time

import pytest
import requests

from conftest import ADMIN_KEY, ROOT, TEST_LLM, Server, abandon_stream, free_port

POOL = "pool"
KEY_ENV = "RAGD_TEST_UPSTREAM_KEY"
# Upstreams: one compute thread each (two of them share the machine), and no
# per-user limits: every gateway request reaches them as one API user.
UPSTREAM_ENV = {"RAGD_INFERENCE_THREADS": "1", "RAGD_QUOTA_REQUESTS_PER_MINUTE": "0",
                "RAGD_QUOTA_TOKENS_PER_MINUTE": "0", "RAGD_QUOTA_MAX_IN_FLIGHT": "0",
                "RAGD_QUOTA_TOKENS_PER_PERIOD": "1000000000"}
# Gemma's end of text and end of turn, forbidden: answers run to max_tokens.
NO_END = {"1": -100, "106": -100}


def pool_entry(urls, **extra):
    entry = {"id": POOL, "upstream": urls, "model": TEST_LLM[:-5], "api_key_env": KEY_ENV, "concurrency": 2,
             "tokenizer": TEST_LLM, "failures_to_open": 2, "health_interval_ms": 200, "connect_timeout_ms": 500}
    entry.update(extra)
    return json.dumps(entry)


def start_gateway(data_dir, entry, wait=True, ingest=None):
    env = {"RAGD_MODELS_LLM": entry, KEY_ENV: ADMIN_KEY, "RAGD_QUOTA_REQUESTS_PER_MINUTE": "0",
           "RAGD_QUOTA_TOKENS_PER_MINUTE": "0", "RAGD_QUOTA_MAX_IN_FLIGHT": "0"}
    gw = Server(data_dir, env=env, ingest=ingest)
    return gw.wait_ready() if wait else gw.wait_ready("/healthz")


@pytest.fixture(scope="module")
def cluster():
    with tempfile.TemporaryDirectory(prefix="ragd-e2e-pool-") as tmp:
        dirs = [os.path.join(tmp, n) for n in ("a", "b", "gw")]
        for d in dirs:
            os.mkdir(d)
        ups = [Server(d, env=UPSTREAM_ENV) for d in dirs[:2]]
        for u in ups:
            u.wait_ready()
        gw = start_gateway(dirs[2], pool_entry([u.url for u in ups]), ingest=os.path.join(ROOT, "docs", "sample"))
        state = {"ups": ups, "gw": gw, "dirs": dirs}
        yield state
        for s in [state["gw"], *state["ups"]]:
            s.stop()


def post(server, path, body, key=ADMIN_KEY, **kw):
    return requests.post(server.url + path, headers={"Authorization": f"Bearer {key}"}, json=body, timeout=120, **kw)


def metric(server, name, **labels):
    """The value of one sample of /metrics, or None."""
    want = ",".join(f'{k}="{v}"' for k, v in labels.items())
    for line in requests.get(server.url + "/metrics", timeout=10).text.splitlines():
        m = re.match(r"(\w+)(?:\{(.*)\})? (\S+)$", line)
        if m and m.group(1) == name and all(p in (m.group(2) or "") for p in want.split(",") if p):
            return float(m.group(3))
    return None


def wait_for(predicate, timeout, what):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    pytest.fail("timed out waiting until " + what)


class Stream:
    """A streamed chat completion read on its own thread: its text, its usage
    block, the error event that ended it, and whether [DONE] came."""

    def __init__(self, server, key, max_tokens):
        self.text, self.usage, self.error, self.done = "", None, None, False
        self.first = threading.Event()
        body = {"model": POOL, "messages": [{"role": "user", "content": "Tell a long story about a lighthouse."}],
                "max_tokens": max_tokens, "stream": True, "stream_options": {"include_usage": True},
                "logit_bias": NO_END, "temperature": 0}
        self.response = post(server, "/v1/chat/completions", body, key=key, stream=True)
        assert self.response.status_code == 200, self.response.text
        self.thread = threading.Thread(target=self._read)
        self.thread.start()

    def _read(self):
        try:
            for line in self.response.iter_lines():
                if not line.startswith(b"data: "):
                    continue
                data = line[6:]
                if data == b"[DONE]":
                    self.done = True
                    break
                event = json.loads(data)
                if "error" in event:
                    self.error = event["error"]
                    break
                if event.get("usage"):
                    self.usage = event["usage"]
                for choice in event.get("choices", []):
                    self.text += choice.get("delta", {}).get("content") or ""
                    if self.text:
                        self.first.set()
        except requests.RequestException as e:
            self.error = {"message": str(e)}
        finally:
            self.first.set()

    def join(self):
        self.thread.join(timeout=120)
        return self


def make_user(server, name):
    r = post(server, "/v1/users", {"username": name, "password": "password-" + name, "role": "user",
                                   "token_quota": 1000000})
    assert r.status_code == 201, r.text
    return r.json()["api_key"]


def test_answers_stream_through_both_upstreams(cluster):
    gw, ups = cluster["gw"], cluster["ups"]
    models = requests.get(gw.url + "/v1/models", headers=gw.headers()).json()
    assert POOL in [m["id"] for m in models["data"]]

    def one(i):
        return Stream(gw, ADMIN_KEY, 12).join()

    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as ex:
        streams = list(ex.map(one, range(4)))
    for s in streams:
        assert s.done and s.error is None and s.text, vars(s)
        # ragd counts with the model's tokenizer; the answer ran to max_tokens
        assert s.usage["completion_tokens"] == 12 and s.usage["prompt_tokens"] > 5
    for u in ups:  # balanced: each upstream answered
        assert metric(gw, "ragd_upstream_requests_total", endpoint=u.url) >= 1
    assert metric(gw, "ragd_upstream_usage_compared_total", model=POOL) >= 4
    # Non-streamed through the same pool.
    r = post(gw, "/v1/chat/completions", {"model": POOL, "messages": [{"role": "user", "content": "Hi"}],
                                          "max_tokens": 5})
    assert r.status_code == 200 and r.json()["usage"]["completion_tokens"] >= 1, r.text
    # A RAG answer: retrieval and the prompt at the gateway, the answer from the pool.
    sent = sum(metric(gw, "ragd_upstream_requests_total", endpoint=u.url) for u in ups)
    r = post(gw, "/v1/ask", {"question": "How do I change the port ragd listens on?", "max_tokens": 8})
    assert r.status_code == 200 and r.json()["citations"] and r.json()["usage"]["completion_tokens"] >= 1, r.text
    assert sum(metric(gw, "ragd_upstream_requests_total", endpoint=u.url) for u in ups) == sent + 1


def test_cancellation_reaches_the_upstream(cluster):
    gw, ups = cluster["gw"], cluster["ups"]
    before = sum(metric(u, "ragd_generations_total", finish_reason="cancelled") or 0 for u in ups)
    abandon_stream(gw, ADMIN_KEY, max_tokens=400)
    wait_for(lambda: sum(metric(u, "ragd_generations_total", finish_reason="cancelled") or 0 for u in ups) > before,
             30, "an upstream cancels the generation the client left")
    wait_for(lambda: all(metric(gw, "ragd_upstream_in_flight", endpoint=u.url) == 0 for u in ups), 10,
             "the gateway holds no upstream stream")


def test_kill_an_upstream_mid_run(cluster):
    gw, ups = cluster["gw"], cluster["ups"]
    key = make_user(gw, "pooluser")
    streams = [Stream(gw, key, 120) for _ in range(4)]
    for s in streams:
        assert s.first.wait(60), "no first token"
    victim = ups[1]
    victim.proc.send_signal(signal.SIGKILL)
    victim.proc.wait()
    for s in streams:
        s.join()
    broken = [s for s in streams if s.error is not None]
    finished = [s for s in streams if s.done]
    assert broken and finished and len(broken) + len(finished) == 4, [vars(s) for s in streams]
    for s in broken:  # ended by an error event, after what had been streamed
        assert s.text and not s.done
    # Requests that had not started go to the surviving upstream.
    with concurrent.futures.ThreadPoolExecutor(max_workers=3) as ex:
        later = list(ex.map(lambda i: post(gw, "/v1/chat/completions",
                                           {"model": POOL, "max_tokens": 4,
                                            "messages": [{"role": "user", "content": f"Count to {i}"}]}, key=key),
                            range(3)))
    assert all(r.status_code == 200 for r in later), [r.text for r in later]
    # The circuit of the dead endpoint opened; the pool is still ready.
    wait_for(lambda: metric(gw, "ragd_upstream_circuit_open", endpoint=victim.url) == 1, 10, "the circuit opens")
    assert requests.get(gw.url + "/readyz").status_code == 200
    assert metric(gw, "ragd_upstream_failed_mid_stream_total", model=POOL) >= len(broken)

    # Charged only what was streamed: a broken stream costs its prompt and the
    # tokens of the text it got, counted by the same tokenizer.
    prompt = finished[0].usage["prompt_tokens"]
    expected = sum(s.usage["total_tokens"] for s in finished)
    for s in broken:
        n = post(gw, "/tokenize", {"model": POOL, "content": s.text}).json()["tokens"]
        expected += prompt + len(n)
    expected += sum(r.json()["usage"]["total_tokens"] for r in later)
    usage = requests.get(gw.url + "/v1/usage", headers={"Authorization": f"Bearer {key}"}).json()
    assert usage["used"] == expected and usage["reserved"] == 0, usage

    # The upstream comes back on its port: the circuit closes, it gets requests again.
    revived = Server(cluster["dirs"][1], env=UPSTREAM_ENV, port=victim.port).wait_ready()
    cluster["ups"][1] = revived
    wait_for(lambda: metric(gw, "ragd_upstream_circuit_open", endpoint=revived.url) == 0, 20, "the circuit closes")
    sent = metric(gw, "ragd_upstream_requests_total", endpoint=revived.url)
    for i in range(2):
        r = post(gw, "/v1/chat/completions", {"model": POOL, "max_tokens": 3,
                                              "messages": [{"role": "user", "content": "Hello again"}]})
        assert r.status_code == 200, r.text
    assert metric(gw, "ragd_upstream_requests_total", endpoint=revived.url) > sent


def closed_port_url():
    return f"http://127.0.0.1:{free_port()}"


def test_failover_before_the_first_token_and_unreachable_pool(cluster):
    """A pool whose first endpoint refuses connections (its circuit kept
    closed): requests tried there first are retried on the live one, before
    any token, so all succeed. A pool with no live endpoint makes /readyz 503."""
    live = cluster["ups"][0].url
    with tempfile.TemporaryDirectory(prefix="ragd-e2e-pool-") as tmp:
        os.mkdir(os.path.join(tmp, "g2"))
        os.mkdir(os.path.join(tmp, "g3"))
        g2 = start_gateway(os.path.join(tmp, "g2"),
                           pool_entry([closed_port_url(), live], failures_to_open=1000, health_interval_ms=60000))
        g3 = start_gateway(os.path.join(tmp, "g3"), pool_entry([closed_port_url()], failures_to_open=1), wait=False)
        try:
            for i in range(4):
                r = post(g2, "/v1/completions", {"model": POOL, "prompt": f"{i} apples and", "max_tokens": 3})
                assert r.status_code == 200, r.text
            assert metric(g2, "ragd_upstream_retries_total", model=POOL) >= 1
            wait_for(lambda: "no endpoint of the upstream pool" in requests.get(g3.url + "/readyz").text, 30,
                     "/readyz reports the unreachable pool")
            assert requests.get(g3.url + "/readyz").status_code == 503
            r = post(g3, "/v1/chat/completions", {"model": POOL, "max_tokens": 3,
                                                  "messages": [{"role": "user", "content": "Hi"}]})
            assert r.status_code == 503 and r.headers.get("Retry-After"), r.text
        finally:
            g2.stop()
            g3.stop()
