#!/usr/bin/env bash
# Builds, tests and benchmarks gocaffe's GPU code on the GPU machine in one
# go (device time is scarce: one call, everything in it). Run from the
# repository root through the device tool, carrying .device:
#
#   . .device/env.sh && tools/gpu/check.sh [test-regexp] [bench-regexp]
#
# Logs go to $OUT (or ./gpu-out), the summary to standard output.
set -u
out=${OUT:-gpu-out}
mkdir -p "$out"
tests=${1:-.}
bench=${2:-.}

section() { printf '\n=== %s\n' "$*"; }

section "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
go version

section "go vet -tags cuda"
go vet -tags cuda ./... 2>&1 | tee "$out/vet.log"

section "go test -tags cuda ./..."
go test -tags cuda -count=1 -run "$tests" ./... 2>&1 | tee "$out/test.log"
test_status=${PIPESTATUS[0]}

if [ "$bench" != "none" ]; then
  section "benchmarks"
  go test -tags cuda -run XXX -bench "$bench" -benchmem ./cuda/ ./mathfn/ ./layer/ ./models/ 2>&1 | tee "$out/bench.log" | grep -E '^(Benchmark|ok|FAIL|---)'
  section "PyTorch reference (same machine, same run)"
  python3 tools/gpu/torch_reference.py 2>&1 | tee "$out/torch.log"
fi

section "gocaffe device_query -gpu 0"
bin="$(mktemp -d)/gocaffe"
go build -tags cuda -o "$bin" ./cmd/gocaffe
"$bin" device_query -gpu 0 2>&1 | tee "$out/device_query.log"

if [ "${TIME_NETS:-1}" = 1 ]; then
  section "gocaffe time and train on the models (GPU, data-free copies)"
  nets=$(mktemp -d)
  python3 tools/gpu/time_nets.py "$nets" >/dev/null
  for m in lenet cifar10_quick caffenet; do
    echo "--- $m: gocaffe time -gpu 0"
    "$bin" time -model "$nets/${m}_time.prototxt" -gpu 0 -iterations 50 2>&1 | tee -a "$out/time.log" |
      grep -E 'forward:|backward:|Average|without per-layer' | sed 's/^.*\] //'
    echo "--- $m: gocaffe train -gpu 0 (200 iterations)"
    "$bin" train -solver "$nets/${m}_time_solver.prototxt" -gpu 0 2>&1 | tee -a "$out/train.log" |
      grep -E 'Iteration (50|100|150|200).*loss|Optimization Done|rror' | sed 's/^.*\] //'
  done
fi

exit "$test_status"
