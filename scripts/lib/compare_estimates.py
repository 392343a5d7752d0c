# Raw EstimateInferenceMemory replies of two estimators, byte for byte, the
# catalog_view field (140, the snapshot's age) cut off (scripts/compare-estimates.sh).
# usage: compare_estimates.py PORT_A PORT_B DATASET_JSON
import json, sys, grpc
a, b, dataset = sys.argv[1], sys.argv[2], sys.argv[3]
def varint(n):
    out = bytearray()
    while True:
        x = n & 0x7f; n >>= 7
        if n: out.append(x | 0x80)
        else: out.append(x); return bytes(out)
def field(num, wt, payload):
    key = varint(num << 3 | wt)
    if wt == 2: return key + varint(len(payload)) + payload
    return key + varint(payload)
def request(name, ctx, batch, wf, kvf, hyp):
    w = b''
    if ctx: w += field(1, 0, ctx)
    if batch: w += field(2, 0, batch)
    if wf: w += field(5, 0, wf)
    if kvf: w += field(6, 0, kvf)
    r = field(1, 2, name.encode())
    if w: r += field(11, 2, w)
    if hyp: r += field(8, 0, 1)
    return r
def strip_view(data):
    # fields in order; drop field 140 (length-delimited) wherever it is
    i = 0; out = bytearray()
    while i < len(data):
        start = i; key = 0; shift = 0
        while True:
            c = data[i]; i += 1; key |= (c & 0x7f) << shift; shift += 7
            if not c & 0x80: break
        num, wt = key >> 3, key & 7
        if wt == 0:
            while data[i] & 0x80: i += 1
            i += 1
        elif wt == 1: i += 8
        elif wt == 5: i += 4
        elif wt == 2:
            n = 0; shift = 0
            while True:
                c = data[i]; i += 1; n |= (c & 0x7f) << shift; shift += 7
                if not c & 0x80: break
            i += n
        if num != 140: out += data[start:i]
    return bytes(out)
d = json.load(open(dataset))
names = [m['name'] for m in d['models'] if 'architecture' in m] + \
        [m['name'] for m in d['models'] if 'architecture' not in m][:40]
shapes = [(0, 0, 0, 0, False), (8192, 0, 0, 0, False), (32768, 8, 6, 4, False), (131072, 1, 15, 5, True),
          (2048, 64, 7, 0, False), (4096, 2, 21, 2, True), (1000000, 1, 4, 4, False), (512, 3, 1, 1, False)]
chans = [grpc.insecure_channel(f'127.0.0.1:{p}') for p in (a, b)]
calls = [c.unary_unary('/modelatlas.estimator.v1.EstimatorService/EstimateInferenceMemory') for c in chans]
same = diff = errs = 0; total_bytes = 0
for name in names:
    for s in shapes:
        req = request(name, *s)
        got = []
        for call in calls:
            try: got.append(('ok', strip_view(call(req, timeout=5))))
            except grpc.RpcError as e: got.append((str(e.code()), e.details()))
        if got[0] == got[1]:
            same += 1
            if got[0][0] != 'ok': errs += 1
            else: total_bytes += len(got[0][1])
        else:
            diff += 1
            if diff <= 5: print('DIFF', name, s, got[0][1][:300], '\n   vs', got[1][1][:300])
print(f"{len(names)} models x {len(shapes)} requests: {same} identical ({errs} of them the same error), {diff} different; {total_bytes} answer bytes compared")
