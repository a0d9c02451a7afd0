#!/usr/bin/python3
"""Clients for t_autoindex.sh (directory listings). Each subcommand prints
words the shell compares.

  roundtrip CURL_PROTO BASE DIR ROOT [CURL_ARG...]
      Fetches the listing of BASE/DIR/ as JSON (Accept: application/json)
      and as HTML with curl (CURL_PROTO: --http1.1 or --http2, then the
      CURL_ARGs: --cacert, --resolve), parses both, then GETs each file
      entry's href, relative to the listing, and compares the body with
      the file ROOT/DIR/<name> (each test file holds its own name's bytes).
      Prints "ENTRIES n", per file "NAME hex-of-its-bytes" (for the shell
      to compare with what it made), "ROUNDTRIP ok" or "ROUNDTRIP bad
      href...", and "HTML_SAME yes" when the HTML page has the same links,
      in the same order, showing the names as proto/autoindex.h says.

  pipeline PORT N LIST SMALL
      On one TLS connection (HTTP/1.1), N requests for LIST in one write
      (pipelined); meanwhile, on a second connection, one GET of SMALL.
      Prints "SMALL status bytes", "LISTS status,status,..." (in order),
      "ENTRIES n" (of the first listing's JSON), and "SMALL_FIRST yes" if
      the small response was complete before the last listing's, else
      "SMALL_FIRST no".

  term PORT SMALL LIST
      Sends GETs for SMALL and LIST in one write, reads SMALL's response and
      prints "READY" (the server has LIST in hand: it started it as soon as
      SMALL's response was sent), then "LIST status entries" for LIST's.

  h1-drop PORT PATH       sends a GET for PATH and closes at once
  h2-drop PORT PATH       HTTP/2: GET PATH on streams 1 and 3, RST_STREAM
                          on 1, then closes the connection
"""
import html.parser
import json
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import h2_client  # noqa: E402
import lib  # noqa: E402


def curl(proto, args, url, extra=()):
    r = subprocess.run(["curl", "-sS", "--max-time", "120", "--path-as-is", proto] + list(args) +
                       list(extra) + [url], stdout=subprocess.PIPE, check=False)
    return r.stdout


class Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.links = []
        self.href = None
        self.text = ""

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self.href = dict(attrs).get("href")
            self.text = ""

    def handle_data(self, data):
        if self.href is not None:
            self.text += data

    def handle_endtag(self, tag):
        if tag == "a" and self.href is not None:
            self.links.append((self.href, self.text))
            self.href = None


def shown(name):
    """The name as the listing shows it (proto/autoindex.h): bytes that are
    not UTF-8 as U+FFFD (one each: the test's names have single bad bytes),
    and in HTML control characters too."""
    return "".join("\ufffd" if ord(c) < 0x20 or c == "\x7f" else c
                   for c in name.decode("utf-8", errors="replace"))


def roundtrip(argv):
    proto, base, d, root = argv[:4]
    args = argv[4:]
    url = "%s/%s/" % (base, d)
    folder = os.path.join(os.fsencode(root), os.fsencode(d))
    listing = json.loads(curl(proto, args, url, ["-H", "Accept: application/json"]))
    print("ENTRIES %d" % len(listing))
    bad = []
    texts = []
    for e in listing:
        if e["type"] == "directory":
            texts.append(e["name"] + "/")
            continue
        body = curl(proto, args, url + e["href"])
        # The href led to the file whose name is the body's bytes: the
        # file of that name holds them, and the JSON names it so.
        try:
            with open(os.path.join(folder, body), "rb") as f:
                same = f.read() == body
        except (OSError, ValueError):
            same = False
        if not same or e["name"] != body.decode("utf-8", errors="replace"):
            bad.append(e["href"])
        texts.append(shown(body))
        print("NAME %s" % body.hex())
    print("ROUNDTRIP %s" % ("ok" if not bad else "bad " + " ".join(bad)))
    page = Links()
    page.feed(curl(proto, args, url).decode("utf-8"))
    got = [(h, t) for h, t in page.links if h != "../"]
    want = list(zip([e["href"] for e in listing], texts))
    print("HTML_SAME %s" % ("yes" if got == want else "no %r %r" % (got, want)))


def tls(port):
    """A TLS connection (HTTP/1.1) with lib.py's reader."""
    return lib.Conn(port, plain=False)


def read_response(conn):
    """One response (status, body) from conn, within two minutes."""
    status, _, body = lib.take_response(conn, False, time.monotonic() + 120)
    return status, bytes(body)


def pipeline(argv):
    port, n, lst, small = int(argv[0]), int(argv[1]), argv[2], argv[3]
    req = lambda p: ("GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n" % p).encode()
    big = tls(port)
    results = []
    done = {}

    def reader():
        try:
            for _ in range(n):
                results.append(read_response(big))
        except (OSError, lib.Closed) as e:
            results.append((0, str(e).encode()))
        done["lists"] = time.monotonic()

    big.send(b"".join(req(lst) for _ in range(n)))
    t = threading.Thread(target=reader)
    t.start()
    s = tls(port)
    s.send(req(small))
    status, body = read_response(s)
    done["small"] = time.monotonic()
    s.sock.close()
    print("SMALL %d %d" % (status, len(body)))
    t.join()
    print("LISTS %s" % ",".join(str(st) for st, _ in results))
    try:
        print("ENTRIES %d" % len(json.loads(results[0][1])))
    except ValueError:
        print("ENTRIES none")
    print("SMALL_FIRST %s" % ("yes" if done["small"] < done["lists"] else "no"))
    big.sock.close()


def term(argv):
    port, small, lst = int(argv[0]), argv[1], argv[2]
    s = tls(port)
    s.send(("GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n"
            "GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n" % (small, lst)).encode())
    read_response(s)
    print("READY", flush=True)
    try:
        status, body = read_response(s)
        print("LIST %d %d" % (status, len(json.loads(body))))
    except (OSError, lib.Closed, ValueError) as e:
        print("LIST failed %s" % e)


def h1_drop(argv):
    s = tls(int(argv[0]))
    s.send(("GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n" % argv[1]).encode())
    s.sock.close()
    print("DROPPED")


def h2_drop(argv):
    c = h2_client.Conn(int(argv[0]))
    c.start()
    for sid in (1, 3):
        c.send(h2_client.frame(h2_client.HEADERS, h2_client.END_HEADERS | h2_client.END_STREAM,
                               sid, h2_client.request_headers(c.enc, argv[1])))
    c.send(h2_client.rst_stream(1, 8))  # CANCEL
    c.sock.close()
    print("DROPPED")


def main():
    cmds = {"roundtrip": roundtrip, "pipeline": pipeline, "term": term, "h1-drop": h1_drop, "h2-drop": h2_drop}
    cmds[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    main()
