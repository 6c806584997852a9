"""The honest OpenAI surface through the official `openai` client: structured
output by constrained sampling (json_schema parsed into an object, json_object),
log-probabilities streamed and not, options ragd does not honour refused with a
400 naming them, token-array embeddings, and CORS for configured origins."""
import json
import math
import os
import tempfile

import openai
import pydantic
import pytest
import requests

from conftest import ADMIN_KEY, Server

QWEN = "qwen2.5-coder-0.5b-instruct-q4_k_m"
ALLOWED_ORIGIN = "https://app.example"


@pytest.fixture(scope="module")
def server():
    with tempfile.TemporaryDirectory(prefix="ragd-structured-") as data:
        srv = Server(data, extra_args=["--set", f"server.cors_origins={ALLOWED_ORIGIN}"],
                     env={"RAGD_MODELS_LLM": f"{QWEN}.gguf"}).wait_ready()
        yield srv
        assert srv.stop() == 0, srv.output()


@pytest.fixture(scope="module")
def client(server):
    return openai.OpenAI(base_url=server.url + "/v1", api_key=ADMIN_KEY, max_retries=0, timeout=300)


class City(pydantic.BaseModel):
    name: str
    country: str
    population: int
    coastal: bool


class Trip(pydantic.BaseModel):
    title: str
    stops: list[City]
    season: str | None


def test_structured_output_is_parsed_into_the_model(client):
    r = client.beta.chat.completions.parse(
        model=QWEN, temperature=0, max_tokens=120, response_format=City,
        messages=[{"role": "user", "content": "Describe Lisbon."}])
    city = r.choices[0].message.parsed
    assert isinstance(city, City), r.choices[0].message.content
    assert r.choices[0].finish_reason == "stop"
    # The properties come in the schema's order.
    assert list(json.loads(r.choices[0].message.content)) == ["name", "country", "population", "coastal"]


def test_nested_schema_with_refs_and_optional_field(client):
    r = client.beta.chat.completions.parse(
        model=QWEN, temperature=0, max_tokens=200, response_format=Trip,
        messages=[{"role": "user", "content": "Plan a two-city trip in Italy."}])
    assert r.choices[0].finish_reason == "stop", r.choices[0].message.content
    trip = r.choices[0].message.parsed
    assert isinstance(trip, Trip) and all(isinstance(s, City) for s in trip.stops)


def test_json_schema_given_as_a_dict_with_enum(client):
    schema = {"type": "object", "additionalProperties": False, "required": ["answer", "confidence"],
              "properties": {"answer": {"enum": ["yes", "no"]}, "confidence": {"type": "number"}}}
    r = client.chat.completions.create(
        model=QWEN, temperature=0, max_tokens=40,
        response_format={"type": "json_schema", "json_schema": {"name": "verdict", "schema": schema, "strict": True}},
        messages=[{"role": "user", "content": "Is the sea salty?"}])
    value = json.loads(r.choices[0].message.content)
    assert value["answer"] in ("yes", "no") and isinstance(value["confidence"], (int, float))


def test_json_object_mode_gives_an_object(client):
    r = client.chat.completions.create(
        model=QWEN, temperature=0, max_tokens=60, response_format={"type": "json_object"},
        messages=[{"role": "user", "content": "Give the colour and size of a ripe banana as JSON, briefly."}])
    assert r.choices[0].finish_reason == "stop", r.choices[0].message.content
    assert isinstance(json.loads(r.choices[0].message.content), dict)


def test_streamed_json_schema_answer_is_the_same_json(client):
    kw = dict(model=QWEN, temperature=0, max_tokens=120, messages=[{"role": "user", "content": "Describe Porto."}],
              response_format={"type": "json_schema",
                               "json_schema": {"name": "City", "schema": City.model_json_schema()}})
    whole = client.chat.completions.create(**kw).choices[0].message.content
    streamed = "".join(c.choices[0].delta.content or "" for c in client.chat.completions.create(stream=True, **kw)
                       if c.choices)
    assert streamed == whole
    City.model_validate_json(streamed)


def test_chat_logprobs_match_the_text(client):
    r = client.chat.completions.create(model=QWEN, temperature=0, max_tokens=8, logprobs=True, top_logprobs=3,
                                       messages=[{"role": "user", "content": "Say hello."}])
    content = r.choices[0].logprobs.content
    assert len(content) >= 1
    assert "".join(t.token for t in content) == r.choices[0].message.content
    for t in content:
        assert t.logprob <= 0 and bytes(t.bytes).decode("utf-8", "replace") == t.token
        assert len(t.top_logprobs) == 3
        assert [a.logprob for a in t.top_logprobs] == sorted((a.logprob for a in t.top_logprobs), reverse=True)
        # Greedy: the chosen token is the most likely one.
        assert t.top_logprobs[0].token == t.token and math.isclose(t.top_logprobs[0].logprob, t.logprob)


def test_streamed_logprobs_equal_the_non_streamed_ones(client):
    kw = dict(model=QWEN, temperature=0, max_tokens=8, logprobs=True, top_logprobs=2,
              messages=[{"role": "user", "content": "Name a fruit."}])
    full = client.chat.completions.create(**kw).choices[0].logprobs.content
    streamed = []
    for chunk in client.chat.completions.create(stream=True, **kw):
        if chunk.choices and chunk.choices[0].logprobs is not None:
            streamed += chunk.choices[0].logprobs.content
    assert [t.token for t in streamed] == [t.token for t in full]
    assert all(math.isclose(a.logprob, b.logprob, abs_tol=1e-4) for a, b in zip(streamed, full))


