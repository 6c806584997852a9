"""Metrics and the request log, checked with known traffic."""
import glob
import json
import os
import re
import subprocess
import tempfile

import pytest
import requests

from conftest import ADMIN_KEY, Server, abandon_stream

CONTENT_KEY = "8f" * 32
SECRET_PROMPT = "Describe the aubergine submarine protocol"


def metric(text, name, labels=""):
    pattern = re.escape(name + (("{" + labels + "}") if labels else "")) + r" ([0-9.e+-]+)$"
    m = re.search(pattern, text, re.M)
    return float(m.group(1)) if m else 0.0


@pytest.fixture(scope="module")
def logged_server():
    with tempfile.TemporaryDirectory(prefix="ragd-obs-") as data:
        srv = Server(data, extra_args=["--set", "log.content=true"],
                     env={"RAGD_LOG_CONTENT_KEY": CONTENT_KEY}).wait_ready()
        yield srv
        assert srv.stop() == 0, srv.output()


def test_metrics_follow_known_traffic_and_pass_promtool(logged_server):
    s = logged_server
    h = s.headers()
    before = requests.get(s.url + "/metrics").text
    r = requests.post(s.url + "/v1/chat/completions", headers=h,
                      json={"messages": [{"role": "user", "content": "Hello"}], "max_tokens": 4})
    assert r.status_code == 200
    usage = r.json()["usage"]
    r = requests.post(s.url + "/v1/chat/completions", headers=h,
                      json={"messages": [{"role": "user", "content": "word " * 9000}]})
    assert r.status_code == 400
    key = requests.post(s.url + "/v1/users", headers=h,
                        json={"username": "tiny", "password": "password-tiny", "token_quota": 5}).json()["api_key"]
    r = requests.post(s.url + "/v1/chat/completions", headers={"Authorization": f"Bearer {key}"},
                      json={"messages": [{"role": "user", "content": "Hello"}], "max_tokens": 50})
    assert r.status_code == 429
    after = requests.get(s.url + "/metrics").text

    route = 'route="/v1/chat/completions"'
    assert metric(after, "ragd_http_requests_total", route + ',status="200"') == \
        metric(before, "ragd_http_requests_total", route + ',status="200"') + 1
    assert metric(after, "ragd_http_requests_total", route + ',status="400"') >= 1
    assert metric(after, "ragd_http_requests_total", route + ',status="429"') >= 1
    assert metric(after, "ragd_quota_rejections_total") == metric(before, "ragd_quota_rejections_total") + 1
    assert metric(after, "ragd_context_length_errors_total") == metric(before, "ragd_context_length_errors_total") + 1
    model = 'model="gemma-3-270m-q4_k_m"'
    assert metric(after, "ragd_prompt_tokens_total", model) - metric(before, "ragd_prompt_tokens_total", model) == \
        usage["prompt_tokens"]
    assert metric(after, "ragd_generation_tokens_total", model) - metric(before, "ragd_generation_tokens_total", model) == \
        usage["completion_tokens"]
    assert metric(after, "ragd_time_to_first_token_seconds_count") == \
        metric(before, "ragd_time_to_first_token_seconds_count") + 1
    assert metric(after, "ragd_ready") == 1
    assert re.search(r'^ragd_kv_cache_bytes\{model="gemma-3-270m-q4_k_m"\} [0-9.e+]+$', after, re.M)
    # Label sets stay bounded: no user names or ids in any label.
    assert "tiny" not in after
    assert not re.search(r'\b(user|user_id|username|question|prompt)="', after)
    # Routes are labelled by their pattern, never by the raw path.
    requests.get(s.url + "/v1/documents/12345", headers=h)
    assert 'route="/v1/documents/:id"' in requests.get(s.url + "/metrics").text

    check = subprocess.run(["promtool", "check", "metrics"], input=after, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def test_request_log_has_ids_but_no_plaintext_content(logged_server):
    s = logged_server
    r = requests.post(s.url + "/v1/chat/completions", headers=dict(s.headers(), **{"X-Request-Id": "trace-42"}),
                      json={"messages": [{"role": "user", "content": SECRET_PROMPT}], "max_tokens": 6})
    assert r.status_code == 200
    assert r.headers["X-Request-Id"] == "trace-42"
    assert requests.get(s.url + "/healthz").headers["X-Request-Id"].startswith("req-")
    log_text = open(os.path.join(s.data_dir, "requests.jsonl")).read()
    lines = [json.loads(l) for l in log_text.splitlines()]
    mine = [l for l in lines if l["request_id"] == "trace-42"]
    assert len(mine) == 1
    rec = mine[0]
    assert rec["route"] == "/v1/chat/completions" and rec["status"] == 200 and rec["user_id"] >= 1
    assert rec["prompt_tokens"] > 0 and 0 < rec["completion_tokens"] <= 6 and rec["finish_reason"] in ("stop", "length")
    assert rec["ttft_ms"] is not None and rec["duration_ms"] >= rec["ttft_ms"]
    content_files = glob.glob(os.path.join(s.data_dir, "content-log", "content-*.jsonl"))
    assert content_files
    everything = log_text + "".join(open(f).read() for f in content_files)
    assert "aubergine" not in everything and SECRET_PROMPT not in everything
    sealed = [json.loads(l) for f in content_files for l in open(f)]
    assert any(x["request_id"] == "trace-42" and x["box"] and x["nonce"] for x in sealed)


def test_admin_cost_view_counts_tokens_per_successful_answer(logged_server):
    import time
    s = logged_server
    key = requests.post(s.url + "/v1/users", headers=s.headers(),
                        json={"username": "costly", "password": "password-costly"}).json()["api_key"]
    ok = requests.post(s.url + "/v1/chat/completions", headers={"Authorization": f"Bearer {key}"},
                       json={"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 5})
    assert ok.status_code == 200
    # A second request whose client goes away mid-stream: charged, but no answer.
    abandon_stream(s, key, content="Tell a long story.", max_tokens=300)
    deadline = time.time() + 30
    while time.time() < deadline:
        me = requests.get(s.url + "/v1/usage", headers={"Authorization": f"Bearer {key}"}).json()
        if sum(d["requests"] for d in me["days"]) == 2 and me["reserved"] == 0:
            break
        time.sleep(0.2)
    assert "all_users" not in me  # the cost view is for admins only
    view = requests.get(s.url + "/v1/usage", headers=s.headers()).json()["all_users"]
    costly = next(u for u in view["users"] if u["username"] == "costly")
    assert costly["requests"] == 2 and costly["successful_answers"] == 1
    assert costly["total_tokens"] > ok.json()["usage"]["total_tokens"]
    assert costly["tokens_per_successful_answer"] == costly["total_tokens"]
    assert view["successful_answers"] >= 1 and view["total_tokens"] >= costly["total_tokens"]


def test_admin_status_shows_models_load_and_last_hour(logged_server):
    s = logged_server
    r = requests.post(s.url + "/v1/chat/completions", headers=s.headers(),
                      json={"messages": [{"role": "user", "content": "Count to ten."}], "max_tokens": 8})
    assert r.status_code == 200, r.text
    status = requests.get(s.url + "/v1/admin/status", headers=s.headers(), timeout=10).json()
    assert status["ready"] is True and status["uptime_s"] >= 0 and status["version"]
    models = {m["id"]: m for m in status["models"]}
    chat = [m for m in status["models"] if m["role"] == "chat"]
    assert chat and all(m["backend"] == "local" and m["context_length"] > 0 for m in chat)
    assert any(m["role"] == "embedding" for m in models.values())
    assert {m["id"] for m in status["llms"]} == {m["id"] for m in chat}
    for llm in status["llms"]:
        assert llm["kv_cache_budget_bytes"] > 0 and 0 <= llm["kv_cache_usage_ratio"] <= 1
    hour = status["last_hour"]
    assert hour["generations"] >= 1 and hour["completion_tokens"] >= r.json()["usage"]["completion_tokens"]
    assert 0 < hour["ttft_p50_s"] <= hour["ttft_p95_s"]
    assert hour["decode_tokens_per_s"] > 0
    assert status["corpus"]["documents"] >= 0 and status["ingest"] == {"queued": 0, "running": 0}
    # Admins only: a user is refused, an anonymous client must sign in.
    key = requests.post(s.url + "/v1/users", headers=s.headers(),
                        json={"username": "statususer"}).json()["api_key"]
    assert requests.get(s.url + "/v1/admin/status", headers=s.headers(key), timeout=10).status_code == 403
    assert requests.get(s.url + "/v1/admin/status", timeout=10).status_code == 401


def test_rag_requests_ended_before_generation_are_logged_and_counted(logged_server):
    # A conversation whose prompt outgrows the model's context is refused on
    # the RAG pool, after retrieval: logged and counted like any other response.
    s = logged_server
    doc = requests.post(s.url + "/v1/documents", headers=s.headers(),
                        json={"title": "Ports", "text": "ragd listens on port 8080 unless server.port says otherwise."})
    assert doc.status_code == 201, doc.text
    before = requests.get(s.url + "/metrics").text
    said = "ragd listens on port 8080 unless server.port says otherwise. " * 120
    earlier = [{"role": role, "content": said} for _ in range(8) for role in ("user", "assistant")]
    r = requests.post(s.url + "/v1/ask", headers=dict(s.headers(), **{"X-Request-Id": "trace-rag-long"}),
                      json={"messages": earlier + [{"role": "user", "content": "Which port does ragd use?"}]})
    assert r.status_code == 400, r.text
    assert r.json()["error"]["type"] == "exceed_context_size_error"
    after = requests.get(s.url + "/metrics").text
    route = 'route="/v1/ask",status="400"'
    assert metric(after, "ragd_http_requests_total", route) == metric(before, "ragd_http_requests_total", route) + 1
    lines = [json.loads(l) for l in open(os.path.join(s.data_dir, "requests.jsonl"))]
    mine = [l for l in lines if l["request_id"] == "trace-rag-long"]
    assert len(mine) == 1, mine
    assert mine[0]["route"] == "/v1/ask" and mine[0]["status"] == 400 and mine[0]["user_id"] >= 1
