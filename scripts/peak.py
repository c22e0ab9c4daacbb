#!/usr/bin/env python3
"""Runs a command; prints wall time, peak VmHWM and peak RssAnon (sampled every 20 ms from /proc/PID/status).
Exits with the command's status (2 for a command killed by a signal), so that a failed run is not taken for a measurement."""
import subprocess, sys, time
if len(sys.argv) < 2:
    print("usage: peak.py COMMAND [ARGS...]", file=sys.stderr)
    sys.exit(2)
t0 = time.time()
try:
    p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
except OSError as e:
    print(f"peak.py: cannot run {sys.argv[1]}: {e.strerror}", file=sys.stderr)
    sys.exit(2)
peak_anon = 0; hwm = 0
def read():
    global peak_anon, hwm
    try:
        for line in open(f"/proc/{p.pid}/status"):
            if line.startswith("RssAnon:"): peak_anon = max(peak_anon, int(line.split()[1]))
            if line.startswith("VmHWM:"): hwm = max(hwm, int(line.split()[1]))
    except OSError:
        pass
while p.poll() is None:
    read(); time.sleep(0.02)
wall = time.time() - t0
print(f"{' '.join(sys.argv[1:])}: exit {p.returncode}, wall {wall:.1f} s, peak RssAnon {peak_anon/1024:.0f} MiB, VmHWM {hwm/1024:.0f} MiB", flush=True)
sys.exit(p.returncode if p.returncode >= 0 else 2)
