"""The task state machine as a table (spec §4.1.3; topic "life of a task").

Pure data and one function: which state may follow which. Terminal states have no exits;
an interrupted task resumes when the client answers (back to submitted or working).
"""

from __future__ import annotations

from enum import Enum

from .models import TERMINAL_STATES, TaskState

S = TaskState

_ANY_EXIT = frozenset(
    {
        S.WORKING,
        S.COMPLETED,
        S.FAILED,
        S.CANCELED,
        S.REJECTED,
        S.INPUT_REQUIRED,
        S.AUTH_REQUIRED,
    }
)

#: state -> the states it may move to. A state may "move" to itself only where listed
#: (working -> working carries a progress message).
TRANSITIONS: dict[TaskState, frozenset[TaskState]] = {
    S.UNSPECIFIED: frozenset({S.SUBMITTED, *_ANY_EXIT}),
    S.SUBMITTED: _ANY_EXIT,
    S.WORKING: _ANY_EXIT,
    S.INPUT_REQUIRED: frozenset({S.SUBMITTED, *_ANY_EXIT}),
    S.AUTH_REQUIRED: frozenset({S.SUBMITTED, *_ANY_EXIT}),
    **{state: frozenset() for state in TERMINAL_STATES},
}


class InvalidTransitionError(RuntimeError):
    """An executor tried an illegal state change (e.g. anything out of a terminal state)."""

    def __init__(self, current: TaskState, target: TaskState) -> None:
        self.current = current
        self.target = target
        if current in TERMINAL_STATES:
            why = f"the task is already {current.value}, a terminal state"
        else:
            why = f"{current.value} cannot move to {target.value}"
        super().__init__(f"illegal task state transition: {why}")


def can_transition(current: TaskState, target: TaskState) -> bool:
    return target in TRANSITIONS[current]


def check_transition(current: TaskState, target: TaskState) -> None:
    """Raise :class:`InvalidTransitionError` unless ``current -> target`` is allowed."""
    if target not in TRANSITIONS[current]:
        raise InvalidTransitionError(current, target)


class FollowUp(str, Enum):
    """What a client message with a ``taskId`` does to that task (spec §3.1.1, §3.4.3)."""

    RESUME = "resume"  #: an interrupted task goes back to ``submitted``; the executor runs
    JOIN = "join"  #: the message joins a task still at work; the executor runs, state unchanged
    REFUSE = "refuse"  #: UnsupportedOperationError, nothing changes


#: The rule, keyed by the task's state. The spec lets a server accept or refuse a message for a
#: task that is still ``submitted``/``working``; we accept it as the official SDK does (the
#: executor runs for the new message on the same task). Only one execution runs per task at a
#: time, so a message arriving while an executor has not returned yet is refused instead
#: (the handler checks that; it is not a state).
FOLLOW_UPS: dict[TaskState, FollowUp] = {
    S.UNSPECIFIED: FollowUp.REFUSE,
    S.SUBMITTED: FollowUp.JOIN,
    S.WORKING: FollowUp.JOIN,
    S.INPUT_REQUIRED: FollowUp.RESUME,
    S.AUTH_REQUIRED: FollowUp.RESUME,
    **{state: FollowUp.REFUSE for state in TERMINAL_STATES},
}
