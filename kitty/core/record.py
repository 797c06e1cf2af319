"""Plain records: what a dataclass gives (`==`, `repr`, the hash and immutability of a
frozen one, `replace`, `fields`, pickling) without importing `dataclasses`, which
brings `inspect`, `ast`, `dis` and `tokenize`, nor generating code when a class is
made. The classes every command reads and writes (the log's events, the fold's
records, WPs, moves) are records, so `kitty next`, `status` and a move start faster.

A record lists its fields as annotations, in order: what `repr` shows, `==` compares
and `replace` copies. It writes its `__init__` by hand (a frozen one through
`object.__setattr__`); a slotted one names exactly its fields in `__slots__` (sorted:
the annotations give the order).
Class keywords: `frozen=True` (assigning or deleting an attribute raises
`FrozenInstanceError`, and the record hashes by its compared fields, as
`@dataclass(frozen=True)`), `uncompared=(names)` (fields left out of `==` and the
hash: `field(compare=False)`). A mutable record is unhashable, as a dataclass is.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import Any, ClassVar, TypeVar

R = TypeVar("R", bound="Record")
Getter = Callable[[Any], tuple[Any, ...]]


class FrozenInstanceError(AttributeError):
    """An assignment to a frozen record (dataclasses.FrozenInstanceError's role)."""


def _getter(names: tuple[str, ...]) -> Getter:
    """obj -> the tuple of its `names` values (attrgetter returns a bare value for one)."""
    if len(names) > 1:
        return attrgetter(*names)
    get = attrgetter(*names) if names else None
    return lambda obj: (get(obj),) if get is not None else ()


def _frozen_setattr(self: Record, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Record, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _hash(self: Record) -> int:
    return hash(self.__class__._compared(self))


class Record:
    __slots__ = ()
    #: The fields, in order (from the annotations of the class and its record bases).
    _fields: ClassVar[tuple[str, ...]] = ()
    #: obj -> its fields' values; obj -> the values `==` and the hash compare.
    _values: ClassVar[Getter]
    _compared: ClassVar[Getter]

    def __init_subclass__(cls, *, frozen: bool = False, uncompared: tuple[str, ...] = ()) -> None:
        super().__init_subclass__()
        # Not inspect.get_annotations: importing inspect is what records avoid.
        notes: dict[str, Any] = cls.__dict__.get("__annotations__", {})  # noqa: RUF063
        own = tuple(name for name, note in notes.items() if not str(note).startswith("ClassVar"))
        slots = cls.__dict__.get("__slots__")
        if slots is not None and set(slots) != set(own):
            raise TypeError(f"{cls.__qualname__}.__slots__ must name its fields")
        names = (*cls._fields, *own)
        if not set(uncompared) <= set(names):
            raise TypeError(f"{cls.__qualname__}: uncompared names no field")
        cls._fields = names
        cls._values = staticmethod(_getter(names))
        compared = tuple(name for name in names if name not in uncompared)
        cls._compared = staticmethod(_getter(compared))
        if frozen:
            cls.__setattr__ = _frozen_setattr  # type: ignore[method-assign,assignment]
            cls.__delattr__ = _frozen_delattr  # type: ignore[method-assign,assignment]
            cls.__hash__ = _hash  # type: ignore[method-assign,assignment]

    def __eq__(self, other: object) -> bool:
        cls = self.__class__
        if other.__class__ is cls:
            return cls._compared(self) == cls._compared(other)
        return NotImplemented

    def __repr__(self) -> str:
        pairs = zip(self._fields, self.__class__._values(self), strict=True)
        return f"{self.__class__.__qualname__}({', '.join(f'{n}={v!r}' for n, v in pairs)})"

    def __reduce__(self) -> tuple[type[Record], tuple[Any, ...]]:
        """Pickled as `cls(*values)` (a frozen record cannot be filled in afterwards)."""
        return self.__class__, self.__class__._values(self)


def fields(record: Record | type[Record]) -> tuple[str, ...]:
    """The names of a record's fields, in order (`dataclasses.fields`, names only)."""
    return record._fields


def replace(record: R, /, **changes: Any) -> R:
    """A copy of `record` with `changes` (`dataclasses.replace`): a new object, built by
    its `__init__`; an unknown field name raises TypeError."""
    values = dict(zip(record._fields, record.__class__._values(record), strict=True))
    values.update(changes)
    return record.__class__(**values)
