"""Adapters for the frameworks Python agents are written in (docs/adapters/).

Each adapter is a module of its own with its framework in an extra of its own, so installing
one pulls only that framework and ``import simple_a2a`` imports none:

- :mod:`simple_a2a.adapters.pydantic_ai` (``pip install 'simple-a2a[pydantic-ai]'``)
- :mod:`simple_a2a.adapters.langgraph` (``[langgraph]``)
- :mod:`simple_a2a.adapters.openai_agents` (``[openai-agents]``)
- :mod:`simple_a2a.adapters.adk` (``[adk]``)

Each goes both ways: ``executor(agent)`` serves a framework agent over A2A, and
``remote_agent_tool(url)`` gives a framework agent a remote A2A agent as a tool.
What they share (the streamed answer, cancel, conversation state, :class:`RemoteAgent`) is
here, for writing an adapter of your own.
"""

from ._common import (
    ANSWER_ARTIFACT,
    APPROVALS,
    RemoteAgent,
    RemoteAgentError,
    RunCancelled,
    TextStream,
    approves,
    failure_message,
    load_json,
    remote_agent,
    run_until_cancelled,
    save_json,
    tool_name,
)

__all__ = [
    "ANSWER_ARTIFACT",
    "APPROVALS",
    "RemoteAgent",
    "RemoteAgentError",
    "RunCancelled",
    "TextStream",
    "approves",
    "failure_message",
    "load_json",
    "remote_agent",
    "run_until_cancelled",
    "save_json",
    "tool_name",
]
