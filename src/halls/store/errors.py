"""Driver errors stop at the store: a class decorator every backend applies.

``translating(is_error, translate)`` wraps each public method (inherited
ones and generators too) so that an exception ``is_error`` accepts leaves as the ``HallsError``
``translate`` makes of it: a duplicate id is ``AlreadyExists``, anything
else ``StoreUnavailable``, and nothing above the store learns which driver
is underneath.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from halls.errors import HallsError

T = TypeVar("T")


def translating(
    is_error: Callable[[BaseException], bool], translate: Callable[[Any], HallsError]
) -> Callable[[type[T]], type[T]]:
    # A predicate, not a tuple of classes: SQLCipher's exception classes exist
    # only once its module is loaded (an encrypted store), sqlite3's always.
    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        if inspect.isgeneratorfunction(fn):

            @functools.wraps(fn)
            def gen(*args: Any, **kwargs: Any) -> Any:
                try:
                    yield from fn(*args, **kwargs)
                except Exception as err:
                    if not is_error(err):
                        raise
                    raise translate(err) from err

            return gen

        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except Exception as err:
                if not is_error(err):
                    raise
                raise translate(err) from err

        return call

    def decorate(cls: type[T]) -> type[T]:
        # Inherited methods too (a ComposedStore's), each wrapped once, on cls.
        names = {
            name
            for klass in cls.__mro__[:-1]
            for name, member in vars(klass).items()
            if not name.startswith("_") and inspect.isfunction(member)
        }
        for name in names:
            setattr(cls, name, wrap(inspect.getattr_static(cls, name)))
        return cls

    return decorate
