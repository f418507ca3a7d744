//go:build !(cuda && nccl)

package cuda

// NCCLAvailable reports whether this build has NCCL.
func NCCLAvailable() bool { return false }

// NCCLVersion returns ErrNoNCCL without the `cuda` and `nccl` tags.
func NCCLVersion() (int, error) { return 0, ErrNoNCCL }

// NCCLGetUniqueID returns ErrNoNCCL without the `cuda` and `nccl` tags.
func NCCLGetUniqueID() (NCCLUniqueID, error) { return NCCLUniqueID{}, ErrNoNCCL }

// NCCLComm is one rank's handle of an NCCL communicator. Without the
// `cuda` and `nccl` tags none can be made.
type NCCLComm struct{}

// NewNCCLComm returns ErrNoNCCL without the `cuda` and `nccl` tags.
func NewNCCLComm(d *Device, id NCCLUniqueID, rank, size int) (*NCCLComm, error) {
	return nil, ErrNoNCCL
}

// NewNCCLComms returns ErrNoNCCL without the `cuda` and `nccl` tags.
func NewNCCLComms(devs []*Device) ([]*NCCLComm, error) { return nil, ErrNoNCCL }

// Rank returns 0: no communicator exists in this build.
func (c *NCCLComm) Rank() int { return 0 }

// Size returns 0: no communicator exists in this build.
func (c *NCCLComm) Size() int { return 0 }

// Device returns nil: no communicator exists in this build.
func (c *NCCLComm) Device() *Device { return nil }

// AllReduceSum returns ErrNoNCCL without the `cuda` and `nccl` tags.
func (c *NCCLComm) AllReduceSum(buf DevicePtr, n int, double bool, s *Stream) error {
	return ErrNoNCCL
}

// Broadcast returns ErrNoNCCL without the `cuda` and `nccl` tags.
func (c *NCCLComm) Broadcast(buf DevicePtr, bytes, root int, s *Stream) error { return ErrNoNCCL }

// AsyncError returns ErrNoNCCL without the `cuda` and `nccl` tags.
func (c *NCCLComm) AsyncError() error { return ErrNoNCCL }

// Abort returns ErrNoNCCL without the `cuda` and `nccl` tags.
func (c *NCCLComm) Abort() error { return ErrNoNCCL }

// Close returns ErrNoNCCL without the `cuda` and `nccl` tags.
func (c *NCCLComm) Close() error { return ErrNoNCCL }

// NCCLGroup returns ErrNoNCCL without the `cuda` and `nccl` tags.
func NCCLGroup(f func() error) error { return ErrNoNCCL }
