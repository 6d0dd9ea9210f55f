"""The task state machine (spec §4.1.3, §3.1.1, §3.4.3; topic "life of a task").

Everything that affects a task's state lives here, in the manner of h11's ``_state.py``: the
state sets, the events that can happen to a task, one event-keyed transition table, the rule for
a client's message to an existing task, and the errors for what the table forbids. Code that
changes a task (the reducer, the task manager, the request handler) asks this module; nothing
else pre-checks states.
"""

from __future__ import annotations

from enum import Enum

from .models import FINAL_STATES, INTERRUPTED_STATES, TERMINAL_STATES, TaskState

S = TaskState

# -- state sets --
#: being worked on: the executor may still change the task
ACTIVE: frozenset[TaskState] = frozenset({S.SUBMITTED, S.WORKING})
#: waiting for the client (input-required, auth-required); a message resumes the task
INTERRUPTED: frozenset[TaskState] = INTERRUPTED_STATES
#: no exits: nothing changes the task any more
TERMINAL: frozenset[TaskState] = TERMINAL_STATES
#: where a blocking send returns and a message stream ends (spec §3.1.2, §3.2.2)
FINAL: frozenset[TaskState] = FINAL_STATES


class TaskEvent(str, Enum):
    """What can happen to a task. Each status a task can be moved to is one event; an artifact
    and a client's follow-up message are events that may keep the state."""

    START = "start"  #: -> working (also working -> working: a progress message)
    REQUIRE_INPUT = "require_input"  #: -> input-required
    REQUIRE_AUTH = "require_auth"  #: -> auth-required
    COMPLETE = "complete"  #: -> completed
    FAIL = "fail"  #: -> failed
    CANCEL = "cancel"  #: -> canceled
    REJECT = "reject"  #: -> rejected
    RESUME = "resume"  #: -> submitted: the client answered an interrupted task
    ARTIFACT = "artifact"  #: an artifact (or a chunk of one) is added; the state stays
    CLIENT_MESSAGE = "client_message"  #: a client's message for this task (a follow-up)


#: The status update that moves a task to a state is this event.
STATUS_EVENTS: dict[TaskState, TaskEvent] = {
    S.SUBMITTED: TaskEvent.RESUME,
    S.WORKING: TaskEvent.START,
    S.INPUT_REQUIRED: TaskEvent.REQUIRE_INPUT,
    S.AUTH_REQUIRED: TaskEvent.REQUIRE_AUTH,
    S.COMPLETED: TaskEvent.COMPLETE,
    S.FAILED: TaskEvent.FAIL,
    S.CANCELED: TaskEvent.CANCEL,
    S.REJECTED: TaskEvent.REJECT,
}

_EXECUTOR_MOVES = {
    TaskEvent.START: S.WORKING,
    TaskEvent.REQUIRE_INPUT: S.INPUT_REQUIRED,
    TaskEvent.REQUIRE_AUTH: S.AUTH_REQUIRED,
    TaskEvent.COMPLETE: S.COMPLETED,
    TaskEvent.FAIL: S.FAILED,
    TaskEvent.CANCEL: S.CANCELED,
    TaskEvent.REJECT: S.REJECTED,
}


def _keeps(state: TaskState, *events: TaskEvent) -> dict[TaskEvent, TaskState]:
    return dict.fromkeys(events, state)


#: state -> {event: next state}. An event missing for a state is illegal in it. Terminal states
#: have no events at all. A follow-up message resumes an interrupted task (back to ``submitted``)
#: and joins an active one (the state stays: the official SDK's choice, spec §3.4.3 allows both).
EVENT_TRANSITIONS: dict[TaskState, dict[TaskEvent, TaskState]] = {
    S.UNSPECIFIED: {
        **_EXECUTOR_MOVES,
        TaskEvent.RESUME: S.SUBMITTED,
        **_keeps(S.UNSPECIFIED, TaskEvent.ARTIFACT),
    },
    S.SUBMITTED: {
        **_EXECUTOR_MOVES,
        **_keeps(S.SUBMITTED, TaskEvent.ARTIFACT, TaskEvent.CLIENT_MESSAGE),
    },
    S.WORKING: {
        **_EXECUTOR_MOVES,
        **_keeps(S.WORKING, TaskEvent.ARTIFACT, TaskEvent.CLIENT_MESSAGE),
    },
    **{
        state: {
            **_EXECUTOR_MOVES,
            TaskEvent.RESUME: S.SUBMITTED,
            TaskEvent.CLIENT_MESSAGE: S.SUBMITTED,
            **_keeps(state, TaskEvent.ARTIFACT),
        }
        for state in INTERRUPTED_STATES
    },
    **{state: {} for state in TERMINAL_STATES},
}

