#!/usr/bin/env bash
# Issue 16's data check on the GPU machine: CaffeNet training at batch 256
# fed by its Data layer from an LMDB of JPEG-encoded 256x256 images (decoded
# on the host's cores, prefetched; crop, mirror and mean finished on the
# device, or with FEEDS including datahost on the host's cores too) against
# the same net fed by constant DummyData; interleaved runs, iterations per
# second from the solver's log. Run from the repository root with .device
# carried:
#
#   . .device/env.sh && tools/gpu/caffenet_jpeg.sh
#
# TAGS adds build tags (TAGS=libjpeg decodes with the system's libjpeg);
# ROUNDS sets the number of interleaved rounds (default 3); FEEDS the feeds
# (default "time data"; time is DummyData, datahost the Data layer with
# GOCAFFE_DEVICE_TRANSFORM=off, nvjpeg the Data layer decoding on the GPU
# with GOCAFFE_JPEG=nvjpeg).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/out}
work=/tmp/jpeg
rm -rf "$work" && mkdir -p "$work" "$out"
go build -tags "cuda ${TAGS:-}" -o /tmp/gc ./cmd/gocaffe || exit 1
go run ./tools/gpu/mkjpeg -n 2048 -size 256 -dir "$work/img" -list "$work/list.txt" || exit 1
/tmp/gc convert_imageset -encoded "$work/img/" "$work/list.txt" "$work/lmdb" 2>&1 | tail -1
du -sh "$work/lmdb"
python3 tools/gpu/time_nets.py "$work/nets" >/dev/null
python3 - "$work" <<'PY'
import re, sys
work = sys.argv[1]
net = open(f"{work}/nets/caffenet_time.prototxt").read()
data = ('layer {\n  name: "data"\n  type: "Data"\n  top: "data"\n  top: "label"\n'
        '  transform_param { mirror: true crop_size: 227 mean_value: 104 mean_value: 117 mean_value: 123 }\n'
        f'  data_param {{ source: "{work}/lmdb" batch_size: 256 backend: LMDB }}\n}}')
net, k = re.subn(r'layer \{\n  name: "data"\n  type: "DummyData".*?\n\}', data, net, count=1, flags=re.S)
assert k == 1
open(f"{work}/nets/caffenet_data.prototxt", "w").write(net)
solver = open(f"{work}/nets/caffenet_time_solver.prototxt").read().replace("caffenet_time.prototxt", "caffenet_data.prototxt")
open(f"{work}/nets/caffenet_data_solver.prototxt", "w").write(solver)
PY
for round in $(seq "${ROUNDS:-3}"); do
	for feed in ${FEEDS:-time data}; do
		solver=$feed env=""
		case $feed in
		datahost) solver=data env="GOCAFFE_DEVICE_TRANSFORM=off" ;;
		nvjpeg) solver=data env="GOCAFFE_JPEG=nvjpeg" ;;
		esac
		rates=$(env $env /tmp/gc train -solver "$work/nets/caffenet_${solver}_solver.prototxt" -gpu 0 2>&1 | tee "$out/caffenet_${feed}_$round.log" |
			sed -n 's/.*Iteration \([1-9][0-9]*\) (\([0-9.]*\) iter\/s.*/\2/p' | tr '\n' ' ')
		echo "$feed round $round: iter/s per 50 iterations: $rates"
	done
done | tee "$out/caffenet_feeds.txt"
nproc
