"""Serving many users at once: batched streams, the prefix cache, speculative
decoding counters, and the KV-cache budget, seen from outside."""
import concurrent.futures
import json
import os
import tempfile
import time

import requests

from conftest import ADMIN_KEY, ROOT, Server


def post(server, path, body, **kw):
    return requests.post(server.url + path, json=body, headers={"Authorization": f"Bearer {ADMIN_KEY}"},
                         timeout=300, **kw)


def metric(server, name):
    """The value of a scheduler metric, summed over the models (one here)."""
    values = [float(line.split()[1]) for line in requests.get(server.url + "/metrics").text.splitlines()
              if line.startswith(name + " ") or line.startswith(name + "{")]
    if not values:
        raise AssertionError(f"{name} not in /metrics")
    return sum(values)


def test_second_question_reuses_the_prompt_prefix(server):
    question = {"question": "Which file formats does ragd accept for upload?", "max_tokens": 24, "temperature": 0}
    first = post(server, "/v1/ask", question).json()
    second = post(server, "/v1/ask", question).json()
    cached = second["usage"]["prompt_tokens_details"]["cached_tokens"]
    # Everything but the last block of the prompt comes from the cache.
    assert cached >= second["usage"]["prompt_tokens"] - 64 and cached > 0
    assert second["timings"]["cache_n"] == cached
    assert second["timings"]["prompt_n"] == second["usage"]["prompt_tokens"] - cached
    assert second["answer"] == first["answer"]  # reuse never changes the answer
    # Another question shares the rules text at the head of the prompt.
    other = post(server, "/v1/ask", {"question": "How are quotas counted?", "max_tokens": 8}).json()
    assert other["usage"]["prompt_tokens_details"]["cached_tokens"] >= 64
    assert metric(server, "ragd_prefix_cache_hits_total") >= 2
    assert metric(server, "ragd_prefix_cache_hit_tokens_total") >= cached


def test_concurrent_streams_share_forward_passes(server):
    steps_before = metric(server, "ragd_batch_steps_total")

    def one(i):
        r = post(server, "/v1/chat/completions",
                 {"messages": [{"role": "user", "content": f"Count from {i} to {i + 20}."}], "max_tokens": 24,
                  "temperature": 0, "stream": True, "stream_options": {"include_usage": True}}, stream=True)
        assert r.status_code == 200
        text, usage = "", None
        for line in r.iter_lines(decode_unicode=True):
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            if chunk.get("usage"):
                usage = chunk["usage"]
            for c in chunk["choices"]:
                text += c["delta"].get("content", "")
        return text, usage

    with concurrent.futures.ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(one, range(6)))
    tokens = sum(u["completion_tokens"] for _, u in results)
    assert all(text for text, _ in results)
    steps = metric(server, "ragd_batch_steps_total") - steps_before
    assert steps < tokens  # several streams advanced in each forward pass
    # Each answer equals the one the same request gets alone.
    alone = one(3)
    assert alone[0] == results[3][0]


def test_speculative_counters_are_reported(server):
    text = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma"
    r = post(server, "/v1/completions", {"prompt": f"{text}\n{text}\n{text}\nalpha beta", "max_tokens": 32,
                                         "temperature": 0}).json()
    t = r["timings"]
    assert t["draft_n"] > 0 and 0 < t["draft_n_accepted"] <= t["draft_n"]
    assert metric(server, "ragd_draft_tokens_accepted_total") >= t["draft_n_accepted"]
    # The step time behind the draft plan: the forward passes' time, and the
    # measured cost of a row within the clamp the planner uses.
    assert metric(server, "ragd_batch_step_seconds_total") > 0
    assert 0.01 <= metric(server, "ragd_batch_row_cost_ratio") <= 1.0


def test_request_larger_than_the_kv_budget_is_refused_up_front():
    with tempfile.TemporaryDirectory(prefix="ragd-e2e-") as data:
        # 10 MiB: a 4000-token answer needs ~19 MiB of (half-precision) KV cache.
        srv = Server(data, extra_args=["--set", "inference.kv_cache_bytes=10485760"]).wait_ready()
        try:
            small = post(srv, "/v1/completions", {"prompt": "Hello", "max_tokens": 8})
            assert small.status_code == 200, small.text
            big = post(srv, "/v1/completions", {"prompt": "Hello", "max_tokens": 4000})
            assert big.status_code == 400
            err = big.json()["error"]
            assert err["type"] == "invalid_request_error" and "KV cache" in err["message"]
            assert metric(srv, "ragd_kv_cache_budget_bytes") == 10485760
        finally:
            assert srv.stop() == 0, srv.output()


def test_full_queue_answers_503_with_retry_after_and_charges_nothing():
    with tempfile.TemporaryDirectory(prefix="ragd-e2e-") as data:
        # One sequence at a time, one waiting: a third request has no room.
        srv = Server(data, extra_args=["--set", "inference.max_batch=1", "--set", "inference.max_queue=1"]).wait_ready()
        try:
            running = post(srv, "/v1/completions", {"prompt": "Tell a long story.", "max_tokens": 200,
                                                    "temperature": 0, "stream": True}, stream=True)
            assert running.status_code == 200
            lines = running.iter_lines(decode_unicode=True)
            assert next(line for line in lines if line.startswith("data: "))  # it has its slot
            with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
                waiting = pool.submit(lambda: post(srv, "/v1/completions",
                                                   {"prompt": "Hello", "max_tokens": 4, "temperature": 0}))
                while metric(srv, "ragd_requests_waiting") < 1:
                    assert not waiting.done(), waiting.result().text
                    time.sleep(0.01)
                usage = lambda: {k: v for k, v in requests.get(srv.url + "/v1/usage", headers=srv.headers()).json().items()
                                 if k in ("used", "reserved")}
                before = usage()
                refused = post(srv, "/v1/completions", {"prompt": "Hello", "max_tokens": 4})
                assert refused.status_code == 503, refused.text
                assert refused.json()["error"]["type"] == "unavailable_error"
                assert int(refused.headers["Retry-After"]) >= 1
                assert usage() == before  # nothing charged or held for it
                running.close()  # the client goes away: its slot frees, the waiting one runs
                done = waiting.result(timeout=300)
                assert done.status_code == 200 and done.json()["usage"]["completion_tokens"] > 0
                assert done.json()["timings"]["queue_ms"] > 0  # it waited for the slot
            assert metric(srv, "ragd_request_queue_time_seconds_count") >= 1
            assert post(srv, "/v1/completions", {"prompt": "Hello", "max_tokens": 4}).status_code == 200
        finally:
            assert srv.stop() == 0, srv.output()
