"""Lets criteo's tf-yarn 0.7.0 import on TensorFlow >= 2.16, for benchmarks/startup.py only.

tf-yarn's ``Experiment`` class annotates its fields with ``tf.estimator``
types, and subclasses its hooks, when its modules are imported; TF 2.16
removed ``tf.estimator``. This adds a stand-in ``tf.estimator`` right after
TensorFlow is imported, whose every attribute is an empty class. Nothing on the path the benchmark measures calls it:
the experiment function it ships records its start time and waits.
It is on PYTHONPATH only for the tf-yarn case (its client and containers).
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import types


class _Placeholders(types.ModuleType):
    """Any public attribute is an empty class (made once), enough for annotations and subclassing."""

    def __getattr__(self, name: str) -> type:
        if name.startswith("__"):
            raise AttributeError(name)
        cls = type(name, (), {})
        setattr(self, name, cls)
        return cls


class _AddEstimator(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):  # type: ignore[no-untyped-def]
        if name != "tensorflow":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        load = spec.loader.exec_module

        def exec_module(module: types.ModuleType) -> None:
            load(module)
            if "estimator" not in vars(module):
                module.estimator = _Placeholders("tensorflow.estimator")  # type: ignore[attr-defined]

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


sys.meta_path.insert(0, _AddEstimator())
