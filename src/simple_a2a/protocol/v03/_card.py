"""The Agent Card in both versions (whats-new-v1.md: Get Agent Card; AgentCard Object).

:func:`card_to_v03` returns a *combined* card: the 1.0 card untouched plus the 0.3 fields beside
it (``url``, ``preferredTransport``, ``additionalInterfaces``, ``protocolVersion``,
``supportsAuthenticatedExtendedCard``, ``security``, skill ``security``) and, inside every
security scheme, the 0.3 OpenAPI-style members next to the 1.0 oneof member. A 1.0 reader ignores
the 0.3 fields and a 0.3 reader ignores the 1.0 ones (both versions ignore unknown fields), so one
document at ``/.well-known/agent-card.json`` serves both.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from ._core import as_list, as_object, fail, join

V03_PROTOCOL_VERSION = "0.3.0"

#: 0.3 ``type`` -> (1.0 oneof member, renames of the scheme's fields 0.3 -> 1.0)
_SCHEMES: dict[str, tuple[str, dict[str, str]]] = {
    "apiKey": ("apiKeySecurityScheme", {"in": "location"}),
    "http": ("httpAuthSecurityScheme", {}),
    "oauth2": ("oauth2SecurityScheme", {}),
    "openIdConnect": ("openIdConnectSecurityScheme", {}),
    "mutualTLS": ("mtlsSecurityScheme", {}),
}
_MEMBERS = {member: (kind, renames) for kind, (member, renames) in _SCHEMES.items()}
#: 0.3 OAuthFlows members; 1.0 adds ``deviceCode`` (whats-new-v1.md, OAuth 2.0 Security Updates)
_V03_FLOWS = ("authorizationCode", "clientCredentials", "implicit", "password")
#: top-level fields that exist only in a 0.3 card
_V03_ONLY = (
    "url",
    "preferredTransport",
    "additionalInterfaces",
    "protocolVersion",
    "supportsAuthenticatedExtendedCard",
    "security",
)


def _scheme_down(scheme: Any, path: str) -> dict[str, Any]:
    obj = as_object(scheme, path)
    member = next((m for m in _MEMBERS if obj.get(m) is not None), None)
    if member is None:
        fail(path, f"a security scheme needs one of {', '.join(_MEMBERS)}")
    kind, renames = _MEMBERS[member]
    inner = as_object(obj[member], join(path, member))
    v03 = {k03: inner[k10] for k03, k10 in renames.items() if k10 in inner}
    v03.update({k: v for k, v in inner.items() if k not in renames.values()})
    if "flows" in v03:
        flows_path = join(join(path, member), "flows")
        flows = as_object(v03["flows"], flows_path)
        v03["flows"] = {
            name: {"scopes": {}, **as_object(flows[name], join(flows_path, name))}
            for name in _V03_FLOWS
            if flows.get(name) is not None
        }
    return {member: obj[member], "type": kind, **v03}


def _scheme_up(scheme: Any, path: str) -> dict[str, Any]:
    obj = as_object(scheme, path)
    present = {m: obj[m] for m in _MEMBERS if obj.get(m) is not None}
    if present:  # a 1.0 (or combined) scheme: the oneof member is authoritative
        return present
    kind = obj.get("type")
    if kind not in _SCHEMES:
        fail(join(path, "type"), f"unknown security scheme type {kind!r}")
    member, renames = _SCHEMES[kind]
    return {member: {renames.get(k, k): v for k, v in obj.items() if k != "type"}}


def _requirements_down(reqs: Any, path: str) -> list[dict[str, Any]]:
    """1.0 ``[{"schemes": {name: {"list": scopes}}}]`` -> 0.3 ``[{name: scopes}]``."""
    out = []
    for i, req in enumerate(as_list(reqs, path)):
        schemes = as_object(as_object(req, join(path, i)).get("schemes") or {}, join(path, i))
        out.append(
            {name: list((scopes or {}).get("list") or []) for name, scopes in schemes.items()}
        )
    return out


def _requirements_up(reqs: Any, path: str) -> list[dict[str, Any]]:
    """0.3 ``[{name: scopes}]`` -> 1.0 ``[{"schemes": {name: {"list": scopes}}}]``."""
    out = []
    for i, req in enumerate(as_list(reqs, path)):
        obj = as_object(req, join(path, i))
        out.append(
            {"schemes": {name: {"list": list(scopes or [])} for name, scopes in obj.items()}}
        )
    return out


def _is_v03(version: Any) -> bool:
    return isinstance(version, str) and version.startswith("0.")


def _major_minor(version: Any) -> str:
    """AgentInterface.protocolVersion is ``major.minor`` (a2a.proto: "0.3", "1.0")."""
    match = re.match(r"^\s*(\d+)\.(\d+)", version) if isinstance(version, str) else None
    return f"{match[1]}.{match[2]}" if match else "0.3"


def card_to_v03(card: dict[str, Any]) -> dict[str, Any]:
    """A 1.0 AgentCard -> the same card plus the 0.3 fields (see the module docstring).

    The 0.3 ``url``/``preferredTransport``/``additionalInterfaces`` come from the interfaces
    declaring a 0.x ``protocolVersion``; if there is none, from all of them (our server speaks
    0.3 at every interface when the client sends no ``A2A-Version``). Tenants have no 0.3 form.
    ``capabilities.stateTransitionHistory`` is not claimed (1.0 removed it).
    """
    out = copy.deepcopy(as_object(card, ""))
    interfaces = [
        as_object(i, join("supportedInterfaces", n))
        for n, i in enumerate(as_list(out.get("supportedInterfaces") or [], "supportedInterfaces"))
    ]
    chosen = [i for i in interfaces if _is_v03(i.get("protocolVersion"))] or interfaces
    if not chosen:
        fail("supportedInterfaces", "a 0.3 card needs at least one interface")
    out["url"] = chosen[0].get("url", "")
    out["preferredTransport"] = chosen[0].get("protocolBinding") or "JSONRPC"
    pairs = dict.fromkeys((i.get("url", ""), i.get("protocolBinding") or "JSONRPC") for i in chosen)
    out["additionalInterfaces"] = [{"url": u, "transport": t} for u, t in pairs]
    out["protocolVersion"] = V03_PROTOCOL_VERSION
    caps = out.setdefault("capabilities", {})
    if as_object(caps, "capabilities").get("extendedAgentCard") is not None:
        out["supportsAuthenticatedExtendedCard"] = caps["extendedAgentCard"]
    schemes = as_object(out.get("securitySchemes") or {}, "securitySchemes")
    if schemes:
        out["securitySchemes"] = {
            name: _scheme_down(s, join("securitySchemes", name)) for name, s in schemes.items()
        }
    if out.get("securityRequirements"):
        out["security"] = _requirements_down(out["securityRequirements"], "securityRequirements")
    for n, skill in enumerate(as_list(out.setdefault("skills", []), "skills")):
        skill = as_object(skill, join("skills", n))
        skill.setdefault("tags", [])
        if skill.get("securityRequirements"):
            path = join(join("skills", n), "securityRequirements")
            skill["security"] = _requirements_down(skill["securityRequirements"], path)
        out["skills"][n] = skill
    out.setdefault("defaultInputModes", ["text/plain"])
    out.setdefault("defaultOutputModes", ["text/plain"])
    return out


def card_from_v03(card: dict[str, Any]) -> dict[str, Any]:
    """A 0.3 card (or a combined one) -> a 1.0 AgentCard dict.

    When ``supportedInterfaces`` is present its 1.0 fields win and the 0.3 fields are dropped;
    otherwise the interfaces are built from ``url``/``preferredTransport`` (binding defaults to
    JSONRPC, 0.3 §5.6.1) and ``additionalInterfaces``, with the card's ``protocolVersion`` as
    ``major.minor``. Lossy: ``capabilities.stateTransitionHistory`` (no 1.0 equivalent).
    """
    src = as_object(card, "")
    out = {k: copy.deepcopy(v) for k, v in src.items() if k not in _V03_ONLY}
    if not out.get("supportedInterfaces"):
        version = _major_minor(src.get("protocolVersion"))
        pairs: dict[tuple[Any, Any], None] = {}
        if src.get("url") is not None:
            pairs[(src["url"], src.get("preferredTransport") or "JSONRPC")] = None
        extra = as_list(src.get("additionalInterfaces") or [], "additionalInterfaces")
        for n, iface in enumerate(extra):
            iface = as_object(iface, join("additionalInterfaces", n))
            pairs[(iface.get("url"), iface.get("transport") or "JSONRPC")] = None
        out["supportedInterfaces"] = [
            {"url": u, "protocolBinding": t, "protocolVersion": version} for u, t in pairs
        ]
    caps = dict(as_object(out.get("capabilities") or {}, "capabilities"))
    caps.pop("stateTransitionHistory", None)
    if (
        caps.get("extendedAgentCard") is None
        and src.get("supportsAuthenticatedExtendedCard") is not None
    ):
        caps["extendedAgentCard"] = src["supportsAuthenticatedExtendedCard"]
    out["capabilities"] = caps
    schemes = as_object(out.get("securitySchemes") or {}, "securitySchemes")
    if schemes:
        out["securitySchemes"] = {
            name: _scheme_up(s, join("securitySchemes", name)) for name, s in schemes.items()
        }
    if not out.get("securityRequirements") and src.get("security"):
        out["securityRequirements"] = _requirements_up(src["security"], "security")
    for n, skill in enumerate(as_list(out.get("skills") or [], "skills")):
        skill = as_object(skill, join("skills", n))
        security = skill.pop("security", None)
        if not skill.get("securityRequirements") and security:
            path = join(join("skills", n), "security")
            skill["securityRequirements"] = _requirements_up(security, path)
        out["skills"][n] = skill
    return out
