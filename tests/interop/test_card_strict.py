"""Our card against strict ProtoJSON parsing (issue 15 item 8), measured with protobuf's
``json_format.Parse`` (strict by default, like Go's ``protojson`` and Java's ``JsonFormat``)
into the official SDK 1.3.0's ``AgentCard`` message, and with what the SDKs' card readers do.

- ``A2A-Version: 1.x`` on the card request: the pure 1.0 card, which the strict parser accepts.
- No header: the combined 1.0/0.3 card (0.3 readers need its ``url``/``preferredTransport``),
  which the strict parser rejects, while the SDK 1.3.0's reader (``ignore_unknown_fields``)
  and our client read it.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from a2a.client.card_resolver import parse_agent_card
from a2a.types import AgentCard as SDKAgentCard
from google.protobuf import json_format

from simple_a2a.protocol import AgentCard
from simple_a2a.server import server
from tests.support.agents import TestAgent, serving

pytestmark = pytest.mark.interop(
    peer="Python SDK 1.3.0", direction="theirs → ours", protocol="1.0", binding="JSONRPC"
)

CARD = {
    "name": "Secured agent",
    "description": "a card with a security scheme (a oneof)",
    "version": "1.0",
    "capabilities": {"streaming": True},
    "securitySchemes": {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
    "securityRequirements": [{"schemes": {"bearer": {"list": []}}}],
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [],
}


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with serving(server(AgentCard.from_dict(CARD), TestAgent()).app) as base:
        yield base


def test_a_1x_reader_gets_a_card_strict_parsers_accept(url: str) -> None:
    r = httpx.get(url + "/.well-known/agent-card.json", headers={"A2A-Version": "1.0"})
    assert r.headers["vary"] == "A2A-Version"
    card = json_format.Parse(r.text, SDKAgentCard())  # strict: raises on any unknown field
    assert card.security_schemes["bearer"].http_auth_security_scheme.scheme == "Bearer"
    assert card.supported_interfaces[0].protocol_binding == "JSONRPC"


def test_without_the_header_the_combined_card_serves_both(url: str) -> None:
    r = httpx.get(url + "/.well-known/agent-card.json")
    data = r.json()
    assert data["protocolVersion"] == "0.3.0" and data["url"]  # what 0.3 readers need
    with pytest.raises(json_format.ParseError):
        json_format.Parse(r.text, SDKAgentCard())  # measured: strict 1.0 parsers reject it
    lenient = parse_agent_card(data)  # the SDK 1.3.0's own reader
    assert lenient.security_schemes["bearer"].http_auth_security_scheme.scheme == "Bearer"
