"""The language models of demo 03: Anthropic or OpenAI when their API keys are set (and the
``llm`` extra is installed: ``pip install 'simple-a2a[llm]'``), else an offline stand-in that
streams plausible text, so the demo always runs.

``A2A_DEMO_OFFLINE=1`` forces the stand-in; ``A2A_DEMO_ANTHROPIC_MODEL`` and
``A2A_DEMO_OPENAI_MODEL`` choose the models.
"""

from __future__ import annotations

import importlib.util
import os
import random
import re
from collections.abc import AsyncIterator
from typing import Protocol

from .._common import FAST, asleep


class Model(Protocol):
    name: str

    def stream(self, system: str, prompt: str) -> AsyncIterator[str]: ...


class Claude:
    def __init__(self) -> None:
        from anthropic import AsyncAnthropic

        self.client = AsyncAnthropic()  # reads ANTHROPIC_API_KEY
        self.model = os.environ.get("A2A_DEMO_ANTHROPIC_MODEL", "claude-haiku-4-5")
        self.name = f"Anthropic {self.model}"

    async def stream(self, system: str, prompt: str) -> AsyncIterator[str]:
        messages = [{"role": "user", "content": prompt}]
        async with self.client.messages.stream(
            model=self.model, max_tokens=700, system=system, messages=messages
        ) as response:
            async for text in response.text_stream:
                yield text


class GPT:
    def __init__(self) -> None:
        from openai import AsyncOpenAI

        self.client = AsyncOpenAI()  # reads OPENAI_API_KEY
        self.model = os.environ.get("A2A_DEMO_OPENAI_MODEL", "gpt-4o-mini")
        self.name = f"OpenAI {self.model}"

    async def stream(self, system: str, prompt: str) -> AsyncIterator[str]:
        response = await self.client.chat.completions.create(
            model=self.model,
            stream=True,
            messages=[{"role": "system", "content": system}, {"role": "user", "content": prompt}],
        )
        async for chunk in response:
            if chunk.choices and chunk.choices[0].delta.content:
                yield chunk.choices[0].delta.content


OPENING = "Here is what is known about {topic}."
SENTENCES = [
    "The evidence is older than most people think, and it began as careful observation.",
    "Early accounts were descriptions rather than theories, and they have aged well.",
    "Later work measured the effect directly, and the measurements mostly agreed.",
    "A second line of evidence comes from comparing different settings side by side.",
    "The strongest studies share one habit: they wrote down their predictions first.",
    "What remains open is how far the usual explanation really reaches.",
    "Two competing accounts survive, and they disagree about the mechanism.",
    "Much of the popular writing overstates what the data can show.",
    "A practical risk is that conclusions are drawn from small samples.",
    "In short: well described, partly explained, and still worth studying.",
]


EVALUATION = (
    "Both reports are useful. The first is stronger on evidence, the second on open questions. "
    "Start with the first, and keep the second's caveats in mind."
)


class Offline:
    """A stand-in model: sentences about the topic, streamed a word at a time, no network."""

    name = "offline stand-in model"

    async def stream(self, system: str, prompt: str) -> AsyncIterator[str]:
        topic = prompt.splitlines()[0].strip().rstrip(".?!") or "the topic"
        rng = random.Random(system + topic)  # the same question gets the same answer
        if "evaluat" in system.lower():
            text = EVALUATION
        else:
            text = " ".join([OPENING.format(topic=topic), *rng.sample(SENTENCES, 2 if FAST else 6)])
        for word in re.findall(r"\S+\s*", text):
            yield word
            # fast (the tests): ~35 words in ~0.5 s, so the two researchers' streams overlap
            # even when one client starts a few hundred ms late on a loaded machine (at 1 ms a
            # word, one finished before the other began: the demo's "at the same time" check)
            await asleep(0.06, fast=0.015)


def _available(package: str, key: str) -> bool:
    return bool(os.environ.get(key)) and importlib.util.find_spec(package) is not None


def pick(prefer: str) -> Model:
    """The preferred provider if usable, else the other one, else the offline stand-in."""
    if os.environ.get("A2A_DEMO_OFFLINE"):
        return Offline()
    providers = {"anthropic": ("ANTHROPIC_API_KEY", Claude), "openai": ("OPENAI_API_KEY", GPT)}
    for name in sorted(providers, key=lambda n: n != prefer):
        key, make = providers[name]
        if _available(name, key):
            return make()
    return Offline()
