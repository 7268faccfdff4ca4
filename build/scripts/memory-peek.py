#!/usr/bin/env python3
"""What an agent of the same user tries on another process's memory.

For each pid: read 16 bytes of its first writable mapping through
/proc/<pid>/mem, and attach to it with ptrace (then detach). Prints one
line per pid: "PID read|ERRNO attached|ERRNO". Run it as the user whose
processes these are, without capabilities (window-test.sh does).

usage: memory-peek.py PID...
"""

import ctypes
import errno
import os
import sys

PTRACE_ATTACH, PTRACE_DETACH, WALL = 16, 17, 0x40000000


def peek(pid):
    try:
        with open(f"/proc/{pid}/maps") as m:
            lo = next(int(line.split("-")[0], 16) for line in m if line.split()[1].startswith("rw"))
        with open(f"/proc/{pid}/mem", "rb") as f:
            f.seek(lo)
            f.read(16)
        mem = "read"
    except OSError as e:
        mem = errno.errorcode.get(e.errno, str(e.errno))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.ptrace(PTRACE_ATTACH, pid, 0, 0) == 0:
        os.waitpid(pid, WALL)
        libc.ptrace(PTRACE_DETACH, pid, 0, 0)
        trace = "attached"
    else:
        trace = errno.errorcode.get(ctypes.get_errno(), "?")
    return mem, trace


for arg in sys.argv[1:]:
    print(arg, *peek(int(arg)), flush=True)
