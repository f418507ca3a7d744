package main

import (
	"time"

	"github.com/gocaffe/gocaffe/cuda"
)

// layerClock times the steps of one pass of `gocaffe time`: marks 0 to n-1
// end steps 0 to n-1, and read returns each step's duration.
//
// On the CPU a step's time is the wall time to its end, waiting for its
// work. On a GPU the clock records an event on the device's stream at each
// mark and reads them all once per pass, so a layer's time is the
// device's time between the end of the previous layer's work and the end
// of its own, with no wait for the device between layers: the host
// queues ahead as it does in training, and a layer is not charged for the
// launch latency that a wait before it would expose (Caffe's GPU timer
// waits after every layer, which adds tens of microseconds to each).
type layerClock struct {
	sync func() error

	// CPU
	last  time.Time
	times []time.Duration

	// GPU
	dev    *cuda.Device
	events []*cuda.Event // events[0] starts the pass, events[k+1] ends step k
}

// newLayerClock returns a clock of n steps for dev, or for the host where
// dev is nil; sync waits for the device's queued work.
func newLayerClock(dev *cuda.Device, n int, sync func() error) (*layerClock, error) {
	c := &layerClock{sync: sync, dev: dev, times: make([]time.Duration, n)}
	if dev == nil {
		return c, nil
	}
	for range n + 1 {
		e, err := dev.NewEvent()
		if err != nil {
			c.close()
			return nil, err
		}
		c.events = append(c.events, e)
	}
	return c, nil
}

// how names the per-layer measure for the summary line.
func (c *layerClock) how() string {
	if c.dev != nil {
		return "device events"
	}
	return "synchronised"
}

// start begins a pass.
func (c *layerClock) start() error {
	if c.dev != nil {
		return c.events[0].Record(c.dev.Stream())
	}
	c.last = time.Now()
	return nil
}

// mark ends step k.
func (c *layerClock) mark(k int) error {
	if c.dev != nil {
		return c.events[k+1].Record(c.dev.Stream())
	}
	if err := c.sync(); err != nil {
		return err
	}
	now := time.Now()
	c.times[k] = now.Sub(c.last)
	c.last = now
	return nil
}

// read ends the pass and returns the steps' durations, valid until the
// next read.
func (c *layerClock) read() ([]time.Duration, error) {
	if c.dev == nil {
		return c.times, nil
	}
	if err := c.events[len(c.events)-1].Synchronize(); err != nil {
		return nil, err
	}
	for k := range c.times {
		msec, err := cuda.ElapsedMillis(c.events[k], c.events[k+1])
		if err != nil {
			return nil, err
		}
		c.times[k] = time.Duration(float64(msec) * float64(time.Millisecond))
	}
	return c.times, nil
}

// close releases the events.
func (c *layerClock) close() {
	for _, e := range c.events {
		e.Close()
	}
}
