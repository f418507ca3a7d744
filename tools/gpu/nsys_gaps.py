#!/usr/bin/env python3
"""Where a short training iteration's device time goes, from an nsys
profile exported to SQLite (nsys export --type sqlite): for each GPU, over
the middle half of the run, the time its kernels and copies kept it busy,
the idle gaps between them, and how much of the NCCL kernels' time no
other kernel ran beside (the all-reduce left exposed).

    nsys profile -t cuda --cuda-graph-trace=node -o prof bin/gocaffe train ...
    nsys export --type sqlite -o prof.sqlite prof.nsys-rep
    python3 tools/gpu/nsys_gaps.py prof.sqlite [ITERATIONS]
"""
import sqlite3
import sys


def intervals(db, table):
    try:
        rows = db.execute(f"SELECT start, end, deviceId, shortName FROM {table}").fetchall()
    except sqlite3.OperationalError:
        try:
            rows = [(s, e, d, None) for s, e, d in db.execute(f"SELECT start, end, deviceId FROM {table}")]
        except sqlite3.OperationalError:
            return []
    return rows


def main():
    db = sqlite3.connect(sys.argv[1])
    iters = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    names = dict(db.execute("SELECT id, value FROM StringIds").fetchall())
    ops = [(s, e, d, names.get(n, "") if n is not None else "memcpy")
           for s, e, d, n in intervals(db, "CUPTI_ACTIVITY_KIND_KERNEL") + intervals(db, "CUPTI_ACTIVITY_KIND_MEMCPY")]
    for dev in sorted({o[2] for o in ops}):
        mine = sorted(o for o in ops if o[2] == dev)
        t0, t1 = mine[0][0], mine[-1][1]
        lo, hi = t0 + (t1 - t0) // 4, t1 - (t1 - t0) // 4
        win = [o for o in mine if o[0] >= lo and o[1] <= hi]
        busy, gaps, end = 0, [], None
        for s, e, _, _ in win:
            if end is None or s > end:
                if end is not None:
                    gaps.append(s - end)
                busy += e - s
                end = e
            elif e > end:
                busy += e - end
                end = e
        span = hi - lo
        nccl = [o for o in win if "nccl" in o[3].lower()]
        other = [o for o in win if "nccl" not in o[3].lower()]
        exposed = 0
        j = 0
        for s, e, _, _ in nccl:
            covered, cur = 0, s
            for os_, oe, _, _ in other:
                if oe <= cur or os_ >= e:
                    continue
                a, b = max(os_, cur), min(oe, e)
                if b > a:
                    covered += b - a
                    cur = b
            exposed += (e - s) - covered
        per = f", per iteration (of {iters * span // (t1 - t0)})" if iters else ""
        n = max(1, iters * span // (t1 - t0)) if iters else 1
        gaps.sort()
        big = [g for g in gaps if g > 2000]
        print(f"GPU {dev}: middle {span/1e6:.1f} ms, busy {busy/span:.1%}; {len(win)} operations; "
              f"gaps {len(gaps)} (median {gaps[len(gaps)//2]/1e3 if gaps else 0:.1f} us, {len(big)} over 2 us summing {sum(big)/1e6:.2f} ms); "
              f"NCCL kernels {len(nccl)} taking {sum(e-s for s,e,_,_ in nccl)/1e6:.2f} ms, {exposed/1e6:.2f} ms with no other kernel beside{per}: "
              f"busy {busy/n/1e3:.1f} us, idle {(span-busy)/n/1e3:.1f} us, NCCL exposed {exposed/n/1e3:.1f} us")
        top = {}
        for s, e, _, name in win:
            top.setdefault(name, [0, 0])
            top[name][0] += 1
            top[name][1] += e - s
        for name, (c, t) in sorted(top.items(), key=lambda x: -x[1][1])[:12]:
            print(f"   {t/n/1e3:7.2f} us/iter  {c//n if iters else c:4d}x  {name[:90]}")


if __name__ == "__main__":
    main()
