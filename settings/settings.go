// Package settings is gocaffe's run-time choices as one typed value: which
// code multiplies matrices on the CPU, which kernels BatchNorm and the
// convolutions run on the GPU, where JPEGs are decoded, how long ranks
// wait for each other, how large an image may be, and the like.
//
// A Settings travels as a value: on the device context every layer, net
// and solver of that device receives (device.Context.SetSettings), so two
// nets of one program can run with different settings and tests can run
// side by side. The zero value is gocaffe's defaults.
//
// No package of the library reads the environment. The gocaffe command
// reads its GOCAFFE_ variables once at start, with FromLookup, and a
// program may do the same:
//
//	s, err := settings.FromLookup(os.LookupEnv) // or a map's lookup, or none
//	ctx := device.New(nil)                      // or device.Open(0)
//	ctx.SetSettings(s)
//
// or set the fields directly:
//
//	ctx.SetSettings(settings.Settings{BatchNorm: settings.BatchNormCuDNN, FusedUpdate: settings.Off})
//
// Variables lists the variables, their words and defaults; the
// documentation (docs/configuration.md) and its test are built on it.
//
// The package imports only the standard library, so that every package
// of gocaffe, down to cuda, can take a setting's type.
package settings

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Settings is gocaffe's run-time choices. The zero value is the defaults;
// each field's zero value is its default.
type Settings struct {
	// GEMM chooses the code that multiplies matrices on the CPU
	// (GOCAFFE_GEMM).
	GEMM GEMM
	// BatchNorm chooses the kernels of BatchNorm's cuDNN engine on the GPU
	// (GOCAFFE_BN).
	BatchNorm BatchNorm
	// ConvGEMM chooses between cuDNN's algorithms and cuBLAS GEMMs for the
	// passes of a cuDNN convolution that has a GEMM way (GOCAFFE_CONV_GEMM).
	ConvGEMM ConvGEMM
	// JPEG chooses where a Data layer on the GPU decodes JPEGs
	// (GOCAFFE_JPEG).
	JPEG JPEG
	// DeviceTransform lets a Data layer on the GPU finish its
	// transformation (crop, mirror, mean) on the device
	// (GOCAFFE_DEVICE_TRANSFORM).
	DeviceTransform Switch
	// FusedUpdate lets the GPU solver update all parameters of the SGD
	// rule in one launch (GOCAFFE_FUSED_UPDATE).
	FusedUpdate Switch
	// CuDNN lets the layers use cuDNN where it is installed
	// (GOCAFFE_CUDNN).
	CuDNN Switch
	// CuDNNGraph lets cuDNN's convolutions time the engines of its graph
	// API beside the legacy algorithms where they compute with tensor
	// cores (TF32, 16-bit storage) (GOCAFFE_CUDNN_GRAPH).
	CuDNNGraph Switch
	// ChannelsLast lets a net's plan store 16-bit activations channels-last
	// (NHWC) where every layer touching them computes so
	// (GOCAFFE_CHANNELS_LAST).
	ChannelsLast Switch
	// NVJPEGBackend chooses nvJPEG's decoder when JPEG is JPEGNVJPEG
	// (GOCAFFE_NVJPEG_BACKEND).
	NVJPEGBackend NVJPEGBackend
	// CUDACache is where compiled CUDA kernels are kept between runs
	// (GOCAFFE_CUDA_CACHE). The cache is the process's, not a context's:
	// cuda.SetCacheDir applies it.
	CUDACache CacheDir
	// RendezvousTimeout bounds how long the ranks of a torchrun-style job
	// wait for each other at the start; 0 or less means
	// DefaultRendezvousTimeout (GOCAFFE_RENDEZVOUS_TIMEOUT).
	RendezvousTimeout time.Duration
	// MaxImagePixels is the largest image, in pixels, that is decoded;
	// 0 or less means DefaultMaxImagePixels (GOCAFFE_MAX_IMAGE_PIXELS).
	MaxImagePixels int64
}

// DefaultRendezvousTimeout is how long ranks wait for each other unless
// told otherwise.
const DefaultRendezvousTimeout = 5 * time.Minute

// DefaultMaxImagePixels is the largest image, in pixels, that gocaffe
// decodes unless told otherwise. OpenCV, which Caffe decodes with, caps
// images at 2^30 pixels; Go's decoders hold 4 bytes per colour pixel, so
// that cap would let one small file (a PNG of repeated rows compresses
// 20000x20000 pixels into 400 KB) claim over 4 GiB before any layer sees
// it. 2^28 pixels (16384x16384) keeps one decode near 1 GiB and is far
// above any image a net is trained on.
const DefaultMaxImagePixels = 1 << 28

