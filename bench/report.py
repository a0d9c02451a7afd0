#!/usr/bin/python3
"""Turn one bench/run results folder into results.csv, report.md and PNGs.

Usage: bench/report.py OUT

Reads OUT/raw.csv (one row per measurement: every repetition of every cell
for every server) and writes:
  OUT/results.csv  one row per cell, server and metric: median, min, max,
                   the server's CPU use, work per server CPU-second, flags
  OUT/report.md    ratio table first (ktlsd / best peer of each cell; with
                   bench/run --ktlsd-baseline also ktlsd / ktlsd-base), then
                   the plots, the full tables, and how to reproduce it all
  OUT/*.png        plots drawn with gnuplot (skipped, with a note, if
                   gnuplot is missing)
"""
import csv
import os
import re
import shutil
import statistics
import subprocess
import sys

OUT = sys.argv[1]
RESULTS_HEADER = ["group", "cell", "server", "metric", "unit", "median", "min", "max", "reps",
                  "server_cpu_util", "per_cpu_median", "per_cpu_unit", "bound", "other_load",
                  "client_busy", "verified", "note"]
# Metrics where smaller is better (costs); for all others bigger is better.
LOWER_IS_BETTER = {"syscalls_per_mib", "sends_per_mib", "user_copy_bytes_per_mib",
                   "ring_ops_per_mib", "pss_total", "pss_per_conn", "records_per_mib", "peak_rss",
                   "rss_total",
                   "syscalls_per_mib_uml", "cpu_s_per_gb", "syscalls_per_request",
                   "other_than_event_loop_per_request", "io_uring_enter_per_request",
                   "cpu_s", "probe_p50_ms", "probe_p99_ms", "probe_max_ms", "spread",
                   "pss_per_dl_ready", "pss_per_dl_end", "pss_per_dl", "ready_s",
                   "cpu_s_per_gb_steady", "sndq_per_dl"}
# The second ktlsd build of bench/run --ktlsd-baseline: not a peer (never
# "best peer"), compared with ktlsd in columns of its own.
BASE = "ktlsd-base"
# A server that used less than this share of its core was not the
# bottleneck: the client (or something else) was.
BUSY = 0.85
# A cold-file cell that reached this share of the disk's own limit (the
# same files read by dd, measured once per run) was bound by the disk.
DISK_BOUND = 0.85
# A slow-client cell that delivered this share of what its clients asked
# for (N x their rate x the time) was bound by their pace, not by a core.
PACED = 0.9


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def fmt(v, unit=""):
    if v is None:
        return "n/a"
    if unit in ("GB/s", "GB/cpu-s"):
        return "%.2f" % v
    if abs(v) >= 100:
        return "{:,.0f}".format(v)
    if abs(v) >= 10:
        return "%.1f" % v
    if 0 < abs(v) < 0.1:
        return "%.3f" % v
    return "%.2f" % v


def fmt_range(m, unit=""):
    """An aggregated row's median, and [min - max] when it has more than
    one value; "n/a" when it has none."""
    if not m or m["median"] is None:
        return "n/a"
    out = fmt(m["median"], unit)
    if m["reps"] and m["reps"] > 1:
        out += " [%s - %s]" % (fmt(m["min"], unit), fmt(m["max"], unit))
    return out


def read_raw():
    with open(os.path.join(OUT, "raw.csv"), newline="") as f:
        return list(csv.DictReader(f))


