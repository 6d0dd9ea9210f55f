"""Agent discovery and security objects (spec §4.4, §4.5, §8).

Repeated fields the proto marks REQUIRED (``skills``, ``supportedInterfaces``, ...) are always
written, but a card read from the wild may lack them: clients must read imperfect cards.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from ._base import A2AModel, Struct, repeated, repeated_map

#: ``protocolBinding`` values of the three standard bindings (spec §5.2).
JSONRPC = "JSONRPC"
HTTP_JSON = "HTTP+JSON"
GRPC = "GRPC"


class AgentInterface(A2AModel):
    url: str
    protocol_binding: str
    tenant: str | None = None
    protocol_version: str = "1.0"


class AgentProvider(A2AModel):
    url: str
    organization: str


class AgentExtension(A2AModel):
    uri: str | None = None
    description: str | None = None
    required: bool | None = None
    params: Struct | None = None


class AgentCapabilities(A2AModel):
    streaming: bool | None = None
    push_notifications: bool | None = None
    extensions: list[AgentExtension] = repeated()
    extended_agent_card: bool | None = None


class StringList(A2AModel):
    """``StringList``; its proto field is ``list``, named ``values`` in Python."""

    values: list[str] = Field(default_factory=list, alias="list")


class SecurityRequirement(A2AModel):
    schemes: dict[str, StringList] = Field(default_factory=dict)


class AgentSkill(A2AModel):
    id: str
    name: str
    description: str
    tags: list[str] = Field(default_factory=list)
    examples: list[str] = repeated()
    input_modes: list[str] = repeated()
    output_modes: list[str] = repeated()
    security_requirements: list[SecurityRequirement] = repeated()


class AgentCardSignature(A2AModel):
    protected: str
    signature: str
    header: Struct | None = None


class APIKeySecurityScheme(A2AModel):
    description: str | None = None
    location: str
    name: str


class HTTPAuthSecurityScheme(A2AModel):
    description: str | None = None
    scheme: str
    bearer_format: str | None = None


class AuthorizationCodeOAuthFlow(A2AModel):
    authorization_url: str
    token_url: str
    refresh_url: str | None = None
    scopes: dict[str, str] = Field(default_factory=dict)
    pkce_required: bool | None = None


class ClientCredentialsOAuthFlow(A2AModel):
    token_url: str
    refresh_url: str | None = None
    scopes: dict[str, str] = Field(default_factory=dict)


class ImplicitOAuthFlow(A2AModel):
    authorization_url: str | None = None
    refresh_url: str | None = None
    scopes: dict[str, str] | None = None


class PasswordOAuthFlow(A2AModel):
    token_url: str | None = None
    refresh_url: str | None = None
    scopes: dict[str, str] | None = None


class DeviceCodeOAuthFlow(A2AModel):
    device_authorization_url: str
    token_url: str
    refresh_url: str | None = None
    scopes: dict[str, str] = Field(default_factory=dict)


def _check_oneof(model: A2AModel, names: tuple[str, ...], what: str) -> None:
    present = [n for n in names if model.__dict__.get(n) is not None]
    if len(present) != 1:
        fields = type(model).model_fields
        wire = ", ".join(fields[n].alias or n for n in names)
        raise ValueError(f"{what} must set exactly one of {wire}")


class OAuthFlows(A2AModel):
    authorization_code: AuthorizationCodeOAuthFlow | None = None
    client_credentials: ClientCredentialsOAuthFlow | None = None
    implicit: ImplicitOAuthFlow | None = None
    password: PasswordOAuthFlow | None = None
    device_code: DeviceCodeOAuthFlow | None = None

    @model_validator(mode="after")
    def _one_flow(self) -> OAuthFlows:
        _check_oneof(self, tuple(type(self).model_fields), "OAuthFlows")
        return self


class OAuth2SecurityScheme(A2AModel):
    description: str | None = None
    flows: OAuthFlows
    oauth2_metadata_url: str | None = None


class OpenIdConnectSecurityScheme(A2AModel):
    description: str | None = None
    open_id_connect_url: str


class MutualTlsSecurityScheme(A2AModel):
    description: str | None = None


class SecurityScheme(A2AModel):
    api_key_security_scheme: APIKeySecurityScheme | None = None
    http_auth_security_scheme: HTTPAuthSecurityScheme | None = None
    oauth2_security_scheme: OAuth2SecurityScheme | None = None
    open_id_connect_security_scheme: OpenIdConnectSecurityScheme | None = None
    mtls_security_scheme: MutualTlsSecurityScheme | None = None

    @model_validator(mode="after")
    def _one_scheme(self) -> SecurityScheme:
        _check_oneof(self, tuple(type(self).model_fields), "SecurityScheme")
        return self


class AgentCard(A2AModel):
    """An agent's self-description (spec §4.4.1, §8)."""

    name: str
    description: str
    supported_interfaces: list[AgentInterface] = Field(default_factory=list)
    provider: AgentProvider | None = None
    version: str
    documentation_url: str | None = None
    capabilities: AgentCapabilities = Field(default_factory=AgentCapabilities)
    security_schemes: dict[str, SecurityScheme] = repeated_map()
    security_requirements: list[SecurityRequirement] = repeated()
    default_input_modes: list[str] = Field(default_factory=lambda: ["text/plain"])
    default_output_modes: list[str] = Field(default_factory=lambda: ["text/plain"])
    skills: list[AgentSkill] = Field(default_factory=list)
    signatures: list[AgentCardSignature] = repeated()
    icon_url: str | None = None

    def interface(self, binding: str) -> AgentInterface | None:
        """The first declared interface of a binding (``"JSONRPC"``, ``"HTTP+JSON"``, ...)."""
        return next(
            (i for i in self.supported_interfaces if i.protocol_binding.upper() == binding.upper()),
            None,
        )

    @property
    def supports_streaming(self) -> bool:
        return bool(self.capabilities.streaming)

    @property
    def supports_push(self) -> bool:
        return bool(self.capabilities.push_notifications)

    @property
    def required_extensions(self) -> list[str]:
        return [e.uri for e in self.capabilities.extensions if e.required and e.uri]
