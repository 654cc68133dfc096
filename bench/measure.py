#!/usr/bin/env python3
# Runs one command and prints, on its last line of stderr, what it cost as the kernel counted it: wall time from
# fork to exit, CPU time (user + system, every thread) and peak RSS, from wait4's rusage of that child alone.
# The start-up pairs (coldStart.js) time processes of 60 to 400 ms: a reporter loaded into them
# (`node --import report-rss.mjs`) added its own start (~16 ms on Node 20) to both sides of every pair, which pulls
# every ratio toward 1. Here nothing is added to the process measured; this script's own start is outside the count.
import os
import sys
import time

argv = sys.argv[1:]
start = time.perf_counter_ns()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(argv[0], argv)
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
wall_us = (time.perf_counter_ns() - start) // 1000
cpu_us = int((usage.ru_utime + usage.ru_stime) * 1e6)
sys.stderr.write(f"\nmaxrss_kib={usage.ru_maxrss} cpu_us={cpu_us} wall_us={wall_us}\n")
sys.exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)
