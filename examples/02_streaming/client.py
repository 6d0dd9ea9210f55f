"""Demo 02: stream a story, print each word as it arrives, then a summary."""

import time

import simple_a2a
from simple_a2a import Task, TaskArtifactUpdateEvent, TaskState, TaskStatusUpdateEvent

from .._common import Checks, state, title, url

check = Checks()
teller = simple_a2a.client(url())

title("Streaming (SendStreamingMessage)\n")
started = time.monotonic()
events = 0
chunks: list[TaskArtifactUpdateEvent] = []
final_state = None
task_id = ""
for event in teller.stream("tell me a story"):
    events += 1
    if isinstance(event, Task):
        task_id = event.id
    elif isinstance(event, TaskArtifactUpdateEvent):
        chunks.append(event)
        print(event.artifact.text, end="", flush=True)
    elif isinstance(event, TaskStatusUpdateEvent):
        final_state = event.status.state
elapsed = time.monotonic() - started

text = "".join(chunk.artifact.text for chunk in chunks)
words = len(text.split())
title("Summary")
print(f"  words: {words}   events: {events}   elapsed: {elapsed:.1f}s")
print(f"  words per minute: {words / elapsed * 60:.0f}")

check(final_state == TaskState.COMPLETED, f"the stream ended {state(final_state)}")
check(words == len(chunks) > 1, "one artifact chunk per word")
check(
    not chunks[0].append and all(c.append for c in chunks[1:]),
    "the first chunk starts the artifact, every later one has append=true",
)
check(
    chunks[-1].last_chunk and not any(c.last_chunk for c in chunks[:-1]),
    "only the last chunk has last_chunk=true",
)
check(len({c.artifact.artifact_id for c in chunks}) == 1, "all chunks extend one artifact")
stored = teller.get(task_id)
recorded = "".join(part.text for part in stored.artifacts[0].parts)  # one part per chunk
check(
    len(stored.artifacts) == 1 and recorded == text,
    "the task recorded the whole text as one artifact",
)
teller.close()
check.exit()
