#!/usr/bin/env python3
"""osu-table.py: the OSU ratio tables of a scripts/bench-ucx.sh run (--network ucx or ofi).

    scripts/osu-table.py RESULTS.jsonl [--md FILE] [--baseline EARLIER.jsonl]

Reads the "suite":"osu" lines bench-ucx.sh wrote, takes each figure's median over the rounds
and prints one table per (transport, PE count): rshmem, the peer library (Open MPI's OSHMEM
over UCX, Sandia OpenSHMEM over libfabric), ratio (the peer's time over rshmem's; for
message rates rshmem's rate over the peer's: above 1 rshmem is better), the
ratio's range over the rounds, and rshmem's default shared-memory path beside it (with
--baseline, the earlier run's shm figure over this one's, above 1: faster now). --md
writes the same as markdown: selected sizes in the table, every figure in a <details>
block.
"""
import json
import statistics
import sys

PROGRAMS = ["put", "get", "put_mr", "atomics", "barrier", "broadcast", "reduce"]
# (title, rshmem config, peer config, tls, shm column?, peer's name)
TRANSPORTS = [
    ("UCX_TLS=tcp", "rshmem-ucx", "oshmem-ucx", "tcp", True, "OSHMEM"),
    ("UCX_TLS=sm,self", "rshmem-ucx", "oshmem-ucx", "sm,self", True, "OSHMEM"),
    ("2 simulated hosts, UCX over TCP between them", "rshmem-hosts", "oshmem-hosts", "tcp", False, "OSHMEM"),
    ("libfabric FI_PROVIDER=tcp", "rshmem-ofi", "sos-ofi", "tcp", True, "SOS"),
    ("libfabric FI_PROVIDER=sockets", "rshmem-ofi", "sos-ofi", "sockets", True, "SOS"),
    ("2 simulated hosts, libfabric tcp between them", "rshmem-ofi-hosts", "sos-hosts", "tcp", False, "SOS"),
]
MD_SIZES = {8, 4096, 65536, 1 << 20}
# (program, figure, size) -> first position in the results: OSU's own order of the AMOs.
order = {}


def load(path):
    rows = []
    with open(path) as f:
        for line in f:
            if line.startswith("{"):
                r = json.loads(line)
                if r.get("suite") == "osu":
                    rows.append(r)
    return rows


def figures(rows):
    """{(config, tls, pes, program, figure, size): {round: value}}, AMOs by latency."""
    out = {}
    for r in rows:
        if "value" not in r or r["metric"] == "rate_mops":
            continue
        key = (r["config"], r["tls"], r["pes"], r["program"].removeprefix("osu_oshm_"),
               r["figure"], r["size"])
        out.setdefault(key, {})[r["round"]] = (r["value"], r["metric"])
    return out


def size_text(n):
    if n is None:
        return ""
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"


def label(program, figure, size):
    if program == "atomics":
        return figure.removeprefix("shmem_")
    if program == "put_mr":
        return f"put_mr {size_text(size)} (msg/s)"
    return f"{program} {size_text(size)}".strip()


def show(v, metric):
    if v is None:
        return "-"
    if metric == "msg_rate":
        return f"{v / 1e6:.3g} M"
    if v >= 100:
        return f"{v:.0f}"
    return f"{v:.3g}" if v >= 0.01 else f"{v:.3f}"


def better(rs, osh, metric):
    """OSHMEM's time over rshmem's (rates: rshmem's over OSHMEM's); None if not both."""
    if rs is None or osh is None or rs <= 0 or osh <= 0:
        return None
    return rs / osh if metric == "msg_rate" else osh / rs


def median(by_round):
    return statistics.median(v for v, _ in by_round.values()) if by_round else None


def build_table(fig, base, rs_cfg, osh_cfg, tls, pes, with_shm):
    keys = sorted({k[3:] for k in fig if k[0] in (rs_cfg, osh_cfg) and k[1] == tls and k[2] == pes},
                  key=lambda k: (PROGRAMS.index(k[0]) if k[0] in PROGRAMS else 99,
                                 order.get(k, 0), k[2] or 0))
    lines = []
    for k in keys:
        rs_r = fig.get((rs_cfg, tls, pes) + k, {})
        osh_r = fig.get((osh_cfg, tls, pes) + k, {})
        shm_r = fig.get(("rshmem-shm", "", pes) + k, {}) if with_shm else {}
        metric = next(iter((rs_r or osh_r or shm_r).values()))[1]
        rs, osh, shm = median(rs_r), median(osh_r), median(shm_r)
        q = better(rs, osh, metric)
        per_round = [better(rs_r[n][0], osh_r[n][0], metric) for n in rs_r if n in osh_r]
        per_round = [x for x in per_round if x is not None]
        spread = f"{num(min(per_round))}-{num(max(per_round))}" if len(per_round) > 1 else ""
        b = base.get(("rshmem-shm", "", pes) + k) if with_shm and base else None
        vs_base = better(shm, median(b), metric) if b else None
        lines.append(dict(key=k, label=label(*k), metric=metric, rs=rs, osh=osh, q=q,
                          spread=spread, shm=shm, vs_base=vs_base,
                          every_round_below=len(per_round) > 1 and max(per_round) < 1))
    return lines


