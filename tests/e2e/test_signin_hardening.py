"""Sign-in backoff and the password pool, CSRF checks, and the session cookie.

The servers run without a model (/healthz only): none of this needs one.
"""
import concurrent.futures
import tempfile
import time

import pytest
import requests

from conftest import ADMIN_KEY, ADMIN_PASSWORD, ADMIN_USER, Server

EVIL = "http://evil.example"


def start(*settings):
    args = ["--set", "models.llm=absent.gguf"]
    for s in settings:
        args += ["--set", s]
    data = tempfile.TemporaryDirectory(prefix="ragd-e2e-signin-")
    srv = Server(data.name, extra_args=args).wait_ready("/healthz")
    srv.tmp = data
    return srv


def stop(srv):
    assert srv.stop() == 0, srv.output()
    srv.tmp.cleanup()


@pytest.fixture(scope="module")
def plain():
    srv = start()
    yield srv
    stop(srv)


@pytest.fixture(scope="module")
def proxied():
    srv = start("server.trust_proxy=true", "auth.account_free_failures=3", "auth.address_free_failures=5")
    yield srv
    stop(srv)


@pytest.fixture(scope="module")
def small_pool():
    srv = start("auth.hash_threads=1", "auth.hash_queue=2", "auth.address_free_failures=1000",
                "server.secure_cookies=always")
    yield srv
    stop(srv)


def login(srv, user, password, headers=None, **kw):
    return requests.post(srv.url + "/v1/auth/login", json={"username": user, "password": password},
                         headers=headers or {}, timeout=60, **kw)


# --- backoff -----------------------------------------------------------------

def test_account_backoff_answers_429_with_retry_after(proxied):
    # Each try from another address: the account's own count trips.
    for i in range(3):
        r = login(proxied, "victim", "wrong", {"X-Forwarded-For": f"10.0.0.{i}"})
        assert r.status_code == 401, r.text
    r = login(proxied, "victim", "wrong", {"X-Forwarded-For": "10.0.0.9"})
    assert r.status_code == 429 and r.json()["error"]["type"] == "rate_limit_error"
    assert int(r.headers["Retry-After"]) >= 1
    assert 'sign-in failed: account "victim" from 10.0.0.1' in proxied.output()


def test_address_backoff_spans_accounts(proxied):
    for i in range(5):
        assert login(proxied, f"guess{i}", "wrong", {"X-Forwarded-For": "10.9.9.9"}).status_code == 401
    r = login(proxied, ADMIN_USER, ADMIN_PASSWORD, {"X-Forwarded-For": "10.9.9.9"})
    assert r.status_code == 429 and int(r.headers["Retry-After"]) >= 1
    assert login(proxied, ADMIN_USER, ADMIN_PASSWORD, {"X-Forwarded-For": "10.9.9.10"}).status_code == 200


def test_pool_bound_answers_503_and_healthz_answers_while_sign_ins_queue(small_pool):
    n = 16
    with concurrent.futures.ThreadPoolExecutor(n) as pool:
        futures = [pool.submit(login, small_pool, f"flood{i}", "wrong") for i in range(n)]
        time.sleep(0.05)
        health = requests.get(small_pool.url + "/healthz", timeout=60)
        waiting = sum(not f.done() for f in futures)
        codes = [f.result().status_code for f in futures]
    assert health.status_code == 200
    assert waiting > 0, "no sign-in was still waiting for the password pool when /healthz answered"
    assert codes.count(503) >= 1 and set(codes) <= {401, 503}, codes
    refused = next(f.result() for f in futures if f.result().status_code == 503)
    assert refused.json()["error"]["type"] == "unavailable_error" and refused.headers["Retry-After"]


# --- CSRF ----------------------------------------------------------------------

def cookie_of(response):
    return response.headers["Set-Cookie"].split(";")[0]


@pytest.mark.parametrize("headers,status", [
    ({"Origin": EVIL}, 403),
    ({"Sec-Fetch-Site": "cross-site"}, 403),
    ({"Sec-Fetch-Site": "same-site"}, 403),
    ({"Origin": "null"}, 403),
    ({"Sec-Fetch-Site": "same-origin"}, 200),
    ({}, 200),
])
def test_login_checks_the_origin(plain, headers, status):
    own = {"Origin": plain.url} if status == 200 and not headers else {}
    assert login(plain, ADMIN_USER, ADMIN_PASSWORD, {**headers, **own}).status_code == status


