"""tfyarn: TensorFlow and PyTorch training jobs on Hadoop YARN."""

__version__ = "0.1.0"
