"""Several language models in one server: listed with their facts, chosen per
request by `model`, each with its own batch loop and metrics label; the
instruction-tuned Qwen2.5-Coder 0.5B answers in its chat template."""
import os
import re
import tempfile

import openai
import pytest
import requests

from conftest import ADMIN_KEY, ROOT, Server

QWEN = "qwen2.5-coder-0.5b-instruct-q4_k_m"
GEMMA = "gemma-3-270m-q4_k_m"


@pytest.fixture(scope="module")
def server():
    with tempfile.TemporaryDirectory(prefix="ragd-models-") as data:
        # The answerability check's threshold is calibrated on the 1.5B answer
        # model; with the 0.5B answering, it is off here.
        srv = Server(data, ingest=os.path.join(ROOT, "docs", "sample"),
                     env={"RAGD_MODELS_LLM": f"{QWEN}.gguf,{GEMMA}.gguf"},
                     extra_args=["--set", "rag.abstain_answerability_below=0"]).wait_ready()
        yield srv
        assert srv.stop() == 0, srv.output()


@pytest.fixture(scope="module")
def client(server):
    return openai.OpenAI(base_url=server.url + "/v1", api_key=ADMIN_KEY, max_retries=0, timeout=300)


def test_models_are_listed_with_their_facts(server):
    data = requests.get(server.url + "/v1/models", headers=server.headers()).json()["data"]
    by_id = {m["id"]: m for m in data}
    assert set(by_id) == {QWEN, GEMMA, "ragd-rag", "ragd-rag-fast", "all-MiniLM-L6-v2"}
    qwen = by_id[QWEN]
    assert qwen["architecture"] == "qwen2"
    assert qwen["quantization"] == "Q4_K_M"
    assert qwen["context_length"] == 8192
    assert qwen["size_bytes"] == 491400064
    assert qwen["chat_template"] == "chatml-qwen"
    assert 400_000_000 < qwen["parameters"] < 700_000_000
    assert by_id[GEMMA]["architecture"] == "gemma3"
    # The first model answers RAG questions, the second is the fast one.
    assert by_id["ragd-rag"]["answer_model"] == QWEN
    assert by_id["ragd-rag-fast"]["answer_model"] == GEMMA


def test_one_model_by_id(server):
    r = requests.get(server.url + f"/v1/models/{QWEN}", headers=server.headers())
    assert r.status_code == 200 and r.json()["id"] == QWEN
    r = requests.get(server.url + "/v1/models/no-such-model", headers=server.headers())
    assert r.status_code == 404 and r.json()["error"]["type"] == "not_found_error"


@pytest.mark.parametrize("question,answer", [
    ("What is the capital of France? Answer in one sentence.", "Paris"),
    ("Qual é a capital da França? Responda em uma frase.", "Paris"),
])
def test_instruction_model_answers(client, question, answer):
    r = client.chat.completions.create(model=QWEN, max_tokens=32, temperature=0,
                                       messages=[{"role": "user", "content": question}])
    assert r.model == QWEN
    assert answer in r.choices[0].message.content
    assert r.choices[0].finish_reason == "stop"  # <|im_end|> ends the turn


def test_each_request_uses_the_model_it_names(client, server):
    before = requests.get(server.url + "/metrics").text
    client.chat.completions.create(model=GEMMA, max_tokens=4, temperature=0,
                                   messages=[{"role": "user", "content": "Hi"}])
    after = requests.get(server.url + "/metrics").text

    def generated(text, model):
        m = re.search(r'^ragd_generation_tokens_total\{model="' + re.escape(model) + r'"\} (\d+)$', text, re.M)
        return int(m.group(1)) if m else 0

    assert generated(after, GEMMA) - generated(before, GEMMA) >= 1
    assert generated(after, QWEN) == generated(before, QWEN)
    for model in (QWEN, GEMMA):
        assert f'ragd_requests_running{{model="{model}"}}' in after


