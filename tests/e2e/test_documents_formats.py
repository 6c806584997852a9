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


def test_docx_upload_is_found_by_a_question(srv):
    r = upload(srv, "sample.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document")
    assert r.status_code == 201, r.text
    doc = r.json()["document"]
    assert doc["media_type"] == "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    assert doc["title"] == "Beacon Handbook"
    text = requests.get(f"{srv.url}/v1/documents/{doc['id']}", headers=srv.headers(), timeout=10).json()["text"]
    assert "# Coastal Signals" in text and "Marlowe\t7719 hertz" in text and "REMOVED REVISION" not in text
    # The streamed answer's first event lists the passages retrieved for the question.
    r = requests.post(srv.url + "/v1/ask", headers=srv.headers(), timeout=300, stream=True,
                      json={"question": "What is the quillon frequency of the Marlowe beacon?", "max_tokens": 1,
                            "stream": True})
    assert r.status_code == 200, r.text
    first = json.loads(next(line for line in r.iter_lines(decode_unicode=True) if line.startswith("data: "))[6:])
    sources = first["citations"]
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
