package settings_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gocaffe/gocaffe/settings"
)

// env is a lookup over a map, as a test's environment.
func env(m map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := m[name]
		return v, ok
	}
}

// No variable, or empty ones, gives the zero value: the defaults.
func TestNothingSetIsTheZeroValue(t *testing.T) {
	empty := map[string]string{}
	for _, v := range settings.Variables() {
		empty[v.Name] = ""
	}
	for _, m := range []map[string]string{nil, empty} {
		s, err := settings.FromLookup(env(m))
		if err != nil || s != (settings.Settings{}) {
			t.Errorf("FromLookup(%v) = %+v, %v; want the zero value", m, s, err)
		}
	}
	if got := (settings.Settings{}).String(); got != "defaults" {
		t.Errorf("String of the zero value = %q", got)
	}
	var zero settings.Settings
	if zero.RendezvousWait() != 5*time.Minute || zero.PixelLimit() != 1<<28 {
		t.Errorf("defaults: rendezvous %v, pixels %d", zero.RendezvousWait(), zero.PixelLimit())
	}
}

// Every field of Settings has exactly one variable, and every variable a
// field of its type.
func TestEveryFieldHasAVariable(t *testing.T) {
	typ := reflect.TypeFor[settings.Settings]()
	seen := map[string]string{}
	for _, v := range settings.Variables() {
		if !strings.HasPrefix(v.Name, "GOCAFFE_") {
			t.Errorf("variable %s: not a GOCAFFE_ name", v.Name)
		}
		if _, ok := typ.FieldByName(v.Field); !ok {
			t.Errorf("variable %s sets %s, which Settings has not", v.Name, v.Field)
		}
		if other, dup := seen[v.Field]; dup {
			t.Errorf("variables %s and %s both set %s", other, v.Name, v.Field)
		}
		seen[v.Field] = v.Name
		if v.Doc == "" || v.Default == "" || (len(v.Words) == 0 && v.Value == "") {
			t.Errorf("variable %s: documentation, default or words missing: %+v", v.Name, v)
		}
	}
	for f := range typ.Fields() {
		if _, ok := seen[f.Name]; !ok {
			t.Errorf("field %s has no variable in the table", f.Name)
		}
	}
}

// Each word of each variable sets a value of its own, which Lookup and
// String give back; the first word is the default and the zero value.
func TestWordsRoundTrip(t *testing.T) {
	for _, v := range settings.Variables() {
		values := map[settings.Settings]string{}
		for i, w := range v.Words {
			s, err := settings.FromLookup(env(map[string]string{v.Name: w}))
			if err != nil {
				t.Errorf("%s=%s: %v", v.Name, w, err)
				continue
			}
			if other, dup := values[s]; dup {
				t.Errorf("%s: words %s and %s give the same settings", v.Name, other, w)
			}
			values[s] = w
			got, ok := s.Lookup(v.Name)
			isDefault := i == 0 && v.Default == w
			if isDefault != (s == settings.Settings{}) || ok == isDefault || (ok && got != w) {
				t.Errorf("%s=%s: settings %+v, Lookup %q %v", v.Name, w, s, got, ok)
			}
			if !isDefault && s.String() != v.Name+"="+w {
				t.Errorf("%s=%s: String %q", v.Name, w, s.String())
			}
		}
	}
}

// The enum types say their words.
func TestStrings(t *testing.T) {
	for _, c := range []struct {
		v    fmt.Stringer
		want string
	}{
		{settings.GEMMAuto, "auto"}, {settings.GEMMOwn, "own"}, {settings.GEMMOpenBLAS, "openblas"},
		{settings.BatchNormOwn, "own"}, {settings.BatchNormRows, "rows"}, {settings.BatchNormCuDNN, "cudnn"},
		{settings.ConvGEMMAuto, "auto"}, {settings.ConvGEMMAlways, "gemm"}, {settings.ConvGEMMNever, "cudnn"},
		{settings.JPEGHost, "host"}, {settings.JPEGNVJPEG, "nvjpeg"},
		{settings.NVJPEGHardware, "hardware"}, {settings.NVJPEGDefault, "default"},
		{settings.On, "on"}, {settings.Off, "off"}, {settings.Switch(7), "7 (no word)"},
		{settings.DefaultCacheDir, "default"}, {settings.NoCache, "off"}, {settings.CacheDir("/tmp/k"), "/tmp/k"},
	} {
		if got := c.v.String(); got != c.want {
			t.Errorf("%#v: %q, want %q", c.v, got, c.want)
		}
	}
}

