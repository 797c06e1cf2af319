"""Records behave as the dataclasses they replaced: the same repr, equality, hash,
immutability, `replace`, field list and pickles, so nothing a user sees (printed
errors, cached boards, `--json`) changes while the commands start faster."""

from __future__ import annotations

import dataclasses
import inspect
import pickle
from pathlib import Path
from typing import Any, ClassVar

import pytest

from kitty.adapters import snapshots
from kitty.adapters.config import Config
from kitty.adapters.layout import Project
from kitty.adapters.snapshots import LogState
from kitty.adapters.specs import SpecSet
from kitty.core.decide.context import Context
from kitty.core.decide.decision import Decision
from kitty.core.decide.steps import Queues
from kitty.core.log.events import Annotation, LogWarning, Other, ParsedLog, Transition
from kitty.core.log.read import ScannedLog
from kitty.core.log.records import Conflict, ReviewRecord, WPState
from kitty.core.log.state import Board
from kitty.core.model import WorkPackage
from kitty.core.move import IssueRow, MoveCheck, MoveRequest, Policy
from kitty.core.record import FrozenInstanceError, Record, fields, replace
from kitty.mission.workspace import Mission
from kitty.workflow.reviewcycle import ReviewDoc

#: Every class a move, `next` or `status` builds (they were dataclasses).
HOT = [
    Config,
    Project,
    LogState,
    SpecSet,
    Queues,
    Context,
    Decision,
    Annotation,
    LogWarning,
    Other,
    ParsedLog,
    Transition,
    ScannedLog,
    Conflict,
    ReviewRecord,
    WPState,
    Board,
    WorkPackage,
    IssueRow,
    MoveCheck,
    MoveRequest,
    Policy,
    Mission,
    ReviewDoc,
]
FROZEN = {Config, Project, Context, LogWarning, WorkPackage, IssueRow, MoveCheck, MoveRequest}
FROZEN |= {Policy}
#: field(compare=False) in the dataclasses.
UNCOMPARED = {
    Config: {"raw"},
    Context: {"changes"},
    WorkPackage: {"meta", "body", "key_lines"},
}


def _required(cls: type[Record]) -> dict[str, Any]:
    """A value for each parameter without a default: distinct strings (enough for ==,
    repr and hashing; no record checks its field types)."""
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    return {p.name: f"v-{p.name}" for p in params if p.default is inspect.Parameter.empty}


def _twin(cls: type[Record]) -> type:
    """The dataclass the record stands for: same name, fields, defaults, frozenness and
    compared fields."""
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    specs: list[Any] = []
    for p in params:
        compare = p.name not in UNCOMPARED.get(cls, set())
        if p.default is inspect.Parameter.empty:
            specs.append((p.name, Any, dataclasses.field(compare=compare)))
        else:
            specs.append((p.name, Any, dataclasses.field(default=p.default, compare=compare)))
    twin = dataclasses.make_dataclass(cls.__name__, specs, frozen=cls in FROZEN)
    twin.__qualname__ = cls.__qualname__
    return twin


def _values(record: Record) -> dict[str, Any]:
    return {name: getattr(record, name) for name in fields(record)}


@pytest.mark.parametrize("cls", HOT, ids=lambda c: c.__name__)
def test_each_record_matches_its_dataclass(cls: type[Record]) -> None:
    """Built with only the required values, a record has the dataclass's fields, in order,
    its repr text, equality and (for a frozen one) hash; a mutable one is unhashable."""
    params = list(inspect.signature(cls.__init__).parameters)[1:]
    assert params == list(fields(cls)), "__init__ takes the fields, in order"
    record = cls(**_required(cls))
    twin = _twin(cls)(**_values(record))
    assert repr(record) == repr(twin)
    assert record == cls(**_required(cls))
    assert not record != cls(**_required(cls))  # noqa: SIM202 (__ne__ too)
    assert (record == twin) is False and record != twin  # another class, as dataclasses
    first = fields(cls)[0]
    other = replace(record, **{first: "changed"})
    assert (record == other) is (first in UNCOMPARED.get(cls, set()))
    if cls in FROZEN:
        _same_hash(record, twin)
        with pytest.raises(FrozenInstanceError, match=f"cannot assign to field '{first}'"):
            setattr(record, first, "x")
        with pytest.raises(FrozenInstanceError, match=f"cannot delete field '{first}'"):
            delattr(record, first)
    else:
        with pytest.raises(TypeError, match="unhashable"):
            hash(record)
        setattr(record, first, "x")
        assert getattr(record, first) == "x"


