"""Smaller hardening items: /metrics behind a token, no internal detail in
answers, headers that keep answers out of caches and sniffers.

The servers run without a model (/healthz only): none of this needs one.
"""
import os

import pytest
import requests

from conftest import ADMIN_KEY
from hardening import start_modelless, stop


@pytest.fixture(scope="module")
def srv():
    s = start_modelless("server.metrics_token=s3cret-scrape-token")
    yield s
    stop(s)


def test_metrics_needs_the_token_when_one_is_set(srv):
    r = requests.get(srv.url + "/metrics", timeout=10)
    assert r.status_code == 401 and r.json()["error"]["type"] == "authentication_error"
    assert requests.get(srv.url + "/metrics", headers={"Authorization": "Bearer wrong"}, timeout=10).status_code == 401
    r = requests.get(srv.url + "/metrics", headers={"Authorization": "Bearer s3cret-scrape-token"}, timeout=10)
    assert r.status_code == 200 and "ragd_ready" in r.text


@pytest.mark.parametrize("method,path", [("GET", "/healthz"), ("GET", "/readyz"), ("GET", "/v1/me"),
                                         ("GET", "/metrics"), ("POST", "/v1/chat/completions"),
                                         ("GET", "/no/such/route")])
def test_api_answers_are_neither_sniffed_nor_cached(srv, method, path):
    r = requests.request(method, srv.url + path, json={} if method == "POST" else None, timeout=10)
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    assert r.headers["Cache-Control"] == "no-store"


def test_model_load_failure_keeps_paths_out_of_answers(srv):
    r = requests.get(srv.url + "/readyz", timeout=10)
    assert r.status_code == 503
    assert "absent-secret-name" not in r.text and "/" not in r.json()["error"]["message"]
    r = requests.get(srv.url + "/v1/models", headers={"Authorization": f"Bearer {ADMIN_KEY}"}, timeout=10)
    assert "absent-secret-name" not in r.text
    assert "absent-secret-name" in srv.output()  # the operator still learns why


