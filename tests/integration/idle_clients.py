#!/usr/bin/python3
"""Idle keep-alive clients for t_idle_memory.sh, in one process.

  idle_clients.py PORT N PATH FLAG SECS [plain]
      Opens N keep-alive connections to 127.0.0.1:PORT (TLS, HTTP/1.1 in
      ALPN; "plain": no TLS), one after another; each requests PATH once and
      reads the whole response, then stays open and silent. Prints
      "READY open=N failed=K" once all are open (or failed), then holds them
      until the file FLAG exists or SECS seconds have passed, and closes
      them.
"""

import os
import resource
import socket
import ssl
import sys
import time


def read_response(s):
    buf = b""
    while b"\r\n\r\n" not in buf:
        data = s.recv(65536)
        if not data:
            raise OSError("closed before the response head")
        buf += data
    head, _, body = buf.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        data = s.recv(65536)
        if not data:
            raise OSError("closed in the body")
        body += data


def main():
    if len(sys.argv) not in (6, 7):
        print(__doc__, file=sys.stderr)
        return 2
    port, n, path, flag, secs = (int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4],
                                 float(sys.argv[5]))
    plain = len(sys.argv) == 7 and sys.argv[6] == "plain"
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.set_alpn_protocols(["http/1.1"])
    req = ("GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n" % path).encode()
    held, failed, first_error = [], 0, ""
    for _ in range(n):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            if not plain:
                s = ctx.wrap_socket(s, server_hostname="localhost")
            s.sendall(req)
            read_response(s)
            held.append(s)
        except (OSError, ssl.SSLError, ValueError) as e:
            failed += 1
            first_error = first_error or str(e).replace(" ", "_")
    print("READY open=%d failed=%d%s" % (len(held), failed,
                                         " first_error=" + first_error if first_error else ""),
          flush=True)
    end = time.monotonic() + secs
    while time.monotonic() < end and not os.path.exists(flag):
        time.sleep(0.1)
    for s in held:
        s.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
