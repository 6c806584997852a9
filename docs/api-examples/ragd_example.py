#!/usr/bin/env python3
"""A short tour of ragd's own API from Python (only `requests` needed):
upload a document and follow its ingestion, ask a question and read the
citations (whole and streamed), create a user and look at usage.

    RAGD_URL=http://127.0.0.1:8080 RAGD_KEY=rk-... python3 docs/api-examples/ragd_example.py

RAGD_KEY must be an admin's API key for the upload and user steps (the one
`ragd serve` prints when it creates the first admin, or set with
RAGD_ADMIN_API_KEY; `ragd user create-key NAME` makes another). The
OpenAI-compatible routes work with the official `openai` client as they are:
`openai.OpenAI(base_url=RAGD_URL + "/v1", api_key=RAGD_KEY)`.
"""
import json
import os
import time

import requests

URL = os.environ.get("RAGD_URL", "http://127.0.0.1:8080")
HEADERS = {"Authorization": "Bearer " + os.environ["RAGD_KEY"]}


def check(r):
    """The body of a successful answer; ragd's errors are {"error": {"code", "type", "message"}}."""
    if r.status_code >= 400:
        raise SystemExit(f"{r.request.method} {r.request.url}: {r.status_code} {r.json()['error']['message']}")
    return r.json()


def upload(title, text):
    """Uploads a file and waits for its ingestion: with `Prefer: respond-async`
    the upload answers 202 at once with a job to poll (proxies with short
    timeouts never cut a large PDF); without it the answer waits for the end."""
    files = {"file": (title + ".md", text.encode(), "text/markdown")}
    r = requests.post(URL + "/v1/documents", headers={**HEADERS, "Prefer": "respond-async"}, files=files,
                      data={"title": title}, timeout=60)
    body = check(r)
    if r.status_code != 202:  # 201 added, or 200 when the same bytes were there already
        return body["document"]["id"]
    job = body["job"]
    while job["state"] in ("queued", "running"):
        print(f"  ingesting: {job['chunks_done']}/{job['chunks_total']} chunks")
        time.sleep(0.5)
        job = check(requests.get(f"{URL}/v1/documents/jobs/{job['id']}", headers=HEADERS, timeout=30))["job"]
    if job["state"] != "done":
        raise SystemExit(f"ingestion {job['state']}: {job.get('error')}")
    return job["document_id"]


def ask(question):
    """One answer with numbered citations ([1] in the text = citations n 1)."""
    body = check(requests.post(URL + "/v1/ask", headers=HEADERS, json={"question": question, "top_k": 4},
                               timeout=300))
    print(body["answer"])
    for c in body["citations"]:
        print(f"  [{c['n']}] {c['title']} (chunk {c['chunk_id']}, score {c['score']:.3f})")
    print(f"  tokens: {body['usage']['total_tokens']}")


def ask_streamed(question):
    """The same as Server-Sent Events: citations first, then text deltas, then done."""
    with requests.post(URL + "/v1/ask", headers=HEADERS, json={"question": question, "stream": True},
                       stream=True, timeout=300) as r:
        if r.status_code >= 400:
            check(r)
        for line in r.iter_lines(decode_unicode=True):
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            event = json.loads(line[len("data: "):])
            if event["type"] == "citations":
                print(f"  ({len(event['citations'])} sources)")
            elif event["type"] == "delta":
                print(event["content"], end="", flush=True)
            elif event["type"] == "done":
                print(f"\n  finish: {event['finish_reason']}, tokens: {event['usage']['total_tokens']}")
            elif event["type"] == "error":
                raise SystemExit(event["error"]["message"])


def create_user(name):
    """An account with its own API key (shown once) and token quota; admins only."""
    body = check(requests.post(URL + "/v1/users", headers=HEADERS, timeout=60,
                               json={"username": name, "role": "user", "token_quota": 50000}))
    print(f"  user {body['user']['id']} {body['user']['username']}, key {body['api_key'][:8]}…")
    return body["user"]["id"], body["api_key"]


def main():
    print("upload:")
    doc = upload("Greenhouse notes", "# Watering\n\nThe tomatoes in the east greenhouse are watered at 6 am "
                 "and 7 pm; the drip line delivers two litres per plant per day.\n")
    print(f"  document {doc}")
    print("ask:")
    ask("When are the tomatoes in the east greenhouse watered?")
    print("ask, streamed:")
    ask_streamed("How much water does each tomato plant get per day?")
    print("users:")
    user_id, key = create_user(f"example-{int(time.time())}")
    me = check(requests.get(URL + "/v1/me", headers={"Authorization": "Bearer " + key}, timeout=30))
    print(f"  the new user sees its quota: {me['quota']['remaining']} tokens left")
    usage = check(requests.get(f"{URL}/v1/users/{user_id}/usage", headers=HEADERS, timeout=30))
    print(f"  its usage: {usage['used']} of {usage['limit']} tokens this {usage['period']}")
    mine = check(requests.get(URL + "/v1/usage", headers=HEADERS, timeout=30))
    print(f"  mine: {mine['used']} tokens used, {mine['remaining']} left")


if __name__ == "__main__":
    main()
