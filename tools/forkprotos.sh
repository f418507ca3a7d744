#!/bin/sh
# Writes the caffe.proto of each fork gocaffe's schema merges, from clones
# (or bare mirrors) of the forks' repositories, at the branches
# proto/caffe.proto follows, and prints the GOCAFFE_FORK_PROTOS setting
# for proto/caffepb's TestForkSchemas:
#
#   tools/forkprotos.sh OUTDIR SSD_REPO FASTER_RCNN_REPO NVCAFFE_REPO TSN_REPO
#   GOCAFFE_FORK_PROTOS=... go test ./proto/caffepb -run TestForkSchemas -v
#
# SSD_REPO is a git directory of weiliu89/caffe (branch ssd),
# FASTER_RCNN_REPO of rbgirshick/caffe-fast-rcnn (faster-rcnn), NVCAFFE_REPO
# of NVIDIA/caffe (caffe-0.17), TSN_REPO of yjxiong/caffe (action_recog).
set -eu
if [ $# -ne 5 ]; then
	sed -n '2,13p' "$0" >&2
	exit 2
fi
out=$1
shift
setting=
for spec in "ssd:ssd:$1" "fasterrcnn:faster-rcnn:$2" "nvcaffe:caffe-0.17:$3" "tsn:action_recog:$4"; do
	name=${spec%%:*}
	rest=${spec#*:}
	branch=${rest%%:*}
	repo=${rest#*:}
	mkdir -p "$out/$name"
	git -C "$repo" show "$branch:src/caffe/proto/caffe.proto" >"$out/$name/caffe.proto"
	setting="$setting${setting:+,}$name=$(cd "$out/$name" && pwd)/caffe.proto"
done
echo "GOCAFFE_FORK_PROTOS=$setting"
