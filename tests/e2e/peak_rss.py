#!/usr/bin/env python3
"""peak_rss.py REPORT CMD...: run CMD, and write to REPORT its peak RSS.

Every 20 ms it reads VmHWM (the kernel's high-water mark of resident
memory) of CMD's process and VmHWM of each of its descendants (for
dcrawl crawl: the embedded redis-server), so the two are reported apart:

  dcrawl_kb N
  children_kb M     (the largest descendant seen; 0 if none)

VmHWM only grows, so the last reading before the process exits is its
peak except for growth within the last 20 ms. Exits with CMD's status.
"""
import os
import subprocess
import sys
import time


def hwm(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def children(pid):
    out = []
    try:
        for t in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/children" % (pid, t)) as f:
                out += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return out


report = sys.argv[1]
p = subprocess.Popen(sys.argv[2:])
peak = child = 0
while p.poll() is None:
    peak = max(peak, hwm(p.pid))
    todo = children(p.pid)
    while todo:
        c = todo.pop()
        child = max(child, hwm(c))
        todo += children(c)
    time.sleep(0.02)
with open(report, "w") as f:
    f.write("dcrawl_kb %d\nchildren_kb %d\n" % (peak, child))
sys.exit(p.returncode)
