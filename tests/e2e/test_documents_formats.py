"""Office, e-book, CSV and legacy-encoded uploads through the real upload
route: each is ingested with its own media type, and a DOCX's text is then
found by a question (fixtures: tests/data/corpus/make_office.py)."""
import json
import os
import tempfile

import pytest
import requests

from conftest import ROOT, Server

FIXTURES = os.path.join(ROOT, "tests", "data", "corpus")


@pytest.fixture(scope="module")
def srv():
    with tempfile.TemporaryDirectory(prefix="ragd-e2e-formats-") as data:
        s = Server(data).wait_ready()
        yield s
        assert s.stop() == 0, s.output()


def upload(srv, name, content_type="application/octet-stream"):
    with open(os.path.join(FIXTURES, name), "rb") as f:
        data = f.read()
    return requests.post(srv.url + "/v1/documents", headers=srv.headers(),
                         files={"file": (name, data, content_type)}, timeout=300)


def retrieved(srv, question):
    """The passages retrieved for `question`: the streamed answer's first event lists them."""
    r = requests.post(srv.url + "/v1/ask", headers=srv.headers(), timeout=300, stream=True,
                      json={"question": question, "max_tokens": 1, "stream": True})
    assert r.status_code == 200, r.text
    first = json.loads(next(line for line in r.iter_lines(decode_unicode=True) if line.startswith("data: "))[6:])
    return first["citations"]


def test_docx_upload_is_found_by_a_question(srv):
    r = upload(srv, "sample.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document")
    assert r.status_code == 201, r.text
    doc = r.json()["document"]
    assert doc["media_type"] == "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    assert doc["title"] == "Beacon Handbook"
    text = requests.get(f"{srv.url}/v1/documents/{doc['id']}", headers=srv.headers(), timeout=10).json()["text"]
    assert "# Coastal Signals" in text and "Marlowe\t7719 hertz" in text and "REMOVED REVISION" not in text
    sources = retrieved(srv, "What is the quillon frequency of the Marlowe beacon?")
    assert sources and sources[0]["document_id"] == doc["id"], sources
    assert "7719 hertz" in sources[0]["text"]


@pytest.mark.parametrize("name,media_type,title", [
    ("sample.odt", "application/vnd.oasis.opendocument.text", "Orchard Notes"),
    ("sample.pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation", "Review Deck"),
    ("sample.epub", "application/epub+zip", "Tides of the North"),
    ("sample.csv", "text/csv", "sample"),
    ("utf16le.txt", "text/plain", "utf16le"),
    ("cp1252.txt", "text/plain", "cp1252"),
])
def test_other_formats_are_ingested(srv, name, media_type, title):
    r = upload(srv, name)
    assert r.status_code == 201, r.text
    doc = r.json()["document"]
    assert (doc["media_type"], doc["title"]) == (media_type, title)
    assert doc["chunks"] >= 1


@pytest.mark.parametrize("name,status", [("sheet.xlsx", 415), ("xxe.docx", 201), ("laughs.docx", 201)])
def test_archives_keep_the_refusal_rules(srv, name, status):
    r = upload(srv, name)
    assert r.status_code == status, r.text


def test_reindex_is_a_job_that_keeps_the_document(srv):
    import time
    r = upload(srv, "sample.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document")
    assert r.status_code in (200, 201), r.text
    doc = r.json()["document"]
    r = requests.post(f"{srv.url}/v1/documents/{doc['id']}/reindex", headers=srv.headers(), timeout=10)
    assert r.status_code == 202, r.text
    job = r.json()["job"]
    assert job["kind"] == "reindex" and "duplicate" not in job and r.headers["Location"] == f"/v1/documents/jobs/{job['id']}"
    deadline = time.time() + 120
    while job["state"] in ("queued", "running") and time.time() < deadline:
        time.sleep(0.2)
        body = requests.get(srv.url + r.headers["Location"], headers=srv.headers(), timeout=10).json()
        job = body["job"]
    assert job["state"] == "done", job
    assert job["document_id"] == doc["id"] and job["chunks_done"] == job["chunks_total"] > 0
    assert job["duplicate"] is False
    assert body["document"]["id"] == doc["id"] and body["document"]["chunks"] == job["chunks_total"]
    listed = requests.get(srv.url + "/v1/documents", headers=srv.headers(), timeout=10).json()["documents"]
    assert sum(d["sha256"] == doc["sha256"] for d in listed) == 1
    # Still found by a question, through its new chunks.
    sources = retrieved(srv, "What is the quillon frequency of the Marlowe beacon?")
    assert sources and sources[0]["document_id"] == doc["id"], sources
    bad = requests.post(f"{srv.url}/v1/documents/999999/reindex", headers=srv.headers(), timeout=10)
    assert bad.status_code == 404, bad.text
