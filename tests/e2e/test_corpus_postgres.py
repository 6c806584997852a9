"""The corpus on PostgreSQL (storage.postgres_url): two ragd replicas, each
with its own data folder and vector index file, on one private PostgreSQL 15.
A document uploaded on A is retrieved by questions asked on B: one sharing
its words (found by the shared full-text search at once) and a paraphrase
sharing none, which only B's vector index can answer, once it has followed
the store's change sequence. The time from A's acknowledgement to B's
first retrieval by paraphrase is printed (docs/scale-out.md, "The corpus on
PostgreSQL"). A delete on B reaches A, B follows again after an outage of
the database, and a restarted replica finds it all."""
import json
import os
import statistics
import subprocess
import tempfile
import time

import requests

from conftest import Server
from test_accounts_postgres import FIXTURE, postgres  # noqa: F401 (the module's private PostgreSQL)

# (file, a question sharing its words, a paraphrase sharing none of them, text)
FACTS = [
    ("zanthor.txt", "What is the code word of the Zanthor relay station?",
     "Which password do overnight workers recite?",
     "Zanthor relay station\n\nThe Zanthor relay station stands on the northern ridge. Its code word is "
     "PELICAN-5521, and the night crew repeats it at every change of shift."),
    ("quorvel.txt", "Which river feeds the Quorvel reservoir?", "Where does this lake get its water?",
     "Quorvel reservoir\n\nThe Quorvel reservoir is fed by the Ambrin river, which rises in the Tessel hills "
     "and carries snowmelt into the valley each spring."),
    ("mirrane.txt", "How many bells hang in the Mirrane tower?", "How many chimes are in that belfry?",
     "Mirrane tower\n\nThe Mirrane tower holds eleven bells, the largest cast in 1821 and named Old Hesper by "
     "the town's ringers."),
    ("ostrel.txt", "What colour are the Ostrel ferries?", "Which hue do those boats wear?",
     "Ostrel ferries\n\nThe Ostrel ferries are painted saffron yellow with a green stripe along the hull."),
]


def replica(data, url):
    # Never abstain: a paraphrase's low cosine must still list what the index holds.
    return Server(data, extra_args=["--set", "storage.postgres_url=" + url, "--set", "rag.abstain_dense_below=0"])


def upload(srv, name, text):
    return requests.post(srv.url + "/v1/documents", headers=srv.headers(),
                         files={"file": (name, text.encode(), "text/plain")}, timeout=300)


def cited_documents(srv, question, unavailable_ok=False):
    """The document ids of the passages retrieved for `question` (the streamed answer's first event).
    `unavailable_ok`: a 503 (the replica's first use of a connection lost in an outage) gives []."""
    r = requests.post(srv.url + "/v1/ask", headers=srv.headers(), timeout=300, stream=True,
                      json={"question": question, "max_tokens": 1, "stream": True})
    if unavailable_ok and r.status_code == 503:
        return []
    assert r.status_code == 200, r.text
    first = json.loads(next(line for line in r.iter_lines(decode_unicode=True) if line.startswith("data: "))[6:])
    r.close()
    return [c["document_id"] for c in first.get("citations", [])]


def wait_until(predicate, what, timeout=60):
    deadline = time.time() + timeout
    while not predicate():
        assert time.time() < deadline, what
        time.sleep(0.02)


def test_a_document_uploaded_on_one_replica_is_retrieved_on_the_other(postgres):  # noqa: F811
    with tempfile.TemporaryDirectory(prefix="ragd-e2e-corpus-a-") as data_a, \
            tempfile.TemporaryDirectory(prefix="ragd-e2e-corpus-b-") as data_b:
        a = replica(data_a, postgres.url).wait_ready()
        b = replica(data_b, postgres.url).wait_ready()
        try:
            delays = []
            ids = {}
            for name, question, paraphrase, text in FACTS[:3]:
                r = upload(a, name, text)
                acknowledged = time.monotonic()
                assert r.status_code == 201, r.text
                doc = r.json()["document"]
                ids[name] = doc["id"]
                # The store is shared: B lists the document at once.
                listed = requests.get(b.url + "/v1/documents", headers=b.headers(), timeout=30).json()
                assert doc["id"] in [d["id"] for d in listed["documents"]], listed
                wait_until(lambda: doc["id"] in cited_documents(b, paraphrase),
                           f"B's index never followed {name}:\n{b.output()}")
                delays.append(time.monotonic() - acknowledged)
                assert cited_documents(b, question)[0] == doc["id"]
            print(f"\nupload acknowledged on A -> retrieved on B: "
                  f"median {statistics.median(delays) * 1000:.0f} ms, max {max(delays) * 1000:.0f} ms "
                  f"over {len(delays)} documents")

            # The same bytes uploaded on B are the document A stored.
            name, question, _, text = FACTS[0]
            again = upload(b, name, text)
            assert again.status_code == 200, again.text
            assert again.json()["document"]["id"] == ids[name]

            # A delete on B leaves A's index too.
            gone = requests.delete(f"{b.url}/v1/documents/{ids[name]}", headers=b.headers(), timeout=30)
            assert gone.status_code in (200, 204), gone.text
            wait_until(lambda: ids[name] not in cited_documents(a, question), f"A still retrieves {name}")

            # An outage of the database: once it is back, B's index follows A's uploads again.
            subprocess.run([FIXTURE, "pause", postgres.folder], check=True, timeout=120)
            time.sleep(1)
            subprocess.run([FIXTURE, "resume", postgres.folder], check=True, timeout=120)
            name, question, paraphrase, text = FACTS[3]
            wait_until(lambda: upload(a, name, text).status_code in (200, 201), f"A cannot upload after the outage:\n{a.output()}")
            new_id = requests.get(a.url + "/v1/documents", headers=a.headers(), timeout=30).json()["documents"][0]["id"]
            wait_until(lambda: new_id in cited_documents(b, paraphrase, unavailable_ok=True),
                   f"B stopped following:\n{b.output()}")

            # A replica restarted finds the corpus in the database, its index repaired from it.
            assert b.stop() == 0, b.output()
            name, question, _, _ = FACTS[1]
            b = replica(data_b, postgres.url).wait_ready()
            assert cited_documents(b, question)[0] == ids[name]
            assert not os.path.exists(os.path.join(data_b, "corpus.db"))  # the corpus lives in PostgreSQL only
            assert os.path.exists(os.path.join(data_b, "vectors.faiss"))  # the index is each replica's own
        finally:
            assert a.stop() == 0, a.output()
            assert b.stop() == 0, b.output()
