package layer

import "testing"

// Layers given one HostScratch share its buffers by name and part, grown
// to the largest asked for; a layer without one keeps buffers of its own.
func TestHostScratch(t *testing.T) {
	s := NewHostScratch()
	var a, b, lone Base[float32]
	a.SetHostScratch(s)
	b.SetHostScratch(s)
	var ownA, ownB, ownLone []float32
	x := ScratchOf(&a, "cols", 0, &ownA, 10)
	y := ScratchOf(&b, "cols", 0, &ownB, 6)
	if len(x) != 10 || len(y) != 6 || &x[0] != &y[0] || ownA != nil || ownB != nil {
		t.Fatalf("two layers do not share the scratch: %p %p, own %v %v", &x[0], &y[0], ownA, ownB)
	}
	if z := ScratchOf(&b, "cols", 1, &ownB, 6); &z[0] == &x[0] {
		t.Error("two parts share one buffer")
	}
	if w := ScratchOf(&b, "wdiffs", 0, &ownB, 6); &w[0] == &x[0] {
		t.Error("two names share one buffer")
	}
	big := ScratchOf(&a, "cols", 0, &ownA, 100)
	if len(big) != 100 || &ScratchOf(&b, "cols", 0, &ownB, 3)[0] != &big[0] {
		t.Error("the grown buffer is not the one shared")
	}
	l := ScratchOf(&lone, "cols", 0, &ownLone, 5)
	if len(ownLone) != 5 || &l[0] != &ownLone[0] {
		t.Error("a layer without a scratch does not use its own buffer")
	}
	d := ScratchOf(new(Base[float64]), "cols", 0, new([]float64), 3)
	if len(d) != 3 {
		t.Errorf("float64 scratch of %d elements", len(d))
	}
}
