"""What one user can learn of another's prompts through shared speed-ups.

The prefix cache reuses computed prompt prefixes, and cached_tokens /
timings.cache_n say how many were reused: across users that would tell a
user whether someone else recently sent a guessed prompt. Reuse and the
count are per user, except for the RAG rules text the server writes itself.
"""
import os
import tempfile

import pytest

from conftest import ROOT, Server
from hardening import make_user, post

PROMPT = ("The quarterly report of the secret project Bluebird says that the launch moves to "
          "the spring, that the budget grows by a third, and that the team hires four engineers. ") * 3


@pytest.fixture(scope="module")
def srv():
    with tempfile.TemporaryDirectory(prefix="ragd-e2e-isolation-") as data:
        s = Server(data, ingest=os.path.join(ROOT, "docs", "sample")).wait_ready()
        yield s
        assert s.stop() == 0, s.output()


def ok(r):
    assert r.status_code == 200, r.text
    return r.json()


def cached(body):
    n = body["usage"]["prompt_tokens_details"]["cached_tokens"]
    assert body["timings"]["cache_n"] == n
    return n


def test_another_users_prompt_is_neither_reused_nor_reported(srv):
    alice, mallory = make_user(srv, "alice"), make_user(srv, "mallory")
    completion = {"prompt": PROMPT, "max_tokens": 1, "temperature": 0}
    first = ok(post(srv, "/v1/completions", completion, key=alice))
    assert first["usage"]["prompt_tokens"] > 64
    assert cached(ok(post(srv, "/v1/completions", completion, key=alice))) > 32  # her own prefix is reused
    assert cached(ok(post(srv, "/v1/completions", completion, key=mallory))) == 0  # not hers


def test_rag_rules_are_shared_but_the_question_is_not(srv):
    bob, eve = make_user(srv, "bob"), make_user(srv, "eve")
    question = {"question": "How do I change the port ragd listens on?", "max_tokens": 1}
    first = ok(post(srv, "/v1/ask", question, key=bob))
    again = ok(post(srv, "/v1/ask", question, key=bob))
    other = ok(post(srv, "/v1/ask", question, key=eve))
    rules = cached(other)
    assert rules > 0  # the server's own rules text is shared
    assert cached(again) > rules  # bob reuses his question and its sources too
    assert first["usage"]["prompt_tokens"] == other["usage"]["prompt_tokens"]
