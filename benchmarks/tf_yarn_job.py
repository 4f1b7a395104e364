"""One tf-yarn 0.7.0 job for benchmarks/startup.py (run by it, in a subprocess).

    python tf_yarn_job.py {tf|ddp} NAME PYENV_URI

Prints ``T0 <epoch>`` right before ``run_on_yarn`` (imports and the skein
driver start are not timed, as for the other cases), then blocks in
``run_on_yarn`` until the benchmark kills the application. The experiment
function records time.time() in the application's key-value store, under
``t/<skein container id>``, at the first moment the task has its cluster
configuration: TensorFlow: when tf-yarn calls it, TF_CONFIG already set;
PyTorch: when tf-yarn calls torch.distributed.init_process_group, with
MASTER_ADDR/MASTER_PORT, rank and world size decided (tf-yarn calls the
experiment function before its rendezvous, and hard-codes nccl there,
which needs a GPU). Either way no user training code would have run yet.
"""
from __future__ import annotations

import sys
import time

MEMORY = 512  # MiB, as the other cases


def record_and_wait() -> None:
    t = time.time()
    import os

    import skein

    skein.ApplicationClient.from_current().kv["t/" + os.environ["SKEIN_CONTAINER_ID"]] = repr(t).encode()
    time.sleep(3600)


def tf_experiment():  # type: ignore[no-untyped-def]
    record_and_wait()


def ddp_experiment():  # type: ignore[no-untyped-def]
    import torch
    import torch.distributed
    from tf_yarn.pytorch import DataLoaderArgs, PytorchExperiment

    torch.distributed.init_process_group = lambda *a, **k: record_and_wait()
    return PytorchExperiment(model=torch.nn.Linear(1, 1), main_fn=lambda *a: None,
                             train_dataset=torch.utils.data.TensorDataset(torch.zeros(4, 1)),
                             dataloader_args=DataLoaderArgs(batch_size=1))


def main() -> int:
    case, name, pyenv, pythonpath = sys.argv[1:5]
    import skein
    from tf_yarn import TaskSpec

    client = skein.Client()
    common = dict(pyenv_zip_path=pyenv, skein_client=client, name=name, env={"PYTHONPATH": pythonpath})
    if case == "tf":
        from tf_yarn.tensorflow import run_on_yarn

        specs = {"chief": TaskSpec(memory=MEMORY, vcores=1, instances=1),
                 "worker": TaskSpec(memory=MEMORY, vcores=1, instances=2),
                 "ps": TaskSpec(memory=MEMORY, vcores=1, instances=1)}
        fn = tf_experiment
    else:
        from tf_yarn.pytorch import run_on_yarn  # type: ignore[no-redef]

        specs = {"worker": TaskSpec(memory=MEMORY, vcores=1, instances=2)}
        fn = ddp_experiment
    print(f"T0 {time.time()!r}", flush=True)
    run_on_yarn(fn, specs, **common)
    return 0


if __name__ == "__main__":
    sys.exit(main())
