#!/usr/bin/env python3
# sigint_on_output.py ERRFILE CMD [ARG...]
#
# Runs CMD with its standard error on a pseudo-terminal (so that a tool
# draws its progress bar there), and sends it SIGINT once it has written
# something: a run known to be under way, however slow the machine, where
# a fixed delay would race its start.  Its standard output is ours; what it
# wrote on standard error is saved in ERRFILE.  Exits with CMD's status
# (128 + N when signal N ended it, as a shell reports it), or 124 when CMD
# said nothing for 120 s or did not end within 120 s of the signal (it is
# then killed).
import os
import pty
import select
import signal
import subprocess
import sys
import time

LIMIT_S = 120


def read_some(fd, until):
    """Bytes from |fd| before |until| (time.monotonic), b"" at its end."""
    left = until - time.monotonic()
    if left <= 0 or not select.select([fd], [], [], left)[0]:
        return None
    try:
        return os.read(fd, 65536)
    except OSError:  # EIO: the other side is closed
        return b""


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: sigint_on_output.py ERRFILE CMD [ARG...]")
    errfile, cmd = sys.argv[1], sys.argv[2:]
    master, slave = pty.openpty()
    p = subprocess.Popen(cmd, stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    err = b""
    rc = None
    chunk = read_some(master, time.monotonic() + LIMIT_S)
    if chunk is None:
        sys.stderr.write("sigint_on_output: %s said nothing\n" % cmd[0])
        rc = 124
    else:
        err += chunk
        p.send_signal(signal.SIGINT)
        until = time.monotonic() + LIMIT_S
        while chunk:
            chunk = read_some(master, until)
            if chunk is None:
                sys.stderr.write("sigint_on_output: %s did not stop\n" % cmd[0])
                rc = 124
                break
            err += chunk
    if rc == 124:
        p.kill()
        p.wait()
    else:
        st = p.wait()
        rc = 128 - st if st < 0 else st
    os.close(master)
    with open(errfile, "wb") as f:
        f.write(err.replace(b"\r\n", b"\n"))
    sys.exit(rc)


if __name__ == "__main__":
    main()
