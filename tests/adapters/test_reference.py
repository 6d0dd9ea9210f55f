"""The conformance suite run on an agent written directly on ``simple_a2a.adapters``' shared
pieces (no framework): it proves the suite can pass and that the pieces do what adapters need.
Its "framework" is a dict of JSON kept per conversation with ``save_json``."""

from __future__ import annotations

from typing import Any

from simple_a2a.adapters import (
    TextStream,
    failure_message,
    load_json,
    run_until_cancelled,
    save_json,
)
from simple_a2a.server import AgentExecutor, RequestContext

from .conformance import (
    HUMAN_TOOL,
    AdapterConformance,
    CallTool,
    Fail,
    Hang,
    ModelFailure,
    Say,
    Script,
    Turn,
)


class ScriptedAgent(AgentExecutor):
    def __init__(self, script: Script) -> None:
        self.script = script

    async def execute(self, ctx: RequestContext) -> Any:
        memory = await load_json(ctx, "reference") or {"users": [], "tools": [], "asked": None}
        if memory["asked"] is not None:  # this message answers the human tool
            memory["tools"].append(ctx.text)
            memory["asked"] = None
        else:
            memory["users"].append(ctx.text)
        stream = TextStream(ctx)
        try:
            step = await run_until_cancelled(ctx, self._model(memory, stream))
        except ModelFailure as exc:
            await ctx.fail(failure_message(exc))
            return None
        if isinstance(step, CallTool):
            memory["asked"] = step.args["question"]
            await save_json(ctx, "reference", memory)
            await ctx.require_input(step.args["question"])
            return None
        await stream.close()
        await save_json(ctx, "reference", memory)
        return None

    async def _model(self, memory: dict[str, Any], stream: TextStream) -> Any:
        step = self.script.step(Turn(list(memory["users"]), list(memory["tools"])))
        if isinstance(step, Fail):
            raise ModelFailure(step.message)
        if isinstance(step, Hang):
            await stream.write(step.first)
            await self.script.hang()
        if isinstance(step, Say):
            for token in step.tokens:
                await stream.write(token)
        if isinstance(step, CallTool):
            assert step.name == HUMAN_TOOL
        return step


class TestReferenceAdapter(AdapterConformance):
    def make_executor(self, script: Script) -> AgentExecutor:
        return ScriptedAgent(script)
