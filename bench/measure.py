#!/usr/bin/env python3
# Runs one command and prints, on its last line of stderr, what it cost as the kernel counted it: wall time from
# fork to exit, CPU time (user + system, every thread) and peak RSS, from wait4's rusage of that child alone.
# Every bench that times a process uses it (bench/measured.js). The start-up pairs (coldStart.js) time processes of
# 60 to 400 ms: the reporter the benches loaded into them before (`node --import`, printing its rusage at exit) added
# its own start (~16 ms on Node 20) to both sides of every pair, which pulls every ratio toward 1. Here nothing is
# added to the process measured; this script's own start is outside the count, wall time included.
import os
import signal
import sys
import time

argv = sys.argv[1:]
# Signals wait until this process has its handlers: none may end it between the fork and them, leaving the command.
HANDLED = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
signal.pthread_sigmask(signal.SIG_BLOCK, HANDLED)
start = time.perf_counter_ns()
pid = os.fork()
if pid == 0:
    try:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, HANDLED)
        os.execvp(argv[0], argv)
    finally:
        os._exit(127)
# A bench that stops what it measures (a queue worker) sends SIGTERM here: the command gets it. Ctrl-C and a closed
# terminal reach the command themselves (one process group): passed on too, it would get them twice (a second Ctrl-C
# stops lllm at once).
signal.signal(signal.SIGTERM, lambda number, _frame: os.kill(pid, number))
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGHUP, signal.SIG_IGN)
signal.pthread_sigmask(signal.SIG_UNBLOCK, HANDLED)
_, status, usage = os.wait4(pid, 0)
wall_us = (time.perf_counter_ns() - start) // 1000
cpu_us = int((usage.ru_utime + usage.ru_stime) * 1e6)
sys.stderr.write(f"\nmaxrss_kib={usage.ru_maxrss} cpu_us={cpu_us} wall_us={wall_us}\n")
# The command's own exit code, or 128 + the signal that ended it, as a shell reports it.
sys.exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))
