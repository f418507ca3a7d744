package device

import (
	"errors"

	"github.com/gocaffe/gocaffe/syncedmem"
)

// Recover, deferred, turns a device failure inside a blob accessor or a
// View (a panic with a *syncedmem.DeviceError) into the error *err of the
// function that deferred it; any other panic goes on:
//
//	func (n *Net[T]) Update() (err error) {
//		defer device.Recover(&err)
//		...
//	}
func Recover(err *error) {
	if e := PanicError(recover()); e != nil {
		*err = e
	}
}

// PanicError returns the device failure that the recovered value r carries,
// or nil when r is nil; any other r is panicked again. It is Recover for
// callers that wrap the error (a deferred function of their own must call
// recover itself):
//
//	defer func() {
//		if e := device.PanicError(recover()); e != nil {
//			err = fmt.Errorf("layer %q: %w", name, e)
//		}
//	}()
func PanicError(r any) error {
	if r == nil {
		return nil
	}
	var de *syncedmem.DeviceError
	if e, ok := r.(error); ok && errors.As(e, &de) {
		return de
	}
	panic(r)
}