def test_completion_logprobs_legacy_shape(client):
    r = client.completions.create(model=QWEN, prompt="def add(a, b):", max_tokens=6, temperature=0, logprobs=2)
    lp = r.choices[0].logprobs
    assert "".join(lp.tokens) == r.choices[0].text
    assert len(lp.token_logprobs) == len(lp.tokens) == len(lp.top_logprobs) == len(lp.text_offset)
    assert lp.text_offset[0] == 0 and all(len(alts) == 2 for alts in lp.top_logprobs)


@pytest.mark.parametrize("field, value", [
    ("tools", [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]),
    ("tool_choice", "auto"),
    ("functions", [{"name": "f"}]),
    ("audio", {"voice": "alloy"}),
    ("parallel_tool_calls", True),
])
def test_unsupported_chat_fields_are_refused_by_name(client, field, value):
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(model=QWEN, max_tokens=4, messages=[{"role": "user", "content": "hi"}],
                                       extra_body={field: value})
    assert f"'{field}'" in e.value.message


def test_tools_refused_through_the_client_argument(client):
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(
            model=QWEN, max_tokens=4, messages=[{"role": "user", "content": "hi"}],
            tools=[{"type": "function", "function": {"name": "now", "parameters": {"type": "object"}}}])
    assert e.value.status_code == 400 and "'tools'" in e.value.message


@pytest.mark.parametrize("schema, named", [
    ({"type": "object", "properties": {"code": {"type": "string", "pattern": "^[A-Z]+$"}}}, "'pattern'"),
    ({"type": "object", "properties": {"when": {"type": "string", "format": "date-time"}}}, "'format'"),
    ({"type": "array", "items": {"type": "integer"}, "minItems": 2}, "'minItems'"),
])
def test_unsupported_schema_features_are_refused_by_name(client, schema, named):
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(
            model=QWEN, max_tokens=4, messages=[{"role": "user", "content": "hi"}],
            response_format={"type": "json_schema", "json_schema": {"name": "x", "schema": schema}})
    assert named in e.value.message


def test_completion_fields_and_rag_formats_are_refused(client):
    with pytest.raises(openai.BadRequestError) as e:
        client.completions.create(model=QWEN, prompt="x", max_tokens=2, echo=True)
    assert "'echo'" in e.value.message
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(model="ragd-rag", max_tokens=4, response_format={"type": "json_object"},
                                       messages=[{"role": "user", "content": "hi"}])
    assert "'response_format'" in e.value.message


def wordpiece_ids(words):
    vocab = os.path.join(os.environ.get("RAGD_MODELS", os.path.expanduser("~/.cache/ragd/models")),
                         "all-MiniLM-L6-v2", "vocab.txt")
    with open(vocab, encoding="utf-8") as f:
        ids = {line.rstrip("\n"): i for i, line in enumerate(f)}
    return [ids[w] for w in words]


def test_embeddings_of_token_arrays_equal_those_of_the_text(client):
    text = client.embeddings.create(model="all-MiniLM-L6-v2", input=["hello world", "good morning"])
    ids = [wordpiece_ids(["hello", "world"]), wordpiece_ids(["good", "morning"])]
    tokens = client.embeddings.create(model="all-MiniLM-L6-v2", input=ids)
    one = client.embeddings.create(model="all-MiniLM-L6-v2", input=ids[0])
    for a, b in zip(text.data, tokens.data):
        assert all(math.isclose(x, y, abs_tol=1e-5) for x, y in zip(a.embedding, b.embedding))
    assert all(math.isclose(x, y, abs_tol=1e-5) for x, y in zip(one.data[0].embedding, text.data[0].embedding))


def test_embedding_dimensions_must_be_the_models(client):
    assert len(client.embeddings.create(model="all-MiniLM-L6-v2", input="x", dimensions=384).data[0].embedding) == 384
    with pytest.raises(openai.BadRequestError) as e:
        client.embeddings.create(model="all-MiniLM-L6-v2", input="x", dimensions=128)
    assert "'dimensions'" in e.value.message and "384" in e.value.message


def test_cors_preflight_and_headers_for_allowed_origins_only(server):
    pre = requests.options(server.url + "/v1/chat/completions",
                           headers={"Origin": ALLOWED_ORIGIN, "Access-Control-Request-Method": "POST",
                                    "Access-Control-Request-Headers": "authorization, content-type"})
    assert pre.status_code == 204
    assert pre.headers["Access-Control-Allow-Origin"] == ALLOWED_ORIGIN
    assert "POST" in pre.headers["Access-Control-Allow-Methods"]
    assert "authorization" in pre.headers["Access-Control-Allow-Headers"].lower()
    assert "Access-Control-Allow-Credentials" not in pre.headers
    ok = requests.get(server.url + "/v1/models", headers={**server.headers(), "Origin": ALLOWED_ORIGIN})
    assert ok.headers["Access-Control-Allow-Origin"] == ALLOWED_ORIGIN and "Origin" in ok.headers["Vary"]
    other = requests.get(server.url + "/v1/models", headers={**server.headers(), "Origin": "https://evil.example"})
    assert other.status_code == 200 and "Access-Control-Allow-Origin" not in other.headers
    refused = requests.options(server.url + "/v1/chat/completions",
                               headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"})
    assert refused.status_code >= 400 and "Access-Control-Allow-Origin" not in refused.headers


def test_streamed_answers_carry_cors_headers(server):
    r = requests.post(server.url + "/v1/chat/completions", stream=True,
                      headers={**server.headers(), "Origin": ALLOWED_ORIGIN},
                      json={"model": QWEN, "max_tokens": 2, "stream": True,
                            "messages": [{"role": "user", "content": "hi"}]})
    assert r.status_code == 200 and r.headers["Access-Control-Allow-Origin"] == ALLOWED_ORIGIN
    assert b"[DONE]" in r.content
