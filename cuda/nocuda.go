//go:build !cuda

package cuda

// Device is a CUDA device with its primary context. In a build without the
// `cuda` tag no Device can be obtained.
type Device struct{}

// Stream is a CUDA stream. In a build without the `cuda` tag no Stream can
// be created.
type Stream struct{}

// Available reports whether this binary was built with CUDA support.
func Available() bool { return false }

// DeviceCount returns ErrNoCUDA in a build without the `cuda` tag.
func DeviceCount() (int, error) { return 0, ErrNoCUDA }

// GetDevice returns ErrNoCUDA in a build without the `cuda` tag.
func GetDevice(ordinal int) (*Device, error) { return nil, ErrNoCUDA }

// DefaultDevice returns ErrNoCUDA in a build without the `cuda` tag.
func DefaultDevice() (*Device, error) { return nil, ErrNoCUDA }

// Ordinal returns -1: there are no devices in this build.
func (d *Device) Ordinal() int { return -1 }

// Alloc returns ErrNoCUDA in a build without the `cuda` tag.
func (d *Device) Alloc(n int) (DevicePtr, error) { return 0, ErrNoCUDA }

// Free returns ErrNoCUDA in a build without the `cuda` tag.
func (d *Device) Free(p DevicePtr) error { return ErrNoCUDA }

// Memset returns ErrNoCUDA in a build without the `cuda` tag.
func (d *Device) Memset(p DevicePtr, value byte, n int) error { return ErrNoCUDA }

// CopyHtoD returns ErrNoCUDA in a build without the `cuda` tag.
func (d *Device) CopyHtoD(dst DevicePtr, src []byte) error { return ErrNoCUDA }

// CopyDtoH returns ErrNoCUDA in a build without the `cuda` tag.
func (d *Device) CopyDtoH(dst []byte, src DevicePtr) error { return ErrNoCUDA }

// CopyHtoDAsync returns ErrNoCUDA in a build without the `cuda` tag.
func (d *Device) CopyHtoDAsync(dst DevicePtr, src []byte, s *Stream) error { return ErrNoCUDA }

// HostAlloc returns ErrNoCUDA in a build without the `cuda` tag.
func (d *Device) HostAlloc(n int) ([]byte, error) { return nil, ErrNoCUDA }

// HostFree returns ErrNoCUDA in a build without the `cuda` tag.
func (d *Device) HostFree(b []byte) error { return ErrNoCUDA }

// Properties returns ErrNoCUDA in a build without the `cuda` tag.
func (d *Device) Properties() (*Properties, error) { return nil, ErrNoCUDA }

// Stream returns nil in a build without the `cuda` tag.
func (d *Device) Stream() *Stream { return nil }

// Synchronize returns ErrNoCUDA in a build without the `cuda` tag.
func (s *Stream) Synchronize() error { return ErrNoCUDA }
