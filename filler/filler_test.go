package filler

import (
	"math"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func forBothTypes(t *testing.T, f32, f64 func(*testing.T)) {
	t.Run("float32", f32)
	t.Run("float64", f64)
}

// fill builds the filler p describes and fills a new blob of shape with it.
func fill[T blob.Float](t *testing.T, p *caffepb.FillerParameter, shape ...int) *blob.Blob[T] {
	t.Helper()
	f, err := New[T](p)
	if err != nil {
		t.Fatalf("New(%v): %v", p, err)
	}
	b, err := blob.New[T](shape...)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Fill(b, mathfn.NewRNG(1701)); err != nil {
		t.Fatalf("Fill(%v): %v", b.ShapeString(), err)
	}
	return b
}

// moments returns the mean and the (population) variance of v.
func moments[T blob.Float](v []T) (mean, variance float64) {
	for _, x := range v {
		mean += float64(x)
	}
	mean /= float64(len(v))
	for _, x := range v {
		d := float64(x) - mean
		variance += d * d
	}
	return mean, variance / float64(len(v))
}

// checkMoments asserts the sample mean and variance of n draws are within
// six standard errors of the expected ones (kurtosis gives the variance's
// standard error: 3 for a gaussian, 1.8 for a uniform).
func checkMoments[T blob.Float](t *testing.T, what string, v []T, wantMean, wantVar, kurtosis float64) {
	t.Helper()
	mean, variance := moments(v)
	n := float64(len(v))
	if math.Abs(mean-wantMean) > 6*math.Sqrt(wantVar/n) {
		t.Errorf("%s: mean %v, want %v", what, mean, wantMean)
	}
	if math.Abs(variance-wantVar) > 6*wantVar*math.Sqrt((kurtosis-1)/n) {
		t.Errorf("%s: variance %v, want %v", what, variance, wantVar)
	}
}

func TestConstant(t *testing.T) { forBothTypes(t, testConstant[float32], testConstant[float64]) }

func testConstant[T blob.Float](t *testing.T) {
	b := fill[T](t, &caffepb.FillerParameter{Type: proto.String("constant"), Value: proto.Float32(10.5)}, 2, 3, 4, 5)
	for i, v := range b.CPUData() {
		if v != 10.5 {
			t.Fatalf("data[%d] = %v, want 10.5", i, v)
		}
	}
	// A nil parameter is Caffe's default filler: constant 0.
	d := fill[T](t, nil, 7)
	if d.AsumData() != 0 {
		t.Errorf("default filler wrote %v", d.CPUData())
	}
}

func TestUniform(t *testing.T) { forBothTypes(t, testUniform[float32], testUniform[float64]) }

func testUniform[T blob.Float](t *testing.T) {
	b := fill[T](t, &caffepb.FillerParameter{Type: proto.String("uniform"), Min: proto.Float32(1), Max: proto.Float32(2)}, 100, 1000)
	for i, v := range b.CPUData() {
		if v < 1 || v > 2 {
			t.Fatalf("data[%d] = %v outside [1, 2]", i, v)
		}
	}
	checkMoments(t, "uniform(1, 2)", b.CPUData(), 1.5, 1.0/12, 1.8)
}

func TestGaussian(t *testing.T) { forBothTypes(t, testGaussian[float32], testGaussian[float64]) }

func testGaussian[T blob.Float](t *testing.T) {
	b := fill[T](t, &caffepb.FillerParameter{Type: proto.String("gaussian"), Mean: proto.Float32(10), Std: proto.Float32(0.1)}, 100, 1000)
	checkMoments(t, "gaussian(10, 0.1)", b.CPUData(), 10, 0.01, 3)
}

func TestGaussianSparse(t *testing.T) {
	forBothTypes(t, testGaussianSparse[float32], testGaussianSparse[float64])
}

// With sparse = s each weight survives with probability s / shape(0).
func testGaussianSparse[T blob.Float](t *testing.T) {
	const outputs, inputs, sparse = 200, 500, 40
	b := fill[T](t, &caffepb.FillerParameter{Type: proto.String("gaussian"), Std: proto.Float32(1), Sparse: proto.Int32(sparse)}, outputs, inputs)
	var nonzero []T
	for _, v := range b.CPUData() {
		if v != 0 {
			nonzero = append(nonzero, v)
		}
	}
	p := float64(sparse) / outputs
	n := float64(b.Count())
	if frac := float64(len(nonzero)) / n; math.Abs(frac-p) > 6*math.Sqrt(p*(1-p)/n) {
		t.Errorf("fraction of non-zero weights %v, want %v", frac, p)
	}
	checkMoments(t, "surviving sparse weights", nonzero, 0, 1, 3)
}

func TestPositiveUnitball(t *testing.T) {
	forBothTypes(t, testPositiveUnitball[float32], testPositiveUnitball[float64])
}

func testPositiveUnitball[T blob.Float](t *testing.T) {
	b := fill[T](t, &caffepb.FillerParameter{Type: proto.String("positive_unitball")}, 20, 3, 4, 5)
	data := b.CPUData()
	for i, v := range data {
		if v < 0 || v > 1 {
			t.Fatalf("data[%d] = %v outside [0, 1]", i, v)
		}
	}
	for row := range 20 {
		var sum float64
		for _, v := range data[row*60 : (row+1)*60] {
			sum += float64(v)
		}
		if math.Abs(sum-1) > 1e-5 {
			t.Errorf("row %d sums to %v, want 1", row, sum)
		}
	}
}

func TestXavierAndMSRA(t *testing.T) {
	forBothTypes(t, testXavierAndMSRA[float32], testXavierAndMSRA[float64])
}

// A 1000 x 20 x 4 x 5 blob has fan_in 400 and fan_out 5000: the variance
// must follow the chosen normalisation.
func testXavierAndMSRA[T blob.Float](t *testing.T) {
	const fanIn, fanOut = 20 * 4 * 5, 1000 * 4 * 5
	norms := map[caffepb.FillerParameter_VarianceNorm]float64{
		caffepb.FillerParameter_FAN_IN:  fanIn,
		caffepb.FillerParameter_FAN_OUT: fanOut,
		caffepb.FillerParameter_AVERAGE: (fanIn + fanOut) / 2.0,
	}
	for norm, n := range norms {
		p := &caffepb.FillerParameter{Type: proto.String("xavier"), VarianceNorm: norm.Enum()}
		b := fill[T](t, p, 1000, 20, 4, 5)
		checkMoments(t, "xavier "+norm.String(), b.CPUData(), 0, 1/n, 1.8)
		limit := math.Sqrt(3 / n)
		for _, v := range b.CPUData() {
			if math.Abs(float64(v)) > limit*(1+1e-6) {
				t.Fatalf("xavier %v: %v outside ±%v", norm, v, limit)
			}
		}
		p.Type = proto.String("msra")
		b = fill[T](t, p, 1000, 20, 4, 5)
		checkMoments(t, "msra "+norm.String(), b.CPUData(), 0, 2/n, 3)
	}
}

func TestBilinear(t *testing.T) { forBothTypes(t, testBilinear[float32], testBilinear[float64]) }

// For a 4x4 kernel (upsampling by 2) f = 2, c = 0.75 and the 1-D weights are
// 0.25 0.75 0.75 0.25; the kernel is their outer product, in every channel.
func testBilinear[T blob.Float](t *testing.T) {
	b := fill[T](t, &caffepb.FillerParameter{Type: proto.String("bilinear")}, 3, 2, 4, 4)
	w := []float64{0.25, 0.75, 0.75, 0.25}
	data := b.CPUData()
	for k := range 3 * 2 {
		for y := range 4 {
			for x := range 4 {
				got := float64(data[k*16+y*4+x])
				if math.Abs(got-w[x]*w[y]) > 1e-6 {
					t.Fatalf("kernel %d (%d,%d) = %v, want %v", k, y, x, got, w[x]*w[y])
				}
			}
		}
	}
	// Odd kernel 3 (f = 2): 1-D weights 0.25 0.75 0.75 at x/f - c.
	b = fill[T](t, &caffepb.FillerParameter{Type: proto.String("bilinear")}, 1, 1, 3, 3)
	if got := float64(b.CPUData()[4]); math.Abs(got-0.5625) > 1e-6 {
		t.Errorf("3x3 kernel centre %v, want 0.5625", got)
	}
}

func TestSameSeedSameWeights(t *testing.T) {
	for _, typ := range []string{"uniform", "gaussian", "positive_unitball", "xavier", "msra"} {
		p := &caffepb.FillerParameter{Type: proto.String(typ)}
		f, err := New[float32](p)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := blob.New[float32](10, 10)
		b, _ := blob.New[float32](10, 10)
		c, _ := blob.New[float32](10, 10)
		if f.Fill(a, mathfn.NewRNG(5)) != nil || f.Fill(b, mathfn.NewRNG(5)) != nil || f.Fill(c, mathfn.NewRNG(6)) != nil {
			t.Fatal("fill failed")
		}
		same, differs := true, false
		for i := range a.CPUData() {
			same = same && a.CPUData()[i] == b.CPUData()[i]
			differs = differs || a.CPUData()[i] != c.CPUData()[i]
		}
		if !same || !differs {
			t.Errorf("%s: same seed equal = %v, other seed differs = %v", typ, same, differs)
		}
	}
}

func TestBadParameters(t *testing.T) {
	cases := []struct {
		p    *caffepb.FillerParameter
		want string
	}{
		{&caffepb.FillerParameter{Type: proto.String("gaussain")}, `unknown filler type "gaussain"`},
		{&caffepb.FillerParameter{Type: proto.String("uniform"), Sparse: proto.Int32(3)}, "only supported by the gaussian"},
		{&caffepb.FillerParameter{Type: proto.String("gaussian"), Sparse: proto.Int32(-2)}, "sparse = -2"},
		{&caffepb.FillerParameter{Type: proto.String("uniform"), Min: proto.Float32(2), Max: proto.Float32(1)}, "min = 2 is greater than max = 1"},
		{&caffepb.FillerParameter{Type: proto.String("gaussian"), Std: proto.Float32(0)}, "std = 0"},
	}
	for _, c := range cases {
		_, err := New[float32](c.p)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%v): err = %v, want one containing %q", c.p, err, c.want)
		}
	}
}

func TestBadShapes(t *testing.T) {
	cases := []struct {
		typ   string
		shape []int
		want  string
	}{
		{"bilinear", []int{1, 1, 4}, "must be 4-D"},
		{"bilinear", []int{1, 1, 4, 3}, "must be square"},
		{"xavier", []int{0, 5}, "empty blob"},
		{"constant", []int{3, 0}, "empty blob"},
	}
	for _, c := range cases {
		f, err := New[float64](&caffepb.FillerParameter{Type: proto.String(c.typ)})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := blob.New[float64](c.shape...)
		if err := f.Fill(b, mathfn.NewRNG(1)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s on %v: err = %v, want one containing %q", c.typ, c.shape, err, c.want)
		}
	}
	f, _ := New[float32](&caffepb.FillerParameter{Type: proto.String("gaussian"), Sparse: proto.Int32(10)})
	b, _ := blob.New[float32](5, 3)
	if err := f.Fill(b, mathfn.NewRNG(1)); err == nil || !strings.Contains(err.Error(), "exceeds the 5 outputs") {
		t.Errorf("sparse larger than the outputs: err = %v", err)
	}
}
