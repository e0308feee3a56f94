"""Access types of dataset methods ("Authorization, Lineage and Usage Tracking on Dataset
Operations" of the *Datasets 3.5.0* design): decorators that declare what a method does to its dataset, a call stack
that enforces the nesting rules, and the record of each access in the open run's lineage.

    @lineage_dataset
    class Purchases:
        def __init__(self, name): self.dataset_name = name    # constructor: no_access
        @read_only
        def scan(self): ...                                    # a read of "purchases"
        @write_only
        def append(self, rows): ...                            # a write
        def compact(self): ...                                 # unannotated: read_write at top level

    with RunContext("default", "App", "spark", "Job") as run:
        Purchases("purchases").scan()                          # lineage records read of purchases

Rules (the *Datasets 3.5.0* design): a call nested in another must be the same access or a subset of its caller's
(no_access is a subset of all; read_only and write_only are subsets of read_write), otherwise
it raises AccessTypeError; an unannotated method is read_write at top level and its caller's
type when nested; a constructor is no_access unless annotated.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from contextvars import ContextVar
from enum import Enum
from typing import Any, Protocol, TypeVar, cast

from lineage.errors import AccessTypeError

F = TypeVar("F", bound=Callable[..., Any])
C = TypeVar("C", bound=type)


class AccessType(Enum):
    NO_ACCESS = "no_access"
    READ = "read"
    WRITE = "write"
    READ_WRITE = "read_write"

    def within(self, caller: AccessType) -> bool:
        """Whether a call of this type may be nested in a call of ``caller``'s type."""
        return self is caller or self is AccessType.NO_ACCESS or caller is AccessType.READ_WRITE


class AccessRecorder(Protocol):
    def record_dataset_call(self, dataset: str, access: str, dataset_type: str = "dataset") -> None: ...


_stack: ContextVar[tuple[AccessType, ...]] = ContextVar("lineage_access_stack", default=())
current_run: ContextVar[AccessRecorder | None] = ContextVar("lineage_current_run", default=None)
_DECLARED = "__lineage_access_type__"


def _declare(access: AccessType) -> Callable[[F], F]:
    def mark(method: F) -> F:
        setattr(method, _DECLARED, access)
        return method
    return mark


read_only = _declare(AccessType.READ)
write_only = _declare(AccessType.WRITE)
read_write = _declare(AccessType.READ_WRITE)
no_access = _declare(AccessType.NO_ACCESS)


def enter(declared: AccessType | None, *, constructor: bool = False) -> AccessType:
    """The type a call runs with, given its declared one (None: unannotated); raises when it
    breaks the nesting rule. Pure: the caller pushes the result."""
    stack = _stack.get()
    if not stack:
        return declared or (AccessType.NO_ACCESS if constructor else AccessType.READ_WRITE)
    caller = stack[-1]
    effective = declared or caller
    if not effective.within(caller):
        raise AccessTypeError(f"a {effective.value} call inside a {caller.value} call: a nested dataset call must "
                              "be the same access or a subset of its caller's")
    return effective


def _wrap(method: F, *, constructor: bool) -> F:
    declared: AccessType | None = getattr(method, _DECLARED, None)

    @functools.wraps(method)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        effective = enter(declared, constructor=constructor)
        outermost = not _stack.get()
        token = _stack.set((*_stack.get(), effective))
        try:
            if outermost and not constructor and effective is not AccessType.NO_ACCESS:
                run = current_run.get()
                name = getattr(self, "dataset_name", None)
                if run is not None and name:
                    run.record_dataset_call(name, effective.value, getattr(self, "dataset_type", "dataset"))
            return method(self, *args, **kwargs)
        finally:
            _stack.reset(token)

    return cast(F, call)


def lineage_dataset(cls: C) -> C:
    """Make every public method of ``cls`` (and its constructor) follow the access rules and
    record its access in the open run (the instance's ``dataset_name``, ``dataset_type``)."""
    for name, member in list(vars(cls).items()):
        if name == "__init__" and inspect.isfunction(member):
            setattr(cls, name, _wrap(member, constructor=True))
        elif not name.startswith("_") and inspect.isfunction(member):
            setattr(cls, name, _wrap(member, constructor=False))
    return cls
