"""Lets criteo's tf-yarn 0.7.0 import on TensorFlow >= 2.16, for benchmarks/startup.py only.

tf-yarn's ``Experiment`` class annotates its fields with ``tf.estimator``
types, evaluated when the module is imported; TF 2.16 removed
``tf.estimator``. This adds an empty ``tf.estimator`` namespace right after
TensorFlow is imported. Nothing on the path the benchmark measures calls it:
the experiment function it ships records its start time and waits.
It is on PYTHONPATH only for the tf-yarn case (its client and containers).
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import types


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
                module.estimator = types.SimpleNamespace(  # type: ignore[attr-defined]
                    Estimator=object, TrainSpec=object, EvalSpec=object, RunConfig=object)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


sys.meta_path.insert(0, _AddEstimator())
