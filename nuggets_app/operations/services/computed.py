"""Results computed once per input and kept: any computation, keyed by its inputs.

A function decorated with :func:`computed` takes plain keyword values (ids, source
keys, numbers: what JSON carries) and a ``progress(done, total)`` callback, and returns
any picklable value. The decorator gives it:

- ``.get(**params)``: the kept result when there is one for exactly these values and
  these input versions; otherwise it starts the computation as a Celery task
  (``computed_run``, in-process when ``REDIS_URL`` is unset) and answers with its
  progress. The caller shows the result, or the progress, or the error;
- ``.peek(**params)``: the kept result or the progress, without starting anything
  (a page that computes only when the user asks);
- ``__call__(**params)``: the computation itself, nothing kept (commands, tests).

``versions(**params)``, given to the decorator, returns the *input versions*: small
stamps of the data the computation reads (``selectors_eval.*_version``: counts, last
ids, last-change times, a job's status and lambda). They are part of the key, so when
qrels, runs, judgments or a job change, the next request computes afresh and a stale
result is never served: nothing is invalidated by a timer. Results live in the Django
cache (Redis when configured, shared by every web and worker process); entries unused
for ``COMPUTED_KEEP_SECONDS`` are dropped to bound its size.

A computation that raises ``ValueError`` (bad input: a missing source, bad measure) is
kept as failed with its message, since the same inputs fail the same way; any other
exception is not kept, so the next request tries again.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from typing import Any, Generic, ParamSpec, TypeVar

from django.conf import settings
from django.core.cache import cache

from nuggets_app.errors import DomainError
from nuggets_app.operations import queue

# Bumped when the shape of kept results changes, so none of an older shape is read
# (v2: the dashboard keeps its figures as chart geometry).
KEY_PREFIX = "computed:v2:"
# Progress is written at most this often (seconds), and a running computation whose
# progress has not moved for COMPUTED_STALE_SECONDS is taken for dead and restarted.
PROGRESS_EVERY = 0.5
Progress = Callable[[int, int], None]
P = ParamSpec("P")
T = TypeVar("T")


class ComputationFailed(DomainError):
    """A kept computation ended with a domain error; the message is that error's."""


@dataclass(frozen=True)
class Outcome:
    """What :meth:`Computation.get` found: a kept result, progress or an error."""

    status: str  # "done", "running" (queued or computing), "failed"
    value: Any = None
    done: int = 0
    total: int = 0
    error: str = ""
    key: str = ""

    @property
    def ready(self) -> bool:
        return self.status == "done"

    def as_dict(self) -> dict[str, Any]:
        """Status and progress as JSON (for the pages' progress polling)."""
        return {
            "status": self.status,
            "done": self.done,
            "total": self.total,
            "error": self.error,
        }


class Computation(Generic[T]):
    """A function whose results are kept per input (module docstring)."""

    def __init__(self, fn: Callable[..., T], versions: Callable[..., list]) -> None:
        self.fn = fn
        self.versions = versions
        self.name = f"{fn.__module__}:{fn.__qualname__}"
        self.__doc__ = fn.__doc__

    def __call__(self, *, progress: Progress | None = None, **params: Any) -> T:
        return self.fn(progress=progress or _no_progress, **params)

    def key(self, **params: Any) -> str:
        """The cache key of these parameters with the current input versions."""
        material = json.dumps(
            [self.name, params, self.versions(**params)], sort_keys=True, default=str
        )
        return KEY_PREFIX + hashlib.sha256(material.encode("utf-8")).hexdigest()

    def peek(self, **params: Any) -> Outcome | None:
        """The kept result or the progress of a computation already started, None
        when nothing was asked for these inputs yet (nothing is started)."""
        key = self.key(**params)
        state = cache.get(key)
        if state is None or _stale(state):
            return None
        return _outcome(state, key)

    def get(self, **params: Any) -> Outcome:
        """The kept result, or the progress of the computation this call started."""
        key = self.key(**params)
        state = cache.get(key)
        if state is None or _stale(state):
            if state is None:
                started = cache.add(key, _running(0, 0), _keep_seconds())
            else:
                cache.set(key, _running(0, 0), _keep_seconds())
                started = True
            if started:
                queue.task_enqueue(
                    queue.COMPUTED_RUN, name=self.name, params=params, key=key
                )
            state = cache.get(key) or _running(0, 0)
        return _outcome(state, key)


# Every computation by name, registered when its module is imported. The product's
# computations are imported by nuggets_app.tasks (an import the contracts see), so a
# worker has them from its start.
COMPUTATIONS: dict[str, Computation[Any]] = {}


def computed(
    *, versions: Callable[..., list]
) -> Callable[[Callable[..., T]], Computation[T]]:
    """Decorator: keep the function's results per parameters and input ``versions``."""

    def wrap(fn: Callable[..., T]) -> Computation[T]:
        computation = Computation(fn, versions)
        COMPUTATIONS[computation.name] = computation
        return computation

    return wrap


def computed_run(*, name: str, params: dict[str, Any], key: str) -> dict[str, Any]:
    """Run the computation ``name`` (``module:function``) and keep its outcome at
    ``key`` (the Celery task's body)."""
    computation = COMPUTATIONS.get(name)
    if computation is None:
        # A computation outside the modules nuggets_app.tasks imports (a test's):
        # importing its module registers it.
        module, _, attribute = name.partition(":")
        found = getattr(import_module(module), attribute, None)
        if not isinstance(found, Computation):
            raise LookupError(f"{name} is not a kept computation")
        computation = found
    last = [0.0]

    def progress(done: int, total: int) -> None:
        now = time.monotonic()
        if now - last[0] >= PROGRESS_EVERY or done == total:
            last[0] = now
            cache.set(key, _running(done, total), _keep_seconds())

    try:
        value = computation.fn(progress=progress, **params)
    except DomainError as error:
        cache.set(key, {"status": "failed", "error": str(error)}, _keep_seconds())
        return {"status": "failed"}
    except BaseException:
        cache.delete(key)
        raise
    cache.set(key, {"status": "done", "value": value}, _keep_seconds())
    return {"status": "done"}


def kept_key(name: str, versions: list) -> str:
    """A key for :func:`kept` from a name and the input versions of the value."""
    material = json.dumps([name, versions], sort_keys=True, default=str)
    return KEY_PREFIX + "kept:" + hashlib.sha256(material.encode("utf-8")).hexdigest()


def kept(key: str, compute: Callable[[], T]) -> T:
    """A value derived from a kept result (a CSV text, a rendered plot), computed once
    under ``key`` (derive it from the result's key)."""
    value = cache.get(key)
    if value is None:
        value = compute()
        cache.set(key, value, _keep_seconds())
    return value


def _no_progress(done: int, total: int) -> None:
    return None


def _running(done: int, total: int) -> dict[str, Any]:
    return {"status": "running", "done": done, "total": total, "at": time.time()}


def _stale(state: dict[str, Any]) -> bool:
    limit = settings.COMPUTED_STALE_SECONDS
    return state.get("status") == "running" and time.time() - state["at"] > limit


def _keep_seconds() -> int:
    return settings.COMPUTED_KEEP_SECONDS


def _outcome(state: dict[str, Any], key: str) -> Outcome:
    return Outcome(
        status=state["status"],
        value=state.get("value"),
        done=state.get("done", 0),
        total=state.get("total", 0),
        error=state.get("error", ""),
        key=key,
    )
