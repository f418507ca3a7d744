#!/bin/sh
# Syntax-checks gocaffe's CUDA kernel files here, without a GPU or the CUDA
# toolkit: each file is compiled as NVRTC would see it (the common header
# first, then the file) by clang's CUDA front end in device-only mode,
# against stub.h's declarations of what the kernels use from CUDA's
# headers. Templates are checked where an extern "C" kernel instantiates
# them. It catches type and syntax errors before a run on the GPU machine
# is spent on them; it says nothing about what the kernels compute.
#
# usage (from the repository root; needs clang-14: apt-get install clang-14):
#   tools/gpu/cucheck/check.sh layer/normalization/kernels/batch_norm.cu ...
# With no files, every kernels/*.cu of the tree.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
common=layer/internal/kit/kernels/common.cuh
files="$*"
[ -n "$files" ] || files=$(find . -path ./.device -prune -o -path '*/kernels/*.cu' -print | sort)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for f in $files; do
	cat "$here/stub.h" "$common" "$f" >"$tmp/all.cu"
	if ! clang-14 -fsyntax-only -x cuda --cuda-device-only -nocudainc -nocudalib \
		--cuda-gpu-arch=sm_80 -std=c++17 "$tmp/all.cu" 2>"$tmp/err"; then
		echo "== $f"
		grep -A3 "error" "$tmp/err" | head -40
		status=1
	fi
done
exit $status