#: state -> the states a status update may move it to (derived from the table).
TRANSITIONS: dict[TaskState, frozenset[TaskState]] = {
    state: frozenset(
        target for target, event in STATUS_EVENTS.items() if events.get(event) == target
    )
    for state, events in EVENT_TRANSITIONS.items()
}


# -- errors --
class TaskStateError(RuntimeError):
    """Something the task state machine does not allow."""


class InvalidTransitionError(TaskStateError):
    """An illegal state change (e.g. ``working -> submitted`` from the executor)."""

    def __init__(self, current: TaskState, target: TaskState | TaskEvent) -> None:
        self.current = current
        self.target = target
        what = target.value
        super().__init__(f"illegal task state transition: {current.value} cannot take {what}")


class TaskTerminalError(InvalidTransitionError):
    """Anything that would change a task in a terminal state (it has no exits)."""

    def __init__(self, current: TaskState, target: TaskState | TaskEvent) -> None:
        super().__init__(current, target)
        self.args = (
            f"illegal task state transition: the task is already {current.value}, a terminal state",
        )


class TaskAnsweredError(TaskStateError):
    """A verb after the executor answered with a direct message: that message was the whole
    answer (spec §3.1.1) and no task exists to change."""

    def __init__(self) -> None:
        super().__init__(
            "the executor already answered with a direct message; there is no task to change"
        )


# -- the rules --
def next_state(current: TaskState, event: TaskEvent) -> TaskState:
    """The state after ``event``; raises :class:`TaskTerminalError` or
    :class:`InvalidTransitionError` when the table has no such transition."""
    target = EVENT_TRANSITIONS[current].get(event)
    if target is None:
        if current in TERMINAL_STATES:
            raise TaskTerminalError(current, event)
        raise InvalidTransitionError(current, event)
    return target


def can_transition(current: TaskState, target: TaskState) -> bool:
    return target in TRANSITIONS[current]


def check_transition(current: TaskState, target: TaskState) -> None:
    """Raise unless a status update may move ``current`` to ``target``."""
    if target not in TRANSITIONS[current]:
        if current in TERMINAL_STATES:
            raise TaskTerminalError(current, target)
        raise InvalidTransitionError(current, target)


def check_artifact(current: TaskState) -> None:
    """Raise unless an artifact may be added in ``current`` (not after a terminal state)."""
    next_state(current, TaskEvent.ARTIFACT)


class FollowUp(str, Enum):
    """What a client message with a ``taskId`` does to that task (spec §3.1.1, §3.4.3)."""

    RESUME = "resume"  #: an interrupted task goes back to ``submitted``; the executor runs
    JOIN = "join"  #: the message joins a task still at work; the executor runs, state unchanged
    REFUSE = "refuse"  #: UnsupportedOperationError, nothing changes


def follow_up(current: TaskState) -> FollowUp:
    """The table's answer to a client message for a task in ``current``. Only one execution
    runs per task at a time, so the handler also refuses a message that arrives while an
    executor has not returned yet (that is not a state)."""
    target = EVENT_TRANSITIONS[current].get(TaskEvent.CLIENT_MESSAGE)
    if target is None:
        return FollowUp.REFUSE
    return FollowUp.JOIN if target == current else FollowUp.RESUME


#: The follow-up rule by state (derived from the table).
FOLLOW_UPS: dict[TaskState, FollowUp] = {state: follow_up(state) for state in EVENT_TRANSITIONS}


def is_open(current: TaskState) -> bool:
    """Is the task still the executor's to move (neither terminal nor waiting for the client)?
    The runner completes an open task when ``execute`` returns without detaching."""
    return current not in FINAL_STATES
