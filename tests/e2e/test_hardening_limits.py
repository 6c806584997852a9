"""Request limits at the HTTP boundary: each route's own body limit (uploads
only on the upload route), the header timeout on every request of a
kept-alive connection, and the caps on open connections.

A request too large for its route is refused from its headers, before any
of its body is buffered: the route's limit against Content-Length, a
multipart body off the upload route, headers past 64 KiB, a chunked body as
soon as it outgrows the limit. The servers run without a model: none of
this needs one.
"""
import json
import socket
import time

import pytest
import requests

from conftest import ADMIN_KEY
from hardening import start_modelless, stop


@pytest.fixture(scope="module")
def srv():
    s = start_modelless("server.header_timeout_s=2")
    yield s
    stop(s)


@pytest.fixture(scope="module")
def capped():
    s = start_modelless("server.max_connections_per_address=6", "server.max_connections=9")
    yield s
    stop(s)


AUTH = {"Authorization": f"Bearer {ADMIN_KEY}"}


def connect(srv, source="127.0.0.1"):
    s = socket.socket()
    s.bind((source, 0))
    s.settimeout(15)
    s.connect(("127.0.0.1", srv.port))
    return s


def read_response(s):
    """One response (head and Content-Length body) or b"" when closed."""
    got = b""
    while b"\r\n\r\n" not in got:
        chunk = s.recv(65536)
        if not chunk:
            return got
        got += chunk
    head, _, body = got.partition(b"\r\n\r\n")
    length = next((int(l.split(b":")[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")), 0)
    while len(body) < length:
        chunk = s.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


def closed_within(s, seconds):
    """True when the server closes the connection within `seconds` (any
    bytes it sends first, such as a 408, are read and dropped)."""
    s.settimeout(seconds)
    try:
        while s.recv(65536):
            pass
        return True
    except (socket.timeout, TimeoutError):
        return False
    except ConnectionResetError:
        return True


# --- per-route body limits ---------------------------------------------------

def test_multipart_is_refused_off_the_upload_route(srv):
    body = b"--b\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\n" + b"x" * (2 << 20) + b"\r\n--b--\r\n"
    r = requests.post(srv.url + "/v1/chat/completions", data=body, timeout=60,
                      headers=dict(AUTH, **{"Content-Type": "multipart/form-data; boundary=b"}))
    assert r.status_code == 415, r.text
    assert "upload" in r.json()["error"]["message"]


def test_json_routes_keep_the_json_limit(srv):
    r = requests.post(srv.url + "/tokenize", data=b'{"content":"' + b"a" * (2 << 20) + b'"}', timeout=60,
                      headers=dict(AUTH, **{"Content-Type": "application/json"}))
    assert r.status_code == 413 and "1048576" in r.json()["error"]["message"]


def test_bodyless_routes_take_a_few_bytes_at_most(srv):
    r = requests.get(srv.url + "/v1/me", data=b"x" * 10000, headers=AUTH, timeout=60)
    assert r.status_code == 413, r.text
    assert requests.get(srv.url + "/v1/me", json={}, headers=AUTH, timeout=60).status_code == 200


def test_the_upload_route_takes_more_than_the_json_limit(srv):
    text = "word " * (400 << 10)  # 2 MiB of JSON
    r = requests.post(srv.url + "/v1/documents", json={"title": "big", "text": text}, headers=AUTH, timeout=60)
    assert r.status_code != 413, r.text  # the models are absent: 503, but the size passed


def refusal_without_a_body(srv, head):
    """Sends only the request line and headers; returns the answer."""
    s = connect(srv)
    s.sendall(head)
    answer = read_response(s)
    s.close()
    return answer


def test_a_declared_body_over_the_limit_is_refused_before_it_is_sent(srv):
    # Before the gate, the server waited for the gigabyte (and buffered up
    # to the upload limit) before saying anything.
    answer = refusal_without_a_body(
        srv, f"POST /tokenize HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             f"Content-Length: {1 << 30}\r\n\r\n".encode())
    assert answer.startswith(b"HTTP/1.1 413"), answer
    assert b"Connection: close" in answer
    assert b"1073741824 bytes is larger than the 1048576 bytes POST /tokenize accepts" in answer


def test_a_multipart_head_off_the_upload_route_is_refused_before_its_body(srv):
    answer = refusal_without_a_body(
        srv, b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
             b"Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 100\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 415"), answer


def test_a_content_length_past_64_bits_is_a_bad_request(srv):
    # Pistache's parser threw on it and the request hung without an answer.
    answer = refusal_without_a_body(
        srv, b"POST /tokenize HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 400"), answer


def answer_to_a_growing_request(srv, head, piece, times):
    """Sends `head`, then `piece` `times` times (stopping if the server
    closes), and returns the answer."""
    s = connect(srv)
    s.sendall(head)
    try:
        for _ in range(times):
            s.sendall(piece)
    except (BrokenPipeError, ConnectionResetError):
        pass
    answer = read_response(s)
    s.close()
    return answer


def test_headers_are_capped(srv):
    # 100 KiB of headers, more than the 64 KiB allowed.
    answer = answer_to_a_growing_request(srv, b"GET /healthz HTTP/1.1\r\nHost: x\r\n",
                                         b"X-Filler: " + b"a" * 1000 + b"\r\n", 100)
    assert answer.startswith(b"HTTP/1.1 431"), answer


def test_a_chunked_body_is_refused_once_it_outgrows_the_limit(srv):
    # 1.25 MiB in chunks, past the 1 MiB limit, and no final chunk.
    answer = answer_to_a_growing_request(
        srv, b"POST /tokenize HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             b"Transfer-Encoding: chunked\r\n\r\n",
        b"%x\r\n" % (64 << 10) + b"a" * (64 << 10) + b"\r\n", 20)
    assert answer.startswith(b"HTTP/1.1 413"), answer


def test_a_sender_that_never_stops_is_answered_and_cut_after_a_few_mebibytes(srv):
    s = connect(srv)
    s.sendall(f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              f"Content-Length: {1 << 30}\r\n\r\n".encode())
    s.setblocking(False)
    sent, answer, chunk, started = 0, b"", b"\0" * (256 << 10), time.time()
    closed = False
    while time.time() - started < 20 and not closed:
        try:
            got = s.recv(65536)
            closed = not got
            answer += got
        except BlockingIOError:
            pass
        except OSError:
            closed = True
        try:
            sent += s.send(chunk)
        except BlockingIOError:
            time.sleep(0.001)
        except OSError:
            closed = True
    s.close()
    assert answer.startswith(b"HTTP/1.1 413"), answer
    assert closed, "the connection stayed open"
    # Kernel buffers on both sides plus the server's 1 MiB linger; before the
    # gate the server read up to the 32 MiB upload limit.
    assert sent < 16 << 20, sent


def test_a_kept_alive_connection_is_refused_like_a_new_one(srv):
    s = connect(srv)
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    first = read_response(s)
    s.sendall(b"POST /tokenize HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999\r\n\r\n")
    second = read_response(s)
    s.close()
    assert first.startswith(b"HTTP/1.1 200"), first
    assert second.startswith(b"HTTP/1.1 413"), second


# --- header timeout on kept-alive connections --------------------------------

def test_every_request_of_a_kept_alive_connection_has_a_header_timeout(srv):
    s = connect(srv)
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    assert read_response(s).startswith(b"HTTP/1.1 200")
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # the second request's headers never end
    assert closed_within(s, 10), "the second request kept the connection open past the header timeout"
    s.close()


def test_an_idle_kept_alive_connection_is_closed(srv):
    s = connect(srv)
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    assert read_response(s).startswith(b"HTTP/1.1 200")
    assert closed_within(s, 10)
    s.close()


def test_a_deferred_answer_closes_its_connection(srv):
    s = connect(srv)
    body = json.dumps({"username": "nobody", "password": "wrong password"}).encode()
    s.sendall(b"POST /v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
              str(len(body)).encode() + b"\r\n\r\n" + body)
    response = read_response(s)
    assert response.startswith(b"HTTP/1.1 401") and b"Connection: close" in response
    assert closed_within(s, 5)
    s.close()


# --- connection caps ---------------------------------------------------------

def refused(s):
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    try:
        return read_response(s).startswith(b"HTTP/1.1 503")
    except ConnectionResetError:
        return True


def test_connections_are_capped_per_address_and_in_total(capped):
    srv = capped
    held = [connect(srv) for _ in range(6)]
    try:
        time.sleep(0.5)
        extra = connect(srv)
        assert refused(extra)
        extra.close()
        # Another address still gets in, up to the total of nine.
        others = [connect(srv, "127.0.0.2") for _ in range(3)]
        time.sleep(0.5)  # the server has taken them in (connect returns before it does)
        probe = connect(srv, "127.0.0.3")
        assert refused(probe)
        probe.close()
        for o in others:
            o.close()
        time.sleep(0.5)
        ok = connect(srv, "127.0.0.3")
        ok.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert read_response(ok).startswith(b"HTTP/1.1 200")
        ok.close()
    finally:
        for s in held:
            s.close()
    time.sleep(0.5)
    s = connect(srv)
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    assert read_response(s).startswith(b"HTTP/1.1 200")
    s.close()
