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
  go test -tags cuda -run XXX -bench "$bench" -benchmem ./cuda/ ./mathfn/ 2>&1 | tee "$out/bench.log" | grep -E '^(Benchmark|ok|FAIL|---)'
  section "PyTorch reference (same machine, same run)"
  python3 tools/gpu/torch_reference.py 2>&1 | tee "$out/torch.log"
fi

section "gocaffe device_query -gpu 0"
go run -tags cuda ./cmd/gocaffe device_query -gpu 0 2>&1 | tee "$out/device_query.log"

exit "$test_status"