def num(q):
    return f"{q:.2f}" if q >= 0.1 else f"{q:.2g}"


def fmt_q(q):
    return "-" if q is None else num(q) + (" <" if q < 1 else "")


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        sys.exit("usage: osu-table.py RESULTS.jsonl [--md FILE] [--baseline EARLIER.jsonl]")
    path, md, base_path = args[0], None, None
    rest = args[1:]
    while rest:
        opt = rest.pop(0)
        if opt == "--md" and rest:
            md = rest.pop(0)
        elif opt == "--baseline" and rest:
            base_path = rest.pop(0)
        else:
            sys.exit(f"osu-table.py: unknown argument {opt}")
    rows = load(path)
    global order
    order = {}
    for r in rows:
        if "figure" in r:
            order.setdefault((r["program"].removeprefix("osu_oshm_"), r["figure"], r["size"]), len(order))
    fig = figures(rows)
    base = figures(load(base_path)) if base_path else {}
    machine = next((r for r in rows if r.get("event") == "machine"), {})
    loads = {r["when"]: r["loadavg"] for r in rows if r.get("event") == "load"}
    times = {r["when"]: r["time"] for r in rows if r.get("event") == "load"}
    failed = [r for r in rows if "failed" in r]
    rounds = len({r["round"] for r in rows if "round" in r})
    load_text = f"load average (1, 5, 15 min) {loads.get('start', '?')} at the start, {loads.get('end', '?')} at the end"
    minutes = (times["end"] - times["start"]) / 60 if "start" in times and "end" in times else None

    ofi = machine.get("network") == "ofi"
    if ofi:
        libs = (f"rshmem {machine.get('rshmem', '?')} and {machine.get('sos') or 'Sandia OpenSHMEM'} "
                f"over libfabric {machine.get('libfabric', '?')}")
    else:
        libs = (f"rshmem {machine.get('rshmem', '?')} and {machine.get('oshmem', 'OSHMEM')} "
                f"over UCX {machine.get('ucx', '?')}")
    intro = (f"OSU micro-benchmarks {machine.get('omb', '?')} (OpenSHMEM programs, symmetric heap), built with "
             f"each library's oshcc; {libs}; median of {rounds} interleaved round(s)"
             f"{' (--quick)' if machine.get('quick') else ''}; {machine.get('cores', '?')} cores "
             f"({machine.get('cpu', '?')}), Linux {machine.get('kernel', '?')}, {machine.get('date', '')}; "
             f"{load_text}" + (f"; {minutes:.0f} min." if minutes is not None else "."))
    out_md = ["## OSU micro-benchmarks: rshmem beside Sandia OpenSHMEM over the same libfabric", "",
              "Made by `scripts/bench-ucx.sh --network ofi --sos DIR --osu DIR --md FILE` (the OMB 6.1 "
              "sources: `git archive HEAD configure.ac c/openshmem c/util` of the OSU micro-benchmarks; "
              "SOS built with `--with-ofi --enable-pmi-simple --enable-ofi-manual-progress "
              "--enable-manual-progress --enable-hard-polling`, the configuration in which it accepts "
              "`tcp;ofi_rxm`): rshmem with `SHMEM_TRANSPORT=ofi FI_PROVIDER=P` under its oshrun, SOS "
              "with `FI_PROVIDER=P` under mpiexec.hydra (this SOS has no on-node transport, so it too "
              "reaches every PE through P), `FI_SOCKETS_PE_WAITTIME=0` for both with sockets; across 2 "
              "hosts simulated by `scripts/simhosts.sh` (network namespaces joined by a bridge, "
              "mpiexec.hydra for both) rshmem runs with `SHMEM_NETWORK=ofi` under its default "
              "transport (shared memory within a host) and SOS over libfabric tcp within a host too. "
              "Ratio = SOS's time over rshmem's (for message rates rshmem's rate over SOS's): above "
              "1, rshmem is better; `<` marks the figures below 1. Latencies in µs (OSU's averages; "
              "atomics: OSU's latency column, posted AMOs included); the rounds column is the ratio's "
              "range over the rounds; rs shm: rshmem's default shared-memory path in the same rounds.",
              "", intro, ""] if ofi else [
              "## OSU micro-benchmarks: rshmem beside OSHMEM over the same UCX", "",
              "Made by `scripts/bench-ucx.sh --osu DIR --md FILE` (the OMB 6.1 sources: "
              "`git archive HEAD configure.ac c/openshmem c/util` of the OSU micro-benchmarks): "
              "rshmem with `SHMEM_TRANSPORT=ucx UCX_TLS=...`, OSHMEM with `--mca spml ucx --mca pml ucx` "
              "(`opal_common_ucx_tls/devices any`, so its MPI-based collectives cross UCX too) and "
              "`-x UCX_TLS=...`; across 2 hosts simulated by `scripts/simhosts.sh` (network "
              "namespaces joined by a bridge) rshmem runs with its default transport under "
              "mpiexec.hydra (shared memory within a host) and OSHMEM under Open MPI's mpirun with "
              "`UCX_TLS=tcp` (TCP within a host too). Ratio = OSHMEM's time over rshmem's (for "
              "message rates rshmem's rate over OSHMEM's): above 1, rshmem is better; `<` marks the "
              "figures below 1. Latencies in µs (OSU's averages; atomics: OSU's latency column, "
              "posted AMOs included); the rounds column is the ratio's range over the rounds; "
              "rs shm: rshmem's default shared-memory path in the same rounds.", "", intro, ""]
    print()
    print(intro)
    summary = []
    for title, rs_cfg, osh_cfg, tls, with_shm, peer in TRANSPORTS:
        for pes in (2, 4):
            lines = build_table(fig, base, rs_cfg, osh_cfg, tls, pes, with_shm)
            if not lines:
                continue
            both = [ln for ln in lines if ln["q"] is not None]
            below = [ln for ln in both if ln["q"] < 1]
            nb = [ln for ln in lines if ln["vs_base"] is not None]
            nb_below = [ln for ln in nb if ln["vs_base"] < 1]
            head = f"{title}, {pes} PEs" + (" (1 per host)" if pes == 2 and not with_shm else
                                            " (2 per host)" if not with_shm else "")
            # A median below 1.0 whose rounds cross 1.0 is within the run's own noise; those
            # below in every round are the figures where rshmem is behind in this run.
            every = [ln for ln in below if ln["every_round_below"]]
            count = f"{len(below)} of {len(both)} figures below 1.0"
            if rounds > 1:
                count += f", {len(every)} of them in every round"
            if base:
                count += f"; rshmem shm slower than the baseline in {len(nb_below)} of {len(nb)}"
            summary.append(f"{head}: {count}")
            cols = ["figure", "rshmem", peer, "ratio", "rounds"] + (["rs shm"] if with_shm else []) + \
                (["shm vs base"] if with_shm and base else [])
            width = [30, 10, 10, 9, 15, 10, 11]
            print()
            print(f"{head} ({count}; µs, message rates in M/s)")
            print(" ".join(f"{c:<{w}}" if i == 0 else f"{c:>{w}}" for i, (c, w) in enumerate(zip(cols, width))))

            def cells(ln):
                c = [ln["label"], show(ln["rs"], ln["metric"]), show(ln["osh"], ln["metric"]),
                     fmt_q(ln["q"]), ln["spread"]]
                if with_shm:
                    c.append(show(ln["shm"], ln["metric"]))
                    if base:
                        c.append(fmt_q(ln["vs_base"]))
                return c
            for ln in lines:
                c = cells(ln)
                print(" ".join(f"{x:<{w}}" if i == 0 else f"{x:>{w}}" for i, (x, w) in enumerate(zip(c, width))))
            if below:
                print("below 1.0: " + ", ".join(f"{ln['label']} ({ln['q']:.2f})" for ln in below))

            def md_table(sel):
                t = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
                t += ["| " + " | ".join(cells(ln)) + " |" for ln in sel]
                return t
            short = [ln for ln in lines if ln["key"][2] is None and ln["key"][0] != "atomics"
                     or ln["key"][2] in MD_SIZES
                     or ln["key"][0] == "atomics" and "longlong" in ln["key"][1]]
            out_md += [f"### {head}", "", f"{count}.", ""] + md_table(short) + \
                ["", "<details><summary>every figure</summary>", ""] + md_table(lines) + ["", "</details>", ""]
    if failed:
        print()
        print("runs that failed (their figures, if any, are in the tables):")
        for r in failed:
            print(f"  round {r['round']}: {r['config']} {r['tls'] or 'default'} {r['pes']} PEs "
                  f"{r['program']}: {r['failed']}")
        out_md += ["Runs that failed: " + "; ".join(
            f"round {r['round']} {r['config']} {r['tls'] or 'default'} {r['pes']} PEs {r['program']} ({r['failed']})"
            for r in failed) + ".", ""]
    print()
    print("Summary: " + "; ".join(summary) if summary else "(no OSU figures)")
    if md:
        with open(md, "w") as f:
            f.write("\n".join(out_md + ["Summary: " + "; ".join(summary) + "."]) + "\n")
        print(f"markdown: {md}", file=sys.stderr)


if __name__ == "__main__":
    main()