// RendezvousWait returns RendezvousTimeout, or DefaultRendezvousTimeout
// where it is 0 or less.
func (s Settings) RendezvousWait() time.Duration {
	if s.RendezvousTimeout <= 0 {
		return DefaultRendezvousTimeout
	}
	return s.RendezvousTimeout
}

// PixelLimit returns MaxImagePixels, or DefaultMaxImagePixels where it is
// 0 or less.
func (s Settings) PixelLimit() int64 {
	if s.MaxImagePixels <= 0 {
		return DefaultMaxImagePixels
	}
	return s.MaxImagePixels
}

// GEMM chooses the code that multiplies matrices on the CPU.
type GEMM uint8

const (
	// GEMMAuto multiplies with gocaffe's own kernels where this CPU has
	// assembly ones, and with the linked BLAS elsewhere (the openblas
	// build; the default build links none and always uses its own).
	GEMMAuto GEMM = iota
	// GEMMOwn multiplies with gocaffe's own kernels everywhere (the plain
	// Go one where the CPU has no assembly ones).
	GEMMOwn
	// GEMMOpenBLAS multiplies with OpenBLAS everywhere; a build without
	// the openblas tag links no BLAS and uses its own kernels.
	GEMMOpenBLAS
)

var gemmWords = []string{"auto", "own", "openblas"}

func (g GEMM) String() string { return word(gemmWords, g) }

// BatchNorm chooses the kernels of BatchNorm's cuDNN engine. On the H100
// cuDNN's took 3-7 times what the data they move takes at memory speed;
// gocaffe's read each array once or twice.
type BatchNorm uint8

const (
	// BatchNormOwn computes on gocaffe's kernels (batch_norm.cu): a block
	// per channel where that keeps the GPU busy, else a warp per row.
	BatchNormOwn BatchNorm = iota
	// BatchNormRows computes on gocaffe's row kernels alone.
	BatchNormRows
	// BatchNormCuDNN computes on cuDNN's batch normalization.
	BatchNormCuDNN
)

var batchNormWords = []string{"own", "rows", "cudnn"}

func (b BatchNorm) String() string { return word(batchNormWords, b) }

// ConvGEMM chooses, for each pass of a cuDNN convolution that has a way
// of gocaffe's own (cuBLAS GEMMs for 1x1 kernels and for the lowered
// images of few channels, kernels for depthwise ones), which way it takes.
type ConvGEMM uint8

const (
	// ConvGEMMAuto takes the faster of the two per pass, timed when the
	// shape changes.
	ConvGEMMAuto ConvGEMM = iota
	// ConvGEMMAlways takes gocaffe's way for every pass where one applies.
	ConvGEMMAlways
	// ConvGEMMNever takes cuDNN's algorithms alone.
	ConvGEMMNever
)

var convGEMMWords = []string{"auto", "gemm", "cudnn"}

func (c ConvGEMM) String() string { return word(convGEMMWords, c) }

// JPEG chooses where a Data layer on the GPU decodes its JPEGs.
type JPEG uint8

const (
	// JPEGHost decodes on the host's cores, as Caffe does.
	JPEGHost JPEG = iota
	// JPEGNVJPEG decodes a share of each batch with nvJPEG on the device
	// as well (where the transformation ends on the device). Its pixels
	// may differ from libjpeg's by a few levels.
	JPEGNVJPEG
)

var jpegWords = []string{"host", "nvjpeg"}

func (j JPEG) String() string { return word(jpegWords, j) }

// NVJPEGBackend chooses nvJPEG's decoder.
type NVJPEGBackend uint8

const (
	// NVJPEGHardware uses the device's hardware JPEG decoder (A100, H100)
	// where there is one, and nvJPEG's default backend elsewhere.
	NVJPEGHardware NVJPEGBackend = iota
	// NVJPEGDefault uses nvJPEG's default (CUDA cores) backend.
	NVJPEGDefault
)

var nvjpegWords = []string{"hardware", "default"}

func (n NVJPEGBackend) String() string { return word(nvjpegWords, n) }

// Switch is a setting that is on unless switched off: its zero value is
// On.
type Switch uint8

const (
	On Switch = iota
	Off
)

var switchWords = []string{"on", "off"}

func (s Switch) String() string { return word(switchWords, s) }

// CacheDir is where compiled CUDA kernels are kept: a directory,
// DefaultCacheDir for gocaffe/cuda under the user's cache directory
// (os.UserCacheDir), or NoCache.
type CacheDir string

const (
	DefaultCacheDir CacheDir = ""
	NoCache         CacheDir = "off"
)

func (c CacheDir) String() string {
	if c == DefaultCacheDir {
		return "default"
	}
	return string(c)
}

// word returns v's word, or says that v has none.
func word[E ~uint8](words []string, v E) string {
	if int(v) < len(words) {
		return words[v]
	}
	return fmt.Sprintf("%d (no word)", v)
}

