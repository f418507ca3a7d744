//go:build !cuda

package cuda

// The API of a build without the `cuda` tag: every exported type, method and
// function of the CUDA build, so that the GPU code of every other package
// compiles (and is vetted) in every build. No Device can be obtained here,
// so none of the methods below is reached through a working program; each
// returns ErrNoCUDA, or a zero value where it returns no error.
// api_test.go holds the two builds to the same signatures.

// Device is a CUDA device with its primary context. In a build without the
// `cuda` tag no Device can be obtained.
type Device struct{}

// Stream is a CUDA stream. In a build without the `cuda` tag no Stream can
// be created.
type Stream struct{}

// Event is a CUDA event. In a build without the `cuda` tag no Event can be
// created.
type Event struct{}

// Module is compiled device code. In a build without the `cuda` tag
// nothing can be compiled.
type Module struct{}

// Function is a kernel of a Module.
type Function struct{}

// Blas is a device's cuBLAS handle. In a build without the `cuda` tag no
// handle can be created.
type Blas struct{}

// Available reports whether this binary was built with CUDA support.
func Available() bool { return false }

// DeviceCount returns ErrNoCUDA in a build without the `cuda` tag.
func DeviceCount() (int, error) { return 0, ErrNoCUDA }

// DriverVersion returns ErrNoCUDA in a build without the `cuda` tag.
func DriverVersion() (int, error) { return 0, ErrNoCUDA }

// GetDevice returns ErrNoCUDA in a build without the `cuda` tag.
func GetDevice(ordinal int) (*Device, error) { return nil, ErrNoCUDA }

// SetDefaultDevice returns ErrNoCUDA in a build without the `cuda` tag.
func SetDefaultDevice(ordinal int) error { return ErrNoCUDA }

// DefaultDevice returns ErrNoCUDA in a build without the `cuda` tag.
func DefaultDevice() (*Device, error) { return nil, ErrNoCUDA }

// ElapsedMillis returns ErrNoCUDA in a build without the `cuda` tag.
func ElapsedMillis(start, end *Event) (float32, error) { return 0, ErrNoCUDA }

// Ordinal returns -1: there are no devices in this build.
func (d *Device) Ordinal() int { return -1 }

// ComputeCapability returns 0, 0 in a build without the `cuda` tag.
func (d *Device) ComputeCapability() (major, minor int) { return 0, 0 }

// Stream returns nil in a build without the `cuda` tag.
func (d *Device) Stream() *Stream { return nil }

// Properties returns ErrNoCUDA in a build without the `cuda` tag.
func (d *Device) Properties() (*Properties, error) { return nil, ErrNoCUDA }

// MemInfo returns ErrNoCUDA in a build without the `cuda` tag.
func (d *Device) MemInfo() (free, total uint64, err error) { return 0, 0, ErrNoCUDA }

// Synchronize returns ErrNoCUDA in a build without the `cuda` tag.
func (d *Device) Synchronize() error { return ErrNoCUDA }

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

// CopyDtoD returns ErrNoCUDA in a build without the `cuda` tag.
func (d *Device) CopyDtoD(dst, src DevicePtr, n int) error { return ErrNoCUDA }

// CopyHtoDAsync returns ErrNoCUDA in a build without the `cuda` tag.
func (d *Device) CopyHtoDAsync(dst DevicePtr, src []byte, s *Stream) error { return ErrNoCUDA }

// CopyDtoHAsync returns ErrNoCUDA in a build without the `cuda` tag.
func (d *Device) CopyDtoHAsync(dst []byte, src DevicePtr, s *Stream) error { return ErrNoCUDA }

// CopyDtoDAsync returns ErrNoCUDA in a build without the `cuda` tag.
func (d *Device) CopyDtoDAsync(dst, src DevicePtr, n int, s *Stream) error { return ErrNoCUDA }

// HostAlloc returns ErrNoCUDA in a build without the `cuda` tag.
func (d *Device) HostAlloc(n int) ([]byte, error) { return nil, ErrNoCUDA }

// HostFree returns ErrNoCUDA in a build without the `cuda` tag.
func (d *Device) HostFree(b []byte) error { return ErrNoCUDA }

// NewStream returns ErrNoCUDA in a build without the `cuda` tag.
func (d *Device) NewStream() (*Stream, error) { return nil, ErrNoCUDA }

// NewEvent returns ErrNoCUDA in a build without the `cuda` tag.
func (d *Device) NewEvent() (*Event, error) { return nil, ErrNoCUDA }

// NewSyncEvent returns ErrNoCUDA in a build without the `cuda` tag.
func (d *Device) NewSyncEvent() (*Event, error) { return nil, ErrNoCUDA }

// Compile returns ErrNoCUDA in a build without the `cuda` tag.
func (d *Device) Compile(name, source string) (*Module, error) { return nil, ErrNoCUDA }

