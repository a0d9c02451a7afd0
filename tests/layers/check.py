#!/usr/bin/python3
"""The layering of the source tree, checked from its #include lines.

  tests/layers/check.py [TOP]

Every rule walks its folders recursively: a file moved into a subfolder is
still checked. Rules (STYLE.md, "The layering we want"; README.md, "How the
code is laid out"):
  1. proto/ is sans-I/O: it includes nothing of server/ or ktls/.
  2. ktls/ knows nothing of HTTP or of the server: no proto/, no server/.
  3. Inside server/, no module includes another in a circle. A module is
     X.c with X.h in one folder; a types-only header X-t.h is a module of
     its own.
  4. server/'s folders are floors (FLOORS): a file includes from server/
     only its own folder and the folders on floors below its own, never
     one beside it or above it. A folder without a floor fails.
  5. The transport's private header (server/net/sock-int.h) is included by
     the transport's files (server/net/sock*) and its unit tests
     (tests/unit/test_sock*.c) only.
  6. The HTTP/2 session's private headers (proto/h2_session-int.h, the
     session's and streams' types, and proto/h2_stream.h) are included by
     proto/'s files and the unit tests of its HTTP/2 parts
     (tests/unit/test_h2_*.c) only: the glue (server/http/h2_conn.c) and
     the fuzz target ask proto/h2_session.h's functions.
  7. The transport includes no protocol handler (conn, h1_conn and its
     h1_conn-int.h, h2_conn, body_send, h2_session) and nothing of the
     worker.
  8. No worker API beyond the worker's types: only the process (main.c
     and the signal loop and reload split from it, signals.c, reload.c)
     and worker.c include worker.h; everyone else sees at most worker-t.h.
  9. The worker's loop knows no connection: worker.c, worker.h and
     worker-t.h include no protocol handler, conn.h included (the loop
     calls struct worker_conn_ops, which main.c hands it).
 10. Each folder is a library: Makefile.am lists every file of
     server/FOLDER/ in libFOLDER_a_SOURCES (the top: libserver_a_SOURCES, or
     ktlsd_SOURCES for main.c), and a unit test links $(FOLDER_UNIT_LDADD)
     for the highest FOLDER it includes: that library and those below it.
 11. (Not layering, but from the same tree walk.) Every file git tracks under
     proto/, ktls/, server/, tests/, fuzz/, bench/, scripts/, www/, doc/ and
     systemd/ is listed in Makefile.am, so the tarball of make dist is
     complete.

Prints "ok RULE" / "FAIL RULE: detail" and "N passed, N failed"; exits 1 if
any rule is broken.
"""

import os
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
PROTOCOL = {"conn", "h1_conn", "h1_conn-int", "h2_conn", "body_send", "h2_session"}
# server/'s folders from the bottom; "server" is the program on top. Folders
# on one floor are beside each other: neither includes the other.
FLOORS = {
    "server/core": 0,    # ring, pools, files and their cache, logs, counters, the clock
    "server/conf": 1,    # options, values, sites, the server state they build
    "server/net": 2,     # the transport, pacing, connections per address
    "server/http": 3,    # connections, resolution, HTTP/1.1 and HTTP/2 glue, listings
    "server/status": 3,  # --status-listen and its metrics
    "server/acme": 3,    # the ACME client: requests, orders, its thread, acme-dir
    "server": 4,         # the process: main, the worker's loop, privileges, systemd
}
TRANSPORT = re.compile(r"^server/net/sock[^/]*$")
# The transport's own unit tests, of its pure parts, may see its insides.
TRANSPORT_TESTS = re.compile(r"^tests/unit/test_sock\w*\.c$")
# The HTTP/2 session's insides, proto/'s own; the unit tests of its parts
# may see them, as the transport's do its own.
H2_PRIVATE = {"proto/h2_session-int.h", "proto/h2_stream.h"}
H2_PRIVATE_TESTS = re.compile(r"^tests/unit/test_h2_\w+\.c$")
# Every folder with C sources, for the rules that look at all of them.
C_FOLDERS = ("proto", "ktls", "server", "tests", "fuzz", "bench", "doc")


def sources(top, folder):
    """Every .c and .h under folder, as paths from top, subfolders too."""
    out = []
    for d, dirs, files in os.walk(os.path.join(top, folder)):
        dirs.sort()
        rel = os.path.relpath(d, top)
        out += [os.path.join(rel, f) for f in sorted(files) if f.endswith((".c", ".h"))]
    return out


def includes(top, path):
    with open(os.path.join(top, path), encoding="utf-8") as f:
        return INCLUDE.findall(f.read())


def module(path):
    """server/core/stats.c and server/core/stats.h: server/core/stats."""
    return os.path.splitext(path)[0]


def name(path):
    """The module's name without its folder: stats, worker-t."""
    return os.path.basename(module(path))


def find_cycle(graph):
    """A cycle in graph (dict node -> set of nodes) as a list, or None."""
    state = {}
    stack = []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                c = visit(m)
                if c:
                    return c
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            c = visit(n)
            if c:
                return c
    return None


def makefile_vars(text):
    """Makefile.am's assignments: name -> the words of its value."""
    joined = text.replace("\\\n", " ")
    return {m.group(1): m.group(2).split()
            for m in re.finditer(r"^([A-Za-z_][\w]*)\s*\+?=(.*)$", joined, re.M)}


