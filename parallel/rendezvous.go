package parallel

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"time"
)

// The rendezvous protocol, over one TCP connection from each rank to rank
// 0: the rank sends hello (magic, rank, world size) and rank 0 answers
// msgAck at once; when all have come, rank 0 sends each the payload
// (length, bytes). The connections then stay open and carry one byte at a
// time: msgBye before a rank closes at the end of a run that went well,
// msgDied followed by a rank from rank 0 when it saw that rank go. A
// connection that ends without msgBye means its process died.
const (
	rendezvousMagic = "gocaffe-rendezvous-2"
	msgAck          = 'A'
	msgBye          = 'B'
	msgDied         = 'D'
)

// handshakeTimeout bounds each step of a connection's handshake that a
// live peer answers at once: rank 0 reading a rank's hello, a rank reading
// rank 0's acknowledgement. Without it a peer that connects and says
// nothing (a port scanner, a hung process, another service on the port)
// held rank 0's only accept loop, or a rank's read, for the whole
// rendezvous timeout. Only the wait for the other ranks, which takes as
// long as they take to start, is bounded by that timeout alone. A
// variable so that tests can shorten it.
var handshakeTimeout = 10 * time.Second

// limits are a rendezvous's deadline and its handshake timeout.
type limits struct {
	deadline  time.Time
	handshake time.Duration
}

// step is the deadline of a handshake step begun now: the handshake
// timeout, or the rendezvous's deadline if that comes first.
func (t limits) step() time.Time {
	if d := time.Now().Add(t.handshake); d.Before(t.deadline) {
		return d
	}
	return t.deadline
}

// watchdog watches the rendezvous connections of one rank for the rest of
// the run.
type watchdog struct {
	rank    int
	onDeath func(error)

	mu     sync.Mutex
	conns  map[int]net.Conn // rank 0: every other rank's; others: rank 0's under key 0
	failed error
	closed bool
}

// err returns the death the watchdog has seen, if any. A nil watchdog has
// seen none.
func (w *watchdog) err() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.failed
}

// died records the first death seen, tells the other ranks when this is
// rank 0, and calls onDeath.
func (w *watchdog) died(rank int, cause error) {
	w.mu.Lock()
	if w.failed != nil || w.closed {
		w.mu.Unlock()
		return
	}
	w.failed = cause
	if w.rank == 0 {
		for r, c := range w.conns {
			if r != rank {
				c.Write([]byte{msgDied, byte(rank), byte(rank >> 8), byte(rank >> 16), byte(rank >> 24)})
			}
		}
	}
	w.mu.Unlock()
	if w.onDeath != nil {
		w.onDeath(cause)
	}
}

// close ends the watch; normal says the run went well, and the peers are
// told so before the connections close. A nil watchdog does nothing.
func (w *watchdog) close(normal bool) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.closed = true
	for _, c := range w.conns {
		if normal {
			c.Write([]byte{msgBye})
		}
		c.Close()
	}
}

// watch reads peer's connection until it ends.
func (w *watchdog) watch(peer int, r io.Reader) {
	br := bufio.NewReader(r)
	for {
		b, err := br.ReadByte()
		if err != nil {
			w.mu.Lock()
			closed := w.closed
			w.mu.Unlock()
			if !closed {
				w.died(peer, fmt.Errorf("parallel: rank %d stopped without finishing (its connection to the rendezvous ended: %v)", peer, err))
			}
			return
		}
		switch b {
		case msgBye:
			return
		case msgDied:
			var rb [4]byte
			if _, err := io.ReadFull(br, rb[:]); err != nil {
				continue // the read error ends the loop next time round
			}
			dead := int(binary.LittleEndian.Uint32(rb[:]))
			w.died(dead, fmt.Errorf("parallel: rank %d stopped without finishing (reported by rank 0)", dead))
			return
		}
	}
}

// Rendezvous meets the other ranks of l's job: rank 0 listens on
// l.MasterPort and hands payload to every other rank, which dials
// l.MasterAddr:l.MasterPort until it answers or timeout passes. It returns
// rank 0's payload, and a watchdog that calls onDeath once if a rank dies
// later (rank 0 watches all, the others watch rank 0, which relays).
func Rendezvous(l Launch, payload []byte, timeout time.Duration, onDeath func(error)) (*watchdog, []byte, error) {
	w := &watchdog{rank: l.Rank, onDeath: onDeath, conns: map[int]net.Conn{}}
	if l.WorldSize == 1 {
		return w, payload, nil
	}
	t := limits{deadline: time.Now().Add(timeout), handshake: handshakeTimeout}
	if l.Rank == 0 {
		return w, payload, w.serve(l, payload, t)
	}
	p, err := w.join(l, t)
	return w, p, err
}

// hello is a connection's handshake as rank 0 read it: the rank it says
// it is, or why it was refused; or the end of accepting (c nil).
type hello struct {
	c    net.Conn
	rank int
	err  error
}

// acceptHellos accepts connections on ln until it fails (its deadline, or
// closed) and reads each one's hello in a goroutine of its own under a
// handshake deadline, so that a peer that says nothing delays no other.
// The hellos go to out until done is closed; the connections that arrive
// after are closed.
func acceptHellos(ln net.Listener, size int, t limits, out chan<- hello, done <-chan struct{}) {
	send := func(h hello) {
		select {
		case out <- h:
		case <-done:
			if h.c != nil {
				h.c.Close()
			}
		}
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			send(hello{err: err})
			return
		}
		go func() {
			rank, err := readHello(c, size, t)
			send(hello{c: c, rank: rank, err: err})
		}()
	}
}

