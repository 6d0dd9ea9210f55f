"""The Google ADK adapter (issue #35): the conformance suite on an ``LlmAgent`` whose model is a
``BaseLlm`` driven by the Script (read from the ``LlmRequest`` ADK builds), plus tool
confirmations, structured output, the session service's bounds, and remote A2A agents (ours and
the official SDK's) as the agent's tools."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from typing import Any

import pytest

pytest.importorskip("google.adk")


from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from simple_a2a.adapters.adk import ask_human, executor
from simple_a2a.server import AgentExecutor

from .conformance import (
    AdapterConformance,
    CallTool,
    Fail,
    Hang,
    ModelFailure,
    Say,
    Script,
    Step,
    Turn,
)


def _tool_result(response: dict[str, Any] | None) -> str:
    if response and set(response) == {"result"}:
        return str(response["result"])
    return json.dumps(response, sort_keys=True)


def turn_of(request: LlmRequest) -> Turn:
    """The Turn ADK handed its model: user text parts and function responses, oldest first."""
    users: list[str] = []
    tools: list[str] = []
    for content in request.contents:
        for part in content.parts or []:
            if part.function_response is not None:
                tools.append(_tool_result(part.function_response.response))
            elif content.role == "user" and part.text:
                users.append(part.text)
    return Turn(users, tools)


def _content(*parts: types.Part) -> types.Content:
    return types.Content(role="model", parts=list(parts))


class ScriptedLlm(BaseLlm):
    """ADK's model interface answering from the Script: text streamed as partial responses
    then the whole (what ``stream=True`` means in ``BaseLlm``), a tool call, an error, a hang."""

    model: str = "scripted"
    script: Any

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        step: Step = self.script.step(turn_of(llm_request))
        if isinstance(step, Fail):
            raise ModelFailure(step.message)
        if isinstance(step, CallTool):
            call = types.FunctionCall(name=step.name, args=step.args)
            yield LlmResponse(content=_content(types.Part(function_call=call)))
            return
        tokens = step.tokens if isinstance(step, Say) else (step.first,)
        if stream:
            for token in tokens:
                yield LlmResponse(content=_content(types.Part(text=token)), partial=True)
        if isinstance(step, Hang):
            await self.script.hang()
        yield LlmResponse(content=_content(types.Part(text="".join(tokens))))


def scripted_agent(script: Script, **options: Any) -> LlmAgent:
    tools = options.pop("tools", [ask_human])
    return LlmAgent(name="assistant", model=ScriptedLlm(script=script), tools=tools, **options)


class TestADKAdapter(AdapterConformance):
    def make_executor(self, script: Script) -> AgentExecutor:
        return executor(scripted_agent(script))
