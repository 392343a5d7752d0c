#!/usr/bin/env python3
"""Catalog first start and the estimator's snapshot load, on loopback.

For each round: start catalog-service on a new SQLite file and time until it
logs "serving gRPC" (the shipped dataset loaded); start estimator-service
against it and time until it logs "catalog snapshot loaded"; stop both and
restart the catalog on the same file (restart time). Prints each round and
the median. Usage: python3 scripts/measure-startup.py [ROUNDS] (default 7),
after `bash scripts/build.sh catalog-service estimator-service`.
Environment: BUILD (default ./build), PORT (default 58151; round i uses PORT+2i and PORT+2i+1).
"""
import os
import select
import subprocess
import sys
import tempfile
import time

BUILD = os.environ.get("BUILD", os.path.join(os.path.dirname(__file__), "..", "build"))
PORT = int(os.environ.get("PORT", "58151"))


def start(cmd, needle, timeout=60):
    """Starts `cmd`; returns (process, seconds until `needle` was logged, log)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    while time.monotonic() - t0 < timeout:
        ready, _, _ = select.select([p.stdout], [], [], 0.5)
        if not ready:
            continue
        line = p.stdout.readline()
        if not line:
            break
        lines.append(line)
        if needle in line:
            return p, time.monotonic() - t0, lines
    return p, None, lines


def stop(p):
    p.terminate()
    try:
        p.wait(10)
    except subprocess.TimeoutExpired:
        p.kill()


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    results = {"first start": [], "restart": [], "snapshot loaded": []}
    with tempfile.TemporaryDirectory() as state:
        for i in range(rounds):
            db = os.path.join(state, f"catalog{i}.db")
            port = PORT + 2 * i  # a port of its own: the last round's may linger
            catalog = [os.path.join(BUILD, "catalog-service/catalog-service"),
                       f"--sqlite_path={db}", f"--grpc_address=127.0.0.1:{port}",
                       "--metrics_address=127.0.0.1:0"]
            p, seconds, log = start(catalog, "serving gRPC")
            if seconds is None:
                stop(p)
                print("catalog did not start:\n" + "".join(log))
                continue
            results["first start"].append(seconds)
            e, seconds, log = start(
                [os.path.join(BUILD, "estimator-service/estimator-service"),
                 f"--catalog_address=127.0.0.1:{port}", f"--grpc_address=127.0.0.1:{port + 1}",
                 "--metrics_address=127.0.0.1:0"], "catalog snapshot loaded")
            if seconds is None:
                print("estimator did not load its snapshot:\n" + "".join(log))
            else:
                results["snapshot loaded"].append(seconds)
            stop(e)
            stop(p)
            p, seconds, _ = start(catalog, "serving gRPC")
            if seconds is not None:
                results["restart"].append(seconds)
            stop(p)
    for name, values in results.items():
        if values:
            median = sorted(values)[len(values) // 2]
            print(f"{name}: median {median:.3f} s; rounds " +
                  " ".join(f"{v:.3f}" for v in values))


if __name__ == "__main__":
    main()
