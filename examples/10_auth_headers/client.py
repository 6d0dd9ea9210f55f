"""Demo 10: the card is public; calls without the bearer token (or with a wrong one) are refused
with an authentication error (HTTP 401); with the header they succeed."""

import os

import httpx

import simple_a2a
from simple_a2a import AuthenticationError, Task

from .._common import CARD_PATH, Checks, title, url

check = Checks()
TOKEN = os.environ.get("A2A_DEMO_TOKEN", "demo-secret-token")

title("The card is public")
response = httpx.get(url(CARD_PATH))
schemes = response.json().get("securitySchemes", {})
print(f"  GET {CARD_PATH} → {response.status_code}; security schemes: {schemes}")
check(response.status_code == 200, "anyone can read the card")
check(schemes, "the card declares how to authenticate")

title("No token, then a wrong token")
for label, headers in (("no token", {}), ("a wrong token", {"Authorization": "Bearer nope"})):
    with simple_a2a.client(url(), headers=headers) as anonymous:
        try:
            anonymous.send("let me in")
            check(False, f"{label}: refused")
        except AuthenticationError as err:
            print(f"  {label}: {type(err).__name__} (HTTP {err.status_code}): {err}")
            check(err.status_code == 401, f"{label}: refused with 401 Unauthorized")

title("With the header")
with simple_a2a.client(url(), headers={"Authorization": f"Bearer {TOKEN}"}) as member:
    task = member.send("good evening")
    assert isinstance(task, Task)
    print(f"  → {task.text!r}")
    check(task.text.startswith("Welcome back, ada"), "the call succeeds; the agent knows who")
    check(member.get(task.id).id == task.id, "every operation works with the header")
# simple_a2a.client(url, bearer_token=TOKEN) is the shortcut for the same header.

check.exit()