// Variable is one environment variable of the gocaffe command and the
// setting it sets.
type Variable struct {
	Name  string // GOCAFFE_...
	Field string // the field of Settings it sets
	// Words are the words the variable takes, its default first; Value,
	// when not empty, says what else it takes (a duration, a count, a
	// directory).
	Words   []string
	Value   string
	Default string // the default, as the variable would say it
	Doc     string // what it does, in a sentence or two

	parse  func(s *Settings, v string) error // sets the field from v
	format func(s Settings) string           // the field as the variable would say it
}

// Takes says, for a message, what the variable takes: "own, rows or
// cudnn", "a duration such as 30s, 5m or 1h".
func (v Variable) Takes() string {
	parts := append([]string(nil), v.Words...)
	if v.Value != "" {
		parts = append(parts, v.Value)
	}
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// wordsVar is a variable whose value is one of words, set by set.
func wordsVar[E ~uint8](name, field, doc string, words []string, set func(*Settings) *E) Variable {
	v := Variable{Name: name, Field: field, Words: words, Default: words[0], Doc: doc}
	v.parse = func(s *Settings, value string) error {
		for i, w := range words {
			if value == w {
				*set(s) = E(i)
				return nil
			}
		}
		return v.errorf(value)
	}
	v.format = func(s Settings) string { return word(words, *set(&s)) }
	return v
}

func (v Variable) errorf(value string) error {
	return fmt.Errorf("%s=%q: want %s", v.Name, value, v.Takes())
}

// variables is the table behind Variables, FromLookup and Lookup. A
// variable added here needs its line in docs/configuration.md (a test
// says so).
var variables = []Variable{
	wordsVar("GOCAFFE_GEMM", "GEMM",
		"Which code multiplies matrices on the CPU: auto takes gocaffe's own kernels where this CPU has assembly ones and the linked OpenBLAS elsewhere (openblas build); own takes gocaffe's everywhere; openblas takes OpenBLAS everywhere (ignored, with a warning, in a build without the openblas tag).",
		gemmWords, func(s *Settings) *GEMM { return &s.GEMM }),
	wordsVar("GOCAFFE_BN", "BatchNorm",
		"The kernels of BatchNorm's cuDNN engine on the GPU: own computes on gocaffe's kernels (a block per channel where that keeps the GPU busy), rows on their row kernels alone, cudnn on cuDNN's batch normalization.",
		batchNormWords, func(s *Settings) *BatchNorm { return &s.BatchNorm }),
	wordsVar("GOCAFFE_CONV_GEMM", "ConvGEMM",
		"For the passes of a cuDNN convolution with a 1x1 kernel: auto takes the faster of cuBLAS GEMMs and cuDNN's algorithm per pass (timed when the shape changes), gemm takes the GEMMs, cudnn cuDNN's algorithms alone.",
		convGEMMWords, func(s *Settings) *ConvGEMM { return &s.ConvGEMM }),
	wordsVar("GOCAFFE_JPEG", "JPEG",
		"Where a Data layer on the GPU decodes JPEGs: host on the host's cores, nvjpeg a share of each batch on the GPU with nvJPEG as well (its pixels may differ from libjpeg's by a few levels).",
		jpegWords, func(s *Settings) *JPEG { return &s.JPEG }),
	wordsVar("GOCAFFE_DEVICE_TRANSFORM", "DeviceTransform",
		"on lets a Data layer on the GPU finish its transformation (crop, mirror, mean) on the device; off keeps it on the host's cores.",
		switchWords, func(s *Settings) *Switch { return &s.DeviceTransform }),
	wordsVar("GOCAFFE_FUSED_UPDATE", "FusedUpdate",
		"on lets the GPU solver update all parameters of the SGD rule in one launch; off runs the operations one by one (the same results), for comparison.",
		switchWords, func(s *Settings) *Switch { return &s.FusedUpdate }),
	wordsVar("GOCAFFE_CUDNN", "CuDNN",
		"on uses cuDNN where libcudnn is installed; off runs the layers on gocaffe's own GPU kernels, as on a machine without it (an explicit engine: CUDNN is then an error).",
		switchWords, func(s *Settings) *Switch { return &s.CuDNN }),
	wordsVar("GOCAFFE_CUDNN_GRAPH", "CuDNNGraph",
		"on lets a cuDNN convolution computing on tensor cores (TF32, 16-bit storage) time the engines of cuDNN's graph API beside its legacy algorithms and take the fastest per pass; off keeps the legacy algorithms alone.",
		switchWords, func(s *Settings) *Switch { return &s.CuDNNGraph }),
	wordsVar("GOCAFFE_CHANNELS_LAST", "ChannelsLast",
		"on lets a net's plan store 16-bit activations channels-last (NHWC) where every layer reading or writing them can compute so (cuDNN's convolutions but depthwise ones, BatchNorm's own kernels, pooling, LRN, Concat, the element-wise layers); off keeps Caffe's row-major order (NCHW) everywhere.",
		switchWords, func(s *Settings) *Switch { return &s.ChannelsLast }),
	wordsVar("GOCAFFE_NVJPEG_BACKEND", "NVJPEGBackend",
		"nvJPEG's decoder, with GOCAFFE_JPEG=nvjpeg: hardware the GPU's hardware JPEG decoder where it has one (A100, H100), default nvJPEG's CUDA-core backend.",
		nvjpegWords, func(s *Settings) *NVJPEGBackend { return &s.NVJPEGBackend }),
	{
		Name: "GOCAFFE_CUDA_CACHE", Field: "CUDACache",
		Words: []string{"off"}, Value: "a directory", Default: "gocaffe/cuda under the user's cache directory",
		Doc: "Where kernels compiled by NVRTC are kept between runs (keyed by source, options, architecture and driver), or off for no cache. The cache is the process's: cuda.SetCacheDir applies it.",
		parse: func(s *Settings, v string) error {
			s.CUDACache = CacheDir(v)
			return nil
		},
		format: func(s Settings) string { return string(s.CUDACache) },
	},
	{
		Name: "GOCAFFE_RENDEZVOUS_TIMEOUT", Field: "RendezvousTimeout",
		Value: "a duration such as 30s, 5m or 1h", Default: "5m",
		Doc: "How long the ranks of a torchrun-style job (RANK, WORLD_SIZE, MASTER_ADDR, ...) wait for each other at the start.",
		parse: func(s *Settings, v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return fmt.Errorf("GOCAFFE_RENDEZVOUS_TIMEOUT=%q: want a positive duration such as 30s, 5m or 1h", v)
			}
			s.RendezvousTimeout = d
			return nil
		},
		format: func(s Settings) string {
			if s.RendezvousTimeout <= 0 {
				return ""
			}
			return s.RendezvousTimeout.String()
		},
	},
	{
		Name: "GOCAFFE_MAX_IMAGE_PIXELS", Field: "MaxImagePixels",
		Value: "a positive number of pixels", Default: strconv.Itoa(DefaultMaxImagePixels) + " (16384x16384)",
		Doc: "The largest image, in pixels, that is decoded (image layers, encoded datums, the data tools): a larger one is refused from its header, before its pixels are allocated.",
		parse: func(s *Settings, v string) error {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n <= 0 {
				return fmt.Errorf("GOCAFFE_MAX_IMAGE_PIXELS=%q: want a positive number of pixels", v)
			}
			s.MaxImagePixels = n
			return nil
		},
		format: func(s Settings) string {
			if s.MaxImagePixels <= 0 {
				return ""
			}
			return strconv.FormatInt(s.MaxImagePixels, 10)
		},
	},
}