def test_unknown_model_is_refused(client):
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="gpt-4o", max_tokens=4,
                                       messages=[{"role": "user", "content": "Hi"}])


def test_completions_take_a_model(client):
    r = client.completions.create(model=QWEN, prompt="def add(a, b):\n    return", max_tokens=4, temperature=0)
    assert r.model == QWEN and r.choices[0].text.strip()


def test_rag_answers_name_the_model_that_wrote_them(server):
    for model, llm in (("ragd-rag", QWEN), ("ragd-rag-fast", GEMMA)):
        r = requests.post(server.url + "/v1/chat/completions", headers=server.headers(),
                          json={"model": model, "max_tokens": 16,
                                "messages": [{"role": "user", "content": "Which port does ragd use?"}]})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["model"] == model and body["answer_model"] == llm
    r = requests.post(server.url + "/v1/ask", headers=server.headers(),
                      json={"question": "Which port does ragd use?", "model": "ragd-rag-fast", "max_tokens": 8})
    assert r.status_code == 200 and r.json()["answer_model"] == GEMMA
    r = requests.post(server.url + "/v1/ask", headers=server.headers(),
                      json={"question": "Which port?", "model": QWEN})
    assert r.status_code == 400


def test_tokenize_with_the_model_tokenizer(server):
    r = requests.post(server.url + "/tokenize", headers=server.headers(),
                      json={"content": "<|im_start|>hello", "model": QWEN, "add_special": True})
    tokens = r.json()["tokens"]
    assert 151644 not in tokens  # typed special text stays text
    assert len(tokens) > 3  # no BOS for Qwen (add_bos_token false): only the text's tokens
    back = requests.post(server.url + "/detokenize", headers=server.headers(),
                         json={"tokens": tokens, "model": QWEN}).json()["content"]
    assert back == "<|im_start|>hello"


def ask(server, **body):
    r = requests.post(server.url + "/v1/ask", headers=server.headers(), json={"max_tokens": 48, **body})
    assert r.status_code == 200, r.text
    return r.json()


def test_answers_carry_checked_citations(server):
    a = ask(server, question="Which environment variable changes the port ragd listens on?")
    assert a["answer_model"] == QWEN
    received = {c["n"] for c in a["citations"]}
    sentences = a["sentences"]
    assert sentences, a
    for s in sentences:
        assert 0 <= s["start"] < s["end"] <= len(a["answer"].encode())
        for c in s["citations"]:
            assert 0 <= c["support"] <= 1
        # every marker the client sees names a source it received
    markers = {int(n) for n in re.findall(r"\[(\d+)\]", a["answer"])}
    assert markers <= received or not received
    assert isinstance(a["grounded"], bool)


def test_nothing_relevant_is_answered_without_generation(server):
    # No passage shares a word with it and none comes close in meaning.
    a = ask(server, question="Mount Everest altitude")
    assert a["answer"] == "The documents do not say."
    assert a["usage"]["total_tokens"] == 0 and a["citations"] == [] and a["grounded"] is True
    stream = requests.post(server.url + "/v1/ask", headers=server.headers(),
                           json={"question": "Mount Everest altitude", "stream": True})
    assert stream.headers["Content-Type"].startswith("text/event-stream")
    assert '"The documents do not say."' in stream.text and stream.text.endswith("data: [DONE]\n\n")


def test_follow_up_is_searched_with_its_conversation(server):
    a = ask(server, messages=[{"role": "user", "content": "Which environment variable sets the server port?"},
                              {"role": "assistant", "content": "RAGD_SERVER_PORT [1]."},
                              {"role": "user", "content": "And its default value?"}])
    assert any(c["title"] == "Configuring ragd" for c in a["citations"]), a["citations"]
    r = requests.post(server.url + "/v1/ask", headers=server.headers(),
                      json={"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]})
    assert r.status_code == 400
    r = requests.post(server.url + "/v1/ask", headers=server.headers(),
                      json={"question": "Hi", "messages": [{"role": "user", "content": "Hi"}]})
    assert r.status_code == 400
