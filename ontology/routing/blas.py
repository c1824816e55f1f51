"""Fit small models with one BLAS thread.

numpy and scipy each ship their own OpenBLAS, threaded by default over every core. The
optimizer's vector operations are small; on this project's 2-core machines, busy with web
workers or other processes, OpenBLAS threads then spin waiting for a core and a model fit
costs 5-10× its CPU time (the chunk-class fit: 10 s instead of ~1 s). Fitting holds them at
one thread and restores them after. Where the libraries can't be found (another build),
this does nothing.
"""

from __future__ import annotations

import ctypes
import glob
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache

import numpy
import scipy

_SYMBOLS = ("scipy_openblas_{}_num_threads64_", "scipy_openblas_{}_num_threads", "openblas_{}_num_threads")
_lock = threading.Lock()


@lru_cache(maxsize=1)
def _controls() -> tuple[tuple[object, object], ...]:
    """(get, set) of each OpenBLAS bundled with numpy and scipy."""
    out = []
    for package in (numpy, scipy):
        libs_dir = os.path.join(os.path.dirname(os.path.dirname(package.__file__)), f"{package.__name__}.libs")
        for path in sorted(glob.glob(os.path.join(libs_dir, "*openblas*.so*"))):
            try:
                lib = ctypes.CDLL(path)
            except OSError:
                continue
            for template in _SYMBOLS:
                getter, setter = template.format("get"), template.format("set")
                if hasattr(lib, getter) and hasattr(lib, setter):
                    out.append((getattr(lib, getter), getattr(lib, setter)))
                    break
    return tuple(out)


@contextmanager
def single_blas_thread() -> Iterator[None]:
    with _lock:
        controls = _controls()
        before = [get() for get, _ in controls]
        for _, set_threads in controls:
            set_threads(1)
        try:
            yield
        finally:
            for (_, set_threads), n in zip(controls, before):
                set_threads(n)
