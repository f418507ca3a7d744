//go:build cuda

package cuda

/*
#cgo noescape gc_stream_create
#cgo noescape gc_event_create
#cgo noescape gc_event_elapsed
#cgo nocallback gc_event_record
#cgo nocallback gc_stream_wait_event
#cgo nocallback gc_stream_synchronize
#include "gocaffe_cuda.h"
*/
import "C"

import "fmt"

// Stream is a CUDA stream of a device.
type Stream struct {
	dev *Device
	s   C.CUstream
}

func (d *Device) newStream(flags C.uint) (*Stream, error) {
	s := &Stream{dev: d}
	if err := driverError(fmt.Sprintf("cuStreamCreate(device %d)", d.ordinal), C.gc_stream_create(d.ctx, &s.s, flags)); err != nil {
		return nil, err
	}
	return s, nil
}

// NewStream creates a non-blocking stream: its work overlaps the compute
// stream's and is ordered with it only through Synchronize or events.
// Close it when done.
func (d *Device) NewStream() (*Stream, error) { return d.newStream(C.CU_STREAM_NON_BLOCKING) }

// handle returns the CUstream, nil (the legacy default stream) for a nil
// Stream.
func (s *Stream) handle() C.CUstream {
	if s == nil {
		return nil
	}
	return s.s
}

// Device returns the stream's device.
func (s *Stream) Device() *Device { return s.dev }

// Synchronize waits until the work queued on s has finished.
func (s *Stream) Synchronize() error {
	if r := C.gc_stream_synchronize(s.dev.ctx, s.s); r != C.CUDA_SUCCESS {
		return driverError("cuStreamSynchronize", r)
	}
	return nil
}

// Close destroys the stream. The compute stream cannot be closed.
func (s *Stream) Close() error {
	if s == s.dev.stream {
		return fmt.Errorf("cuda: the compute stream of device %d cannot be closed", s.dev.ordinal)
	}
	if r := C.gc_stream_destroy(s.dev.ctx, s.s); r != C.CUDA_SUCCESS {
		return driverError("cuStreamDestroy", r)
	}
	return nil
}

// Event is a CUDA event, for timing and ordering work on streams.
type Event struct {
	dev *Device
	e   C.CUevent
}

// NewEvent creates an event (with timing). Close it when done.
func (d *Device) NewEvent() (*Event, error) { return d.newEvent(C.CU_EVENT_DEFAULT) }

// NewSyncEvent creates an event for ordering only, on which Synchronize
// sleeps instead of spinning (CU_EVENT_BLOCKING_SYNC, CU_EVENT_DISABLE_TIMING):
// for a background goroutine that waits for the device while another thread
// launches work, which a spinning wait would compete with. It cannot time
// (ElapsedMillis fails). Close it when done.
func (d *Device) NewSyncEvent() (*Event, error) {
	return d.newEvent(C.CU_EVENT_BLOCKING_SYNC | C.CU_EVENT_DISABLE_TIMING)
}

// NewSpinEvent creates an event for ordering only (CU_EVENT_DISABLE_TIMING),
// on which Synchronize waits as the context schedules (spinning while the
// host has a core per context): for a short wait, where waking up from
// sleep would cost more than the wait. Close it when done.
func (d *Device) NewSpinEvent() (*Event, error) { return d.newEvent(C.CU_EVENT_DISABLE_TIMING) }

func (d *Device) newEvent(flags C.uint) (*Event, error) {
	e := &Event{dev: d}
	if err := driverError("cuEventCreate", C.gc_event_create(d.ctx, &e.e, flags)); err != nil {
		return nil, err
	}
	return e, nil
}

// Record queues the event on s.
func (e *Event) Record(s *Stream) error {
	if r := C.gc_event_record(e.dev.ctx, e.e, s.handle()); r != C.CUDA_SUCCESS {
		return driverError("cuEventRecord", r)
	}
	return nil
}

// WaitEvent makes the work queued on s from now on wait for e (the last
// Record of it) without blocking the host: one stream's work ordered after
// another's.
func (s *Stream) WaitEvent(e *Event) error {
	if r := C.gc_stream_wait_event(e.dev.ctx, s.handle(), e.e); r != C.CUDA_SUCCESS {
		return driverError("cuStreamWaitEvent", r)
	}
	return nil
}

// Synchronize waits until the event has happened.
func (e *Event) Synchronize() error {
	if r := C.gc_event_synchronize(e.dev.ctx, e.e); r != C.CUDA_SUCCESS {
		return driverError("cuEventSynchronize", r)
	}
	return nil
}

// Close destroys the event.
func (e *Event) Close() error {
	if r := C.gc_event_destroy(e.dev.ctx, e.e); r != C.CUDA_SUCCESS {
		return driverError("cuEventDestroy", r)
	}
	return nil
}

// ElapsedMillis returns the time in milliseconds between two recorded events
// (both must have happened).
func ElapsedMillis(start, end *Event) (float32, error) {
	var ms C.float
	if err := driverError("cuEventElapsedTime", C.gc_event_elapsed(start.dev.ctx, &ms, start.e, end.e)); err != nil {
		return 0, err
	}
	return float32(ms), nil
}
