package net

import (
	"fmt"
	"strconv"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/hdf5"
	"github.com/gocaffe/gocaffe/internal/logf"
	"github.com/gocaffe/gocaffe/protoio"
)

// ToHDF5 writes the net's weights in Caffe's HDF5 layout (Net::ToHDF5): a
// group /data/<layer name> per layer holding a dataset "<i>" for each
// learnable blob the layer owns (shared ones are written at their owner),
// and with writeDiff a /diff/<layer name> group holding every blob's diff.
// Like Caffe it cannot write a net of two layers of one name.
func (n *Net[T]) ToHDF5(path string, writeDiff bool) error {
	b := hdf5.NewBuilder()
	data, err := b.Root().CreateGroup("data")
	if err != nil {
		return err
	}
	var diff *hdf5.WGroup
	if writeDiff {
		if diff, err = b.Root().CreateGroup("diff"); err != nil {
			return err
		}
	}
	for _, r := range n.layers {
		name := r.name
		ld, err := data.CreateGroup(name)
		if err != nil {
			return fmt.Errorf("%s: layer %q: %w (Caffe's HDF5 weights have one group per layer name)", path, name, err)
		}
		var lf *hdf5.WGroup
		if writeDiff {
			if lf, err = diff.CreateGroup(name); err != nil {
				return fmt.Errorf("%s: layer %q: %w", path, name, err)
			}
		}
		for j, p := range r.layer.LayerBase().Blobs() {
			if n.params[r.params[j]].owner < 0 {
				if err := p.ToHDF5(ld, strconv.Itoa(j), false); err != nil {
					return fmt.Errorf("%s: layer %q: %w", path, name, err)
				}
			}
			if writeDiff {
				if err := p.ToHDF5(lf, strconv.Itoa(j), true); err != nil {
					return fmt.Errorf("%s: layer %q: %w", path, name, err)
				}
			}
		}
	}
	return protoio.WriteFileAtomic(path, b.Bytes())
}

// CopyTrainedLayersFromHDF5 loads weights written by ToHDF5 (or Caffe's
// Net::ToHDF5): for each group under /data, the layer of that name (the
// last of several, as Caffe's name index) gets dataset "<i>" into its blob
// i, whose shape must match exactly. A layer group with more datasets than
// the layer has blobs is an error; a missing dataset is allowed only for a
// blob shared with an earlier layer. Everything is read and checked before
// the net is changed.
func (n *Net[T]) CopyTrainedLayersFromHDF5(path string) error {
	f, err := hdf5.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	data, err := f.OpenGroup("data")
	if err != nil {
		return fmt.Errorf("error reading weights from %s: %w", path, err)
	}
	type job struct {
		target, staged *blob.Blob[T]
	}
	var jobs []job
	for _, name := range data.Names() {
		id, ok := n.layerIndex[name]
		if !ok {
			logf.Debugf(n.log, "Ignoring source layer %s", name)
			continue
		}
		lg, err := data.Group(name)
		if err != nil {
			return err
		}
		targets := n.layers[id].layer.LayerBase().Blobs()
		if len(lg.Names()) > len(targets) {
			return fmt.Errorf("%s: incompatible number of blobs for layer %q: the file has %d, the net's layer %d", path, name, len(lg.Names()), len(targets))
		}
		for j, t := range targets {
			ds := strconv.Itoa(j)
			if !lg.Has(ds) {
				if n.params[n.layers[id].params[j]].owner >= 0 {
					continue // shared: its owner carries the weights
				}
				return fmt.Errorf("%s: incompatible number of blobs for layer %q: no dataset /data/%s/%s", path, name, name, ds)
			}
			d, err := lg.Dataset(ds)
			if err != nil {
				return err
			}
			staged, err := blob.New[T](t.Shape()...)
			if err != nil {
				return err
			}
			if err := staged.FromHDF5(d, false); err != nil {
				return fmt.Errorf("layer %q: %w", name, err)
			}
			jobs = append(jobs, job{t, staged})
		}
	}
	for _, j := range jobs {
		copy(j.target.MutableCPUData(), j.staged.CPUData())
	}
	return nil
}
