//go:build !cuda

package cuda

// The API of a build without the `cuda` tag: every exported type, method and
// function of the CUDA build, so that the GPU code of every other package
// compiles (and is vetted) in every build. No Device can be obtained here,
// so none of the methods below is reached through a working program; each
// returns ErrNoCUDA, or a zero value where it returns no error.
// api_test.go holds the two builds to the same signatures.

import "github.com/gocaffe/gocaffe/settings"

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

// WaitEvent returns ErrNoCUDA in a build without the `cuda` tag.
func (s *Stream) WaitEvent(e *Event) error { return ErrNoCUDA }

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

// SgemmStridedBatched returns ErrNoCUDA in a build without the `cuda` tag.
func (b *Blas) SgemmStridedBatched(ta, tb Op, m, n, k int, alpha float32, a DevicePtr, lda, strideA int, bm DevicePtr, ldb, strideB int, beta float32, c DevicePtr, ldc, strideC, batch int) error {
	return ErrNoCUDA
}

// DgemmStridedBatched returns ErrNoCUDA in a build without the `cuda` tag.
func (b *Blas) DgemmStridedBatched(ta, tb Op, m, n, k int, alpha float64, a DevicePtr, lda, strideA int, bm DevicePtr, ldb, strideB int, beta float64, c DevicePtr, ldc, strideC, batch int) error {
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

// DNN is a device's cuDNN handle. In a build without the `cuda` tag none
// can be obtained.
type DNN struct{}

// DNN returns ErrNoCUDA in a build without the `cuda` tag.
func (d *Device) DNN() (*DNN, error) { return nil, ErrNoCUDA }

// CuDNNVersion returns ErrNoCUDA in a build without the `cuda` tag.
func CuDNNVersion() (int, error) { return 0, ErrNoCUDA }

// TensorDesc describes a tensor for cuDNN; none exists in this build.
type TensorDesc struct{ Type DNNType }

// NewTensorDesc returns ErrNoCUDA in a build without the `cuda` tag.
func NewTensorDesc(t DNNType, dims []int) (*TensorDesc, error) { return nil, ErrNoCUDA }

// Set returns ErrNoCUDA in a build without the `cuda` tag.
func (t *TensorDesc) Set(dims []int) error { return ErrNoCUDA }

// Destroy does nothing in a build without the `cuda` tag.
func (t *TensorDesc) Destroy() error { return nil }

// FilterDesc describes convolution weights; none exists in this build.
type FilterDesc struct{}

// NewFilterDesc returns ErrNoCUDA in a build without the `cuda` tag.
func NewFilterDesc(t DNNType, dims []int) (*FilterDesc, error) { return nil, ErrNoCUDA }

// Destroy does nothing in a build without the `cuda` tag.
func (f *FilterDesc) Destroy() error { return nil }

// ConvDesc describes a convolution; none exists in this build.
type ConvDesc struct{}

// NewConvDesc returns ErrNoCUDA in a build without the `cuda` tag.
func NewConvDesc(t DNNType, pads, strides, dilations []int, groups int, tf32 bool) (*ConvDesc, error) {
	return nil, ErrNoCUDA
}

// Destroy does nothing in a build without the `cuda` tag.
func (c *ConvDesc) Destroy() error { return nil }

// PoolDesc describes a pooling; none exists in this build.
type PoolDesc struct{}

// NewPoolDesc returns ErrNoCUDA in a build without the `cuda` tag.
func NewPoolDesc(mode PoolMode, window, pads, strides []int) (*PoolDesc, error) {
	return nil, ErrNoCUDA
}

// Destroy does nothing in a build without the `cuda` tag.
func (p *PoolDesc) Destroy() error { return nil }

// ActivationDesc describes an activation; none exists in this build.
type ActivationDesc struct{}

// NewActivationDesc returns ErrNoCUDA in a build without the `cuda` tag.
func NewActivationDesc(mode ActivationMode) (*ActivationDesc, error) { return nil, ErrNoCUDA }

// Destroy does nothing in a build without the `cuda` tag.
func (a *ActivationDesc) Destroy() error { return nil }

// LRNDesc describes a local response normalization; none exists in this
// build.
type LRNDesc struct{}

// NewLRNDesc returns ErrNoCUDA in a build without the `cuda` tag.
func NewLRNDesc(n int, alpha, beta, k float64) (*LRNDesc, error) { return nil, ErrNoCUDA }

// Destroy does nothing in a build without the `cuda` tag.
func (l *LRNDesc) Destroy() error { return nil }

// ConvForwardAlgo returns ErrNoCUDA in a build without the `cuda` tag.
func (n *DNN) ConvForwardAlgo(x *TensorDesc, w *FilterDesc, c *ConvDesc, y *TensorDesc, maxWorkspace int) (ConvAlgo, error) {
	return ConvAlgo{}, ErrNoCUDA
}

// ConvBackwardDataAlgo returns ErrNoCUDA in a build without the `cuda` tag.
func (n *DNN) ConvBackwardDataAlgo(dx *TensorDesc, w *FilterDesc, c *ConvDesc, dy *TensorDesc, maxWorkspace int) (ConvAlgo, error) {
	return ConvAlgo{}, ErrNoCUDA
}

// ConvBackwardFilterAlgo returns ErrNoCUDA in a build without the `cuda`
// tag.
func (n *DNN) ConvBackwardFilterAlgo(x *TensorDesc, dw *FilterDesc, c *ConvDesc, dy *TensorDesc, maxWorkspace int) (ConvAlgo, error) {
	return ConvAlgo{}, ErrNoCUDA
}

// ConvForward returns ErrNoCUDA in a build without the `cuda` tag.
func (n *DNN) ConvForward(alpha float64, x *TensorDesc, xp DevicePtr, w *FilterDesc, wp DevicePtr, c *ConvDesc, a ConvAlgo, ws DevicePtr, beta float64, y *TensorDesc, yp DevicePtr) error {
	return ErrNoCUDA
}

// ConvBackwardData returns ErrNoCUDA in a build without the `cuda` tag.
func (n *DNN) ConvBackwardData(alpha float64, w *FilterDesc, wp DevicePtr, dy *TensorDesc, dyp DevicePtr, c *ConvDesc, a ConvAlgo, ws DevicePtr, beta float64, dx *TensorDesc, dxp DevicePtr) error {
	return ErrNoCUDA
}

// ConvBackwardFilter returns ErrNoCUDA in a build without the `cuda` tag.
func (n *DNN) ConvBackwardFilter(alpha float64, x *TensorDesc, xp DevicePtr, dy *TensorDesc, dyp DevicePtr, c *ConvDesc, a ConvAlgo, ws DevicePtr, beta float64, dw *FilterDesc, dwp DevicePtr) error {
	return ErrNoCUDA
}

// ConvBackwardBias returns ErrNoCUDA in a build without the `cuda` tag.
func (n *DNN) ConvBackwardBias(alpha float64, dy *TensorDesc, dyp DevicePtr, beta float64, db *TensorDesc, dbp DevicePtr) error {
	return ErrNoCUDA
}

// AddTensor returns ErrNoCUDA in a build without the `cuda` tag.
func (n *DNN) AddTensor(alpha float64, a *TensorDesc, ap DevicePtr, beta float64, c *TensorDesc, cp DevicePtr) error {
	return ErrNoCUDA
}

// PoolForward returns ErrNoCUDA in a build without the `cuda` tag.
func (n *DNN) PoolForward(p *PoolDesc, x *TensorDesc, xp DevicePtr, y *TensorDesc, yp DevicePtr) error {
	return ErrNoCUDA
}

// PoolBackward returns ErrNoCUDA in a build without the `cuda` tag.
func (n *DNN) PoolBackward(p *PoolDesc, y *TensorDesc, yp DevicePtr, dy *TensorDesc, dyp DevicePtr, x *TensorDesc, xp DevicePtr, dx *TensorDesc, dxp DevicePtr) error {
	return ErrNoCUDA
}

// ActivationForward returns ErrNoCUDA in a build without the `cuda` tag.
func (n *DNN) ActivationForward(a *ActivationDesc, x *TensorDesc, xp DevicePtr, y *TensorDesc, yp DevicePtr) error {
	return ErrNoCUDA
}

// ActivationBackward returns ErrNoCUDA in a build without the `cuda` tag.
func (n *DNN) ActivationBackward(a *ActivationDesc, y *TensorDesc, yp DevicePtr, dy *TensorDesc, dyp DevicePtr, x *TensorDesc, xp DevicePtr, dx *TensorDesc, dxp DevicePtr) error {
	return ErrNoCUDA
}

// SoftmaxForward returns ErrNoCUDA in a build without the `cuda` tag.
func (n *DNN) SoftmaxForward(x *TensorDesc, xp DevicePtr, y *TensorDesc, yp DevicePtr) error {
	return ErrNoCUDA
}

// SoftmaxBackward returns ErrNoCUDA in a build without the `cuda` tag.
func (n *DNN) SoftmaxBackward(y *TensorDesc, yp DevicePtr, dy *TensorDesc, dyp DevicePtr, dx *TensorDesc, dxp DevicePtr) error {
	return ErrNoCUDA
}

// LRNForward returns ErrNoCUDA in a build without the `cuda` tag.
func (n *DNN) LRNForward(l *LRNDesc, x *TensorDesc, xp DevicePtr, y *TensorDesc, yp DevicePtr) error {
	return ErrNoCUDA
}

// LRNBackward returns ErrNoCUDA in a build without the `cuda` tag.
func (n *DNN) LRNBackward(l *LRNDesc, y *TensorDesc, yp DevicePtr, dy *TensorDesc, dyp DevicePtr, x *TensorDesc, xp DevicePtr, dx *TensorDesc, dxp DevicePtr) error {
	return ErrNoCUDA
}

// ConvFind returns ErrNoCUDA in a build without the `cuda` tag.
func (n *DNN) ConvFind(which int, x *TensorDesc, xp DevicePtr, w *FilterDesc, wp DevicePtr, c *ConvDesc, y *TensorDesc, yp DevicePtr, ws DevicePtr, wsBytes int, tf32 bool) (ConvAlgo, error) {
	return ConvAlgo{}, ErrNoCUDA
}

// MemStats returns zeros in a build without the `cuda` tag.
func (d *Device) MemStats() (inUse, peak int) { return 0, 0 }

// ResetPeak does nothing in a build without the `cuda` tag.
func (d *Device) ResetPeak() {}

// BatchNormMinEpsilon reports no batch normalization in a build without
// the `cuda` tag.
func (n *DNN) BatchNormMinEpsilon() (eps float64, ok bool) { return 0, false }

// BatchNormForwardTraining returns ErrNoCUDA in a build without the `cuda` tag.
func (n *DNN) BatchNormForwardTraining(x *TensorDesc, xp DevicePtr, y *TensorDesc, yp DevicePtr, b *BatchNormBuffers, eps float64) error {
	return ErrNoCUDA
}

// BatchNormBackward returns ErrNoCUDA in a build without the `cuda` tag.
func (n *DNN) BatchNormBackward(x *TensorDesc, xp DevicePtr, dy *TensorDesc, dyp DevicePtr, dx *TensorDesc, dxp DevicePtr, b *BatchNormBuffers, eps float64) error {
	return ErrNoCUDA
}

// JPEGDecoder decodes batches of JPEG images on a device with nvJPEG. In a
// build without the `cuda` tag none can be created.
type JPEGDecoder struct{}

// NewJPEGDecoder returns ErrNoCUDA in a build without the `cuda` tag.
func (d *Device) NewJPEGDecoder(settings.NVJPEGBackend) (*JPEGDecoder, error) { return nil, ErrNoCUDA }

// Hardware reports false in a build without the `cuda` tag.
func (j *JPEGDecoder) Hardware() bool { return false }

// DecodeBatch returns ErrNoCUDA in a build without the `cuda` tag.
func (j *JPEGDecoder) DecodeBatch(images [][]byte, height, width, channels int, out DevicePtr, s *Stream) error {
	return ErrNoCUDA
}

// Close returns ErrNoCUDA in a build without the `cuda` tag.
func (j *JPEGDecoder) Close() error { return ErrNoCUDA }

// Graph is recorded and instantiated stream work. In a build without the
// `cuda` tag no Graph can be made.
type Graph struct{}

// BeginCapture returns ErrNoCUDA in a build without the `cuda` tag.
func (s *Stream) BeginCapture() error { return ErrNoCUDA }

// Capturing returns ErrNoCUDA in a build without the `cuda` tag.
func (s *Stream) Capturing() (bool, error) { return false, ErrNoCUDA }

// EndCapture returns ErrNoCUDA in a build without the `cuda` tag.
func (s *Stream) EndCapture() (*Graph, error) { return nil, ErrNoCUDA }

// Nodes returns 0 in a build without the `cuda` tag.
func (g *Graph) Nodes() int { return 0 }

// Launch returns ErrNoCUDA in a build without the `cuda` tag.
func (g *Graph) Launch(s *Stream) error { return ErrNoCUDA }

// Close returns ErrNoCUDA in a build without the `cuda` tag.
func (g *Graph) Close() error { return ErrNoCUDA }
