"""The A2A inspector: a local web page for any A2A agent (``simple-a2a inspect URL``), or for
this agent (``server(..., inspector=True)``). See docs/inspector.md.

A development tool: the page shows everything the agent says and lets whoever opens it send
messages and cancel tasks.
"""

from .app import inspector_app
from .session import Session
from .wire import RecordingTransport, WireLog

__all__ = ["RecordingTransport", "Session", "WireLog", "inspector_app"]