// Variables returns the table of the variables the gocaffe command reads
// into its Settings, in the order of the Settings fields.
func Variables() []Variable { return append([]Variable(nil), variables...) }

// FromLookup returns the Settings that the variables found by lookup (for
// example os.LookupEnv) say; a variable lookup does not find, or finds
// empty, keeps its default. A value that is not one of the variable's
// words is an error naming the variable and its words; every such
// variable is reported.
func FromLookup(lookup func(name string) (string, bool)) (Settings, error) {
	var s Settings
	var errs []error
	for _, v := range variables {
		value, ok := lookup(v.Name)
		if !ok || value == "" {
			continue
		}
		if err := v.parse(&s, value); err != nil {
			errs = append(errs, err)
		}
	}
	return s, errors.Join(errs...)
}

// Lookup is FromLookup's inverse: the value of the variable name that
// gives s's setting, and false where s has the default (or name is no
// variable of the table). FromLookup(s.Lookup) returns s.
func (s Settings) Lookup(name string) (string, bool) {
	for _, v := range variables {
		if v.Name == name {
			f := v.format(s)
			if f == "" || f == v.defaultWord() {
				return "", false
			}
			return f, true
		}
	}
	return "", false
}

// defaultWord returns the variable's default word, "" for a variable
// whose default is not one of its words.
func (v Variable) defaultWord() string {
	if len(v.Words) > 0 && v.Default == v.Words[0] {
		return v.Words[0]
	}
	return ""
}

// String lists the settings that differ from the defaults, as the
// variables would say them ("GOCAFFE_BN=rows GOCAFFE_FUSED_UPDATE=off"),
// or "defaults".
func (s Settings) String() string {
	var parts []string
	for _, v := range variables {
		if value, ok := s.Lookup(v.Name); ok {
			parts = append(parts, v.Name+"="+value)
		}
	}
	if len(parts) == 0 {
		return "defaults"
	}
	return strings.Join(parts, " ")
}