def _same_hash(record: Record, twin: Any) -> None:
    """Equal hashes, or both unhashable (a frozen one holding a dict)."""
    try:
        expected = hash(twin)
    except TypeError:
        with pytest.raises(TypeError, match="unhashable"):
            hash(record)
    else:
        assert hash(record) == expected


@pytest.mark.parametrize("cls", HOT, ids=lambda c: c.__name__)
def test_a_record_pickles_back_to_an_equal_one(cls: type[Record], tmp_path: Path) -> None:
    """Through plain pickle and through the snapshot cache's own writer."""
    record = cls(**_required(cls))
    again = pickle.loads(pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL))
    assert type(again) is cls and repr(again) == repr(record)
    path = tmp_path / "snap.pickle"
    snapshots._write_pickle(path, [record, record])
    loaded = snapshots._read_pickle(path)
    assert repr(loaded) == repr([record, record])


def test_mutable_defaults_are_new_for_each_record() -> None:
    one, two = WPState("WP01"), WPState("WP02")
    one.subtasks["T001"] = "done"
    one.since_hold.add("e1")
    assert two.subtasks == {} and two.since_hold == set()
    assert Board().wps is not Board().wps
    assert WorkPackage("WP01", "t", (), (), (), "p", "s").meta == {}


def test_uncompared_fields_stay_out_of_equality_and_hash() -> None:
    wp = WorkPackage("WP01", "Cart", ("WP00",), ("T001",), (), "tasks/WP01.md", "WP01")
    edited = replace(wp, body="new text", meta={"x": 1}, key_lines={"title": 3})
    assert edited == wp and hash(edited) == hash(wp)
    assert edited.body == "new text" and wp.body == ""
    assert replace(wp, title="Other") != wp
    config = Config(max_cycles=2, raw={"review": {}})
    assert config == Config(max_cycles=2) and hash(config) == hash(Config(max_cycles=2))


def test_replace_copies_and_refuses_unknown_fields() -> None:
    state = WPState("WP01", lane="planned", notes=["a"])
    moved = replace(state, lane="claimed")
    assert moved is not state and moved.lane == "claimed" and state.lane == "planned"
    assert moved.notes is state.notes  # a shallow copy, as dataclasses.replace
    with pytest.raises(TypeError):
        replace(state, colour="red")
    request = MoveRequest("for_review", "claude", note="done")
    assert replace(request, note=None) == MoveRequest("for_review", "claude")


def test_a_slotted_record_has_no_instance_dict() -> None:
    event = Transition("e1", "WP01", "planned", "claimed", "2026-01-01", 1, {})
    with pytest.raises(AttributeError):
        event.colour = "red"  # type: ignore[attr-defined]
    with pytest.raises(FrozenInstanceError):
        LogWarning(1, "x").colour = "red"  # type: ignore[attr-defined]


def test_cached_properties_still_work_on_records(tmp_path: Path) -> None:
    project = Project(tmp_path, tmp_path / ".git", tmp_path)
    mission = Mission(project, "demo")
    mission.__dict__["meta"] = {"slug": "demo"}  # what panel and sprint do to the config
    assert mission.meta == {"slug": "demo"}
    ctx = Context("m", "claude", {}, Board(), {"WP01": "lane-a"})
    assert ctx.lane_holders == {} and "lane_holders" in ctx.__dict__


