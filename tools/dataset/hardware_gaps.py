#!/usr/bin/env python3
"""Prints, per curated accelerator of the shipped dataset, which figures are
missing (issue 18 point 6), and the count of accelerators that hold them all.

A figure counts as present when the record holds it, and as excused when the
record's provenance notes state why it is absent ("Not on record: FIELD ...",
the convention tests/catalog/shipped_dataset_test.cc checks). A missing price's
reason starts with its category: "no such offering: " (nobody rents or sells
the device that way: an AWS-only part, a chip sold only inside a rack, an
Apple chip + memory sold only in MacBook/iMac models, which cloud providers do
not rent per hour, a wafer-scale system priced per job) or "no dated public
figure found: " (it is, or may be, offered, but no dated, attributable figure
was found; an Apple chip + memory sold in a Mac mini, Mac Studio or Mac Pro is
here, since Mac-hosting providers rack and rent those desktops).

Usage: python3 tools/dataset/hardware_gaps.py [catalog-service/data/dataset.json]
"""
import json
import sys

# Figure -> test on the record. Prices need a date and a source.
def _price(h, key):
    p = h.get(key) or {}
    return p.get("usd", 0) > 0 and p.get("date", {}).get("year", 0) > 0 and bool(p.get("source"))

FIGURES = {
    "memory_bytes": lambda h: h.get("memory_bytes", 0) > 0,
    "allocatable_memory_bytes": lambda h: h.get("allocatable_memory_bytes", 0) > 0
    and bool(h.get("allocatable_memory_source")),
    "memory_bandwidth_bytes_per_second": lambda h: h.get("memory_bandwidth_bytes_per_second", 0) > 0,
    # Dense 16-bit peak: the tensor figure, or the plain FP16 rate where the
    # device has no separate tensor path (Apple GPUs).
    "peak_16bit": lambda h: (h.get("peak") or {}).get("tensor_fp16_bf16_flops", 0) > 0
    or (h.get("peak") or {}).get("fp16_flops", 0) > 0,
    "peak_fp32": lambda h: (h.get("peak") or {}).get("fp32_flops", 0) > 0,
    "tdp_watts": lambda h: h.get("tdp_watts", 0) > 0,
    # Scale-up bandwidth with its domain size; or a domain size of 1 with a
    # PCIe generation (a PCIe-only card) or on a system on chip (no host link
    # and no scale-up fabric: hardware.proto, pcie_generation).
    "interconnect": lambda h: h.get("scale_up_domain_size", 0) > 0
    and (h.get("scale_up_bandwidth_bytes_per_second", 0) > 0 or h.get("pcie_generation", 0) > 0
         or h.get("type") == "HARDWARE_TYPE_SOC"),
    "cloud_on_demand_price": lambda h: _price(h, "cloud_on_demand_price"),
    "purchase_price": lambda h: _price(h, "purchase_price"),
}


PRICES = ("cloud_on_demand_price", "purchase_price")
# Categories of a missing price (the first words of its reason).
NO_OFFERING = "no such offering: "
NOT_FOUND = "no dated public figure found: "


def reason(h, figure):
    notes = (h.get("provenance") or {}).get("notes", "")
    key = "Not on record: " + figure + " ("
    i = notes.find(key)
    return None if i < 0 else notes[i + len(key):]


def excused(h, figure):
    return reason(h, figure) is not None


def category(h, figure):
    """'no offering', 'not found' or 'uncategorized' for a missing price."""
    r = reason(h, figure) or ""
    if r.startswith(NO_OFFERING):
        return "no offering"
    if r.startswith(NOT_FOUND):
        return "not found"
    return "uncategorized"


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "catalog-service/data/dataset.json"
    hardware = json.load(open(path))["hardware"]
    curated = [h for h in hardware
               if not (h.get("provenance") or {}).get("source", "").startswith("Epoch AI")
               and h.get("type") != "HARDWARE_TYPE_CPU"]
    complete = complete_or_excused = complete_one_price = 0
    per_figure = {f: 0 for f in FIGURES}
    per_category = {(f, c): 0 for f in PRICES for c in ("no offering", "not found", "uncategorized")}
    for h in sorted(curated, key=lambda h: h["name"]):
        missing = [f for f, test in FIGURES.items() if not test(h)]
        for f in missing:
            per_figure[f] += 1
            if f in PRICES:
                per_category[(f, category(h, f))] += 1
        unexcused = [f for f in missing if not excused(h, f)]
        complete += not missing
        # Point 1 of the issue counts "a cloud price or a purchase price".
        one_price = [f for f in missing if f not in ("cloud_on_demand_price", "purchase_price")]
        if len(missing) - len(one_price) < 2:
            complete_one_price += not one_price
        complete_or_excused += not unexcused
        if missing:
            shown = [f if f in unexcused
                     else f + " (" + category(h, f) + ")" if f in PRICES
                     else f + " (reason stated)" for f in missing]
            print(f"{h['name'][len('hardware/'):]:40s} {', '.join(shown)}")
    print()
    print(f"curated accelerators: {len(curated)}")
    print(f"holding every figure: {complete}")
    print(f"holding every figure, a cloud or a purchase price counting as the price: {complete_one_price}")
    print(f"every figure or a stated reason: {complete_or_excused}")
    for f, n in per_figure.items():
        print(f"  missing {f}: {n}")
        if f in PRICES:
            print(f"    no such offering: {per_category[(f, 'no offering')]}")
            print(f"    offered or not ruled out, no dated public figure found: {per_category[(f, 'not found')]}")
            if per_category[(f, "uncategorized")]:
                print(f"    reason without a category: {per_category[(f, 'uncategorized')]}")


if __name__ == "__main__":
    main()
