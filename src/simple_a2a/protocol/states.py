"""The task state machine as a table (spec §4.1.3; topic "life of a task").

Pure data and one function: which state may follow which. Terminal states have no exits;
an interrupted task resumes when the client answers (back to submitted or working).
"""

from __future__ import annotations

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
