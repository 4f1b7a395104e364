"""The smallest tfyarn job: every task says who and where it is.

    tfyarn submit --num-workers 2 --file examples/hello.py --wait -- python hello.py
"""
import os
import socket
import sys

role = os.environ.get("TFYARN_ROLE", "?")
index = os.environ.get("TFYARN_TASK_INDEX", "?")
count = os.environ.get("TFYARN_NUM_TASKS", "?")
print(f"hello from {role} {index} of {count} on {socket.gethostname()} (python {sys.version.split()[0]})")
