"""Hostile input to the Control UI's HTTP API: every refusal is a 4xx that says what was
wrong, nothing reaches the agent, and a clean turn afterwards is unaffected."""

from __future__ import annotations

import json

import pytest
from starlette.testclient import TestClient

from tests.ui._client import client, csrf, sse
from tests.ui._fakes import FakeAgent, reply_turn

TURN = "/api/sessions/s1/turns"
BAD_BODIES = {
    "not_json": b"{not json",
    "an_array": b"[1, 2]",
    "a_number_text": b'{"text": 5}',
    "an_empty_text": b'{"text": ""}',
    "a_blank_text": b'{"text": " \\n\\t "}',
    "no_text": b"{}",
    "invalid_utf8_bytes": b'{"text": "\xff\xfe"}',
    "a_text_over_the_limit": json.dumps({"text": "x" * 200_000}).encode(),
    "nesting_past_the_parser": b"[" * 200_000,
    "a_nul_byte_body": b"\x00\x01\x02",
    "a_null_body": b"null",
}
BAD_PATHS = {
    "a_session_id_of_5000_chars": "/api/sessions/" + "a" * 5000 + "/turns",
    "a_nul_in_the_session_id": "/api/sessions/a%00b/turns",
    "a_latin1_byte": "/api/sessions/%ff/turns",
    "a_lone_surrogate": "/api/sessions/%ED%A0%80/turns",
    "a_c1_control": "/api/sessions/a%C2%85b/turns",
}
ODD_BUT_VALID = {  # an id may hold any character but a control one: each reaches the agent
    "a_right_to_left_override": ("/api/sessions/%E2%80%AE/turns", "\u202e"),
    "an_encoded_traversal": ("/api/sessions/a%2F..%2Fb/turns", "a/../b"),
    "a_percent_and_query": ("/api/sessions/%25%3F%23%26/turns", "%?#&"),
}


def _clean_turn_works(test_client: TestClient, agent: FakeAgent) -> None:
    agent.turns.append(reply_turn("clean"))
    response = test_client.post(TURN, json={"text": "hello"}, headers=_headers(test_client))
    assert response.status_code == 200
    assert [name for name, _ in sse(response.text)][-1] == "done"
    assert agent.received[-1] == ("s1", "hello")


def _headers(test_client: TestClient) -> dict[str, str]:
    return {"x-csrf-token": csrf(test_client), "content-type": "application/json"}


@pytest.mark.parametrize("body", BAD_BODIES.values(), ids=BAD_BODIES.keys())
def test_a_bad_turn_body_is_refused_and_reaches_nobody(body: bytes) -> None:
    agent = FakeAgent()
    test_client = client(agent)
    response = test_client.post(TURN, content=body, headers=_headers(test_client))
    assert response.status_code == 400
    assert response.json()["error"].startswith("the body must be JSON")
    assert agent.received == []
    _clean_turn_works(test_client, agent)


@pytest.mark.parametrize("path", BAD_PATHS.values(), ids=BAD_PATHS.keys())
def test_a_bad_session_path_is_refused_and_reaches_nobody(path: str) -> None:
    agent = FakeAgent()
    test_client = client(agent)
    response = test_client.post(path, json={"text": "hi"}, headers=_headers(test_client))
    assert response.status_code in (400, 404)
    assert agent.received == []
    _clean_turn_works(test_client, agent)


@pytest.mark.parametrize(("path", "session"), ODD_BUT_VALID.values(), ids=ODD_BUT_VALID.keys())
def test_an_odd_but_valid_session_id_reaches_the_agent_as_it_is(path: str, session: str) -> None:
    agent = FakeAgent([reply_turn("ok")])
    test_client = client(agent)
    response = test_client.post(path, json={"text": "hi"}, headers=_headers(test_client))
    assert response.status_code == 200
    assert agent.received == [(session, "hi")]
    _clean_turn_works(test_client, agent)


@pytest.mark.parametrize("escape", ["\\ud800", "\\udfff", "a\\ud83d", "\\ude00b"])
def test_a_lone_surrogate_in_a_turn_becomes_a_replacement_character(escape: str) -> None:
    agent = FakeAgent([reply_turn("ok")])
    test_client = client(agent)
    body = ('{"text": "x' + escape + '"}').encode()
    response = test_client.post(TURN, content=body, headers=_headers(test_client))
    assert response.status_code == 200
    assert [name for name, _ in sse(response.text)][-1] == "done"
    received = agent.received[-1][1]
    assert "\ufffd" in received
    received.encode("utf-8")  # valid text all the way to the agent
    _clean_turn_works(test_client, agent)


@pytest.mark.parametrize(
    "body",
    [
        b'{"decision": "yes"}',
        b'{"decision": true}',
        b"[",
        b'{"decision": "approve", "x": "\\ud800"}',
    ],
    ids=["a_word", "a_boolean", "broken_json", "an_unknown_approval_with_a_surrogate"],
)
def test_a_bad_or_unknown_decision_never_decides_anything(body: bytes) -> None:
    agent = FakeAgent()
    test_client = client(agent)
    url = "/api/sessions/s1/runs/r1/approvals/a1"
    response = test_client.post(url, content=body, headers=_headers(test_client))
    assert 400 <= response.status_code < 500
    assert agent.decisions == []
    _clean_turn_works(test_client, agent)


@pytest.mark.parametrize(
    "path",
    ["/media/../../etc/passwd", "/media/%2e%2e/%2e%2e/etc/passwd", "/static/../_app.py"],
)
def test_a_traversal_path_is_not_found(path: str) -> None:
    agent = FakeAgent()
    test_client = client(agent)
    assert test_client.get(path).status_code == 404
    _clean_turn_works(test_client, agent)
