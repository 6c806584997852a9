"""Hostile uploads: extraction runs in a child process under limits, the
quadratic inputs of old are ingested, the ingestion queue is bounded and an
upload stops when its client leaves or its job is deleted.

The server runs with small limits so each one is met quickly: 2 s of
extraction CPU, no upload waiting behind the one being ingested.
"""
import os
import socket
import sys
import tempfile
import time
import zlib

import pytest
import requests

from conftest import ROOT, Server

sys.path.insert(0, os.path.join(ROOT, "tests", "data", "corpus"))
from make_pdf import pdf_bytes  # noqa: E402  (the fixtures' PDF writer)

CPU_SECONDS = 2


def pdf_bomb(megabytes_of_ops=400):
    """A small PDF whose one page's content stream inflates to hundreds of MB
    of text operators: cheap to send, costly to parse."""
    line = b"BT /F1 12 Tf 72 700 Td (bomb text to extract over and over) Tj ET\n"
    z = zlib.compressobj(9)
    block = line * (1 << 14)
    stream = b"".join(z.compress(block) for _ in range((megabytes_of_ops << 20) // len(block))) + z.flush()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> "
        b"/Contents 4 0 R >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    return pdf_bytes(objects)


@pytest.fixture(scope="module")
def hostile():
    with tempfile.TemporaryDirectory(prefix="ragd-e2e-hostile-") as data:
        srv = Server(data, extra_args=["--set", f"retrieval.extract_cpu_seconds={CPU_SECONDS}",
                                       "--set", "retrieval.extract_timeout_s=60",
                                       "--set", "retrieval.ingest_queue=0"]).wait_ready()
        srv.bomb = pdf_bomb()
        yield srv
        assert srv.stop() == 0, srv.output()


def upload(srv, name, data, content_type="application/octet-stream", headers=None, timeout=120):
    h = srv.headers()
    h.update(headers or {})
    return requests.post(srv.url + "/v1/documents", headers=h, files={"file": (name, data, content_type)},
                         timeout=timeout)


def jobs(srv):
    return requests.get(srv.url + "/v1/documents/jobs", headers=srv.headers(), timeout=10).json()["jobs"]


def wait_job(srv, job_id, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        job = requests.get(f"{srv.url}/v1/documents/jobs/{job_id}", headers=srv.headers(), timeout=10).json()["job"]
        if job["state"] not in ("queued", "running"):
            return job
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} still running after {timeout} s")


def test_many_script_elements_are_ingested(hostile):
    # 200,000 <script> elements (5 MB): each used to lower a copy of the rest of the page.
    html = "<html><body><p>Scripted page about the quillfeather festival.</p>" + \
        "<script>var a=1;</script>" * 200_000 + "</body></html>"
    r = upload(hostile, "scripts.html", html.encode(), "text/html")
    assert r.status_code == 201, r.text
    assert r.json()["job"]["state"] == "done"


def test_unbroken_cjk_text_is_ingested(hostile):
    text = "日本語の文書" * 2000  # 36 KB without a space
    r = upload(hostile, "cjk.txt", text.encode(), "text/plain")
    assert r.status_code == 201, r.text
    assert r.json()["document"]["chunks"] > 10


def test_pdf_bomb_meets_a_limit_and_the_server_goes_on(hostile):
    r = upload(hostile, "bomb.pdf", hostile.bomb, "application/pdf")
    assert r.status_code == 422, r.text
    message = r.json()["error"]["message"]
    # Poppler's text of 400 MB of operators outgrows the 1 GiB before 2 s of CPU pass.
    assert "memory" in message or "CPU time" in message, message
    assert requests.get(hostile.url + "/healthz", timeout=5).status_code == 200
    r = upload(hostile, "after.txt", b"The server still ingests after a hostile upload.", "text/plain")
    assert r.status_code == 201, r.text


def test_full_queue_is_503_and_delete_cancels_the_job(hostile):
    r = upload(hostile, "bomb2.pdf", hostile.bomb + b"\n%2", "application/pdf", headers={"Prefer": "respond-async"})
    assert r.status_code == 202, r.text
    job = r.json()["job"]
    assert r.headers["Location"] == f"/v1/documents/jobs/{job['id']}"
    # The one ingestion slot is taken and nothing may wait behind it.
    r = upload(hostile, "late.txt", b"An upload that finds the queue full.", "text/plain")
    assert r.status_code == 503, r.text
    assert int(r.headers["Retry-After"]) > 0
    r = requests.delete(f"{hostile.url}/v1/documents/jobs/{job['id']}", headers=hostile.headers(), timeout=10)
    assert r.status_code == 200, r.text
    done = wait_job(hostile, job["id"])
    assert done["state"] == "cancelled", done  # not "failed": the CPU limit did not stop it first
    # Finished jobs cannot be cancelled again; unknown ones are 404.
    r = requests.delete(f"{hostile.url}/v1/documents/jobs/{job['id']}", headers=hostile.headers(), timeout=10)
    assert r.status_code == 409
    assert requests.delete(f"{hostile.url}/v1/documents/jobs/999999", headers=hostile.headers(),
                           timeout=10).status_code == 404
    r = upload(hostile, "late.txt", b"An upload that finds the queue free again.", "text/plain")
    assert r.status_code == 201, r.text


def test_client_that_leaves_cancels_its_upload(hostile):
    boundary = "ragdboundary"
    data = hostile.bomb + b"\n%3"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"bomb3.pdf\"\r\n"
            f"Content-Type: application/pdf\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
    s = socket.create_connection(("127.0.0.1", hostile.port))
    s.sendall(f"POST /v1/documents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {hostile.headers()['Authorization'][7:]}"
              f"\r\nContent-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: {len(body)}\r\n\r\n"
              .encode() + body)
    deadline = time.time() + 10
    mine = []
    while not mine and time.time() < deadline:
        mine = [j for j in jobs(hostile) if j["file_name"] == "bomb3.pdf" and j["state"] == "running"]
        time.sleep(0.05)
    assert mine, jobs(hostile)
    s.close()
    done = wait_job(hostile, mine[0]["id"])
    # Cancelled, not stopped by the CPU limit it was heading for.
    assert done["state"] == "cancelled", done
