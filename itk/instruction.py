"""The ITK's ``itk.Instruction`` (protos/instruction.proto) in proto3 wire format, by hand.

Six small messages do not need generated code, and hand-written code cannot clash with the
protobuf runtime the kit's environment brings (generated code refuses an older runtime). A
nested ``CallAgent.instruction`` is kept as its bytes and forwarded verbatim, so empty
behaviours (``send_message``/``resubscribe``: present, no fields) survive every hop.
"""

from __future__ import annotations

from dataclasses import dataclass

_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5


class DecodeError(ValueError):
    """Not an ``itk.Instruction`` in proto3 wire format."""


@dataclass
class ReturnResponse:
    response: str = ""
    hold_task: bool = False


@dataclass
class CallAgent:
    transport: str = ""
    agent_card_uri: str = ""
    #: the nested Instruction as it arrived (forwarded verbatim)
    instruction: bytes = b""
    streaming: bool = False
    #: which oneof ``behavior`` is set: "send_message", "push_notification", "resubscribe" or ""
    behavior: str = ""
    push_url: str = ""


@dataclass
class Instruction:
    call_agent: CallAgent | None = None
    return_response: ReturnResponse | None = None
    steps: list[Instruction] | None = None  # SeriesOfSteps.instructions (CONCAT either way)

    @property
    def has_step(self) -> bool:
        return (self.call_agent or self.return_response or self.steps) is not None

    def holds(self) -> bool:
        """``hold_task`` on this ReturnResponse or one nested through ``steps`` (not inside a
        ``call_agent``: that one holds the callee's task)."""
        if self.return_response is not None:
            return self.return_response.hold_task
        return any(step.holds() for step in self.steps or [])


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise DecodeError("truncated varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7


def _fields(data: bytes) -> list[tuple[int, int | bytes]]:
    """(field number, value) pairs: ints for varints, bytes for length-delimited; others skipped."""
    out: list[tuple[int, int | bytes]] = []
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise DecodeError("field number 0")
        if wire == _VARINT:
            value, pos = _varint(data, pos)
            out.append((number, value))
        elif wire == _LEN:
            size, pos = _varint(data, pos)
            if pos + size > len(data):
                raise DecodeError("truncated field")
            out.append((number, data[pos : pos + size]))
            pos += size
        elif wire in (_I64, _I32):
            pos += 8 if wire == _I64 else 4
            if pos > len(data):
                raise DecodeError("truncated field")
        else:
            raise DecodeError(f"wire type {wire}")
    return out


def _text(value: int | bytes) -> str:
    if not isinstance(value, bytes):
        raise DecodeError("expected a string")
    try:
        return value.decode()
    except UnicodeDecodeError as exc:
        raise DecodeError("invalid UTF-8 in a string") from exc


def _msg(value: int | bytes) -> bytes:
    if not isinstance(value, bytes):
        raise DecodeError("expected a message")
    return value


def _return_response(data: bytes) -> ReturnResponse:
    out = ReturnResponse()
    for number, value in _fields(data):
        if number == 1:
            out.response = _text(value)
        elif number == 2:
            out.hold_task = bool(value)
    return out


def _call_agent(data: bytes) -> CallAgent:
    out = CallAgent()
    for number, value in _fields(data):
        if number == 1:
            out.transport = _text(value)
        elif number == 2:
            out.agent_card_uri = _text(value)
        elif number == 3:
            out.instruction = _msg(value)
        elif number == 4:
            out.streaming = bool(value)
        elif number in (5, 6, 7):
            out.behavior = ("send_message", "push_notification", "resubscribe")[number - 5]
            out.push_url = ""
            if number == 6:
                out.push_url = next((_text(v) for n, v in _fields(_msg(value)) if n == 1), "")
    return out


def decode(data: bytes) -> Instruction:
    """Parse an ``itk.Instruction``; raises :class:`DecodeError`."""
    out = Instruction()
    for number, value in _fields(data):
        if number in (1, 2, 3):  # oneof step: the last one on the wire wins
            out = Instruction()
        if number == 1:
            out.call_agent = _call_agent(_msg(value))
        elif number == 2:
            out.return_response = _return_response(_msg(value))
        elif number == 3:
            out.steps = [
                decode(_msg(v)) for n, v in _fields(_msg(value)) if n == 1
            ]  # response_generator (2): CONCAT is the only generator
    return out


def _put_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _len_field(number: int, payload: bytes) -> bytes:
    return _put_varint(number << 3 | _LEN) + _put_varint(len(payload)) + payload


def _str_field(number: int, value: str) -> bytes:
    return _len_field(number, value.encode()) if value else b""


def _bool_field(number: int, value: bool) -> bytes:
    return _put_varint(number << 3 | _VARINT) + b"\x01" if value else b""


def encode(instruction: Instruction) -> bytes:
    """Serialize an ``itk.Instruction`` (the kit's runner does this; tests and tools here too)."""
    if instruction.return_response is not None:
        rr = instruction.return_response
        return _len_field(2, _str_field(1, rr.response) + _bool_field(2, rr.hold_task))
    if instruction.steps is not None:
        body = b"".join(_len_field(1, encode(step)) for step in instruction.steps)
        return _len_field(3, body + _put_varint(2 << 3 | _VARINT) + b"\x01")  # CONCAT
    if instruction.call_agent is not None:
        ca = instruction.call_agent
        body = _str_field(1, ca.transport) + _str_field(2, ca.agent_card_uri)
        body += _len_field(3, ca.instruction) + _bool_field(4, ca.streaming)
        if ca.behavior:
            number = ("send_message", "push_notification", "resubscribe").index(ca.behavior) + 5
            body += _len_field(number, _str_field(1, ca.push_url) if number == 6 else b"")
        return _len_field(1, body)
    return b""


def respond(text: str, *, hold: bool = False) -> Instruction:
    return Instruction(return_response=ReturnResponse(text, hold))


def series(*steps: Instruction) -> Instruction:
    return Instruction(steps=list(steps))


def call(
    transport: str,
    uri: str,
    inner: Instruction,
    *,
    streaming: bool = False,
    behavior: str = "send_message",
    push_url: str = "",
) -> Instruction:
    return Instruction(
        call_agent=CallAgent(transport, uri, encode(inner), streaming, behavior, push_url)
    )


__all__ = [
    "CallAgent",
    "DecodeError",
    "Instruction",
    "ReturnResponse",
    "call",
    "decode",
    "encode",
    "respond",
    "series",
]