func (w *watchdog) serve(l Launch, payload []byte, t limits) error {
	ln, err := net.Listen("tcp", net.JoinHostPort("", strconv.Itoa(l.MasterPort)))
	if err != nil {
		return fmt.Errorf("parallel: rank 0 cannot listen for the other ranks on MASTER_PORT %d: %w", l.MasterPort, err)
	}
	defer ln.Close()
	ln.(*net.TCPListener).SetDeadline(t.deadline)
	hellos, done := make(chan hello), make(chan struct{})
	defer close(done)
	go acceptHellos(ln, l.WorldSize, t, hellos, done)
	for len(w.conns) < l.WorldSize-1 {
		h := <-hellos
		if h.c == nil {
			w.close(false)
			return fmt.Errorf("parallel: rank 0 waited for %d more of %d ranks on port %d: %w", l.WorldSize-1-len(w.conns), l.WorldSize-1, l.MasterPort, h.err)
		}
		if h.err == nil && w.conns[h.rank] != nil {
			h.err = fmt.Errorf("rank %d came twice", h.rank)
		}
		if h.err == nil {
			h.err = sendAck(h.c, t)
		}
		if h.err != nil {
			h.c.Close()
			fmt.Fprintf(os.Stderr, "parallel: rendezvous: refused %v: %v\n", h.c.RemoteAddr(), h.err)
			continue
		}
		w.conns[h.rank] = h.c
	}
	msg := binary.LittleEndian.AppendUint32(nil, uint32(len(payload)))
	msg = append(msg, payload...)
	for r, c := range w.conns {
		c.SetDeadline(t.deadline)
		if _, err := c.Write(msg); err != nil {
			w.close(false)
			return fmt.Errorf("parallel: rendezvous: sending to rank %d: %w", r, err)
		}
		c.SetDeadline(time.Time{})
	}
	for r, c := range w.conns {
		go w.watch(r, c)
	}
	return nil
}

// sendAck tells a rank its hello was taken.
func sendAck(c net.Conn, t limits) error {
	c.SetWriteDeadline(t.step())
	defer c.SetWriteDeadline(time.Time{})
	_, err := c.Write([]byte{msgAck})
	return err
}

// readHello reads a rank's hello within a handshake step and returns its
// rank.
func readHello(c net.Conn, size int, t limits) (int, error) {
	c.SetDeadline(t.step())
	defer c.SetDeadline(time.Time{})
	buf := make([]byte, len(rendezvousMagic)+8)
	if _, err := io.ReadFull(c, buf); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return 0, fmt.Errorf("no hello within %v: %w", t.handshake, err)
		}
		return 0, err
	}
	if string(buf[:len(rendezvousMagic)]) != rendezvousMagic {
		return 0, errors.New("not a gocaffe rank")
	}
	rank := int(binary.LittleEndian.Uint32(buf[len(rendezvousMagic):]))
	theirs := int(binary.LittleEndian.Uint32(buf[len(rendezvousMagic)+4:]))
	if theirs != size {
		return 0, fmt.Errorf("rank %d has WORLD_SIZE %d, rank 0 has %d", rank, theirs, size)
	}
	if rank < 1 || rank >= size {
		return 0, fmt.Errorf("rank %d is outside 1..%d", rank, size-1)
	}
	return rank, nil
}

// handshake is a rank's side of the rendezvous on c: its hello, rank 0's
// acknowledgement, which comes at once (a peer that gives none is not rank
// 0 of a job of this version), then the payload, which comes when every
// rank has said hello, by deadline.
func handshake(c net.Conn, l Launch, t limits) ([]byte, error) {
	c.SetDeadline(t.step())
	hello := append([]byte(rendezvousMagic), binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, uint32(l.Rank)), uint32(l.WorldSize))...)
	if _, err := c.Write(hello); err != nil {
		return nil, err
	}
	var ack [1]byte
	if _, err := io.ReadFull(c, ack[:]); err != nil || ack[0] != msgAck {
		if err == nil {
			err = fmt.Errorf("answered %q", ack[0])
		}
		return nil, fmt.Errorf("no acknowledgement of this rank's hello within %v (is MASTER_ADDR:MASTER_PORT rank 0 of a gocaffe job of this version?): %w", t.handshake, err)
	}
	c.SetDeadline(t.deadline)
	var n [4]byte
	if _, err := io.ReadFull(c, n[:]); err != nil {
		return nil, fmt.Errorf("waiting for the other ranks: %w", err)
	}
	payload := make([]byte, min(binary.LittleEndian.Uint32(n[:]), 1<<20))
	if _, err := io.ReadFull(c, payload); err != nil {
		return nil, err
	}
	return payload, nil
}

func (w *watchdog) join(l Launch, t limits) ([]byte, error) {
	addr := net.JoinHostPort(l.MasterAddr, strconv.Itoa(l.MasterPort))
	var c net.Conn
	for {
		var err error
		c, err = net.DialTimeout("tcp", addr, time.Until(t.deadline))
		if err == nil {
			break
		}
		if time.Now().After(t.deadline) {
			return nil, fmt.Errorf("parallel: rank %d could not reach rank 0 at MASTER_ADDR:MASTER_PORT %s: %w", l.Rank, addr, err)
		}
		time.Sleep(200 * time.Millisecond) // rank 0 may not listen yet
	}
	payload, err := handshake(c, l, t)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("parallel: rank %d: rendezvous with rank 0 at %s: %w", l.Rank, addr, err)
	}
	c.SetDeadline(time.Time{})
	w.conns[0] = c
	go w.watch(0, c)
	return payload, nil
}
