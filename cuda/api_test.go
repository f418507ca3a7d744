package cuda

import "github.com/gocaffe/gocaffe/settings"

// Both builds, with and without the `cuda` tag, must declare this API with
// these signatures: the code above the binding compiles against whichever
// build it gets. A method missing or changed on one side fails this file's
// compilation in that build (go vet ./... and go vet -tags cuda ./...).
var (
	_ func() bool                           = Available
	_ func() (int, error)                   = DeviceCount
	_ func() (int, error)                   = DriverVersion
	_ func(int) (*Device, error)            = GetDevice
	_ func(int) error                       = SetDefaultDevice
	_ func() (*Device, error)               = DefaultDevice
	_ func(*Event, *Event) (float32, error) = ElapsedMillis
	_ func() string                         = CacheDir

	_ func(*Device) int                                       = (*Device).Ordinal
	_ func(*Device) (int, int)                                = (*Device).ComputeCapability
	_ func(*Device) *Stream                                   = (*Device).Stream
	_ func(*Device) (*Properties, error)                      = (*Device).Properties
	_ func(*Device) (uint64, uint64, error)                   = (*Device).MemInfo
	_ func(*Device) error                                     = (*Device).Synchronize
	_ func(*Device, int) (DevicePtr, error)                   = (*Device).Alloc
	_ func(*Device, DevicePtr) error                          = (*Device).Free
	_ func(*Device, DevicePtr, byte, int) error               = (*Device).Memset
	_ func(*Device, DevicePtr, []byte) error                  = (*Device).CopyHtoD
	_ func(*Device, []byte, DevicePtr) error                  = (*Device).CopyDtoH
	_ func(*Device, DevicePtr, DevicePtr, int) error          = (*Device).CopyDtoD
	_ func(*Device, DevicePtr, []byte, *Stream) error         = (*Device).CopyHtoDAsync
	_ func(*Device, []byte, DevicePtr, *Stream) error         = (*Device).CopyDtoHAsync
	_ func(*Device, DevicePtr, DevicePtr, int, *Stream) error = (*Device).CopyDtoDAsync
	_ func(*Device, int) ([]byte, error)                      = (*Device).HostAlloc
	_ func(*Device, []byte) error                             = (*Device).HostFree
	_ func(*Device) (*Stream, error)                          = (*Device).NewStream
	_ func(*Device) (*Event, error)                           = (*Device).NewEvent
	_ func(*Device) (*Event, error)                           = (*Device).NewSyncEvent
	_ func(*Device, string, string) (*Module, error)          = (*Device).Compile
	_ func(*Device) (*Blas, error)                            = (*Device).Blas
	_ func(*Device) (int, int)                                = (*Device).MemStats
	_ func(*Device)                                           = (*Device).ResetPeak

	_ func(*Stream) *Device = (*Stream).Device
	_ func(*Stream) error   = (*Stream).Synchronize
	_ func(*Stream) error   = (*Stream).Close

	_ func(*Stream) error           = (*Stream).BeginCapture
	_ func(*Stream) (bool, error)   = (*Stream).Capturing
	_ func(*Stream) (*Graph, error) = (*Stream).EndCapture
	_ func(*Graph) int              = (*Graph).Nodes
	_ func(*Graph, *Stream) error   = (*Graph).Launch
	_ func(*Graph) error            = (*Graph).Close

	_ func(*Event, *Stream) error = (*Event).Record
	_ func(*Event) error          = (*Event).Synchronize
	_ func(*Event) error          = (*Event).Close

	_ func(*Module, string) (*Function, error)               = (*Module).Function
	_ func(*Function, Dim3, Dim3, int, *Stream, *Args) error = (*Function).Launch

	_ func(*Blas, bool) error                                                                                    = (*Blas).SetTF32
	_ func(*Blas, Op, Op, int, int, int, float32, DevicePtr, int, DevicePtr, int, float32, DevicePtr, int) error = (*Blas).Sgemm
	_ func(*Blas, Op, Op, int, int, int, float64, DevicePtr, int, DevicePtr, int, float64, DevicePtr, int) error = (*Blas).Dgemm
	_ func(*Blas, Op, int, int, float32, DevicePtr, int, DevicePtr, int, float32, DevicePtr, int) error          = (*Blas).Sgemv
	_ func(*Blas, Op, int, int, float64, DevicePtr, int, DevicePtr, int, float64, DevicePtr, int) error          = (*Blas).Dgemv
	_ func(*Blas, int, float32, DevicePtr, int, DevicePtr, int) error                                            = (*Blas).Saxpy
	_ func(*Blas, int, float64, DevicePtr, int, DevicePtr, int) error                                            = (*Blas).Daxpy
	_ func(*Blas, int, float32, DevicePtr, int) error                                                            = (*Blas).Sscal
	_ func(*Blas, int, float64, DevicePtr, int) error                                                            = (*Blas).Dscal
	_ func(*Blas, int, DevicePtr, int, DevicePtr, int) (float32, error)                                          = (*Blas).Sdot
	_ func(*Blas, int, DevicePtr, int, DevicePtr, int) (float64, error)                                          = (*Blas).Ddot
	_ func(*Blas, int, DevicePtr, int) (float32, error)                                                          = (*Blas).Sasum
	_ func(*Blas, int, DevicePtr, int) (float64, error)                                                          = (*Blas).Dasum
	_ func(*Blas, int, DevicePtr, int, DevicePtr, int) error                                                     = (*Blas).Scopy
	_ func(*Blas, int, DevicePtr, int, DevicePtr, int) error                                                     = (*Blas).Dcopy
)

