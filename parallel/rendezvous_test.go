package parallel

import (
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// freePort returns a TCP port nothing listens on now.
func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

type rankResult struct {
	w       *watchdog
	payload []byte
	err     error
	deaths  chan error
}

// meet runs the rendezvous of size ranks, each in a goroutine.
func meet(t *testing.T, size int) []*rankResult {
	port := freePort(t)
	res := make([]*rankResult, size)
	var wg sync.WaitGroup
	for r := range size {
		res[r] = &rankResult{deaths: make(chan error, 4)}
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := Launch{Rank: r, WorldSize: size, MasterAddr: "127.0.0.1", MasterPort: port}
			var payload []byte
			if r == 0 {
				payload = []byte("the unique id")
			}
			res[r].w, res[r].payload, res[r].err = Rendezvous(l, payload, 10*time.Second, func(err error) { res[r].deaths <- err })
		}()
	}
	wg.Wait()
	for r, x := range res {
		if x.err != nil {
			t.Fatalf("rank %d: %v", r, x.err)
		}
		if string(x.payload) != "the unique id" {
			t.Errorf("rank %d got payload %q", r, x.payload)
		}
	}
	return res
}

func TestRendezvousHandsOutRank0Payload(t *testing.T) {
	res := meet(t, 3)
	for _, x := range res {
		x.w.close(true)
	}
	// A run that ended well reports no death.
	time.Sleep(100 * time.Millisecond)
	for r, x := range res {
		select {
		case err := <-x.deaths:
			t.Errorf("rank %d saw a death after a clean end: %v", r, err)
		default:
		}
	}
}

// A rank whose process dies (its connection ends without goodbye) is named
// to every other rank.
func TestRendezvousReportsADeadRank(t *testing.T) {
	res := meet(t, 3)
	res[2].w.close(false) // as the kernel closes a killed process's sockets
	for _, r := range []int{0, 1} {
		select {
		case err := <-res[r].deaths:
			if !strings.Contains(err.Error(), "rank 2 stopped") {
				t.Errorf("rank %d: %v, want it to name rank 2", r, err)
			}
			if res[r].w.err() == nil {
				t.Errorf("rank %d: watchdog err is nil after a death", r)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("rank %d never heard that rank 2 died", r)
		}
	}
	res[0].w.close(true)
	res[1].w.close(true)
}

// Rank 0 dying is seen by the others directly.
func TestRendezvousReportsDeadRank0(t *testing.T) {
	res := meet(t, 2)
	res[0].w.close(false)
	select {
	case err := <-res[1].deaths:
		if !strings.Contains(err.Error(), "rank 0 stopped") {
			t.Errorf("%v, want it to name rank 0", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("rank 1 never heard that rank 0 died")
	}
	res[1].w.close(true)
}

func TestRendezvousTimesOut(t *testing.T) {
	port := freePort(t)
	start := time.Now()
	_, _, err := Rendezvous(Launch{Rank: 1, WorldSize: 2, MasterAddr: "127.0.0.1", MasterPort: port}, nil, 500*time.Millisecond, nil)
	if err == nil || !strings.Contains(err.Error(), "could not reach rank 0") {
		t.Errorf("err = %v, want a failure to reach rank 0", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("took %v", time.Since(start))
	}
	_, _, err = Rendezvous(Launch{Rank: 0, WorldSize: 2, MasterPort: port}, nil, 300*time.Millisecond, nil)
	if err == nil || !strings.Contains(err.Error(), "waited for 1 more of 1 ranks") {
		t.Errorf("rank 0: err = %v", err)
	}
}

// A torchrun-style launch is read through a lookup: the variables set,
// the defaults of those that are not, and errors naming a wrong one.
func TestLaunchFromLookup(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		ok   bool
		want Launch
		err  string
	}{
		{env: map[string]string{}, ok: false},
		{env: map[string]string{"RANK": "", "WORLD_SIZE": ""}, ok: false},
		{env: map[string]string{"RANK": "1", "WORLD_SIZE": "4", "LOCAL_RANK": "1", "MASTER_ADDR": "node0", "MASTER_PORT": "1234"}, ok: true,
			want: Launch{Rank: 1, WorldSize: 4, LocalRank: 1, MasterAddr: "node0", MasterPort: 1234}},
		{env: map[string]string{"RANK": "0", "WORLD_SIZE": "2"}, ok: true,
			want: Launch{Rank: 0, WorldSize: 2, LocalRank: 0, MasterAddr: "127.0.0.1", MasterPort: 29500}},
		{env: map[string]string{"RANK": "2", "WORLD_SIZE": "2"}, err: "RANK=2 is not below WORLD_SIZE=2"},
		{env: map[string]string{"RANK": "x", "WORLD_SIZE": "2"}, err: `RANK="x"`},
		{env: map[string]string{"WORLD_SIZE": "2"}, err: "RANK is not set"},
	} {
		l, ok, err := LaunchFromLookup(func(name string) (string, bool) { v, ok := c.env[name]; return v, ok })
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: err %v, want %q", c.env, err, c.err)
			}
			continue
		}
		if err != nil || ok != c.ok || l != c.want {
			t.Errorf("%v: %+v %v %v, want %+v %v", c.env, l, ok, err, c.want, c.ok)
		}
	}
}

// withHandshakeTimeout shortens the handshake timeout for a test.
func withHandshakeTimeout(t *testing.T, d time.Duration) {
	old := handshakeTimeout
	handshakeTimeout = d
	t.Cleanup(func() { handshakeTimeout = old })
}

// A peer that connects to rank 0 and says nothing is dropped after the
// handshake timeout and holds up no real rank meanwhile: the rendezvous
// ends as soon as the ranks have come, long before its own timeout (it
// held rank 0's accept loop for the whole rendezvous timeout, which then
// failed).
func TestRendezvousIgnoresASilentPeer(t *testing.T) {
	withHandshakeTimeout(t, 500*time.Millisecond)
	port := freePort(t)
	start := time.Now()
	errs := make(chan error, 2)
	var w0, w1 *watchdog
	go func() {
		var err error
		w0, _, err = Rendezvous(Launch{Rank: 0, WorldSize: 2, MasterPort: port}, []byte("id"), 30*time.Second, nil)
		errs <- err
	}()
	var silent net.Conn
	for silent == nil { // rank 0 may not listen yet
		silent, _ = net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		time.Sleep(10 * time.Millisecond)
	}
	defer silent.Close()
	go func() {
		var err error
		w1, _, err = Rendezvous(Launch{Rank: 1, WorldSize: 2, MasterAddr: "127.0.0.1", MasterPort: port}, nil, 30*time.Second, nil)
		errs <- err
	}()
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the rendezvous took %v beside a silent peer", d)
	}
	w0.close(true)
	w1.close(true)
}

// A rank that reaches something on MASTER_PORT that accepts and says
// nothing (not rank 0 of a job of this version) fails after the handshake
// timeout with an error saying so, not after the whole rendezvous timeout.
func TestRendezvousSilentRank0(t *testing.T) {
	withHandshakeTimeout(t, 500*time.Millisecond)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, silent, until the test ends
		}
	}()
	start := time.Now()
	_, _, err = Rendezvous(Launch{Rank: 1, WorldSize: 2, MasterAddr: "127.0.0.1", MasterPort: ln.Addr().(*net.TCPAddr).Port}, nil, 30*time.Second, nil)
	if err == nil || !strings.Contains(err.Error(), "no acknowledgement") || !strings.Contains(err.Error(), "rank 1") {
		t.Errorf("err = %v, want one saying rank 0 did not acknowledge", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("gave up after %v", d)
	}
}