def aggregate(raw):
    """Group the repetitions of each (group, cell, server, metric)."""
    order, groups = [], {}
    for r in raw:
        if r["group"] == "start":
            continue
        key = (r["group"], r["cell"], r["server"], r["metric"])
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(r)
    rows = []
    for key in order:
        rs = groups[key]
        vals = [num(r["value"]) for r in rs if num(r["value"]) is not None]
        per = [num(r["per_cpu"]) for r in rs if num(r["per_cpu"]) is not None]
        util = [num(r["server_cpu_s"]) / num(r["wall_s"]) for r in rs
                if num(r["server_cpu_s"]) is not None and num(r["wall_s"])]
        other = [num(r["other_load"]) for r in rs if num(r["other_load"]) is not None]
        cbusy = [num(r.get("client_busy")) for r in rs if num(r.get("client_busy")) is not None]
        verified = "FAIL" if any(r["verified"] == "FAIL" for r in rs) else (
            max((r["verified"] for r in rs), key=len) if rs else "")
        u = statistics.median(util) if util else None
        o = statistics.median(other) if other else None
        cb = statistics.median(cbusy) if cbusy else None
        bound = ""
        if rs[0]["metric"] in ("rate", "throughput") and u is not None and rs[0]["server"] != "machine":
            # Server core saturated: server-bound. Otherwise the client
            # cores tell: saturated (by the load generator or others) means
            # client-bound; neither saturated means the server waited
            # (latency, one send in flight, ...).
            if u >= BUSY:
                bound = "server"
            elif cb is None:
                bound = "unknown (cell shorter than 0.5 s)"
            elif cb >= 0.9:
                bound = "client"
            else:
                bound = "neither"
            if o is not None and o > 0.15:
                bound += ", shared core"
        note = next((r["note"] for r in rs if r["note"]), "")
        rows.append({
            "group": key[0], "cell": key[1], "server": key[2], "metric": key[3],
            "unit": rs[0]["unit"],
            "median": statistics.median(vals) if vals else None,
            "min": min(vals) if vals else None,
            "max": max(vals) if vals else None,
            "reps": len(vals),
            "server_cpu_util": u,
            "per_cpu_median": statistics.median(per) if per else None,
            "per_cpu_unit": rs[0]["per_cpu_unit"],
            "bound": bound, "other_load": o, "client_busy": cb, "verified": verified,
            "note": note,
        })
    mark_disk_bound(rows)
    mark_paced(rows)
    return rows


def mark_paced(rows):
    """Slow-client throughput that met the clients' own pace is bound by
    that pace (the server used little of its core and the client waited on
    purpose, which would otherwise read as "neither")."""
    share = {(r["cell"], r["server"]): r["median"] for r in rows
             if r["group"] == "slow" and r["metric"] == "paced_share"}
    for r in rows:
        if r["group"] == "slow" and r["metric"] == "throughput":
            s = share.get((r["cell"], r["server"]))
            if s is not None and s >= PACED:
                r["bound"] = "paced" + (", shared core" if "shared core" in r["bound"] else "")


def disk_rows(rows):
    """The cold-file cells' disk readings (dd of the same files: all at once,
    one after another)."""
    return [r for r in rows if r["group"] == "cold" and r["server"] == "machine"
            and r["metric"] == "throughput" and r["median"] is not None]


def disk_ceiling(rows):
    """The better of the disk readings (by median), or None."""
    return max(disk_rows(rows), key=lambda r: r["median"], default=None)


def mark_disk_bound(rows):
    """Cold-file throughput at the disk's limit is bound by the disk, whatever
    the server's core and the client's did."""
    top = disk_ceiling(rows)
    if top is None:
        return
    for r in rows:
        if (r["group"] == "cold" and r["metric"] == "throughput" and r["server"] != "machine"
                and r["median"] is not None and r["median"] >= DISK_BOUND * top["median"]):
            r["bound"] = "disk" + (", shared core" if "shared core" in r["bound"] else "")


