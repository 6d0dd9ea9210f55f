"""An endpoint that is not an A2A agent gets an error that says so, with the URL and what came
back (issue #18): a real non-A2A HTTP server (the standard library's file server) on loopback.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

import simple_a2a
from simple_a2a.client import ConnectError
from simple_a2a.protocol.errors import AuthenticationError, InvalidAgentResponseError
from tests.client.servers import free_port

SCRIPT = Path(sys.executable).parent / "simple-a2a"


class QuietFiles(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        if self.path.startswith("/framework"):  # a web framework's JSON 404 (FastAPI's shape)
            self.send_response(404)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"detail":"Not Found"}')
            return
        if not self.path.startswith("/guarded"):
            self.send_error(501, f"Unsupported method ({self.command!r})")  # as for any POST
            return
        # a gateway in front of an agent refuses the caller, with a text body
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Bearer realm="gateway"')
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        self.wfile.write(b"go away")


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A plain HTTP file server: 404 HTML pages for GET, 501 HTML pages for POST."""
    root = tmp_path_factory.mktemp("www")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(QuietFiles, directory=str(root)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def card_at(url: str, binding: str) -> dict[str, Any]:
    interface = {"url": url, "protocolBinding": binding, "protocolVersion": "1.0"}
    return {
        "name": "not an agent",
        "description": "a file server",
        "version": "1",
        "supportedInterfaces": [interface],
        "capabilities": {"streaming": True},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [],
    }


@pytest.mark.parametrize(
    ("binding", "call", "expected"),
    [
        ("JSONRPC", "send", "POST {url}/a2a did not answer with A2A: HTTP 501"),
        ("JSONRPC", "stream", "POST {url}/a2a did not answer with A2A: HTTP 501"),
        ("HTTP+JSON", "get", "GET {url}/a2a/tasks/t-1 did not answer with A2A: HTTP 404"),
        ("HTTP+JSON", "stream", "POST {url}/a2a/message:stream did not answer with A2A: HTTP 501"),
    ],
)
def test_a_plain_web_server_is_not_an_agent(
    files: str, binding: str, call: str, expected: str
) -> None:
    client = simple_a2a.client(card_at(f"{files}/a2a", binding))
    with client, pytest.raises(InvalidAgentResponseError) as caught:
        if call == "send":
            client.send("hello")
        elif call == "get":
            client.get("t-1")
        else:
            list(client.stream("hello"))
    message = caught.value.message
    assert message.startswith(expected.format(url=files)), message
    assert "an HTML page 'Error response'" in message


def test_a_json_404_that_is_not_an_a2a_error(files: str) -> None:
    client = simple_a2a.client(card_at(f"{files}/framework", "JSONRPC"))
    with client, pytest.raises(InvalidAgentResponseError) as caught:
        client.send("hello")
    assert caught.value.message == (
        f"POST {files}/framework did not answer with A2A: HTTP 404 Not Found, "
        'application/json: \'{"detail":"Not Found"}\' (is it the agent\'s A2A URL?)'
    )


def test_a_gateway_refusal_stays_an_authentication_error(files: str) -> None:
    client = simple_a2a.client(card_at(f"{files}/guarded", "JSONRPC"))
    with client, pytest.raises(AuthenticationError) as caught:
        client.send("hello")
    assert caught.value.status_code == 401  # type: ignore[attr-defined]


def test_connection_refused_names_the_url() -> None:
    port = free_port()
    client = simple_a2a.client(f"http://127.0.0.1:{port}")
    with client, pytest.raises(ConnectError, match=f"at http://127.0.0.1:{port}/"):
        client.send("hello")


@pytest.mark.skipif(not SCRIPT.exists(), reason="script not installed")
def test_cli_assumes_http_for_a_bare_host_and_port() -> None:
    port = free_port()
    done = subprocess.run(
        [str(SCRIPT), "send", f"localhost:{port}", "hi"], capture_output=True, text=True
    )
    assert done.returncode == 4, done.stderr
    assert f"could not connect to the agent at http://localhost:{port}/" in done.stderr
    assert "UnsupportedProtocol" not in done.stderr
