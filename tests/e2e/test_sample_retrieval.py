"""Retrieval quality on the bundled sample corpus: every labelled question
(tests/data/sample_questions.jsonl) finds the document that answers it among
the top 5 passages of `ragd search`."""
import json
import os
import re
import subprocess
import tempfile

from conftest import RAGD, ROOT

SAMPLE = os.path.join(ROOT, "docs", "sample")


def title_of(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("# "):
                return line[2:].strip()
    raise AssertionError(f"{path} has no '# ' title")


def test_every_labelled_question_finds_its_document_in_the_top_5():
    questions = [json.loads(l) for l in open(os.path.join(ROOT, "tests", "data", "sample_questions.jsonl"))]
    assert len(questions) >= 10
    with tempfile.TemporaryDirectory() as data:
        r = subprocess.run([RAGD, "ingest", "--data", data, SAMPLE], capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        misses = []
        for q in questions:
            wanted = {title_of(os.path.join(SAMPLE, d)) for d in q["documents"]}
            r = subprocess.run([RAGD, "search", "--data", data, "-k", "5", q["question"]], capture_output=True,
                               text=True, timeout=120)
            assert r.returncode == 0, r.stderr
            found = re.findall(r"^\s*\d+\.\s+(.*?)\s+\(document \d+, chunk \d+\)$", r.stdout, re.M)
            assert len(found) == 5, r.stdout
            if not wanted & set(found):
                misses.append((q["question"], wanted, found))
        assert not misses, "\n".join(f"{q!r}: wanted {w}, got {f}" for q, w, f in misses)
