"""Smaller hardening items: /metrics behind a token, no internal detail in
answers, headers that keep answers out of caches and sniffers, private data
files, and generated admin credentials in a private file, not on the console.

The servers run without a model (/healthz only): none of this needs one.
"""
import os
import stat

import pytest
import requests

from conftest import ADMIN_KEY
from hardening import start_modelless, stop


def private_folder(tmp):
    folder = os.path.join(tmp, "data")
    os.makedirs(folder)
    os.chmod(folder, 0o755)  # as a careless install leaves it: ragd makes it private
    return folder


@pytest.fixture(scope="module")
def srv():
    s = start_modelless("server.metrics_token=s3cret-scrape-token", data_dir=private_folder,
                        env={"RAGD_ADMIN_PASSWORD": "", "RAGD_ADMIN_API_KEY": ""})
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


def test_data_files_are_private(srv):
    assert stat.S_IMODE(os.stat(srv.data_dir).st_mode) == 0o700
    requests.get(srv.url + "/v1/me", timeout=10)  # something for the request log
    for name in ("app.db", "requests.jsonl", "admin-credentials.txt"):
        path = os.path.join(srv.data_dir, name)
        assert os.path.exists(path), name
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600, name


def test_generated_admin_credentials_go_to_a_private_file_not_the_console(srv):
    with open(os.path.join(srv.data_dir, "admin-credentials.txt")) as f:
        fields = dict(line.split(": ", 1) for line in f.read().splitlines())
    password, key = fields["password"], fields["api_key"]
    assert password not in srv.output() and key not in srv.output()
    assert "admin-credentials.txt" in srv.output()
    r = requests.post(srv.url + "/v1/auth/login", json={"username": fields["username"], "password": password},
                      timeout=60)
    assert r.status_code == 200, r.text
    assert requests.get(srv.url + "/v1/me", headers={"Authorization": f"Bearer {key}"}, timeout=10).status_code == 200
