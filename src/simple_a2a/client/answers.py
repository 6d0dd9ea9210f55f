"""What an agent answered over HTTP: read within bounds, checked to be A2A at all, and its
failures mapped to the client's typed errors (used by every HTTP binding and by discovery).

A2A calls never follow redirects; a body is read within ``ClientLimits.max_response_bytes``; an
answer that is not A2A (a proxy's HTML page, a web framework's ``{"detail": "Not Found"}``) is
an ``InvalidAgentResponseError`` that says what came back instead.
"""

from __future__ import annotations

import re
from typing import Any

import httpx

from simple_a2a.protocol.errors import A2AError, InvalidAgentResponseError

from .errors import ClientTimeoutError, ConnectError, ConnectTimeoutError, TransportError
from .limits import TooLargeError, loads, read_capped


def map_httpx_error(exc: httpx.HTTPError) -> Exception:
    """The client error for an ``httpx`` failure (the original is kept as ``__cause__``);
    the message names the URL when the request is known."""
    text = str(exc) or type(exc).__name__
    try:
        at = f" at {exc.request.url}"
    except RuntimeError:  # an error raised before the request existed
        at = ""
    if isinstance(exc, httpx.ConnectTimeout):
        return ConnectTimeoutError(f"timed out connecting to the agent{at}: {text}")
    if isinstance(exc, httpx.TimeoutException):
        return ClientTimeoutError(f"timed out talking to the agent{at}: {text}")
    if isinstance(exc, httpx.ConnectError):
        return ConnectError(f"could not connect to the agent{at}: {text}")
    return TransportError(f"{type(exc).__name__}{at}: {text}")


def with_status(err: A2AError, status_code: int) -> A2AError:
    """Attach the HTTP status of the response that carried ``err``."""
    err.status_code = status_code  # type: ignore[attr-defined]
    return err


_SCHEME_PARAM = re.compile(r'scheme="([^"]+)"')


def challenged(err: A2AError, response: httpx.Response) -> A2AError:
    """On a 401, attach the ``WWW-Authenticate`` challenges (``err.challenges``) and the
    schemes they name (``err.schemes``: the card's scheme names when the agent says them,
    else the auth-schemes such as ``Bearer``)."""
    if response.status_code == 401:
        challenges = response.headers.get_list("www-authenticate")
        err.challenges = challenges  # type: ignore[attr-defined]
        err.schemes = [  # type: ignore[attr-defined]
            m.group(1) if (m := _SCHEME_PARAM.search(c)) else c.split(" ")[0] for c in challenges
        ]
    return err


def invalid(message: str, status_code: int = 200) -> A2AError:
    return with_status(InvalidAgentResponseError(message), status_code)


def _decode(content: bytes, status: int) -> Any:
    if not content.strip():
        return None
    try:
        return loads(content, ValueError)
    except ValueError as exc:
        if str(exc) == "not JSON":
            return None  # check_a2a_answer says what came back instead
        raise invalid(f"the agent answered HTTP {status} with JSON {exc}", status) from None


def _refuse_redirect(operation: str, response: httpx.Response) -> None:
    """A2A calls never follow a redirect: the message and the credentials would go to wherever
    the agent points (a 307 replays the body; a custom API-key header survives httpx's
    cross-origin stripping)."""
    if response.is_redirect:
        where = response.headers.get("location", "?")
        raise invalid(
            f"{operation}: the agent answered HTTP {response.status_code} redirecting to "
            f"{where}; A2A calls do not follow redirects (use the final URL)",
            response.status_code,
        )


async def send_unfollowed(http: httpx.AsyncClient, request: httpx.Request) -> httpx.Response:
    """Send without following redirects, the body left unread (see :func:`read_body`)."""
    try:
        return await http.send(request, stream=True, follow_redirects=False)
    except httpx.HTTPError as exc:
        raise map_httpx_error(exc) from exc


async def read_body(operation: str, response: httpx.Response, limit: int) -> Any:
    """The decoded JSON body (``None`` if empty or not JSON), read within ``limit`` bytes;
    a redirect is refused first."""
    _refuse_redirect(operation, response)
    try:
        content = await read_capped(response, limit)
    except httpx.HTTPError as exc:
        raise map_httpx_error(exc) from exc
    except TooLargeError as exc:
        raise invalid(
            f"{operation}: the answer is too large: {exc} (ClientLimits.max_response_bytes)",
            response.status_code,
        ) from None
    finally:
        await response.aclose()
    response._content = content  # so that .content/.text describe a non-A2A answer
    return _decode(content, response.status_code)


#: Statuses a non-A2A front (a proxy, a gateway) answers in the agent's name: kept as the
#: typed A2A errors they stand for (with the ``WWW-Authenticate`` challenges of a 401).
_FRONT_STATUSES = frozenset({401, 403})


_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


def _what_came_back(response: httpx.Response) -> str:
    ctype = response.headers.get("content-type", "").partition(";")[0].strip()
    text = response.text.strip() if response.is_stream_consumed else ""
    if not text:
        return "no body"
    if ctype == "text/html" or text[:15].lower().startswith(("<!doctype html", "<html")):
        title = _TITLE.search(text)
        page = " ".join(title.group(1).split()) if title else ""
        return f"an HTML page {page[:80]!r}" if page else "an HTML page"
    return f"{ctype or 'no content type'}: {' '.join(text.split())[:80]!r}"


def not_a2a(response: httpx.Response) -> A2AError:
    """The endpoint answered, but not with A2A: say where, and what came back."""
    request = response.request
    status = f"HTTP {response.status_code} {response.reason_phrase}".rstrip()
    return invalid(
        f"{request.method} {request.url} did not answer with A2A: {status}, "
        f"{_what_came_back(response)} (is it the agent's A2A URL?)",
        response.status_code,
    )


def is_v03_rest_error(body: Any) -> bool:
    """The 0.3 Python SDK's REST error body: ``{"message": str}`` (and maybe ``type``/``code``)."""
    return isinstance(body, dict) and isinstance(body.get("message"), str)


def check_a2a_answer(response: httpx.Response, body: Any, *, v03_rest: bool = False) -> None:
    """Raise :func:`not_a2a` unless ``body`` can be an A2A answer: an error status must carry
    an A2A error object (``{"error": {...}}``: JSON-RPC, or ``google.rpc.Status`` for HTTP+JSON,
    spec §11.6; over 0.3 HTTP+JSON also the SDKs' flat ``{"message"}``), except 401/403 from a
    front; a success must be JSON (or empty)."""
    status = response.status_code
    if status in _FRONT_STATUSES:
        return
    if status >= 400:
        if v03_rest and is_v03_rest_error(body):
            return
        if not (isinstance(body, dict) and isinstance(body.get("error"), dict)):
            raise not_a2a(response)  # a web server's 404 page, {"detail": "Not Found"}, ...
    elif body is None and response.content.strip():
        raise not_a2a(response)