// Blas returns ErrNoCUDA in a build without the `cuda` tag.
func (d *Device) Blas() (*Blas, error) { return nil, ErrNoCUDA }

// Device returns nil in a build without the `cuda` tag.
func (s *Stream) Device() *Device { return nil }

// Synchronize returns ErrNoCUDA in a build without the `cuda` tag.
func (s *Stream) Synchronize() error { return ErrNoCUDA }

// Close returns ErrNoCUDA in a build without the `cuda` tag.
func (s *Stream) Close() error { return ErrNoCUDA }

// Record returns ErrNoCUDA in a build without the `cuda` tag.
func (e *Event) Record(s *Stream) error { return ErrNoCUDA }

// Synchronize returns ErrNoCUDA in a build without the `cuda` tag.
func (e *Event) Synchronize() error { return ErrNoCUDA }

// Close returns ErrNoCUDA in a build without the `cuda` tag.
func (e *Event) Close() error { return ErrNoCUDA }

// Function returns ErrNoCUDA in a build without the `cuda` tag.
func (m *Module) Function(name string) (*Function, error) { return nil, ErrNoCUDA }

// Launch returns ErrNoCUDA in a build without the `cuda` tag.
func (f *Function) Launch(grid, block Dim3, sharedMem int, s *Stream, args *Args) error {
	return ErrNoCUDA
}

// SetTF32 returns ErrNoCUDA in a build without the `cuda` tag.
func (b *Blas) SetTF32(on bool) error { return ErrNoCUDA }

// Sgemm returns ErrNoCUDA in a build without the `cuda` tag.
func (b *Blas) Sgemm(ta, tb Op, m, n, k int, alpha float32, a DevicePtr, lda int, bm DevicePtr, ldb int, beta float32, c DevicePtr, ldc int) error {
	return ErrNoCUDA
}

// Dgemm returns ErrNoCUDA in a build without the `cuda` tag.
func (b *Blas) Dgemm(ta, tb Op, m, n, k int, alpha float64, a DevicePtr, lda int, bm DevicePtr, ldb int, beta float64, c DevicePtr, ldc int) error {
	return ErrNoCUDA
}

// Sgemv returns ErrNoCUDA in a build without the `cuda` tag.
func (b *Blas) Sgemv(t Op, m, n int, alpha float32, a DevicePtr, lda int, x DevicePtr, incx int, beta float32, y DevicePtr, incy int) error {
	return ErrNoCUDA
}

// Dgemv returns ErrNoCUDA in a build without the `cuda` tag.
func (b *Blas) Dgemv(t Op, m, n int, alpha float64, a DevicePtr, lda int, x DevicePtr, incx int, beta float64, y DevicePtr, incy int) error {
	return ErrNoCUDA
}

// Saxpy returns ErrNoCUDA in a build without the `cuda` tag.
func (b *Blas) Saxpy(n int, alpha float32, x DevicePtr, incx int, y DevicePtr, incy int) error {
	return ErrNoCUDA
}

// Daxpy returns ErrNoCUDA in a build without the `cuda` tag.
func (b *Blas) Daxpy(n int, alpha float64, x DevicePtr, incx int, y DevicePtr, incy int) error {
	return ErrNoCUDA
}

// Sscal returns ErrNoCUDA in a build without the `cuda` tag.
func (b *Blas) Sscal(n int, alpha float32, x DevicePtr, incx int) error { return ErrNoCUDA }

// Dscal returns ErrNoCUDA in a build without the `cuda` tag.
func (b *Blas) Dscal(n int, alpha float64, x DevicePtr, incx int) error { return ErrNoCUDA }

// Sdot returns ErrNoCUDA in a build without the `cuda` tag.
func (b *Blas) Sdot(n int, x DevicePtr, incx int, y DevicePtr, incy int) (float32, error) {
	return 0, ErrNoCUDA
}

// Ddot returns ErrNoCUDA in a build without the `cuda` tag.
func (b *Blas) Ddot(n int, x DevicePtr, incx int, y DevicePtr, incy int) (float64, error) {
	return 0, ErrNoCUDA
}

// Sasum returns ErrNoCUDA in a build without the `cuda` tag.
func (b *Blas) Sasum(n int, x DevicePtr, incx int) (float32, error) { return 0, ErrNoCUDA }

// Dasum returns ErrNoCUDA in a build without the `cuda` tag.
func (b *Blas) Dasum(n int, x DevicePtr, incx int) (float64, error) { return 0, ErrNoCUDA }

// Scopy returns ErrNoCUDA in a build without the `cuda` tag.
func (b *Blas) Scopy(n int, x DevicePtr, incx int, y DevicePtr, incy int) error { return ErrNoCUDA }

// Dcopy returns ErrNoCUDA in a build without the `cuda` tag.
func (b *Blas) Dcopy(n int, x DevicePtr, incx int, y DevicePtr, incy int) error { return ErrNoCUDA }
