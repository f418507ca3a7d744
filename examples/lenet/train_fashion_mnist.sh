#!/usr/bin/env bash
# Trains LeNet (models/lenet) on Fashion-MNIST with gocaffe: gets the data
# set, builds bin/gocaffe, converts the IDX files into the LMDB databases the
# model reads, and trains. Meant to be run from the repository root (it
# changes there itself); its arguments go to `gocaffe train`:
#
#   examples/lenet/train_fashion_mnist.sh
#   examples/lenet/train_fashion_mnist.sh -gpu 0 -iterations 2000
#
# Environment:
#   FASHION_MNIST_DIR  a folder holding the four IDX files (.gz or not); by
#                      default Debian's /usr/share/datasets/fashion-mnist,
#                      installed with apt-get when possible, else downloaded
#                      into examples/lenet/fashion_mnist_data
#   FASHION_MNIST_URL  where to download from (default: the Fashion-MNIST site)
#   GOCAFFE_TAGS       build tags for gocaffe, e.g. "openblas" or "cuda";
#                      unset builds the pure Go gocaffe, which needs nothing
#                      but Go
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"

example=examples/lenet
system_dir=/usr/share/datasets/fashion-mnist
download_dir=$example/fashion_mnist_data
url=${FASHION_MNIST_URL:-http://fashion-mnist.s3-website.eu-central-1.amazonaws.com}
files=(train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte)

die() {
	echo "train_fashion_mnist.sh: $*" >&2
	exit 1
}

# have_all DIR: whether DIR holds the four files, compressed or not.
have_all() {
	local f
	for f in "${files[@]}"; do
		[[ -f $1/$f.gz || -f $1/$f ]] || return 1
	done
}

# path_of DIR NAME: the file for NAME in DIR, preferring the .gz (gocaffe
# reads both).
path_of() {
	if [[ -f $1/$2.gz ]]; then echo "$1/$2.gz"; else echo "$1/$2"; fi
}

# install_package tries Debian's dataset-fashion-mnist, as root or through
# sudo without a password prompt; it never asks for one.
install_package() {
	command -v apt-get >/dev/null || return 1
	local sudo=()
	if [[ $(id -u) -ne 0 ]]; then
		command -v sudo >/dev/null && sudo -n true 2>/dev/null || return 1
		sudo=(sudo -n)
	fi
	echo "Installing Debian's dataset-fashion-mnist into $system_dir" >&2
	${sudo[@]+"${sudo[@]}"} apt-get install -y dataset-fashion-mnist ||
		{ ${sudo[@]+"${sudo[@]}"} apt-get update && ${sudo[@]+"${sudo[@]}"} apt-get install -y dataset-fashion-mnist; }
}

download() {
	mkdir -p "$download_dir"
	local f
	for f in "${files[@]}"; do
		[[ -f $download_dir/$f.gz ]] && continue
		echo "Downloading $url/$f.gz" >&2
		# Into a .part file first, so an interrupted download is not taken
		# for a complete one next time.
		if command -v curl >/dev/null; then
			curl -fL --retry 3 --progress-bar -o "$download_dir/$f.gz.part" "$url/$f.gz"
		elif command -v wget >/dev/null; then
			wget -O "$download_dir/$f.gz.part" "$url/$f.gz"
		else
			die "need curl or wget to download Fashion-MNIST (or install Debian's dataset-fashion-mnist, or set FASHION_MNIST_DIR)"
		fi
		mv "$download_dir/$f.gz.part" "$download_dir/$f.gz"
	done
}

find_data() {
	if [[ -n ${FASHION_MNIST_DIR:-} ]]; then
		have_all "$FASHION_MNIST_DIR" || die "FASHION_MNIST_DIR=$FASHION_MNIST_DIR lacks one of ${files[*]} (.gz or not)"
		data_dir=$FASHION_MNIST_DIR
		return
	fi
	local d
	for d in "$system_dir" "$download_dir"; do
		if have_all "$d"; then
			data_dir=$d
			return
		fi
	done
	if install_package && have_all "$system_dir"; then
		data_dir=$system_dir
		return
	fi
	download
	data_dir=$download_dir
}

# convert SET: converts the SET (train or t10k) files into
# examples/lenet/fashion_mnist_{train,test}_lmdb unless it exists.
convert() {
	local name=$1 db
	[[ $name == t10k ]] && db=$example/fashion_mnist_test_lmdb || db=$example/fashion_mnist_train_lmdb
	if [[ -e $db ]]; then
		echo "$db exists; not converting again (remove it to redo it)" >&2
		return
	fi
	# Converted under a temporary name and renamed when complete, so an
	# interrupted run never leaves a database that looks finished.
	rm -rf "$db.partial"
	bin/gocaffe convert_mnist_data -backend lmdb \
		"$(path_of "$data_dir" "$name-images-idx3-ubyte")" \
		"$(path_of "$data_dir" "$name-labels-idx1-ubyte")" \
		"$db.partial"
	mv "$db.partial" "$db"
}

command -v go >/dev/null || die "Go 1.26 or later is needed to build gocaffe (https://go.dev/dl/)"

find_data
echo "Fashion-MNIST: $data_dir" >&2

# The default build is pure Go so that the example runs anywhere; faster
# builds need system libraries (OpenBLAS, CUDA) and are asked for with
# GOCAFFE_TAGS.
if [[ -z ${GOCAFFE_TAGS:-} ]] && ldconfig -p 2>/dev/null | grep -q 'libopenblas\.so '; then
	echo "OpenBLAS is installed: GOCAFFE_TAGS=openblas $0 builds a faster gocaffe" >&2
fi
go build ${GOCAFFE_TAGS:+-tags "$GOCAFFE_TAGS"} -o bin/gocaffe ./cmd/gocaffe

convert train
convert t10k

exec bin/gocaffe train --solver models/lenet/lenet_solver.prototxt "$@"
