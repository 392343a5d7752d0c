"""Per-call figures of one bench-client-cost.sh run, or their medians.

  per_call_counts.py STATE SERVER ROUND            one run's line
  per_call_counts.py STATE --medians ROUNDS SERVER...   medians over rounds

A run is STATE/SERVER-ROUND.json (loadgen --json) with perf stat's CSV
output of the client (.client.csv) and of the server (.server.csv); each
count is divided by loadgen's calls (its window is the whole run: --warmup=0s).
"""
import json
import statistics
import sys

# perf event -> short name; task-clock is in milliseconds.
EVENTS = {
    "task-clock": "cpu_us",
    "context-switches": "cs",
    "raw_syscalls:sys_enter": "syscalls",
    "syscalls:sys_enter_recvmsg": "recvmsg",
    "syscalls:sys_enter_sendmsg": "sendmsg",
    "syscalls:sys_enter_futex": "futex",
}


def read_perf(path):
    counts = {}
    for line in open(path):
        fields = line.strip().split(",")
        if len(fields) > 2 and fields[2] in EVENTS and fields[0][:1].isdigit():
            counts[EVENTS[fields[2]]] = float(fields[0])
    return counts


def per_call(state, server, round_):
    base = f"{state}/{server}-{round_}"
    run = json.load(open(f"{base}.json"))
    calls = max(1, run["calls"])
    figures = {"qps": run["qps"], "p99_ms": run["p99_us"] / 1000}
    for side in ("client", "server"):
        for name, value in read_perf(f"{base}.{side}.csv").items():
            figures[f"{side}_{name}"] = value * (1000 if name == "cpu_us" else 1) / calls
    return figures


def line(server, figures):
    def side(name):
        return " ".join(
            f"{key} {figures.get(f'{name}_{key}', float('nan')):.2f}"
            for key in ("cpu_us", "cs", "syscalls", "recvmsg", "sendmsg", "futex"))
    return (f"{server:>14}: {figures['qps']:8.0f}/s p99 {figures['p99_ms']:6.2f} ms"
            f" | client {side('client')} | server {side('server')}")


def main(argv):
    state = argv[1]
    if argv[2] == "--medians":
        rounds, servers = int(argv[3]), argv[4:]
        print("\nmedians over rounds, per call")
        for server in servers:
            runs = [per_call(state, server, r) for r in range(1, rounds + 1)]
            print(line(server, {k: statistics.median(r[k] for r in runs) for k in runs[0]}))
        return
    print(line(argv[2], per_call(state, argv[2], argv[3])))


if __name__ == "__main__":
    main(sys.argv)
