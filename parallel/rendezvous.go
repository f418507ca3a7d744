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
// 0: the rank sends hello (magic, rank, world size); when all have come,
// rank 0 sends each the payload (length, bytes). The connections then stay
// open and carry one byte at a time: msgBye before a rank closes at the
// end of a run that went well, msgDied followed by a rank from rank 0 when
// it saw that rank go. A connection that ends without msgBye means its
// process died.
const (
	rendezvousMagic = "gocaffe-rendezvous-1"
	msgBye          = 'B'
	msgDied         = 'D'
)

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
	deadline := time.Now().Add(timeout)
	if l.Rank == 0 {
		return w, payload, w.serve(l, payload, deadline)
	}
	p, err := w.join(l, deadline)
	return w, p, err
}

func (w *watchdog) serve(l Launch, payload []byte, deadline time.Time) error {
	ln, err := net.Listen("tcp", net.JoinHostPort("", strconv.Itoa(l.MasterPort)))
	if err != nil {
		return fmt.Errorf("parallel: rank 0 cannot listen for the other ranks on MASTER_PORT %d: %w", l.MasterPort, err)
	}
	defer ln.Close()
	ln.(*net.TCPListener).SetDeadline(deadline)
	for len(w.conns) < l.WorldSize-1 {
		c, err := ln.Accept()
		if err != nil {
			w.close(false)
			return fmt.Errorf("parallel: rank 0 waited for %d more of %d ranks on port %d: %w", l.WorldSize-1-len(w.conns), l.WorldSize-1, l.MasterPort, err)
		}
		rank, err := readHello(c, l.WorldSize, deadline)
		if err == nil && w.conns[rank] != nil {
			err = fmt.Errorf("rank %d came twice", rank)
		}
		if err != nil {
			c.Close()
			fmt.Fprintf(os.Stderr, "parallel: rendezvous: refused %v: %v\n", c.RemoteAddr(), err)
			continue
		}
		w.conns[rank] = c
	}
	msg := binary.LittleEndian.AppendUint32(nil, uint32(len(payload)))
	msg = append(msg, payload...)
	for r, c := range w.conns {
		c.SetDeadline(deadline)
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

func readHello(c net.Conn, size int, deadline time.Time) (int, error) {
	c.SetDeadline(deadline)
	defer c.SetDeadline(time.Time{})
	buf := make([]byte, len(rendezvousMagic)+8)
	if _, err := io.ReadFull(c, buf); err != nil {
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

func (w *watchdog) join(l Launch, deadline time.Time) ([]byte, error) {
	addr := net.JoinHostPort(l.MasterAddr, strconv.Itoa(l.MasterPort))
	var c net.Conn
	for {
		var err error
		c, err = net.DialTimeout("tcp", addr, time.Until(deadline))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("parallel: rank %d could not reach rank 0 at MASTER_ADDR:MASTER_PORT %s: %w", l.Rank, addr, err)
		}
		time.Sleep(200 * time.Millisecond) // rank 0 may not listen yet
	}
	c.SetDeadline(deadline)
	hello := append([]byte(rendezvousMagic), binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, uint32(l.Rank)), uint32(l.WorldSize))...)
	var n [4]byte
	_, err := c.Write(hello)
	if err == nil {
		_, err = io.ReadFull(c, n[:])
	}
	payload := make([]byte, min(binary.LittleEndian.Uint32(n[:]), 1<<20))
	if err == nil {
		_, err = io.ReadFull(c, payload)
	}
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("parallel: rank %d: rendezvous with rank 0 at %s: %w", l.Rank, addr, err)
	}
	c.SetDeadline(time.Time{})
	w.conns[0] = c
	go w.watch(0, c)
	return payload, nil
}
