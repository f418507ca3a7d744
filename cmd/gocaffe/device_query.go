package main

import (
	"fmt"
	"io"

	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/internal/glog"
)

// runDeviceQuery prints each device's properties with Caffe's wording
// (Caffe::DeviceQuery).
func runDeviceQuery(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("device_query", stderr)
	gpu := fs.String("gpu", "", "GPU device ids to query, comma separated, or 'all'")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *gpu == "" {
		fs.Usage()
		return fmt.Errorf("need -gpu: the device(s) to query: %w", errUsage)
	}
	ids, err := parseGPUs(*gpu, cuda.DeviceCount)
	if err != nil {
		return err
	}
	for _, id := range ids {
		glog.Infof("Querying GPUs %d", id)
		d, err := cuda.GetDevice(id)
		if err != nil {
			return err
		}
		p, err := d.Properties()
		if err != nil {
			return err
		}
		logProperties(p)
	}
	return nil
}

func yesNo(b bool) string {
	if b {
		return "Yes"
	}
	return "No"
}

func logProperties(p *cuda.Properties) {
	lines := []struct {
		name  string
		value any
	}{
		{"Device id", p.Ordinal},
		{"Major revision number", p.Major},
		{"Minor revision number", p.Minor},
		{"Name", p.Name},
		{"Total global memory", p.TotalGlobalMem},
		{"Total shared memory per block", p.SharedMemPerBlock},
		{"Total registers per block", p.RegsPerBlock},
		{"Warp size", p.WarpSize},
		{"Maximum memory pitch", p.MemPitch},
		{"Maximum threads per block", p.MaxThreadsPerBlock},
		{"Maximum dimension of block", fmt.Sprintf("%d, %d, %d", p.MaxThreadsDim[0], p.MaxThreadsDim[1], p.MaxThreadsDim[2])},
		{"Maximum dimension of grid", fmt.Sprintf("%d, %d, %d", p.MaxGridSize[0], p.MaxGridSize[1], p.MaxGridSize[2])},
		{"Clock rate", p.ClockRateKHz},
		{"Total constant memory", p.TotalConstMem},
		{"Texture alignment", p.TextureAlignment},
		{"Concurrent copy and execution", yesNo(p.AsyncEngineCount > 0)},
		{"Number of multiprocessors", p.MultiProcessorCount},
		{"Kernel execution timeout", yesNo(p.KernelExecTimeout)},
		{"L2 cache size", p.L2CacheSize},
		{"Memory clock rate", p.MemoryClockRateKHz},
		{"Memory bus width", p.MemoryBusWidth},
		{"ECC enabled", yesNo(p.ECCEnabled)},
		{"PCI domain:bus:device", fmt.Sprintf("%04x:%02x:%02x", p.PCIDomain, p.PCIBus, p.PCI)},
		{"CUDA driver version", fmt.Sprintf("%d.%d", p.DriverVersion/1000, p.DriverVersion%1000/10)},
	}
	for _, l := range lines {
		glog.Infof("%-31s%v", l.name+":", l.value)
	}
}