// Values that are not words: durations, counts and directories.
func TestValues(t *testing.T) {
	s, err := settings.FromLookup(env(map[string]string{
		"GOCAFFE_RENDEZVOUS_TIMEOUT": "30s", "GOCAFFE_MAX_IMAGE_PIXELS": "1000", "GOCAFFE_CUDA_CACHE": "/tmp/kernels",
		"GOCAFFE_BN": "rows", "GOCAFFE_FUSED_UPDATE": "off", "GOCAFFE_GEMM": "own",
	}))
	want := settings.Settings{RendezvousTimeout: 30 * time.Second, MaxImagePixels: 1000, CUDACache: "/tmp/kernels",
		BatchNorm: settings.BatchNormRows, FusedUpdate: settings.Off, GEMM: settings.GEMMOwn}
	if err != nil || s != want {
		t.Fatalf("got %+v, %v; want %+v", s, err, want)
	}
	if s.RendezvousWait() != 30*time.Second || s.PixelLimit() != 1000 {
		t.Errorf("RendezvousWait %v, PixelLimit %d", s.RendezvousWait(), s.PixelLimit())
	}
	back, err := settings.FromLookup(s.Lookup)
	if err != nil || back != s {
		t.Errorf("FromLookup(s.Lookup) = %+v, %v; want %+v", back, err, s)
	}
	const str = "GOCAFFE_GEMM=own GOCAFFE_BN=rows GOCAFFE_FUSED_UPDATE=off GOCAFFE_CUDA_CACHE=/tmp/kernels GOCAFFE_RENDEZVOUS_TIMEOUT=30s GOCAFFE_MAX_IMAGE_PIXELS=1000"
	if s.String() != str {
		t.Errorf("String %q, want %q", s.String(), str)
	}
	if s, err := settings.FromLookup(env(map[string]string{"GOCAFFE_CUDA_CACHE": "off"})); err != nil || s.CUDACache != settings.NoCache {
		t.Errorf("GOCAFFE_CUDA_CACHE=off: %+v, %v", s, err)
	}
	// The defaults the table states are the ones in force.
	defaults := map[string]string{}
	for _, v := range settings.Variables() {
		defaults[v.Name], _, _ = strings.Cut(v.Default, " ")
	}
	s, err = settings.FromLookup(env(map[string]string{
		"GOCAFFE_RENDEZVOUS_TIMEOUT": defaults["GOCAFFE_RENDEZVOUS_TIMEOUT"], "GOCAFFE_MAX_IMAGE_PIXELS": defaults["GOCAFFE_MAX_IMAGE_PIXELS"],
	}))
	if err != nil || s.RendezvousWait() != settings.DefaultRendezvousTimeout || s.PixelLimit() != settings.DefaultMaxImagePixels {
		t.Errorf("the table's defaults %v: %+v, %v", defaults, s, err)
	}
}

// A value a variable does not take is an error naming the variable, the
// value and what it takes; every bad variable is reported, the old 0/1
// spellings included.
func TestBadValues(t *testing.T) {
	for _, c := range []struct {
		name, value string
		want        []string
	}{
		{"GOCAFFE_GEMM", "blas", []string{`GOCAFFE_GEMM="blas"`, "auto, own or openblas"}},
		{"GOCAFFE_BN", "fast", []string{`GOCAFFE_BN="fast"`, "own, rows or cudnn"}},
		{"GOCAFFE_CONV_GEMM", "fast", []string{`GOCAFFE_CONV_GEMM="fast"`, "auto, gemm or cudnn"}},
		{"GOCAFFE_JPEG", "gpu", []string{`GOCAFFE_JPEG="gpu"`, "host or nvjpeg"}},
		{"GOCAFFE_DEVICE_TRANSFORM", "0", []string{`GOCAFFE_DEVICE_TRANSFORM="0"`, "on or off"}},
		{"GOCAFFE_FUSED_UPDATE", "0", []string{`GOCAFFE_FUSED_UPDATE="0"`, "on or off"}},
		{"GOCAFFE_CUDNN", "no", []string{`GOCAFFE_CUDNN="no"`, "on or off"}},
		{"GOCAFFE_NVJPEG_BACKEND", "gpu", []string{`GOCAFFE_NVJPEG_BACKEND="gpu"`, "hardware or default"}},
		{"GOCAFFE_RENDEZVOUS_TIMEOUT", "300", []string{`GOCAFFE_RENDEZVOUS_TIMEOUT="300"`, "30s, 5m or 1h"}},
		{"GOCAFFE_RENDEZVOUS_TIMEOUT", "-1m", []string{`GOCAFFE_RENDEZVOUS_TIMEOUT="-1m"`, "positive duration"}},
		{"GOCAFFE_MAX_IMAGE_PIXELS", "lots", []string{`GOCAFFE_MAX_IMAGE_PIXELS="lots"`, "positive number of pixels"}},
		{"GOCAFFE_MAX_IMAGE_PIXELS", "0", []string{`GOCAFFE_MAX_IMAGE_PIXELS="0"`, "positive number of pixels"}},
	} {
		s, err := settings.FromLookup(env(map[string]string{c.name: c.value}))
		if err == nil {
			t.Errorf("%s=%s: no error (%+v)", c.name, c.value, s)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s=%s: error %q does not say %q", c.name, c.value, err, w)
			}
		}
	}
	_, err := settings.FromLookup(env(map[string]string{"GOCAFFE_BN": "x", "GOCAFFE_JPEG": "y", "GOCAFFE_GEMM": "own"}))
	if err == nil || !strings.Contains(err.Error(), "GOCAFFE_BN") || !strings.Contains(err.Error(), "GOCAFFE_JPEG") {
		t.Errorf("two bad variables: %v, want both named", err)
	}
}

// A program sets the same settings as the variables do, as a value.
func ExampleFromLookup() {
	vars := map[string]string{"GOCAFFE_BN": "cudnn", "GOCAFFE_RENDEZVOUS_TIMEOUT": "90s"}
	s, err := settings.FromLookup(func(name string) (string, bool) { v, ok := vars[name]; return v, ok })
	fmt.Println(s, err)
	fmt.Println(s == settings.Settings{BatchNorm: settings.BatchNormCuDNN, RendezvousTimeout: 90 * time.Second})
	_, err = settings.FromLookup(func(name string) (string, bool) { return "fast", name == "GOCAFFE_CONV_GEMM" })
	fmt.Println(err)
	// Output:
	// GOCAFFE_BN=cudnn GOCAFFE_RENDEZVOUS_TIMEOUT=1m30s <nil>
	// true
	// GOCAFFE_CONV_GEMM="fast": want auto, gemm or cudnn
}
