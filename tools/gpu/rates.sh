# Sourced by the GPU timing scripts: reading rates out of `gocaffe train`
# logs, and starting two torchrun-style processes.

# median_rate prints the median of the iterations/s that the display lines
# read on stdin report, leaving out the first interval (warm-up: cuDNN's
# search, the CUDA graph's recording) and, with a first argument, every
# interval ending before that iteration.
median_rate() {
	sed -n 's/.*Iteration \([1-9][0-9]*\) (\([0-9.]*\) iter\/s.*/\1 \2/p' | awk -v from="${1:-0}" 'NR > 1 && $1 >= from {print $2}' |
		sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

# torchrun2 runs the command as two processes with the environment torchrun
# gives its workers (ranks 0 and 1 of 2 on this machine); rank 1's output
# is dropped.
torchrun2() {
	local port=$((29500 + RANDOM % 400))
	RANK=1 LOCAL_RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$@" >/dev/null 2>&1 &
	RANK=0 LOCAL_RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$@" 2>&1
	wait
}
