"""The OpenAI-compatible API through the official `openai` client, unmodified."""
import json

import openai
import pytest
import requests

from conftest import ADMIN_KEY


@pytest.fixture(scope="module")
def client(server):
    return openai.OpenAI(base_url=server.url + "/v1", api_key=ADMIN_KEY, max_retries=0, timeout=300)


def llm_id(client):
    ids = [m.id for m in client.models.list().data]
    assert "ragd-rag" in ids and "all-MiniLM-L6-v2" in ids
    return next(i for i in ids if i.startswith("gemma"))


def test_models(client):
    assert llm_id(client) == "gemma-3-270m-q4_k_m"


def test_chat_non_stream_has_usage(client):
    r = client.chat.completions.create(model=llm_id(client), max_tokens=12, temperature=0,
                                       messages=[{"role": "user", "content": "Say hello."}])
    assert r.object == "chat.completion"
    assert r.choices[0].message.role == "assistant"
    assert r.choices[0].finish_reason in ("stop", "length")
    assert r.usage.prompt_tokens > 5
    assert 1 <= r.usage.completion_tokens <= 12
    assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens


def test_chat_stream_with_usage_matches_non_stream(client):
    msgs = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Name a colour."}]
    full = client.chat.completions.create(model=llm_id(client), max_tokens=10, temperature=0, messages=msgs)
    stream = client.chat.completions.create(model=llm_id(client), max_tokens=10, temperature=0, messages=msgs,
                                            stream=True, stream_options={"include_usage": True})
    text, finish, usage = "", None, None
    for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage
            assert chunk.choices == []
            continue
        delta = chunk.choices[0].delta
        text += delta.content or ""
        finish = chunk.choices[0].finish_reason or finish
    assert text == full.choices[0].message.content  # greedy: the same answer either way
    assert finish == full.choices[0].finish_reason
    assert usage.prompt_tokens == full.usage.prompt_tokens
    assert usage.completion_tokens == full.usage.completion_tokens


def test_max_tokens_gives_length(client):
    r = client.chat.completions.create(model=llm_id(client), max_tokens=3, temperature=0,
                                       messages=[{"role": "user", "content": "Count from one to fifty."}])
    assert r.choices[0].finish_reason == "length"
    assert r.usage.completion_tokens == 3


def test_seed_makes_sampling_reproducible(client):
    kw = dict(model=llm_id(client), max_tokens=12, temperature=1.0, seed=1234,
              messages=[{"role": "user", "content": "Invent a word."}])
    a = client.chat.completions.create(**kw).choices[0].message.content
    b = client.chat.completions.create(**kw).choices[0].message.content
    assert a == b


def test_completions(client):
    r = client.completions.create(model=llm_id(client), prompt="The capital of France is", max_tokens=5,
                                  temperature=0)
    assert r.object == "text_completion"
    assert r.usage.completion_tokens <= 5 and r.usage.prompt_tokens >= 5
    assert isinstance(r.choices[0].text, str) and r.choices[0].text


def test_embeddings(client):
    r = client.embeddings.create(model="all-MiniLM-L6-v2", input=["hello world", "bonjour le monde"])
    assert len(r.data) == 2 and len(r.data[0].embedding) == 384
    norm = sum(x * x for x in r.data[0].embedding) ** 0.5
    assert abs(norm - 1) < 1e-3
    # Counted with the embedding model's WordPiece tokenizer:
    # hello world | bon ##jou ##r le monde
    assert r.usage.prompt_tokens == r.usage.total_tokens == 7


def test_embedding_input_past_the_model_limit_is_refused(server):
    r = requests.post(server.url + "/v1/embeddings", headers=server.headers(),
                      json={"model": "all-MiniLM-L6-v2", "input": "lorem " * 400})
    assert r.status_code == 400
    err = r.json()["error"]
    assert err["type"] == "exceed_context_size_error" and err["n_ctx"] == 256 and err["n_prompt_tokens"] > 256


def test_rag_model_returns_citations(client):
    r = client.chat.completions.create(model="ragd-rag", max_tokens=24, temperature=0,
                                       messages=[{"role": "user", "content": "Which environment variable sets the port?"}])
    extra = r.choices[0].message.model_extra or {}
    assert "citations" in extra
    for c in extra["citations"]:
        assert {"n", "document_id", "title", "chunk_id", "text"} <= set(c)


def test_unknown_model_is_404(client):
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="gpt-9", messages=[{"role": "user", "content": "hi"}])


def test_bad_field_is_400_naming_it(client):
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(model=llm_id(client), temperature=7,
                                       messages=[{"role": "user", "content": "hi"}])
    assert "temperature" in str(e.value)


def test_context_overflow_is_a_400_with_counts(server, client):
    long_text = "word " * 9000
    r = requests.post(server.url + "/v1/chat/completions", headers=server.headers(),
                      json={"messages": [{"role": "user", "content": long_text}]})
    assert r.status_code == 400
    err = r.json()["error"]
    assert err["type"] == "exceed_context_size_error"
    assert err["n_prompt_tokens"] > err["n_ctx"] > 0


def test_tokenize_and_detokenize(server):
    r = requests.post(server.url + "/tokenize", headers=server.headers(), json={"content": "Hello world"})
    assert r.status_code == 200
    tokens = r.json()["tokens"]
    assert len(tokens) >= 2 and all(isinstance(t, int) for t in tokens)
    r = requests.post(server.url + "/detokenize", headers=server.headers(), json={"tokens": tokens})
    assert r.json()["content"] == "Hello world"
    # A user typing a control token gets plain text, never the control id.
    r = requests.post(server.url + "/tokenize", headers=server.headers(), json={"content": "<end_of_turn>"})
    assert 106 not in r.json()["tokens"]
    r = requests.post(server.url + "/detokenize", headers=server.headers(), json={"tokens": [10 ** 9]})
    assert r.status_code == 400


def test_raw_stream_wire_format(server):
    r = requests.post(server.url + "/v1/chat/completions", headers=server.headers(), stream=True,
                      json={"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4, "stream": True})
    # With a charset, requests decodes UTF-8; without one it takes ISO-8859-1
    # and str.splitlines cuts lines at the 0x85 byte of an emoji like U+1F605.
    assert r.headers["content-type"] == "text/event-stream; charset=utf-8"
    lines = [l for l in r.iter_lines(decode_unicode=True) if l]
    assert all(l.startswith("data: ") for l in lines)
    assert lines[-1] == "data: [DONE]"
    first = json.loads(lines[0][6:])
    assert first["choices"][0]["delta"]["role"] == "assistant"
