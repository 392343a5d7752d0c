#!/usr/bin/env python3
"""Seconds from SIGTERM to exit of each server, builds interleaved round by round.

For each round and build: catalog-service on SQLite, on PostgreSQL, and on
PostgreSQL with --postgres_record_cache (--watch_poll_interval=50ms), each
started alone, left 1 s, then stopped; then a catalog with an estimator and
a web front following it, stopped web, estimator, catalog. Every server but
the web front gets --shutdown_deadline=300ms (the web front has no such
flag; its --readiness_drain is 0). Each case is run twice: without and with
a GET /metrics just before SIGTERM (what Prometheus does every few seconds).

Usage, from the repository, with PostgreSQL's PG* variables set (pg_virtualenv
sets them; createdb must work):
  pg_virtualenv -t python3 scripts/measure-shutdown.py ROUNDS BUILD_DIR [BUILD_DIR...]
BUILD_DIR: a build tree (catalog-service/, estimator-service/, web/), e.g.
build and a reference build of main. Prints the load average after each
round, then every figure per case and build.
"""
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

DEADLINE = "--shutdown_deadline=300ms"


def start(argv, name, work):
    """Starts `argv` with a port file; returns (process, its ports)."""
    port_file = os.path.join(work, name + ".ports")
    if os.path.exists(port_file):
        os.remove(port_file)
    log = open(os.path.join(work, name + ".log"), "a")
    process = subprocess.Popen(
        argv + ["--metrics_address=127.0.0.1:0", "--port_file=" + port_file],
        stdout=log, stderr=log)
    for _ in range(600):
        if os.path.exists(port_file):
            break
        time.sleep(0.05)
    else:
        process.kill()
        sys.exit(f"{name} did not start: see {work}/{name}.log")
    ports = dict(line.split("=") for line in open(port_file).read().split())
    return process, {key: int(value) for key, value in ports.items()}


def stop(process, ports, scrape):
    """Seconds from SIGTERM to exit, and the exit code."""
    if scrape:
        url = f"http://127.0.0.1:{ports['metrics_port']}/metrics"
        urllib.request.urlopen(url, timeout=5).read()
    start_time = time.monotonic()
    process.send_signal(signal.SIGTERM)
    code = process.wait(60)
    return time.monotonic() - start_time, code


def new_database():
    name = f"measure_shutdown_{random.randrange(10**9)}"
    subprocess.run(["createdb", name], check=True)
    return name


def one_round(build, scrape, work, results):
    catalog = os.path.join(build, "catalog-service", "catalog-service")
    sqlite_path = os.path.join(work, f"catalog-{random.randrange(10**9)}.db")
    alone = [
        ("catalog sqlite", [catalog, "--sqlite_path=" + sqlite_path]),
        ("catalog postgres", [catalog, "--store=postgres",
                              "--postgres_url=dbname=" + new_database()]),
        ("catalog postgres+cache", [catalog, "--store=postgres",
                                    "--postgres_url=dbname=" + new_database(),
                                    "--postgres_record_cache", "--watch_poll_interval=50ms"]),
    ]
    for label, argv in alone:
        process, ports = start(argv + ["--grpc_address=127.0.0.1:0", DEADLINE], "catalog", work)
        time.sleep(1.0)
        results.setdefault((label, scrape, build), []).append(stop(process, ports, scrape))
    catalog_process, catalog_ports = start(
        [catalog, "--sqlite_path=" + sqlite_path, "--grpc_address=127.0.0.1:0", DEADLINE],
        "catalog-followed", work)
    catalog_address = f"--catalog_address=127.0.0.1:{catalog_ports['grpc_port']}"
    estimator_process, estimator_ports = start(
        [os.path.join(build, "estimator-service", "estimator-service"), catalog_address,
         "--grpc_address=127.0.0.1:0", "--readiness_interval=200ms", DEADLINE], "estimator", work)
    web_process, web_ports = start(
        [os.path.join(build, "web", "modelatlas-web"), catalog_address,
         f"--estimator_address=127.0.0.1:{estimator_ports['grpc_port']}",
         "--http_address=127.0.0.1:0"], "web", work)
    time.sleep(1.5)
    for label, process, ports in (("web", web_process, web_ports),
                                  ("estimator", estimator_process, estimator_ports),
                                  ("catalog followed, after them", catalog_process,
                                   catalog_ports)):
        results.setdefault((label, scrape, build), []).append(stop(process, ports, scrape))


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    rounds, builds = int(sys.argv[1]), sys.argv[2:]
    work = tempfile.mkdtemp(prefix="measure-shutdown-")
    results = {}
    for round_number in range(1, rounds + 1):
        for build in builds:
            for scrape in (False, True):
                one_round(build, scrape, work, results)
        with open("/proc/loadavg") as loadavg:
            print(f"round {round_number} done, load average {loadavg.read().strip()}", flush=True)
    print("case, /metrics scraped just before SIGTERM, build: seconds to exit per round")
    for (label, scrape, build), figures in sorted(results.items()):
        rounds_text = " ".join(
            f"{seconds:.3f}" + ("" if code == 0 else f" (exit {code})") for seconds, code in figures)
        print(f"{label:30s} scraped={'yes' if scrape else 'no ':3s} {build:28s} {rounds_text}")
    print(f"logs in {work}")


if __name__ == "__main__":
    main()
