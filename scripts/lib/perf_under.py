# usage: perf script -i X -F ip,sym | python3 perf_under.py REGEX [depth]
# (scripts/profile-estimate.sh)
# For samples whose stack has a frame matching REGEX, the share of all samples
# under it, by the frame just below it (the callee).
import re, sys, collections
pat = re.compile(sys.argv[1]); depth = int(sys.argv[2]) if len(sys.argv) > 2 else 1
total = 0; under = 0; by = collections.Counter()
stack = []
def flush():
    global total, under
    if not stack: return
    total += 1
    # stack[0] is the leaf
    for i in range(len(stack) - 1, -1, -1):
        if pat.search(stack[i]):
            under += 1
            child = stack[i - depth] if i - depth >= 0 else '(self)'
            by[re.sub(r'\(.*', '', child)[:110]] += 1
            return
for line in sys.stdin:
    s = line.strip()
    if not s:
        flush(); stack = []; continue
    if line[0] not in ' \t': continue  # header line
    parts = s.split(None, 1)
    stack.append(parts[1] if len(parts) > 1 else parts[0])
flush()
print(f"{under / total * 100:.2f}% of {total} samples under {sys.argv[1]}")
for k, v in by.most_common(40): print(f"  {v / total * 100:6.2f}%  {k}")
