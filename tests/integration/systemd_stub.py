#!/usr/bin/python3
"""What systemd does for a service, played by a test: the two sides of the
protocols ktlsd speaks without libsystemd.

  systemd_stub.py notify ADDRESS OUT SECS
      Bind an AF_UNIX datagram socket at ADDRESS (a path, or "@name" for an
      abstract one) as $NOTIFY_SOCKET would name it, write "LISTENING" to
      OUT, then one line per datagram received:
          pid=SENDER now=MONOTONIC_USEC|LINE|LINE...
      (the message's lines joined by "|"; now is this host's CLOCK_MONOTONIC
      at receipt, in microseconds, to compare with MONOTONIC_USEC=). Stops
      after SECS or at SIGTERM.

  systemd_stub.py activate [--fdname NAME] PORT OUT GO -- CMD...
      Listen on 127.0.0.1:PORT, then run CMD with the socket as fd 3 and
      LISTEN_FDS=1, LISTEN_PID=its pid (and LISTEN_FDNAMES=NAME), as a
      socket unit starts its service. When CMD exits, run it again with the
      same socket once the file GO exists (deleting GO), as a restart does;
      the socket keeps listening in between. Writes "started PID" and
      "exited PID CODE" lines to OUT. At SIGTERM, passes it on and stops;
      it also stops when GO has not come 120 s after an exit (a test that
      was killed leaves no stub behind).
"""

import os
import signal
import socket
import struct
import subprocess
import sys
import time


def out_line(f, text):
    f.write(text + "\n")
    f.flush()


def notify(address, out, secs):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
    s.bind("\0" + address[1:] if address.startswith("@") else address)
    deadline = time.monotonic() + secs
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    creds_len = socket.CMSG_SPACE(struct.calcsize("3i"))
    with open(out, "w", encoding="utf-8") as f:
        out_line(f, "LISTENING")
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return 0
            s.settimeout(left)
            try:
                data, anc, _, _ = s.recvmsg(4096, creds_len)
            except socket.timeout:
                return 0
            pid = "?"
            for level, kind, value in anc:
                if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                    pid = struct.unpack("3i", value[:12])[0]
            now = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
            text = data.decode("utf-8", "replace").strip("\n").replace("\n", "|")
            out_line(f, "pid=%s now=%d|%s" % (pid, now, text))


def activate(args):
    fdname = None
    if args[0] == "--fdname":
        fdname = args[1]
        args = args[2:]
    port, out, go = int(args[0]), args[1], args[2]
    if args[3] != "--":
        raise SystemExit("usage: activate [--fdname NAME] PORT OUT GO -- CMD...")
    cmd = args[4:]
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind(("127.0.0.1", port))
    lsock.listen(128)
    env = dict(os.environ, LISTEN_FDS="1")
    if fdname is not None:
        env["LISTEN_FDNAMES"] = fdname
    child = None
    stopping = []

    def socket_as_fd3():
        if lsock.fileno() == 3:
            os.set_inheritable(3, True)
        else:
            os.dup2(lsock.fileno(), 3)

    # The loop below waits for the child: the handler only passes the
    # signal on (waiting here too would deadlock on Popen's lock).
    def stop(*_):
        stopping.append(True)
        if child:
            child.send_signal(signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)
    with open(out, "w", encoding="utf-8") as f:
        while True:
            # LISTEN_PID must name the process that runs CMD: the shell's
            # $$, which exec keeps.
            child = subprocess.Popen(
                ["/bin/sh", "-c", 'LISTEN_PID=$$ exec "$0" "$@"'] + cmd, env=env,
                close_fds=False, preexec_fn=socket_as_fd3,
                stdin=subprocess.DEVNULL)
            out_line(f, "started %d" % child.pid)
            code = child.wait()
            out_line(f, "exited %d %d" % (child.pid, code))
            child = None
            give_up = time.monotonic() + 120
            while not stopping and not os.path.exists(go) and time.monotonic() < give_up:
                time.sleep(0.05)
            if stopping or not os.path.exists(go):
                return 0
            os.unlink(go)


def main():
    if len(sys.argv) >= 5 and sys.argv[1] == "notify":
        return notify(sys.argv[2], sys.argv[3], float(sys.argv[4]))
    if len(sys.argv) >= 7 and sys.argv[1] == "activate":
        return activate(sys.argv[2:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