def test_login_needs_a_json_content_type(plain):
    body = '{"username": "%s", "password": "%s"}' % (ADMIN_USER, ADMIN_PASSWORD)
    r = requests.post(plain.url + "/v1/auth/login", data=body, headers={"Content-Type": "text/plain"}, timeout=60)
    assert r.status_code == 400 and "application/json" in r.json()["error"]["message"]


def test_cookie_requests_check_origin_and_content_type_bearer_ones_do_not(plain):
    cookie = cookie_of(login(plain, ADMIN_USER, ADMIN_PASSWORD))
    url = plain.url + "/v1/me/keys"
    as_cookie = {"Cookie": cookie}
    assert requests.post(url, json={}, headers={**as_cookie, "Origin": EVIL}, timeout=60).status_code == 403
    assert requests.post(url, json={}, headers={**as_cookie, "Sec-Fetch-Site": "same-site"},
                         timeout=60).status_code == 403
    r = requests.post(url, data="{}", headers={**as_cookie, "Origin": plain.url, "Content-Type": "text/plain"},
                      timeout=60)
    assert r.status_code == 400
    assert requests.post(url, json={}, headers={**as_cookie, "Origin": plain.url}, timeout=60).status_code == 201
    # Reading is not state-changing; a Bearer key is never sent by a browser on its own.
    assert requests.get(url, headers={**as_cookie, "Origin": EVIL}, timeout=60).status_code == 200
    bearer = {"Authorization": f"Bearer {ADMIN_KEY}", "Origin": EVIL, "Content-Type": "text/plain"}
    assert requests.post(url, data="{}", headers=bearer, timeout=60).status_code == 201
    assert requests.post(plain.url + "/v1/auth/logout", headers={**as_cookie, "Origin": EVIL},
                         timeout=60).status_code == 403


# --- the cookie ------------------------------------------------------------------

def test_plain_http_cookie_is_not_secure_and_an_untrusted_proxy_header_changes_nothing(plain):
    for headers in ({}, {"X-Forwarded-Proto": "https"}):
        set_cookie = login(plain, ADMIN_USER, ADMIN_PASSWORD, headers).headers["Set-Cookie"]
        assert set_cookie.startswith("ragd_session=") and "Secure" not in set_cookie
        assert "HttpOnly" in set_cookie and "SameSite=Strict" in set_cookie


def test_auto_is_secure_behind_a_trusted_tls_proxy(proxied):
    tls = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "10.7.7.7"}
    set_cookie = login(proxied, ADMIN_USER, ADMIN_PASSWORD, tls).headers["Set-Cookie"]
    assert set_cookie.startswith("__Host-ragd_session=")
    assert "; Secure" in set_cookie and "; Path=/" in set_cookie and "Domain" not in set_cookie
    token = cookie_of_value(set_cookie)
    me = proxied.url + "/v1/me"
    assert requests.get(me, headers={**tls, "Cookie": f"__Host-ragd_session={token}"}, timeout=60).status_code == 200
    # Over TLS only the __Host- cookie counts (a plain one may have been planted).
    assert requests.get(me, headers={**tls, "Cookie": f"ragd_session={token}"}, timeout=60).status_code == 401
    plain_cookie = login(proxied, ADMIN_USER, ADMIN_PASSWORD, {"X-Forwarded-For": "10.7.7.7"}).headers["Set-Cookie"]
    assert plain_cookie.startswith("ragd_session=") and "Secure" not in plain_cookie


def cookie_of_value(set_cookie):
    return set_cookie.split(";")[0].split("=", 1)[1]


def test_always_makes_the_cookie_secure(small_pool):
    set_cookie = login(small_pool, ADMIN_USER, ADMIN_PASSWORD).headers["Set-Cookie"]
    assert set_cookie.startswith("__Host-ragd_session=") and "; Secure" in set_cookie
    cleared = requests.post(small_pool.url + "/v1/auth/logout", timeout=60).headers["Set-Cookie"]
    assert cleared.startswith("__Host-ragd_session=;") and "Max-Age=0" in cleared
