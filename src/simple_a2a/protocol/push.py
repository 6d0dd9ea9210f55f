"""Push notification wire constants shared by the sender (server) and receivers (webhooks).

No I/O here. The header and claim names are documented in ``docs/push.md``.
"""

from __future__ import annotations

from typing import Final

#: The config's ``token``, sent under both names because peers disagree (the official SDK reads
#: ``X-A2A-Notification-Token``; the 1.0 wording drops the ``X-`` prefix).
TOKEN_HEADERS: Final = ("X-A2A-Notification-Token", "A2A-Notification-Token")

#: The signed JWT (compact JWS) that proves the notification came from the agent. A dedicated
#: header, because ``Authorization`` belongs to the config's own ``authentication`` info.
SIGNATURE_HEADER: Final = "A2A-Notification-Signature"

#: Where the agent publishes its public keys (relative to where the agent is mounted).
JWKS_PATH: Final = "/.well-known/jwks.json"

#: The card extension that announces signed notifications; its params carry ``jwksUri``,
#: ``header`` and ``algorithms``.
SIGNING_EXTENSION_URI: Final = "https://simple-a2a.dev/extensions/push-signature/v1"

#: JWT claims besides the registered ones (iss, iat, exp, jti, aud).
CLAIM_TASK_ID: Final = "taskId"
#: Hex SHA-256 of the exact request body; the name the A2A samples' receivers check.
CLAIM_BODY_SHA256: Final = "request_body_sha256"

CONTENT_TYPE: Final = "application/a2a+json"
