#!/usr/bin/python3
"""The layering of the source tree, checked from its #include lines.

  tests/layers/check.py [TOP]

Rules (STYLE.md, "The layering we want"):
  1. proto/ is sans-I/O: it includes nothing of server/ or ktls/.
  2. ktls/ knows nothing of HTTP or of the server: no proto/, no server/.
  3. Inside server/, no module includes another in a circle. A module is
     X.c with X.h; a types-only header X-t.h is a module of its own.
  4. The transport (server/sock.*) includes no protocol handler (conn,
     h1_conn, h2_conn, body_send, h2_session) and no worker API beyond
     the worker's types.
  5. The worker dispatches completions without knowing their owners: worker.*
     includes no protocol handler either (only conn.h, to make connections).
  6. (Not layering, but from the same tree walk.) Every file git tracks under
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
PROTOCOL = {"conn", "h1_conn", "h2_conn", "body_send", "h2_session"}


def sources(top, folder):
    d = os.path.join(top, folder)
    return sorted(f for f in os.listdir(d) if f.endswith((".c", ".h")))


def includes(top, path):
    with open(os.path.join(top, path), encoding="utf-8") as f:
        return INCLUDE.findall(f.read())


def module(name):
    return os.path.splitext(os.path.basename(name))[0]


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


def main():
    top = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    results = []

    def rule(name, broken):
        results.append((name, broken))

    for folder, banned in (("proto", ("server/", "ktls/")), ("ktls", ("server/", "proto/"))):
        bad = ["%s/%s includes %s" % (folder, f, inc)
               for f in sources(top, folder)
               for inc in includes(top, "%s/%s" % (folder, f)) if inc.startswith(banned)]
        rule("%s/ includes nothing of %s" % (folder, " or ".join(banned)), bad)

    graph = {}
    for f in sources(top, "server"):
        m = module(f)
        graph.setdefault(m, set())
        for inc in includes(top, "server/" + f):
            if inc.startswith("server/") and module(inc) != m:
                graph[m].add(module(inc))
    cycle = find_cycle(graph)
    rule("server/: no module includes another in a circle",
         [" -> ".join(cycle)] if cycle else [])

    # The worker makes connections (conn.h) but knows no protocol's parts.
    for owner, allowed in (("sock", set()), ("worker", {"conn"})):
        bad = ["server/%s includes %s" % (f, inc)
               for f in sources(top, "server") if module(f) in (owner, owner + "-t")
               for inc in includes(top, "server/" + f)
               if inc.startswith("server/") and module(inc) in PROTOCOL - allowed]
        rule("server/%s.* includes no protocol handler" % owner, bad)

    # The tarball (make dist) ships what git tracks outside the sources.
    try:
        tracked = subprocess.run(["git", "-C", top, "ls-files", "proto", "ktls", "server",
                                  "tests", "fuzz", "bench", "scripts", "www", "doc", "systemd"],
                                 capture_output=True, text=True,
                                 check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        tracked = None
    if tracked is not None:
        with open(os.path.join(top, "Makefile.am"), encoding="utf-8") as f:
            listed = set(re.findall(r"[\w./-]+", f.read()))
        rule("Makefile.am lists every tracked source, header, test, bench, fuzz, script and doc file",
             sorted(t for t in tracked if t not in listed and not os.path.basename(t).startswith(".")
                    # automake ships a check program's default source itself
                    and not re.fullmatch(r"tests/unit/test_\w+\.c", t)))

    failed = 0
    for name, broken in results:
        if broken:
            failed += 1
            print("FAIL %s: %s" % (name, "; ".join(broken)))
        else:
            print("ok %s" % name)
    print("%d passed, %d failed" % (len(results) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
