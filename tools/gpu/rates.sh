# Sourced by the GPU timing scripts: reading rates out of `gocaffe train`
# logs.

# median_rate prints the median of the iterations/s that the display lines
# read on stdin report, leaving out the first interval (warm-up: cuDNN's
# search, the CUDA graph's recording) and, with a first argument, every
# interval ending before that iteration.
median_rate() {
	sed -n 's/.*Iteration \([1-9][0-9]*\) (\([0-9.]*\) iter\/s.*/\1 \2/p' | awk -v from="${1:-0}" 'NR > 1 && $1 >= from {print $2}' |
		sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}
