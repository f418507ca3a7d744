#!/usr/bin/env bash
# Builds golden_dump against BVLC Caffe's build (CPU_ONLY) and prints its
# path. usage: build.sh [CAFFE_DIR [OUT]]
# CAFFE_DIR defaults to $CAFFE_DIR or ~/.cache/bvlc-caffe (where
# ../shared/caffe/build_caffe.sh puts it); OUT to
# ~/.cache/gocaffe-golden/golden_dump.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
caffe=${1:-${CAFFE_DIR:-$HOME/.cache/bvlc-caffe}}
out=${2:-$HOME/.cache/gocaffe-golden/golden_dump}
mkdir -p "$(dirname "$out")"
[ -e "$caffe/build/lib/libcaffe.so" ] || { echo "build.sh: no $caffe/build/lib/libcaffe.so: build Caffe first" >&2; exit 1; }
# caffe.pb.h is generated into .build_release/src by Caffe's Makefile.
pbdir=$caffe/.build_release/src
[ -e "$pbdir/caffe/proto/caffe.pb.h" ] || pbdir=$caffe/build/src
# -ffp-contract=off: no fused multiply-adds, so the seeded filler rounds
# exactly as the Go side does.
g++ -O2 -std=c++14 -ffp-contract=off -DCPU_ONLY \
  -I"$caffe/include" -I"$pbdir" -I/usr/include/hdf5/serial \
  "$here/dump/golden_dump.cpp" -o "$out" \
  -L"$caffe/build/lib" -Wl,-rpath,"$caffe/build/lib" \
  -lcaffe -lglog -lgflags -lprotobuf -lboost_system -lopenblas
echo "$out"
