#!/usr/bin/env bash
# Regenerates the golden fixtures with BVLC Caffe: builds golden_dump
# (build.sh) and runs it on testdata/nets/NAME.prototxt, writing
# testdata/NAME.golden.gz, for the NAMEs given or all of them.
# usage: regenerate.sh [NAME...]   (CAFFE_DIR: Caffe's build, see build.sh)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dump=$("$here/build.sh")
cd "$here/testdata"
if [ $# -eq 0 ]; then
  set -- $(ls nets | sed -n 's/\.prototxt$//p')
fi
tmp=$(mktemp); trap 'rm -f "$tmp"' EXIT
for name in "$@"; do
  GLOG_minloglevel=2 "$dump" "nets/$name.prototxt" "$tmp"
  gzip -9n < "$tmp" > "$name.golden.gz"   # -n: no name or time, so reruns give the same bytes
done
du -ch ./*.golden.gz | tail -1
