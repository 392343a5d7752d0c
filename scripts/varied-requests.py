#!/usr/bin/env python3
# The varied EstimateInferenceMemory requests of bench-computed.sh and
# profile-estimate.sh, one JSON request a line: every model of DATASET
# (catalog-service/data/dataset.json) with an architecture x four contexts x
# three weight formats (2,028 with the shipped dataset; 1,992 before Gemma 3 4B, 12B and 27B
# gained theirs in session 30, 1,968 before DeepSeek-R1 and R1-0528 in session 29).
#   scripts/varied-requests.py DATASET OUT
import json
import sys

models = [m["name"] for m in json.load(open(sys.argv[1]))["models"] if m.get("architecture")]
with open(sys.argv[2], "w") as out:
    for name in models:
        for context in (2048, 8192, 32768, 131072):
            for weights in ("NUMBER_FORMAT_BF16", "NUMBER_FORMAT_FP8", "NUMBER_FORMAT_AWQ_INT4"):
                out.write(json.dumps({"model": name, "workload": {"context_length_tokens": context,
                                                                  "weight_format": weights}}) + "\n")