// NCCL's API, the same with and without the `nccl` tag.
var (
	_ func() bool                                              = NCCLAvailable
	_ func() (int, error)                                      = NCCLVersion
	_ func() (NCCLUniqueID, error)                             = NCCLGetUniqueID
	_ func(*Device, NCCLUniqueID, int, int) (*NCCLComm, error) = NewNCCLComm
	_ func([]*Device) ([]*NCCLComm, error)                     = NewNCCLComms
	_ func(func() error) error                                 = NCCLGroup
	_ func(*NCCLComm) int                                      = (*NCCLComm).Rank
	_ func(*NCCLComm) int                                      = (*NCCLComm).Size
	_ func(*NCCLComm) *Device                                  = (*NCCLComm).Device
	_ func(*NCCLComm, DevicePtr, int, bool, *Stream) error     = (*NCCLComm).AllReduceSum
	_ func(*NCCLComm, DevicePtr, int, int, *Stream) error      = (*NCCLComm).Broadcast
	_ func(*NCCLComm) error                                    = (*NCCLComm).AsyncError
	_ func(*NCCLComm) error                                    = (*NCCLComm).Abort
	_ func(*NCCLComm) error                                    = (*NCCLComm).Close
)

// cuDNN's API, the same in both builds.
var (
	_ func() (int, error)                                                                                                                        = CuDNNVersion
	_ func(*Device) (*DNN, error)                                                                                                                = (*Device).DNN
	_ func(DNNType, []int) (*TensorDesc, error)                                                                                                  = NewTensorDesc
	_ func(*TensorDesc, []int) error                                                                                                             = (*TensorDesc).Set
	_ func(DNNType, []int) (*FilterDesc, error)                                                                                                  = NewFilterDesc
	_ func(DNNType, []int, []int, []int, int, bool) (*ConvDesc, error)                                                                           = NewConvDesc
	_ func(PoolMode, []int, []int, []int) (*PoolDesc, error)                                                                                     = NewPoolDesc
	_ func(ActivationMode) (*ActivationDesc, error)                                                                                              = NewActivationDesc
	_ func(int, float64, float64, float64) (*LRNDesc, error)                                                                                     = NewLRNDesc
	_ func(*TensorDesc) error                                                                                                                    = (*TensorDesc).Destroy
	_ func(*FilterDesc) error                                                                                                                    = (*FilterDesc).Destroy
	_ func(*ConvDesc) error                                                                                                                      = (*ConvDesc).Destroy
	_ func(*PoolDesc) error                                                                                                                      = (*PoolDesc).Destroy
	_ func(*ActivationDesc) error                                                                                                                = (*ActivationDesc).Destroy
	_ func(*LRNDesc) error                                                                                                                       = (*LRNDesc).Destroy
	_ func(*DNN, *TensorDesc, *FilterDesc, *ConvDesc, *TensorDesc, int) (ConvAlgo, error)                                                        = (*DNN).ConvForwardAlgo
	_ func(*DNN, *TensorDesc, *FilterDesc, *ConvDesc, *TensorDesc, int) (ConvAlgo, error)                                                        = (*DNN).ConvBackwardDataAlgo
	_ func(*DNN, *TensorDesc, *FilterDesc, *ConvDesc, *TensorDesc, int) (ConvAlgo, error)                                                        = (*DNN).ConvBackwardFilterAlgo
	_ func(*DNN, float64, *TensorDesc, DevicePtr, *FilterDesc, DevicePtr, *ConvDesc, ConvAlgo, DevicePtr, float64, *TensorDesc, DevicePtr) error = (*DNN).ConvForward
	_ func(*DNN, float64, *FilterDesc, DevicePtr, *TensorDesc, DevicePtr, *ConvDesc, ConvAlgo, DevicePtr, float64, *TensorDesc, DevicePtr) error = (*DNN).ConvBackwardData
	_ func(*DNN, float64, *TensorDesc, DevicePtr, *TensorDesc, DevicePtr, *ConvDesc, ConvAlgo, DevicePtr, float64, *FilterDesc, DevicePtr) error = (*DNN).ConvBackwardFilter
	_ func(*DNN, float64, *TensorDesc, DevicePtr, float64, *TensorDesc, DevicePtr) error                                                         = (*DNN).ConvBackwardBias
	_ func(*DNN, float64, *TensorDesc, DevicePtr, float64, *TensorDesc, DevicePtr) error                                                         = (*DNN).AddTensor
	_ func(*DNN, *PoolDesc, *TensorDesc, DevicePtr, *TensorDesc, DevicePtr) error                                                                = (*DNN).PoolForward
	_ func(*DNN, *PoolDesc, *TensorDesc, DevicePtr, *TensorDesc, DevicePtr, *TensorDesc, DevicePtr, *TensorDesc, DevicePtr) error                = (*DNN).PoolBackward
	_ func(*DNN, *ActivationDesc, *TensorDesc, DevicePtr, *TensorDesc, DevicePtr) error                                                          = (*DNN).ActivationForward
	_ func(*DNN, *ActivationDesc, *TensorDesc, DevicePtr, *TensorDesc, DevicePtr, *TensorDesc, DevicePtr, *TensorDesc, DevicePtr) error          = (*DNN).ActivationBackward
	_ func(*DNN, *TensorDesc, DevicePtr, *TensorDesc, DevicePtr) error                                                                           = (*DNN).SoftmaxForward
	_ func(*DNN, *TensorDesc, DevicePtr, *TensorDesc, DevicePtr, *TensorDesc, DevicePtr) error                                                   = (*DNN).SoftmaxBackward
	_ func(*DNN, *LRNDesc, *TensorDesc, DevicePtr, *TensorDesc, DevicePtr) error                                                                 = (*DNN).LRNForward
	_ func(*DNN, *LRNDesc, *TensorDesc, DevicePtr, *TensorDesc, DevicePtr, *TensorDesc, DevicePtr, *TensorDesc, DevicePtr) error                 = (*DNN).LRNBackward
	_ func(*DNN) (float64, bool)                                                                                                                 = (*DNN).BatchNormMinEpsilon
	_ func(*DNN, *TensorDesc, DevicePtr, *TensorDesc, DevicePtr, *BatchNormBuffers, float64) error                                               = (*DNN).BatchNormForwardTraining
	_ func(*DNN, *TensorDesc, DevicePtr, *TensorDesc, DevicePtr, *TensorDesc, DevicePtr, *BatchNormBuffers, float64) error                       = (*DNN).BatchNormBackward
)

// nvJPEG's API, the same in both builds.
var (
	_ func(*Device, settings.NVJPEGBackend) (*JPEGDecoder, error)           = (*Device).NewJPEGDecoder
	_ func(*JPEGDecoder) bool                                               = (*JPEGDecoder).Hardware
	_ func(*JPEGDecoder, [][]byte, int, int, int, DevicePtr, *Stream) error = (*JPEGDecoder).DecodeBatch
	_ func(*JPEGDecoder) error                                              = (*JPEGDecoder).Close
)
