#!/usr/bin/env bash
# CPU training time, gocaffe against PyTorch, on the six models (issue 36).
#
# One pass = forward, loss, backward into every parameter; no solver update
# on either side (gocaffe time's passes; torch_train.py says how PyTorch
# does the same). Both run on THREADS threads (GOMAXPROCS, and
# torch.set_num_threads), at the batches of nets.py. Each round runs, per
# model, gocaffe and then PyTorch back to back while holding
# /tmp/gocaffe-heavy.lock, so the two see the same machine load. A round's
# number for each side is the median of its per-pass times (gocaffe time's
# "Iteration: N forward-backward time" lines, whose per-layer clock on the
# host is only timestamps; torch_train.py times each pass the same way):
# other tenants of a shared machine slow some passes a lot, and PyTorch's
# OpenMP threads suffer more from that than Go's. The summary is the median
# over rounds and the ratio gocaffe / PyTorch (below 1: gocaffe is faster);
# "best" is each side's fastest pass over all rounds and "best ratio" their
# ratio: the closest to what each costs alone on the machine.
#
# usage (from the repository root):
#   tools/cputrain/compare.sh [ROUNDS] [MODELS]      MODELS: comma-separated
# GOCAFFE=path skips the build and times that binary; THREADS defaults to 2.
set -euo pipefail
ROUNDS=${1:-3}
MODELS=${2:-lenet,cifar10_quick,caffenet,googlenet,resnet50,mobilenet}
THREADS=${THREADS:-2}
PY=${PYTHON:-/usr/bin/python3}
here=$(cd "$(dirname "$0")" && pwd)
w=$(mktemp -d); trap 'rm -rf "$w"' EXIT
if [ -z "${GOCAFFE:-}" ]; then
  flock /tmp/gocaffe-heavy.lock go build -o "$w/gocaffe" ./cmd/gocaffe
  GOCAFFE=$w/gocaffe
fi
"$PY" "$here/nets.py" "$w/nets" > /dev/null
# Timed passes per model (gocaffe time runs them twice, per layer and then
# whole; the per-layer ones are read), and PyTorch's 2 warm-up passes.
declare -A ITERS=([lenet]=50 [cifar10_quick]=20 [caffenet]=5 [googlenet]=5 [resnet50]=3 [mobilenet]=5)
echo "# $(date -u +%FT%TZ) $(git rev-parse --short HEAD 2>/dev/null || echo '?') threads=$THREADS rounds=$ROUNDS $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
for r in $(seq "$ROUNDS"); do
  for m in ${MODELS//,/ }; do
    net=$(ls "$w/nets/${m}_b"*.prototxt)
    flock /tmp/gocaffe-heavy.lock bash -c '
      # Not every process on the machine takes the lock (builds, tests):
      # wait, up to a minute, for a second with the CPUs mostly idle.
      for _ in $(seq 60); do
        a=($(head -1 /proc/stat)); sleep 1; b=($(head -1 /proc/stat))
        idle=$(( b[4] + b[5] - a[4] - a[5] )); all=0
        for i in 1 2 3 4 5 6 7 8; do all=$(( all + b[i] - a[i] )); done
        [ $(( 100 * idle / (all > 0 ? all : 1) )) -ge 85 ] && break
      done
      GOMAXPROCS=$1 GLOG_logtostderr=1 "$2" time -model "$3" -iterations "$4" 2>&1 >/dev/null |
        sed -n "s/.*Iteration: [0-9]* forward-backward time: \([0-9.]*\) ms.*/\1/p" | sort -g |
        awk -v m="$5" "{v[NR] = \$1} END {if (NR == 0) exit 1; print m, \"gocaffe\", (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[1]}"
      "$6" "$7/torch_train.py" "$1" "$4" 2 "$5" | awk "{print \$1, \"pytorch\", \$3, \$4}"
    ' _ "$THREADS" "$GOCAFFE" "$net" "${ITERS[$m]}" "$m" "$PY" "$here" | tee -a "$w/all"
  done
done
"$PY" - "$w/all" "$here" <<'PY'
import collections, statistics, sys
sys.path.insert(0, sys.argv[2])
from nets import BATCH
med, best = collections.defaultdict(list), collections.defaultdict(list)
for line in open(sys.argv[1]):
    m, who, v, least = line.split()
    med[m, who].append(float(v))
    best[m, who].append(float(least))
print(f"{'model':14} {'batch':>5} {'gocaffe ms':>10} {'PyTorch ms':>10} {'ratio':>5} | {'best gocaffe':>12} {'PyTorch':>8} {'ratio':>5}   (round medians: gocaffe | PyTorch)")
for m in dict.fromkeys(k[0] for k in med):
    g, t = statistics.median(med[m, 'gocaffe']), statistics.median(med[m, 'pytorch'])
    bg, bt = min(best[m, 'gocaffe']), min(best[m, 'pytorch'])
    print(f"{m:14} {BATCH[m]:5} {g:10.1f} {t:10.1f} {g / t:5.2f} | {bg:12.1f} {bt:8.1f} {bg / bt:5.2f}   "
          f"{' '.join('%.1f' % v for v in med[m, 'gocaffe'])} | {' '.join('%.1f' % v for v in med[m, 'pytorch'])}")
PY