def write_results(rows):
    with open(os.path.join(OUT, "results.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(RESULTS_HEADER)
        for r in rows:
            w.writerow([("n/a" if r[k] is None else
                         ("%.4g" % r[k] if isinstance(r[k], float) else r[k]))
                        for k in RESULTS_HEADER])


def cells_of(rows):
    """(group, cell, metric) in first-seen order."""
    seen, out = set(), []
    for r in rows:
        k = (r["group"], r["cell"], r["metric"])
        if k not in seen:
            seen.add(k)
            out.append(k)
    return out


def servers_of(rows):
    out = []
    for r in rows:
        if r["server"] not in out and r["server"] != "machine":
            out.append(r["server"])
    # ktlsd first, then its baseline, then nginx, then the rest in order of
    # appearance.
    out.sort(key=lambda s: (s != "ktlsd", s != BASE, s != "nginx"))
    return out


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


# The ratio table has one line per cell and headline metric; the other
# metrics (median record size, mean ring send, curiosities) are in the full
# tables below it.
HEADLINE = {"rate", "throughput", "peak_rss", "rss_total", "pss_per_conn", "pss_total",
            "syscalls_per_mib", "cpu_s_per_gb", "probe_p99_ms", "spread",
            "pss_per_dl_ready", "pss_per_dl_end", "pss_per_dl", "cpu_s_per_gb_steady",
            "user_copy_bytes_per_mib", "records_per_mib"}
# Groups whose every metric is a headline (the many-downloads cell: its ring
# operations per MiB are the point of it).
HEADLINE_GROUPS = {"many"}


def ratio_table(rows):
    by = {(r["group"], r["cell"], r["metric"], r["server"]): r for r in rows}
    ring = {(r["group"], r["cell"], r["server"]): r for r in rows
            if r["metric"] == "ring_ops_per_mib"}
    has_base = any(r["server"] == BASE for r in rows)
    head = ("| cell | metric | ktlsd | best peer | ktlsd / best | ktlsd / nginx "
            "| per server CPU-s: ktlsd / best |")
    rule = "|---|---|---:|---|---:|---:|---:|"
    if has_base:
        head += " %s | ktlsd / %s | per server CPU-s: ktlsd / %s |" % (BASE, BASE, BASE)
        rule += "---:|---:|---:|"
    lines = [head + " notes |", rule + "---|"]
    for g, cell, metric in cells_of(rows):
        k = by.get((g, cell, metric, "ktlsd"))
        if k is None or (metric not in HEADLINE and g not in HEADLINE_GROUPS):
            continue
        if g == "memory" and metric == "pss_total" and "after" not in cell:
            continue
        lower = metric in LOWER_IS_BETTER
        peers = [r for (gg, cc, mm, s), r in by.items()
                 if (gg, cc, mm) == (g, cell, metric) and s not in ("ktlsd", BASE)
                 and r["median"] is not None]
        base = by.get((g, cell, metric, BASE))
        best = None
        if peers:
            best = (min if lower else max)(peers, key=lambda r: r["median"])
        ng = by.get((g, cell, metric, "nginx"))
        notes = []
        if k["median"] is None:
            notes.append(k["note"] or "not measured")
        paced = by.get((g, cell, "paced_share", "ktlsd"))
        if g == "slow" and metric == "throughput" and paced and paced["median"] is not None:
            # Its clients set the pace: the server's and client's cores say
            # little; what matters is whether they got what they asked for.
            notes.append("the clients got %.0f%% of the rate they asked for (the handshakes' ramp "
                         "counts)" % (100 * paced["median"]))
        elif k["bound"].startswith("neither"):
            notes.append("ktlsd used %.0f%% of its core and the client cores were %.0f%% busy: "
                         "ktlsd waited (latency), neither side was saturated"
                         % (100 * (k["server_cpu_util"] or 0), 100 * (k["client_busy"] or 0)))
        elif k["bound"].startswith("client"):
            note = ("ktlsd used %.0f%% of its core, the client cores were saturated "
                    "(client-bound): compare per CPU-s" % (100 * (k["server_cpu_util"] or 0)))
            if best is not None and not lower and k["median"] and best["median"] > 1.2 * k["median"]:
                note += "; but %s went %.1fx faster with the same client" % (
                    best["server"], best["median"] / k["median"])
            notes.append(note)
        if k["bound"].startswith("disk"):
            notes.append("at the disk's limit (%s MB/s, dd of the same files)"
                         % fmt(disk_ceiling(rows)["median"]))
        if "shared core" in k["bound"]:
            notes.append("others used %.0f%% of the server core" % (100 * (k["other_load"] or 0)))
        if k["verified"] == "FAIL" or (best and best["verified"] == "FAIL"):
            notes.append("**bytes not verified (FAIL)**")
        if "RESUMED ONLY" in k["note"]:
            notes.append("ktlsd resumed only " + k["note"].split("RESUMED ONLY ")[1].split(";")[0]
                         + " of the sessions offered")
        if metric == "syscalls_per_mib" and ring.get((g, cell, "ktlsd"), {}).get("median"):
            note = ("ktlsd's io_uring I/O is not syscalls: plus %s ring ops/MiB"
                    % fmt(ring[(g, cell, "ktlsd")]["median"]))
            if ring.get((g, cell, BASE), {}).get("median"):
                note += " (%s: %s)" % (BASE, fmt(ring[(g, cell, BASE)]["median"]))
            notes.append(note)
        if metric == "ring_ops_per_mib" and "issue 10" in k["note"]:
            notes.append("issue 10 asks for at most 4: "
                         + ("met" if k["median"] is not None and k["median"] <= 4 else "**NOT met**"))
        if base is not None and base["verified"] == "FAIL":
            notes.append("**%s bytes not verified (FAIL)**" % BASE)
        if lower:
            notes.append("lower is better")
        unit = k["unit"]
        per_best = None
        if best and best["per_cpu_median"] is not None:
            per_best = max((p for p in peers if p["per_cpu_median"] is not None),
                           key=lambda r: r["per_cpu_median"])
        cols = [cell, "%s (%s)" % (metric, unit), fmt(k["median"], unit),
                ("%s %s" % (best["server"], fmt(best["median"], unit))) if best else "-",
                fmt(ratio(k["median"], best["median"] if best else None)),
                fmt(ratio(k["median"], ng["median"] if ng else None)),
                fmt(ratio(k["per_cpu_median"], per_best["per_cpu_median"] if per_best else None))]
        if has_base:
            cols += [fmt(base["median"], unit) if base else "-",
                     fmt(ratio(k["median"], base["median"] if base else None)),
                     fmt(ratio(k["per_cpu_median"], base["per_cpu_median"] if base else None))]
        cols.append("; ".join(notes))
        lines.append("| " + " | ".join(cols) + " |")
    return lines


def full_table(rows, groups):
    lines = ["| cell | server | metric | median [min - max] | reps | server CPU | per server CPU-s "
             "| bound | verified | note |",
             "|---|---|---|---|---:|---:|---|---|---|---|"]
    for r in rows:
        if r["group"] not in groups:
            continue
        u = r["unit"]
        rng = fmt_range(r, u)
        lines.append("| %s | %s | %s (%s) | %s | %d | %s | %s | %s | %s | %s |" % (
            r["cell"], r["server"], r["metric"], u, rng, r["reps"],
            "%.0f%%" % (100 * r["server_cpu_util"]) if r["server_cpu_util"] is not None else "",
            ("%s %s" % (fmt(r["per_cpu_median"], r["per_cpu_unit"]), r["per_cpu_unit"]))
            if r["per_cpu_median"] is not None else "",
            r["bound"], r["verified"], r["note"].replace("|", "/")))
    return lines


def cold_table(rows):
    """The cold-file cells, one line per cell and server: throughput, the
    server's CPU, the probe's latency; the disk's ceiling above them."""
    by = {(r["cell"], r["server"], r["metric"]): r for r in rows if r["group"] == "cold"}
    lines = []
    top = disk_ceiling(rows)
    if top is not None:
        for d in disk_rows(rows):
            spread = ""
            if d["reps"] > 1:
                spread = " [%s - %s] over %d repetitions" % (fmt(d["min"]), fmt(d["max"]),
                                                           d["reps"])
            lines.append("- `%s`: %s MB/s%s (%s)" % (d["cell"], fmt(d["median"]), spread,
                                                     d["note"]))
        lines += ["", "Disk ceiling, the better of those: **%s MB/s**. A throughput of %d%% of "
                  "it or more is marked *disk* in the bound column." % (
                      fmt(top["median"]), DISK_BOUND * 100), ""]
    lines += ["| cell | server | MB/s median [min - max] | server CPU-s | server CPU-s per GB "
              "| probe p50 / p99 / max (ms) | bound | verified |",
              "|---|---|---:|---:|---:|---:|---|---|"]
    cells = [c for g, c, m in cells_of(rows) if g == "cold" and m == "throughput"]
    servers = servers_of([r for r in rows if r["group"] == "cold"])
    seen = [(c, s) for c in cells for s in servers if (c, s, "throughput") in by]

    def med(cell, server, metric):
        m = by.get((cell, server, metric))
        return fmt(m["median"]) if m else "n/a"

    for cell, server in seen:
        t = by.get((cell, server, "throughput"))
        rng = fmt_range(t)
        if t and t["median"] is None:
            rng = "n/a (%s)" % t["note"]
        verified = sorted({by[k]["verified"] for k in by if k[:2] == (cell, server)}, key=len)
        lines.append("| %s | %s | %s | %s | %s | %s / %s / %s | %s | %s |" % (
            cell, server, rng, med(cell, server, "cpu_s"), med(cell, server, "cpu_s_per_gb"),
            med(cell, server, "probe_p50_ms"), med(cell, server, "probe_p99_ms"),
            med(cell, server, "probe_max_ms"), t["bound"] if t else "",
            "FAIL" if "FAIL" in verified else (verified[-1] if verified else "")))
    return lines


def slow_table(rows):
    """The slow-client cells, one line per cell and server: the server's
    memory per download (a few seconds after every client had body bytes,
    and near the end), its CPU-seconds per GB, and what the clients got."""
    by = {(r["cell"], r["server"], r["metric"]): r for r in rows if r["group"] == "slow"}
    cells = [c for g, c, m in cells_of(rows) if g == "slow" and m == "pss_per_dl_ready"]
    servers = servers_of([r for r in rows if r["group"] == "slow"])

    def med(cell, server, metric, unit=""):
        m = by.get((cell, server, metric))
        return fmt(m["median"], unit) if m else "n/a"

    def spread(cell, server, metric):
        """Median [min - max] over the steady windows."""
        return fmt_range(by.get((cell, server, metric)))

    lines = ["| cell | server | conns | KiB per download: at ready / at end "
             "/ median [min - max] of the readings "
             "| server CPU-s per GB: run / steady windows' median [min - max] "
             "| MB/s delivered (share of N x rate) "
             "| ready after (s) | kernel send queue, KiB per download | bound | verified |",
             "|---|---|---:|---:|---:|---:|---:|---:|---|---|"]
    for cell in cells:
        conns = cell.split()[2].split("x")[0] if len(cell.split()) > 2 else "?"
        for server in servers:
            p = by.get((cell, server, "pss_per_dl_ready"))
            if p is None:
                continue
            if p["median"] is None and (cell, server, "throughput") not in by:
                lines.append("| %s | %s | %s | n/a (%s) | | | | | | |" % (cell, server, conns,
                                                                         p["note"]))
                continue
            t = by.get((cell, server, "throughput"))
            v = sorted({by[k]["verified"] for k in by if k[:2] == (cell, server)}, key=len)
            lines.append("| %s | %s | %s | %s / %s / %s | %s / %s | %s (%s) | %s | %s | %s | %s |" % (
                cell, server, conns, med(cell, server, "pss_per_dl_ready"),
                med(cell, server, "pss_per_dl_end"), spread(cell, server, "pss_per_dl"),
                med(cell, server, "cpu_s_per_gb"),
                spread(cell, server, "cpu_s_per_gb_steady"),
                med(cell, server, "throughput"), med(cell, server, "paced_share"),
                med(cell, server, "ready_s"), med(cell, server, "sndq_per_dl"),
                t["bound"] if t else "",
                "FAIL" if "FAIL" in v else (v[-1] if v else "")))
    return lines


def fair_table(rows):
    """The fair-shares cells, one line per cell and server: each download's
    own rate (min / median / max) and their spread; for the many-stream
    cell, the singles against the many-stream connection."""
    by = {(r["cell"], r["server"], r["metric"]): r for r in rows if r["group"] == "fair"}
    cells = [c for g, c, m in cells_of(rows) if g == "fair" and m in ("throughput",
                                                                    "single_median_mbs")]
    servers = servers_of([r for r in rows if r["group"] == "fair"])

    def med(cell, server, metric):
        m = by.get((cell, server, metric))
        return fmt(m["median"]) if m else "n/a"

    def verified(cell, server):
        v = sorted({by[k]["verified"] for k in by if k[:2] == (cell, server)}, key=len)
        return "FAIL" if "FAIL" in v else (v[-1] if v else "")

    def spread(cell, server):
        return fmt_range(by.get((cell, server, "spread")))

    lines = ["| cell | server | each download (or stream), MB/s: min / median / max | max / min "
             "| all, MB/s "
             "| bound | verified |", "|---|---|---:|---:|---:|---|---|"]
    many = []
    for cell in cells:
        for server in servers:
            if (cell, server, "throughput") in by:
                t = by[(cell, server, "throughput")]
                if t["median"] is None:
                    lines.append("| %s | %s | n/a (%s) | | | | |" % (cell, server, t["note"]))
                    continue
                lo, mid, hi = "dl_min_mbs", "dl_median_mbs", "dl_max_mbs"
                if (cell, server, "stream_min_mbs") in by:
                    lo, mid, hi = "stream_min_mbs", None, "stream_max_mbs"
                lines.append("| %s | %s | %s / %s / %s | %s | %s | %s | %s |" % (
                    cell, server, med(cell, server, lo),
                    med(cell, server, mid) if mid else "-", med(cell, server, hi),
                    spread(cell, server), fmt(t["median"]), t["bound"], verified(cell, server)))
            elif (cell, server, "single_median_mbs") in by:
                s = by[(cell, server, "single_median_mbs")]
                if s["median"] is None:
                    many.append("| %s | %s | n/a (%s) | | | | |" % (cell, server, s["note"]))
                    continue
                many.append("| %s | %s | %s / %s / %s | %s | %s (%s) | %s | %s |" % (
                    cell, server, med(cell, server, "single_min_mbs"),
                    med(cell, server, "single_median_mbs"), med(cell, server, "single_max_mbs"),
                    spread(cell, server), med(cell, server, "many_conn_mbs"),
                    med(cell, server, "many_stream_mbs"), med(cell, server, "many_share"),
                    verified(cell, server)))
    if many:
        lines += ["", "| cell | server | single-stream clients, MB/s: min / median / max "
                  "| max / min | many-stream connection, MB/s (per stream) "
                  "| connection / median single | verified |",
                  "|---|---|---:|---:|---:|---:|---|"] + many
    return lines


def series(r):
    """The bar a row belongs to: its server, or "ktlsd ring ops"."""
    return r["server"] + (" ring ops" if r["metric"] == "ring_ops_per_mib" else "")


def plot(name, title, ylabel, rows, pick, value="median"):
    """Clustered bars: one cluster per cell, one bar per server (series)."""
    sel = [r for r in rows if pick(r)]
    if not sel or not shutil.which("gnuplot"):
        return None
    servers = []
    for s in servers_of(sel):
        servers += [x for x in (s, s + " ring ops") if any(series(r) == x for r in sel)]
    cells = []
    for r in sel:
        if r["cell"] not in cells:
            cells.append(r["cell"])
    by = {(r["cell"], series(r)): r[value] for r in sel}
    dat = os.path.join(OUT, name + ".dat")
    with open(dat, "w") as f:
        f.write('"cell" ' + " ".join('"%s"' % s for s in servers) + "\n")
        for c in cells:
            vals = [by.get((c, s)) for s in servers]
            f.write('"%s" %s\n' % (c, " ".join("-" if v is None else "%g" % v for v in vals)))
    gp = os.path.join(OUT, name + ".gp")
    with open(gp, "w") as f:
        f.write("""set terminal pngcairo size 1200,600 noenhanced font ",10"
set output "%s"
set title "%s"
set ylabel "%s"
set datafile missing "-"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set grid ytics
set key top right
set yrange [0:*]
set xtics rotate by -25 left
set bmargin 8
plot for [i=2:%d] "%s" using i:xtic(1) title columnheader(i)
""" % (os.path.join(OUT, name + ".png"), title, ylabel, len(servers) + 1, dat))
    r = subprocess.run(["gnuplot", gp], capture_output=True, text=True)
    if r.returncode != 0:
        # pngcairo is missing in some builds: fall back to the gd png terminal.
        with open(gp) as f:
            text = f.read().replace('pngcairo size 1200,600 noenhanced font ",10"',
                                    "png size 1200,600 noenhanced")
        with open(gp, "w") as f:
            f.write(text)
        r = subprocess.run(["gnuplot", gp], capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write("gnuplot failed for %s: %s\n" % (name, r.stderr))
        return None
    return name + ".png"


def read(name, default=""):
    try:
        with open(os.path.join(OUT, name)) as f:
            return f.read()
    except OSError:
        return default


def main():
    raw = read_raw()
    rows = aggregate(raw)
    write_results(rows)
    fails = [r for r in raw if r["group"] == "start"]

    md = ["# ktlsd side by side", ""]
    md.append("`%s` — %s" % (read("invocation.txt").strip(),
                             " ".join(read("versions.txt").splitlines()[:1])))
    md.append("")
    partial = read("partial.txt").strip()
    if partial:
        md.append("**Partial run:** " + " ".join(partial.splitlines()) +
                  " What was measured before that is below.")
        md.append("")
    md.append("Servers: %s. Each cell is the median of its repetitions (servers alternating, "
              "the order turned one place each repetition: A B C, B C A, ...), the server pinned to one core and the load generator to the others. "
              "\"per server CPU-s\" divides the work by the CPU time the server itself used "
              "(from /proc), which stays fair when the client is the bottleneck; a cell where "
              "the server used less than %d%% of its core is marked client-bound when the client "
              "cores were saturated, and \"neither\" (the server waited) when they were not." %
              (", ".join(servers_of(rows)), int(BUSY * 100)))
    md.append("")
    md.append("## ktlsd / best peer, every cell")
    md.append("")
    md.append("Ratios above 1 favour ktlsd (for costs, marked *lower is better*, below 1 does).")
    if any(r["server"] == BASE for r in rows):
        md.append("`%s` is a second ktlsd build (`--ktlsd-baseline`, binary in versions below), "
                  "run through the same cells in the same run, interleaved with the others; it is "
                  "never the \"best peer\". `ktlsd / %s` above 1 favours the build under test "
                  "(for costs, below 1 does)." % (BASE, BASE))
    md.append("")
    md += ratio_table(rows)
    md.append("")
    if fails:
        md.append("Servers that failed a configuration: " + "; ".join(
            "%s (%s, rep %s): %s" % (r["server"], r["cell"], r["rep"], r["note"]) for r in fails))
        md.append("")

    md.append("## Plots")
    md.append("")
    pngs = [
        plot("throughput", "Large files and plain HTTP: throughput by mode (median)", "GB/s",
             rows, lambda r: r["group"] in ("large", "plain") and r["metric"] == "throughput"),
        plot("per_cpu_requests", "1 KiB requests per server CPU-second", "requests per CPU-s",
             rows, lambda r: r["group"] == "small" and r["per_cpu_median"] is not None,
             "per_cpu_median"),
        plot("per_cpu_handshakes", "Handshakes per server CPU-second", "handshakes per CPU-s",
             rows, lambda r: r["group"] == "handshake" and r["per_cpu_median"] is not None,
             "per_cpu_median"),
        plot("cold", "Cold files from disk: throughput (median)", "MB/s", rows,
             lambda r: r["group"] == "cold" and r["metric"] == "throughput"
             and r["server"] != "machine"),
        plot("cold_probe", "Cold files from disk: the probe's p99 latency meanwhile (median)", "ms",
             rows, lambda r: r["group"] == "cold" and r["metric"] == "probe_p99_ms"),
        plot("slow", "Slow clients: server memory per download a few seconds after all had bytes",
             "KiB per download", rows,
             lambda r: r["group"] == "slow" and r["metric"] == "pss_per_dl_ready"),
        plot("syscalls", "Syscalls per MiB served (ktlsd: and io_uring operations), one download",
             "per MiB", rows, lambda r: r["group"] == "cost"
             and r["metric"] in ("syscalls_per_mib", "ring_ops_per_mib")),
        plot("ktls_matrix", "kTLS matrix in user-mode Linux: syscalls (and ring ops) per MiB",
             "per MiB", rows, lambda r: r["group"] == "ktls"
             and r["metric"] in ("syscalls_per_mib", "ring_ops_per_mib")),
        plot("ktls_records", "kTLS matrix in user-mode Linux: TLS records per MiB", "records per MiB",
             rows, lambda r: r["group"] == "ktls" and r["metric"] == "records_per_mib"),
    ]
    if not any(pngs):
        md.append("(no plots: gnuplot is not installed or there was nothing to plot)")
    for p in pngs:
        if p:
            md.append("![%s](%s)" % (p, p))
            md.append("")

    sections = [
        ("Handshakes (new connection per request)", ("handshake",)),
        ("Small files (1 KiB, keep-alive)", ("small",)),
        ("Large files and plain HTTP", ("large", "plain")),
        ("Memory with idle TLS connections", ("memory",)),
        ("Many plain-HTTP downloads at once, ktlsd as --user nobody (issue 10)", ("many",)),
        ("Cold files: downloads from disk, and a probe's latency meanwhile (issue 22)", ("cold",)),
        ("Fair shares: many downloads at once, and one connection of many streams (issue 22)",
         ("fair",)),
        ("Slow clients: many slow TLS downloads at once, what they cost the server (issue 22)",
         ("slow",)),
        ("Cost per MiB served (one download under strace), and per small request", ("cost",)),
        ("kTLS matrix (user-mode Linux; counts carry over, speed does not)", ("ktls",)),
        ("Limits of this machine", ("limits",)),
    ]
    md.append("## All results")
    md.append("")
    for title, groups in sections:
        if not any(r["group"] in groups for r in rows):
            continue
        md.append("### " + title)
        md.append("")
        if "ktls" in groups:
            md.append("Measured inside user-mode Linux, where a syscall costs ~80 µs and the "
                      "kernel's AES is plain C: throughput there is a curiosity, labelled as "
                      "such; syscalls, TLS records and user-space copies per MiB carry over.")
            md.append("")
        if "many" in groups:
            md.append("ktlsd builds only (the peers have no ring-operation counters): ktlsd "
                      "started with `--user nobody`, N downloads of one file over plain HTTP, "
                      "all connections open at once (h2load, one client thread). Ring operations "
                      "per MiB = (send_ops + splice_ops + read_ops) / MiB out, summed over the "
                      "workers' counters printed on exit; issue 10 asks for at most 4.")
            md.append("")
        if "cost" in groups:
            md.append("ktlsd does its socket and file I/O through io_uring, which strace does "
                      "not see: for ktlsd the syscall count is mostly `io_uring_enter`, and its "
                      "ring operations per MiB come from its own counters (printed on exit).")
            md.append("")
        if "cold" in groups:
            md.append("Distinct files that are not in the page cache (each dropped with "
                      "`POSIX_FADV_DONTNEED` right before the downloads), on disk, downloaded "
                      "at once with curl, one connection each, while a probe (`bench/tools/"
                      "probe.py`, on the client core) fetches the cached 1 KiB file every 5 ms "
                      "on one keep-alive TLS connection: its latency is what the other "
                      "connections of a server see while that server waits for the disk. "
                      "`nginx-aio` is nginx with `aio threads`; ktlsd builds also serve the "
                      "files over plain HTTP and over HTTP/2 (the probe stays HTTPS, HTTP/1.1). "
                      "A fresh server for each repetition.")
            md.append("")
            md += cold_table(rows)
            md.append("")
        if "fair" in groups:
            md.append("Many HTTPS downloads of one cached file at once, curl, one connection and "
                      "one process each (HTTP/1.1, then HTTP/2), no rate limit: each download's "
                      "own rate (its bytes over its own time), and the fastest over the slowest "
                      "(issue 22 asks for at most 2). Then one HTTP/2 connection of many streams "
                      "(h2load -c1 -m), alone: each stream's rate over its own time (they all "
                      "start at once), slowest and fastest; and beside single-stream HTTP/2 "
                      "clients (curl): the singles' "
                      "rates, and what the many-stream connection received while they ran (its "
                      "socket's bytes from ss, from the singles' start to the last one's end), "
                      "in all and per stream; a server that shares by connection gives it about one single's "
                      "rate (1 in the connection / median single column), one that shares by "
                      "stream up to one per stream. Each client is a process of its own on the "
                      "client core: where that core is the limit (bound: client), the scheduler "
                      "shares it evenly, and a server's preferences show less.")
            md.append("")
            md += fair_table(rows)
            md.append("")
        if "slow" in groups:
            md.append("N HTTPS (TLS 1.3, AES-128-GCM) HTTP/1.1 downloads of one cached 256 MiB "
                      "file at once from `bench/tools/slowload.c` (one epoll thread on the client "
                      "core), each read at a fixed rate, so every connection's socket stays full "
                      "on the server's side, as with slow lines. KiB per download: (the proportional "
                      "set size of all the server's processes, from `/proc/PID/smaps_rollup`, "
                      "minus the same before the clients connected) / N, read a few seconds after "
                      "every connection had body bytes (at ready) and again shortly before the "
                      "clients stop (at end): flat if the two agree; and at the end of each of "
                      "five steady windows between those two (median [min - max]). Server CPU-s "
                      "per GB: its user "
                      "and system time over the clients' whole run, the N full handshakes "
                      "included, per 10^9 body bytes delivered (run), which also pays for filling "
                      "every socket's buffers at the start and so falls as the run grows longer; "
                      "and in each of the five windows per 10^9 bytes the server wrote to its "
                      "sockets meanwhile (steady, median [min - max]; TLS records, the change in "
                      "`ss -i`'s bytes_acked plus Send-Q of the server's sockets: bytes "
                      "acknowledged alone would count the queue a server filled at the start as "
                      "free). The kernel's send queue (`ss` Send-Q of the server's "
                      "sockets at the first reading) is memory a slow client costs that the PSS "
                      "does not show. The share in the MB/s column is "
                      "what the clients got over what they asked for (N x rate x time); bound "
                      "*paced* when it is %d%% or more. A fresh server per cell, one repetition; "
                      "one download of the file checked byte for byte afterwards." % (PACED * 100))
            md.append("")
            md += slow_table(rows)
            md.append("")
        md += full_table(rows, groups)
        md.append("")

    md.append("## How this was measured")
    md.append("")
    md.append("### Versions and machine")
    md.append("")
    md.append("```")
    md.append(read("versions.txt").rstrip())
    md.append("```")
    md.append("")
    chk = read("ktlsd-check.txt").strip()
    if chk:
        md.append("`ktlsd --check` on this machine:")
        md.append("")
        md.append("```")
        md.append(chk)
        md.append("```")
        md.append("")
    md.append("### Commands (PORT is the server's port of that run)")
    md.append("")
    md.append("```")
    seen = []
    for line in read("commands.log").splitlines():
        if line not in seen:
            seen.append(line)
    md += seen
    md.append("```")
    md.append("")
    md.append("### Configs")
    md.append("")
    cdir = os.path.join(OUT, "configs")
    shown = set()
    for name in sorted(os.listdir(cdir)) if os.path.isdir(cdir) else []:
        # One of each kind of file is enough: the others differ only in
        # ports, certificate and sendfile, as their names say.
        m = re.match(r"(.+?)-(?:ec|rsa)-sf(?:on|off)-", name)
        kind = (m.group(1) if m else name.split("-")[0]) + os.path.splitext(name)[1]
        if kind in shown:
            continue
        shown.add(kind)
        md.append("`configs/%s`:" % name)
        md.append("")
        md.append("```")
        md.append(read(os.path.join("configs", name)).rstrip())
        md.append("```")
        md.append("")
    md.append("All configs of the run are in `configs/`; every measurement is in `raw.csv`.")
    md.append("")
    with open(os.path.join(OUT, "report.md"), "w") as f:
        f.write("\n".join(md))


main()
