package detection

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/gocaffe/gocaffe/data"
)

// nmsStable is nms as SSD's ApplyNMSFast writes it: a stable sort of every
// candidate by score, then the first topK.
func nmsStable(boxes []normBox, scores []float32, threshold, nmsThreshold, eta float32, topK int) []int {
	var cand []scoredIndex
	for i, s := range scores {
		if s > threshold {
			cand = append(cand, scoredIndex{s, i})
		}
	}
	sort.SliceStable(cand, func(i, j int) bool { return cand[i].score > cand[j].score })
	if topK > -1 && topK < len(cand) {
		cand = cand[:topK]
	}
	var kept []int
	adaptive := nmsThreshold
	for _, c := range cand {
		keep := true
		for _, k := range kept {
			if data.Jaccard(boxes[c.index], boxes[k]) > adaptive {
				keep = false
				break
			}
		}
		if keep {
			kept = append(kept, c.index)
			if eta < 1 && adaptive > 0.5 {
				adaptive *= eta
			}
		}
	}
	return kept
}

// nms keeps what the stable sort of all candidates keeps, in its order,
// with many equal scores (ties broken by index), topK above, at and below
// the candidates' number, and eta below 1; its scratch reused between
// calls.
func TestNMSSelectsAsStableSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	var s nmsScratch
	for trial := range 400 {
		n := 1 + rng.IntN(300)
		boxes, scores := make([]normBox, n), make([]float32, n)
		for i := range boxes {
			x, y := rng.Float32()*0.8, rng.Float32()*0.8
			boxes[i] = box(x, y, x+0.05+rng.Float32()*0.2, y+0.05+rng.Float32()*0.2)
			scores[i] = float32(rng.IntN(20)) / 20 // ties
		}
		topK := []int{-1, 1, 5, 100, n, n + 3}[trial%6]
		eta := []float32{1, 0.9}[trial%2]
		want := nmsStable(boxes, scores, 0.1, 0.45, eta, topK)
		got := slices.Clone(s.nms(boxes, scores, 0.1, 0.45, eta, topK))
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d (%d boxes, topK %d, eta %v): kept %v, want %v", trial, n, topK, eta, got, want)
		}
	}
}

// nms keeps what the reference keeps with boxes that touch, coincide,
// are inverted (area 0), are points or have a NaN corner, at thresholds
// down to a negative one, where the overlap test's shortcuts (apart, no
// width) and Jaccard's must agree.
func TestNMSDegenerateBoxes(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	var s nmsScratch
	grid := func() float32 { return float32(rng.IntN(6)) / 5 } // shared edges
	for trial := range 300 {
		n := 1 + rng.IntN(120)
		boxes, scores := make([]normBox, n), make([]float32, n)
		for i := range boxes {
			boxes[i] = box(grid(), grid(), grid(), grid()) // often inverted or flat
			if i > 0 && rng.IntN(4) == 0 {
				boxes[i] = boxes[rng.IntN(i)] // coincident
			}
			scores[i] = rng.Float32()
		}
		if trial%5 == 4 {
			// A NaN corner on the best box, kept first: its overlaps are
			// NaN, above no threshold, not even a negative one.
			best := 0
			for i := range scores {
				if scores[i] > scores[best] {
					best = i
				}
			}
			boxes[best].XMax = float32(math.NaN())
		}
		thresh := []float32{0, 0.3, 0.45, 0.99, -0.5}[trial%5]
		want := nmsStable(boxes, scores, 0.1, thresh, 1, -1)
		got := slices.Clone(s.nms(boxes, scores, 0.1, thresh, 1, -1))
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: kept %v, want %v", trial, got, want)
		}
	}
}

// BenchmarkNMS suppresses one class of MobileNet-SSD's 1917 boxes as the
// fillers' weights give them: every score above the threshold, 400 kept
// for the test.
func BenchmarkNMS(b *testing.B) {
	rng := rand.New(rand.NewPCG(17, 18))
	const n = 1917
	boxes, scores := make([]normBox, n), make([]float32, n)
	for i := range boxes {
		x, y, s := rng.Float32(), rng.Float32(), 0.05+rng.Float32()*0.6
		boxes[i] = box(x-s/2, y-s/2, x+s/2, y+s/2)
		scores[i] = 0.02 + rng.Float32()*0.1
	}
	var s nmsScratch
	for b.Loop() {
		s.nms(boxes, scores, 0.01, 0.45, 1, 400)
	}
}

// keepBest leaves the detections SSD's two stable sorts leave (by score,
// the first keep_top_k, by label), with many equal scores across and
// within labels.
func TestKeepBestAsStableSorts(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	for trial := range 200 {
		var dets []detection
		labels := 1 + rng.IntN(6)
		for label := 1; label <= labels; label++ {
			n := rng.IntN(30)
			scores := make([]float32, n)
			for i := range scores {
				scores[i] = float32(rng.IntN(8)) / 8 // ties
			}
			// Each label's detections best first, as suppression keeps them.
			slices.SortStableFunc(scores, func(a, b float32) int { return cmp.Compare(b, a) })
			for i, s := range scores {
				dets = append(dets, detection{label: label, rank: len(dets), score: s, box: box(float32(i), 0, 1, 1)})
			}
		}
		keep := 1 + rng.IntN(len(dets)+1)
		if keep >= len(dets) {
			continue
		}
		want := slices.Clone(dets)
		slices.SortStableFunc(want, func(a, b detection) int { return cmp.Compare(b.score, a.score) })
		want = want[:keep]
		slices.SortStableFunc(want, func(a, b detection) int { return cmp.Compare(a.label, b.label) })
		l := &detectionOutputLayer[float32]{keepTopK: keep}
		l.keepBest(dets)
		if got := dets[:keep]; !slices.Equal(got, want) {
			t.Fatalf("trial %d: keep %d of %d: got %v, want %v", trial, keep, len(dets), got, want)
		}
	}
}

// selectBest leaves the k best candidates first on sorted, reversed and
// tied inputs, where a selection's pivots do worst.
func TestSelectBestOrders(t *testing.T) {
	for _, n := range []int{2, 3, 10, 257} {
		for _, kind := range []string{"ascending", "descending", "equal"} {
			cand := make([]scoredIndex, n)
			for i := range cand {
				s := map[string]float32{"ascending": float32(i), "descending": float32(n - i), "equal": 1}[kind]
				cand[i] = scoredIndex{s, i}
			}
			want := slices.Clone(cand)
			slices.SortFunc(want, func(a, b scoredIndex) int {
				if before(a, b) {
					return -1
				}
				return 1
			})
			for _, k := range []int{1, n / 2, n - 1} {
				got := slices.Clone(selectBest(slices.Clone(cand), k))
				slices.SortFunc(got, func(a, b scoredIndex) int {
					if before(a, b) {
						return -1
					}
					return 1
				})
				if !slices.Equal(got, want[:k]) {
					t.Errorf("%s %d, k %d: got %v, want %v", kind, n, k, got, want[:k])
				}
			}
		}
	}
}
