#!/usr/bin/python3
"""Clients for t_limits_site.sh (--limit-conn, --limit-rate).

Run with /usr/bin/python3 (Debian's).

  limits_clients.py hold PORT N SECS
      Opens N TLS connections (HTTP/1.1 keep-alive, SNI "localhost", no
      certificate check) to 127.0.0.1:PORT, each from 127.0.0.1, and asks
      each for /a.txt. Prints "HELD N" once all N were answered 200 (or
      "STATUS s" for the first that was not, and exits 1), then keeps them
      open, idle, for SECS seconds or until killed.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lib  # noqa: E402


def hold(port, n, secs):
    conns = []
    for _ in range(n):
        c = lib.Conn(port, plain=False)
        c.send(b"GET /a.txt HTTP/1.1\r\nHost: localhost\r\n\r\n")
        try:
            st, _, _ = lib.take_response(c, False, time.monotonic() + 20)
        except (OSError, lib.Closed):
            st = 0
        if st != 200:
            print("STATUS %d" % st, flush=True)
            return 1
        conns.append(c)
    print("HELD %d" % n, flush=True)
    time.sleep(secs)
    return 0


def main():
    args = sys.argv[1:]
    if len(args) == 4 and args[0] == "hold":
        return hold(int(args[1]), int(args[2]), float(args[3]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
