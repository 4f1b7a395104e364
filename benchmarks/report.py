"""report: the README's performance table, written from the JSON lines of one `make bench` run.

Each benchmark prints one JSON line last; `make bench` keeps each script's
output in build/bench/<name>.out. This script reads them, builds one table
(paired ratios with their spread, each target and whether this run met it)
with the machine and date, and replaces what stands between the README's
markers. A benchmark that did not run this time is a row saying so: no
figure of an older run is kept in the table.

    python benchmarks/report.py [--dir build/bench] [--write README.md]   (without --write: print it)
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
START, END = "<!-- bench-table:start (benchmarks/report.py writes this) -->", "<!-- bench-table:end -->"
ORDER = ("startup", "scale", "ddp_overhead", "ps_throughput", "staging", "am_scale", "cli", "driver")


def results(where: Path) -> dict[str, dict]:
    """benchmark name -> its JSON line, from each <name>.out in ``where``."""
    out: dict[str, dict] = {}
    for f in sorted(where.glob("*.out")):
        for line in reversed(f.read_text(errors="replace").splitlines()):
            if line.startswith("{"):
                try:
                    doc = json.loads(line)
                except ValueError:
                    break
                if isinstance(doc, dict) and "benchmark" in doc:
                    out[doc["benchmark"]] = doc
                break
    return out


def ratio(r: dict | None) -> str:
    if not r:
        return "-"
    return f"**{r['median']:.2f}x** ({r['low']:.2f}-{r['high']:.2f}, {r['pairs']} pairs)"


def verdict(ok: bool) -> str:
    return "met" if ok else "**not met**"


def rows(res: dict[str, dict]) -> list[tuple[str, str, str, str, str]]:
    """(benchmark, tfyarn, compared with, paired ratio, target: met?) per row."""
    out: list[tuple[str, str, str, str, str]] = []
    if st := res.get("startup"):
        for case, r in st["cases"].items():
            med = r["median_s"]
            other = f"floor {med['floor']:.2f} s" if "floor" in med else "-"
            if "tf-yarn" in med:
                other += f"; tf-yarn 0.7.0 {med['tf-yarn']:.2f} s ({ratio(r.get('tfyarn_over_tf_yarn'))})"
            fl = r.get("tfyarn_over_floor")
            out.append((f"startup, {case}, median of {st['runs']}", f"{med['tfyarn']:.2f} s", other, ratio(fl),
                        f"<= 0.8x floor: {verdict(bool(fl) and fl['median'] <= 0.8)}"))
    if sc := res.get("scale"):
        top = max(r["tasks"] for r in sc["rows"])
        for r in sc["rows"]:
            target = f"<= 1.1x at {top}: {verdict(r['ratio']['median'] <= 1.1)}" if r["tasks"] == top else ""
            out.append((f"scale, {r['kind']} x {r['tasks']} tasks, median of {sc['runs']}",
                        f"{r['tfyarn_s']:.2f} s; AM {r['am_cpu_s']:.1f} CPU s, {r['am_peak_rss_mib']:.0f} MiB",
                        f"floor {r['floor_s']:.2f} s", ratio(r["ratio"]), target))
    if d := res.get("ddp_overhead"):
        pr = d.get("paired_ratio")
        out.append((f"ddp_overhead, 2 ranks, {d['steps_per_rank']} steps each, {d['rounds']} rounds",
                    f"{d['steps_per_s']['tfyarn']:.1f} steps/s", f"torchrun {d['steps_per_s']['torchrun']:.1f} steps/s",
                    ratio(pr), f">= 0.95x: {verdict(bool(pr) and pr['median'] >= 0.95)}"))
        if "platform_cpu_share" in d:
            parts = ", ".join(f"{k} {100 * v:.2f}%" for k, v in d.get("platform_cpu_share_by_part", {}).items())
            out.append(("platform CPU while the DDP example trains (/proc)",
                        f"{100 * d['platform_cpu_share']:.2f}% of the training's CPU", parts, "-",
                        f"<= 2%: {verdict(d['platform_cpu_share'] <= 0.02)}"))
    if ps := res.get("ps_throughput"):
        pr = ps["paired_ratio"]
        out.append((f"ps_throughput, PS example (chief + 2 workers + 1 ps), {ps['steps']} steps, {ps['rounds']} rounds",
                    f"{ps['steps_per_s']['tfyarn']:.1f} steps/s",
                    f"the same processes by hand {ps['steps_per_s']['by hand']:.1f} steps/s", ratio(pr),
                    f">= 0.95x: {verdict(pr['median'] >= 0.95)}"))
        if (pc := ps.get("paired_cpu_per_step")) and (pb := ps.get("paired_beside")):
            cl = ps.get("cluster_cpu_share", {})
            out.append(("ps_throughput, where the difference goes (CPU from /proc in the chief's training window)",
                        f"TF processes' CPU per step, tfyarn / by hand: {ratio(pc)}; tfyarn's own processes "
                        f"{100 * ps['platform_cpu_share']:.2f}% of the training's CPU, the cluster's daemons "
                        + ", ".join(f"{k} {100 * v:.1f}%" for k, v in cl.items()),
                        "by hand beside an idle 4-task tfyarn job, steps/s vs by hand alone", ratio(pb), "reported"))
    if s := res.get("staging"):
        sp, share = s.get("paired_speedup"), s.get("share_of_limit")
        mib = s["bytes"] >> 20
        out.append((f"staging, {s['files']} files / {mib} MiB HDFS -> local, {s['rounds']} rounds",
                    f"{s['tfyarn_s']:.2f} s ({mib / s['tfyarn_s']:.0f} MiB/s)",
                    f"`hdfs dfs -get` {s['hdfs_get_s']:.2f} s", ratio(sp),
                    f">= 2x in every round: {verdict(bool(sp) and sp['low'] >= 2)}"))
        if share and "read_limit_s" in s:
            out.append(("staging's share of the limit (the same bytes read into nothing)",
                        f"{100 * share['median']:.0f}% ({100 * share['low']:.0f}-{100 * share['high']:.0f}%)",
                        f"read {s['read_limit_s']:.2f} s ({mib / s['read_limit_s']:.0f} MiB/s)", "-", "reported"))
        if both := s.get("share_of_read_plus_write"):
            out.append(("staging against reading and then writing the same bytes (CPU-bound on 2 cores)",
                        f"{100 * both['median']:.0f}% ({100 * both['low']:.0f}-{100 * both['high']:.0f}%)",
                        f"write from memory {s['write_s']:.2f} s ({mib / s['write_s']:.0f} MiB/s)", "-", "reported"))
    if a := res.get("am_scale"):
        out.append((f"am_scale, {a['tasks']} tasks, in-process",
                    f"register + view {1000 * a['registration of all tasks + cluster view']:.1f} ms CPU; "
                    f"status JSON {1000 * a['status JSON (wall, median of 5)']:.1f} ms; {a['peak_rss_mib']:.0f} MiB",
                    "-", "-", f"< 1 s, < 100 ms, < 300 MiB: {verdict(all(a['targets_met'].values()))}"))
    if c := res.get("cli"):
        cases = "; ".join(f"`{k}` {v['median_s']:.3f} s" for k, v in c["cases"].items())
        out.append((f"cli, median of {c['runs']}", cases, "-", "-",
                    f"help < 0.5 s, no heavy imports: {verdict(c['targets_met'])}"))
    if dr := res.get("driver"):
        cases = "; ".join(f"`tfyarn {k}` {v['global_driver_s']:.3f} s (own driver {v['own_driver_s']:.3f} s)"
                          for k, v in dr["cases"].items())
        out.append((f"driver, median of {dr['runs']}", cases, "-", "-", "reported"))
    for name in ORDER:
        if name not in res:
            out.append((name, "not run this time", "-", "-", "-"))
    return out


def table(res: dict[str, dict]) -> str:
    cores = os.cpu_count()
    mem = next((int(line.split()[1]) >> 20 for line in Path("/proc/meminfo").read_text().splitlines()
                if line.startswith("MemTotal:")), 0)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=ROOT).stdout.strip() or "?"
    head = (f"`make bench` on {time.strftime('%Y-%m-%d')}, commit {commit}, on {cores} cores and {mem} GiB; "
            "ratios are the median of per-round ratios (each round runs both, alternating), with their "
            "lowest and highest in brackets.\n\n")
    lines = ["| benchmark | tfyarn | compared with | ratio, per round | target |", "|---|---|---|---|---|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows(res)]
    return head + "\n".join(lines) + "\n"


def write(readme: Path, text: str) -> None:
    doc = readme.read_text()
    if START not in doc or END not in doc:
        raise SystemExit(f"benchmarks/report.py: {readme} has no {START} ... {END} markers to write between")
    before, rest = doc.split(START, 1)
    after = rest.split(END, 1)[1]
    readme.write_text(f"{before}{START}\n{text}{END}{after}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", default=str(ROOT / "build" / "bench"))
    ap.add_argument("--write", default="", metavar="README")
    args = ap.parse_args()
    res = results(Path(args.dir))
    if not res:
        print(f"benchmarks/report.py: no benchmark output in {args.dir}: run `make bench`", file=sys.stderr)
        return 2
    text = table(res)
    if args.write:
        write(Path(args.write), text)
        print(f"wrote the performance table ({len(res)} benchmarks) into {args.write}", file=sys.stderr)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
