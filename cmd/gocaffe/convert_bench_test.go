package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/internal/glog"
)

// BenchmarkConvertMNIST converts Fashion-MNIST's 60000 training images
// (gzip-compressed IDX, as Debian ships them) into each backend and reports
// records/s. Each iteration writes a fresh database under the test's
// temporary directory, so the figure includes the database's final flush.
//
//	go test ./cmd/gocaffe -run '^$' -bench ConvertMNIST -benchtime 5x
func BenchmarkConvertMNIST(b *testing.B) {
	images := filepath.Join(fashionDir, "train-images-idx3-ubyte.gz")
	labels := filepath.Join(fashionDir, "train-labels-idx1-ubyte.gz")
	if _, err := os.Stat(images); err != nil {
		b.Skipf("dataset-fashion-mnist is not installed: %v", err)
	}
	prev := glog.SetOutput(io.Discard)
	defer glog.SetOutput(prev)
	for _, backend := range backends {
		b.Run(strings.ToLower(backend.String()), func(b *testing.B) {
			requireBackend(b, backend)
			dir := b.TempDir()
			records := 0
			for i := 0; b.Loop(); i++ {
				n, err := convertMNIST(images, labels, filepath.Join(dir, fmt.Sprint(i)), backend, io.Discard)
				if err != nil {
					b.Fatal(err)
				}
				records += n
			}
			b.ReportMetric(float64(records)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
