"""Revocation: admin routes, a user's own keys, and `ragd user` beside a running server.

These tests need no model, so the server runs without one (/healthz only).
"""
import os
import subprocess
import tempfile

import pytest
import requests

from conftest import ADMIN_KEY, RAGD, Server


@pytest.fixture(scope="module")
def server():
    with tempfile.TemporaryDirectory(prefix="ragd-e2e-admin-") as data:
        srv = Server(data, extra_args=["--set", "models.llm=absent.gguf"]).wait_ready("/healthz")
        yield srv
        assert srv.stop() == 0, srv.output()


def call(server, method, path, key=ADMIN_KEY, **kw):
    return requests.request(method, server.url + path, headers={"Authorization": f"Bearer {key}"}, timeout=60, **kw)


def make_user(server, name, role="user"):
    r = call(server, "POST", "/v1/users", json={"username": name, "password": "password-" + name, "role": role})
    assert r.status_code == 201, r.text
    return r.json()["user"]["id"], r.json()["api_key"]


def login(server, name, password=None):
    r = requests.post(server.url + "/v1/auth/login", json={"username": name, "password": password or "password-" + name},
                      timeout=60)
    return r


def session_cookie(response):
    return response.headers["Set-Cookie"].split(";")[0]


def me_with_cookie(server, cookie):
    return requests.get(server.url + "/v1/me", headers={"Cookie": cookie}, timeout=60)


def test_a_disabled_users_key_answers_like_an_unknown_key(server):
    uid, key = make_user(server, "dora")
    assert call(server, "GET", "/v1/me", key).status_code == 200
    unknown = call(server, "GET", "/v1/me", "rk-" + "x" * 43)
    r = call(server, "PATCH", f"/v1/users/{uid}", json={"disabled": True})
    assert r.status_code == 200 and r.json()["user"]["disabled"] is True, r.text
    disabled = call(server, "GET", "/v1/me", key)
    assert (disabled.status_code, disabled.json()) == (unknown.status_code, unknown.json())
    assert login(server, "dora").status_code == 401
    assert call(server, "PATCH", f"/v1/users/{uid}", json={"disabled": False}).status_code == 200
    assert call(server, "GET", "/v1/me", key).status_code == 200


def test_admin_and_owner_revoke_keys(server):
    uid, key = make_user(server, "kim")
    other_id, other_key = make_user(server, "lee")
    keys = call(server, "GET", f"/v1/users/{uid}/keys").json()["keys"]
    assert len(keys) == 1 and key.startswith(keys[0]["prefix"])
    # The owner makes a second key, lists both, revokes the first.
    r = call(server, "POST", "/v1/me/keys", key, json={"name": "laptop"})
    assert r.status_code == 201, r.text
    second = r.json()["api_key"]
    mine = call(server, "GET", "/v1/me/keys", second).json()["keys"]
    assert [k["name"] for k in mine] == [keys[0]["name"], "laptop"]
    assert call(server, "DELETE", f"/v1/me/keys/{keys[0]['id']}", second).status_code == 200
    assert call(server, "GET", "/v1/me", key).status_code == 401
    # Nobody revokes another user's key through their own list.
    lee_key_id = call(server, "GET", f"/v1/users/{other_id}/keys").json()["keys"][0]["id"]
    assert call(server, "DELETE", f"/v1/me/keys/{lee_key_id}", second).status_code == 404
    assert call(server, "GET", "/v1/me", other_key).status_code == 200
    # The admin revokes it; users cannot use the admin routes.
    assert call(server, "DELETE", f"/v1/users/{other_id}/keys/{lee_key_id}", second).status_code == 403
    assert call(server, "DELETE", f"/v1/users/{other_id}/keys/{lee_key_id}").status_code == 200
    assert call(server, "GET", "/v1/me", other_key).status_code == 401


def test_password_reset_and_ending_sessions(server):
    uid, _ = make_user(server, "pat")
    first = session_cookie(login(server, "pat"))
    assert me_with_cookie(server, first).status_code == 200
    assert call(server, "DELETE", f"/v1/users/{uid}/sessions").status_code == 200
    assert me_with_cookie(server, first).status_code == 401

    second = session_cookie(login(server, "pat"))
    r = call(server, "POST", f"/v1/users/{uid}/password", json={"password": "short"})
    assert r.status_code == 400
    r = call(server, "POST", f"/v1/users/{uid}/password", json={"password": "a-brand-new-password"})
    assert r.status_code == 200, r.text
    assert me_with_cookie(server, second).status_code == 401
    assert login(server, "pat").status_code == 401
    assert login(server, "pat", "a-brand-new-password").status_code == 200


def test_quota_and_role_changes(server):
    uid, key = make_user(server, "quinn")
    r = call(server, "PATCH", f"/v1/users/{uid}", json={"token_quota": 7})
    assert r.status_code == 200 and r.json()["user"]["token_quota"] == 7
    assert call(server, "GET", "/v1/me", key).json()["quota"]["limit"] == 7
    assert call(server, "PATCH", f"/v1/users/{uid}", json={"token_quota": None}).json()["user"]["token_quota"] is None
    assert call(server, "GET", "/v1/users", key).status_code == 403
    assert call(server, "PATCH", f"/v1/users/{uid}", json={"role": "admin"}).status_code == 200
    assert call(server, "GET", "/v1/users", key).status_code == 200
    assert call(server, "PATCH", f"/v1/users/{uid}", json={"role": "user"}).status_code == 200
    assert call(server, "PATCH", f"/v1/users/{uid}", json={"role": "root"}).status_code == 400
    assert call(server, "PATCH", f"/v1/users/{uid}", json={"colour": "red"}).status_code == 400
    assert call(server, "PATCH", "/v1/users/9999", json={"disabled": True}).status_code == 404
    # The only enabled admin cannot lock everyone out.
    admin_id = next(u["id"] for u in call(server, "GET", "/v1/users").json()["users"] if u["username"] == "admin")
    assert call(server, "PATCH", f"/v1/users/{admin_id}", json={"disabled": True}).status_code == 400


def test_cli_changes_apply_to_the_running_server(server):
    uid, key = make_user(server, "cli-user")

    def ragd_user(*args):
        return subprocess.run([RAGD, "user", "--data", server.data_dir, *args], capture_output=True, text=True,
                              timeout=60)

    listed = ragd_user("list")
    assert listed.returncode == 0 and "cli-user" in listed.stdout, listed.stderr
    assert ragd_user("set-quota", "cli-user", "11").returncode == 0
    assert call(server, "GET", "/v1/me", key).json()["quota"]["limit"] == 11
    assert ragd_user("disable", "cli-user").returncode == 0
    assert call(server, "GET", "/v1/me", key).status_code == 401
    assert ragd_user("enable", "cli-user").returncode == 0
    assert call(server, "GET", "/v1/me", key).status_code == 200
    key_id = call(server, "GET", f"/v1/users/{uid}/keys").json()["keys"][0]["id"]
    assert ragd_user("revoke-key", "cli-user", str(key_id)).returncode == 0
    assert call(server, "GET", "/v1/me", key).status_code == 401
    created = ragd_user("create", "made-by-cli")
    assert created.returncode == 0, created.stderr
    new_key = created.stdout.split("api key: ")[1].split()[0]
    assert call(server, "GET", "/v1/me", new_key).json()["username"] == "made-by-cli"
