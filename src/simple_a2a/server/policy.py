"""Recovery policies (docs/cluster.md "Recovery policy"): what happens to a task whose replica
died while running it, chosen per agent by the executor's ``recovery`` class attribute.

- :class:`Fail` (the default): the replica that takes the task over fails it with
  :data:`~simple_a2a.server.recovery.RESTART_MESSAGE`;
- :class:`Rerun`: that replica runs the executor again, after a back-off, up to ``attempts``
  executions in all (``ctx.attempt`` numbers them from 1), then fails the task with
  :func:`exhausted_message`.

``resumable = True`` (the older switch) with the default ``recovery`` means :data:`RESUME`: a
:class:`Rerun` without a bound and without back-off, as before. An explicit ``recovery`` wins.

The number of attempts made is kept in the task's metadata under :data:`ATTEMPT_KEY`
(``{"attempt": n, "messageId": id}``), written with the status update that starts each new
attempt, so it survives the replica dying on every storage (the task snapshot is the one thing
every backend stores). It counts the attempts for one client message: a later turn of the task
(after ``input-required``) starts again at 1.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..protocol.models import Message, Task

if TYPE_CHECKING:
    from .executor import AgentExecutor

#: Where a task's attempt count is kept (task metadata, and the starting status message's).
ATTEMPT_KEY = "simple_a2a/recovery"


@dataclass(frozen=True)
class Fail:
    """Fail a task whose replica died with the restart message (the default)."""


@dataclass(frozen=True)
class Rerun:
    """Run a task whose replica died again, on the replica that took it over.

    ``attempts`` executions in all (the first run included); attempt ``n`` (from 2) starts
    ``backoff * 2 ** (n - 2)`` seconds after the task was taken over, at most ``max_backoff``.
    Execution is at-least-once: an attempt may repeat work an earlier one did before it died.
    """

    attempts: int = 3
    backoff: float = 1.0
    max_backoff: float = 30.0

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError(f"Rerun.attempts must be at least 1, got {self.attempts}")
        if not (self.backoff >= 0 and self.max_backoff >= 0):
            raise ValueError("Rerun.backoff and Rerun.max_backoff must not be negative")

    def delay(self, attempt: int) -> float:
        """Seconds to wait before attempt ``attempt`` (2, 3, ...) starts."""
        if attempt < 2 or self.backoff == 0:
            return 0.0
        return float(min(self.max_backoff, self.backoff * 2 ** (attempt - 2)))


RecoveryPolicy = Rerun | Fail

#: The default ``AgentExecutor.recovery`` (compared by identity: an explicit ``Fail()`` is not it).
DEFAULT = Fail()
#: What ``resumable = True`` means: run again after every death, at once, without a bound.
RESUME = Rerun(attempts=sys.maxsize, backoff=0.0, max_backoff=0.0)


def policy_of(executor: AgentExecutor) -> RecoveryPolicy:
    """The executor's policy: its ``recovery``, or :data:`RESUME` for ``resumable = True`` with
    the default ``recovery``."""
    policy = getattr(executor, "recovery", DEFAULT)
    if policy is DEFAULT and getattr(executor, "resumable", False):
        return RESUME
    if not isinstance(policy, (Rerun, Fail)):
        raise TypeError(f"recovery must be Rerun(...) or Fail(), got {policy!r}")
    return policy


def attempts_made(task: Task, message: Message) -> int:
    """How many executions of ``message`` (the task's latest client message) were started."""
    record = (task.metadata or {}).get(ATTEMPT_KEY)
    if isinstance(record, dict) and record.get("messageId") == message.message_id:
        attempt = record.get("attempt")
        if isinstance(attempt, int) and attempt >= 1:
            return attempt
    return 1


def attempt_record(attempt: int, message: Message) -> dict[str, Any]:
    return {ATTEMPT_KEY: {"attempt": attempt, "messageId": message.message_id}}


def attempt_text(attempt: int, policy: Rerun) -> str:
    """The status message that starts attempt ``attempt`` (what a client sees)."""
    bound = "" if policy.attempts == sys.maxsize else f" of {policy.attempts}"
    return f"Attempt {attempt}{bound}: the server running this task stopped; running it again."


def exhausted_message(attempts: int) -> str:
    """Why a :class:`Rerun` task failed once its attempts were spent."""
    noun = "attempt" if attempts == 1 else "attempts"
    return (
        f"The server running this task stopped during each of its {attempts} {noun}; "
        "it was not finished."
    )