def test_a_class_of_its_own_gets_the_same_behaviour() -> None:
    """What any record gets: fields from its annotations (a ClassVar is not one),
    `__slots__` checked against them, uncompared fields named."""

    class Point(Record, frozen=True, uncompared=("label",)):
        __slots__ = ("label", "x", "y")
        x: int
        y: int
        label: str
        scale: ClassVar[int] = 10  # not a field

        def __init__(self, x: int, y: int, label: str = "") -> None:
            object.__setattr__(self, "x", x)
            object.__setattr__(self, "y", y)
            object.__setattr__(self, "label", label)

    assert fields(Point(1, 2)) == fields(Point) == ("x", "y", "label")
    assert repr(Point(1, 2, "a")).endswith(".<locals>.Point(x=1, y=2, label='a')")
    assert {Point(1, 2, "a"), Point(1, 2, "b")} == {Point(1, 2)}
    with pytest.raises(TypeError, match="__slots__"):

        class Wrong(Record):
            __slots__ = ("a",)
            b: int

    with pytest.raises(TypeError, match="uncompared"):

        class Unknown(Record, uncompared=("nope",)):
            a: int


def test_a_cached_board_reads_back_equal(tmp_path: Path) -> None:
    """The snapshot cache stores the fold's records positionally and reads them back."""
    board = Board()
    state = board.get("WP01")
    state.lane, state.subtasks = "claimed", {"T001": "done"}
    state.reviews.append(ReviewRecord("approved", "codex", "2026-01-01", None, None, "done", "e"))
    board.warnings.append(LogWarning(3, "bad line"))
    path = tmp_path / "board.pickle"
    snapshots._write_pickle(path, LogState(board, [LogWarning(1, "x")], True))
    loaded = snapshots._read_pickle(path)
    assert loaded == LogState(board, [LogWarning(1, "x")], True)


def test_one_compared_field_or_none_hash_as_a_dataclass_does() -> None:
    """A tuple of one value (or an empty tuple) is what a frozen dataclass hashes."""

    class Name(Record, frozen=True):
        __slots__ = ("text",)
        text: str

        def __init__(self, text: str) -> None:
            object.__setattr__(self, "text", text)

    class Note(Record, frozen=True, uncompared=("text",)):
        text: str

        def __init__(self, text: str) -> None:
            object.__setattr__(self, "text", text)

    assert hash(Name("a")) == hash(("a",)) and Name("a") == Name("a") != Name("b")
    assert repr(Name("a")).endswith("Name(text='a')")
    assert hash(Note("a")) == hash(()) and Note("a") == Note("b")


def test_a_new_record_class_is_mutable_unless_frozen_and_inherits_its_fields() -> None:
    """Classes made here, after import: a plain record takes assignments and has no
    hash, a frozen one refuses both with FrozenInstanceError, a subclass that adds no
    field keeps its base's, and two fields behave as two (repr, ==, hash, replace)."""

    class Pair(Record):
        __slots__ = ("a", "b")
        a: int
        b: int

        def __init__(self, a: int, b: int) -> None:
            self.a, self.b = a, b

    class Named(Pair):
        def total(self) -> int:
            return self.a + self.b

    class FrozenPair(Record, frozen=True):
        __slots__ = ("a", "b")
        a: int
        b: int

        def __init__(self, a: int, b: int) -> None:
            object.__setattr__(self, "a", a)
            object.__setattr__(self, "b", b)

    pair = Pair(1, 2)
    pair.a = 5
    assert pair == Pair(5, 2) != Pair(5, 3)
    with pytest.raises(TypeError, match="unhashable"):
        hash(pair)
    assert repr(pair).endswith("Pair(a=5, b=2)")
    assert replace(pair, b=7) == Pair(5, 7)
    assert fields(Named) == ("a", "b") and Named(1, 2).total() == 3
    assert repr(Named(1, 2)).endswith("Named(a=1, b=2)")
    frozen = FrozenPair(1, 2)
    assert hash(frozen) == hash((1, 2)) and replace(frozen, a=3) == FrozenPair(3, 2)
    with pytest.raises(FrozenInstanceError, match="cannot assign to field 'a'"):
        frozen.a = 3  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError, match="cannot delete field 'b'"):
        del frozen.b  # type: ignore[misc]
    assert frozen == FrozenPair(1, 2)