def main():
    top = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    results = []

    def rule(name, broken):
        results.append((name, broken))

    for folder, banned in (("proto", ("server/", "ktls/")), ("ktls", ("server/", "proto/"))):
        bad = ["%s includes %s" % (f, inc)
               for f in sources(top, folder)
               for inc in includes(top, f) if inc.startswith(banned)]
        rule("%s/ includes nothing of %s" % (folder, " or ".join(banned)), bad)

    server = sources(top, "server")
    inc_of = {f: [i for i in includes(top, f) if i.startswith("server/")] for f in server}

    graph = {}
    for f in server:
        m = module(f)
        graph.setdefault(m, set())
        graph[m].update(module(i) for i in inc_of[f] if module(i) != m)
    cycle = find_cycle(graph)
    rule("server/: no module includes another in a circle",
         [" -> ".join(cycle)] if cycle else [])

    bad = sorted("%s/ has no floor (FLOORS)" % os.path.dirname(f)
                 for f in server if os.path.dirname(f) not in FLOORS)
    bad = sorted(set(bad))
    for f in server:
        here = os.path.dirname(f)
        for inc in inc_of[f]:
            there = os.path.dirname(inc)
            if here in FLOORS and there in FLOORS and there != here and \
                    FLOORS[there] >= FLOORS[here]:
                bad.append("%s (floor %d) includes %s (floor %d)" %
                           (f, FLOORS[here], inc, FLOORS[there]))
    rule("server/: a folder includes only its own and the folders below it", bad)

    rule("server/net/sock-int.h is included by the transport's files (and its unit tests) only",
         ["%s includes %s" % (f, inc) for f in server + sources(top, "tests") + sources(top, "fuzz")
          for inc in includes(top, f)
          if inc == "server/net/sock-int.h" and not TRANSPORT.match(f)
          and not TRANSPORT_TESTS.match(f)])

    every = [f for d in C_FOLDERS for f in sources(top, d)]
    rule("proto/h2_session-int.h and proto/h2_stream.h are included by proto/ (and its HTTP/2"
         " unit tests) only",
         ["%s includes %s" % (f, inc) for f in every for inc in includes(top, f)
          if inc in H2_PRIVATE and not f.startswith("proto/") and not H2_PRIVATE_TESTS.match(f)])

    rule("the transport (server/net/sock*) includes no protocol handler and nothing of the worker",
         ["%s includes %s" % (f, inc) for f in server if TRANSPORT.match(f)
          for inc in inc_of[f] if name(inc) in PROTOCOL | {"worker", "worker-t"}])

    rule("only the process (main.c, signals.c, reload.c) and worker.c include worker.h"
         " (others: the worker's types, worker-t.h)",
         ["%s includes %s" % (f, inc) for f in server
          if f not in ("server/main.c", "server/signals.c", "server/reload.c", "server/worker.c")
          for inc in inc_of[f] if name(inc) == "worker"])

    rule("the worker (worker.*, worker-t.h) includes no protocol handler, conn.h included",
         ["%s includes %s" % (f, inc) for f in server if name(f) in ("worker", "worker-t")
          for inc in inc_of[f] if name(inc) in PROTOCOL])

    with open(os.path.join(top, "Makefile.am"), encoding="utf-8") as f:
        makefile = f.read()
    var = makefile_vars(makefile)
    bad = []
    for f in server:
        folder = os.path.dirname(f)
        lib = "lib%s_a_SOURCES" % os.path.basename(folder)
        # main() is the program's own, outside the library the tests link.
        if f not in var.get(lib, ()) and f not in var.get("ktlsd_SOURCES", ()):
            bad.append("%s is not in %s" % (f, lib))
    # A unit test links the libraries of the highest folder it includes.
    for test in sorted(sources(top, "tests/unit")):
        m = re.fullmatch(r"tests/unit/test_(\w+)\.c", test)
        folders = {os.path.dirname(i) for i in includes(top, test) if i.startswith("server/")}
        if not m or not folders or not folders <= set(FLOORS):
            continue
        high = max(FLOORS[f] for f in folders)
        at = [f for f in folders if FLOORS[f] == high]
        want = "$(%s_UNIT_LDADD)" % (os.path.basename(at[0]) if len(at) == 1 else "server").upper()
        got = var.get("tests_unit_test_%s_LDADD" % m.group(1), [])
        if got != [want]:
            bad.append("tests_unit_test_%s_LDADD is %s, not %s" %
                       (m.group(1), " ".join(got) or "unset", want))
    rule("Makefile.am: each folder of server/ is a library, its unit tests link it and below",
         bad)

    # The tarball (make dist) ships what git tracks outside the sources.
    try:
        tracked = subprocess.run(["git", "-C", top, "ls-files", "proto", "ktls", "server",
                                  "tests", "fuzz", "bench", "scripts", "www", "doc", "systemd"],
                                 capture_output=True, text=True,
                                 check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        tracked = None
    if tracked is not None:
        listed = set(re.findall(r"[\w./-]+", makefile))
        rule("Makefile.am lists every tracked source, header, test, bench, fuzz, script and doc file",
             sorted(t for t in tracked if t not in listed and not os.path.basename(t).startswith(".")
                    # automake ships a check program's default source itself
                    and not re.fullmatch(r"tests/unit/test_\w+\.c", t)))

    failed = 0
    for name_, broken in results:
        if broken:
            failed += 1
            print("FAIL %s: %s" % (name_, "; ".join(broken)))
        else:
            print("ok %s" % name_)
    print("%d passed, %d failed" % (len(results) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
