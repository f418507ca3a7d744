package golden

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// fixture is one file written by golden_dump (see README.md): the net as
// Caffe built it, with its parameters, and the golden.* layers.
type fixture struct {
	layers []*caffepb.LayerParameter // Caffe's layers, golden.* removed
	phase  caffepb.Phase

	blobs        named // golden.blobs: net blobs stored whole
	blobSamples  named // golden.blob_samples: larger blobs, sampled
	paramSamples named // golden.param_samples: larger parameters, sampled
	updated      named // golden.updated: parameter data Forward changed
	loss         float64
	flags        flags
}

// named is a golden layer's tops and blobs, by top name.
type named map[string]*caffepb.BlobProto

// flags are golden_dump's flags, as the fixture records them.
type flags struct {
	seed      uint64
	seeded    bool
	maxStored int
	fills     map[string]fillSpec
}

func readFixture(path string) (*fixture, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var p caffepb.NetParameter
	if err := proto.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f := &fixture{phase: p.GetState().GetPhase()}
	var meta *caffepb.LayerParameter
	for _, l := range p.GetLayer() {
		switch l.GetName() {
		case "golden.blobs":
			f.blobs, err = byTop(l)
		case "golden.blob_samples":
			f.blobSamples, err = byTop(l)
		case "golden.param_samples":
			f.paramSamples, err = byTop(l)
		case "golden.updated":
			f.updated, err = byTop(l)
		case "golden.meta":
			meta = l
		default:
			f.layers = append(f.layers, l)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	if meta == nil || len(meta.GetBlobs()) != 2 {
		return nil, fmt.Errorf("%s: no golden.meta layer with the seed and the loss", path)
	}
	f.loss = meta.GetBlobs()[1].GetDoubleData()[0]
	if f.flags, err = parseFlags(meta.GetPythonParam().GetParamStr()); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

func byTop(l *caffepb.LayerParameter) (named, error) {
	if len(l.GetTop()) != len(l.GetBlobs()) {
		return nil, fmt.Errorf("layer %s: %d tops but %d blobs", l.GetName(), len(l.GetTop()), len(l.GetBlobs()))
	}
	m := named{}
	for i, name := range l.GetTop() {
		m[name] = l.GetBlobs()[i]
	}
	return m, nil
}

// parseFlags reads the flags golden_dump ran with (those that say how
// inputs and parameters were made; the rest are already in the fixture).
func parseFlags(args string) (flags, error) {
	f := flags{seed: 1701, fills: map[string]fillSpec{}}
	words := strings.Fields(args)
	for i := 0; i < len(words); i++ {
		value := func() (string, error) {
			if i+1 >= len(words) {
				return "", fmt.Errorf("flag %s without a value", words[i])
			}
			i++
			return words[i], nil
		}
		var err error
		var v string
		switch words[i] {
		case "--seeded":
			f.seeded = true
		case "--phase", "--weights", "--fill_param": // recorded in the fixture's layers
			_, err = value()
		case "--seed":
			if v, err = value(); err == nil {
				f.seed, err = strconv.ParseUint(v, 10, 64)
			}
		case "--max_stored":
			if v, err = value(); err == nil {
				f.maxStored, err = strconv.Atoi(v)
			}
		case "--fill":
			if v, err = value(); err == nil {
				err = f.addFill(v)
			}
		default:
			err = fmt.Errorf("unknown flag %q", words[i])
		}
		if err != nil {
			return f, fmt.Errorf("golden.meta flags %q: %w", args, err)
		}
	}
	return f, nil
}

// addFill parses NAME=KIND:A[:B].
func (f *flags) addFill(v string) error {
	eq := strings.LastIndexByte(v, '=')
	if eq < 0 {
		return fmt.Errorf("--fill %s: want NAME=SPEC", v)
	}
	parts := strings.Split(v[eq+1:], ":")
	s := fillSpec{kind: parts[0]}
	var err error
	if len(parts) < 2 {
		return fmt.Errorf("--fill %s: no value", v)
	}
	if s.a, err = strconv.ParseFloat(parts[1], 64); err != nil {
		return err
	}
	if s.kind != "constant" {
		if len(parts) < 3 {
			return fmt.Errorf("--fill %s: want KIND:A:B", v)
		}
		if s.b, err = strconv.ParseFloat(parts[2], 64); err != nil {
			return err
		}
	}
	f.fills[v[:eq]] = s
	return nil
}

// fillFor is the spec an input was filled by: --fill's, or uniform in
// [-1, 1).
func (f flags) fillFor(name string) fillSpec {
	if s, ok := f.fills[name]; ok {
		return s
	}
	return fillSpec{kind: "uniform", a: -1, b: 1}
}
