package data

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// Mode is how a database is opened, as Caffe's db::Mode.
type Mode int

const (
	// Read opens an existing database read-only; a missing one is an error.
	Read Mode = iota
	// Write opens a database for writing, creating it when missing.
	Write
	// New creates a database; one that already exists is an error.
	New
)

func (m Mode) String() string {
	switch m {
	case Read:
		return "read"
	case Write:
		return "write"
	case New:
		return "new"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// DB is an open key-value database of serialized records.
type DB interface {
	// NewCursor returns a cursor positioned at the first record.
	NewCursor() (Cursor, error)
	// NewTransaction starts a batch of writes; nothing is visible to
	// readers until Commit.
	NewTransaction() (Transaction, error)
	// Close releases the database; cursors and transactions made from it
	// must not be used afterwards.
	Close() error
}

// Cursor walks a database's records in key order. Key and Value are only
// valid until the next call to Next, SeekToFirst or Close: copy them to
// keep them.
type Cursor interface {
	SeekToFirst() error
	// Next moves to the following record; past the last one Valid is false.
	Next() error
	Valid() bool
	Key() []byte
	Value() []byte
	Close() error
}

// Transaction is a batch of writes.
type Transaction interface {
	// Put adds a record; key and value may be reused after it returns.
	Put(key, value []byte) error
	// Commit writes every Put since the last Commit.
	Commit() error
}

// Opener opens a database of one backend.
type Opener func(path string, mode Mode) (DB, error)

var (
	backendsMu sync.RWMutex
	backends   = map[caffepb.DataParameter_DB]Opener{}
)

// RegisterBackend makes a backend available to Open.
func RegisterBackend(b caffepb.DataParameter_DB, open Opener) {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	backends[b] = open
}

// Open opens the database at path with the given backend. Errors name the
// backend and the path.
func Open(b caffepb.DataParameter_DB, path string, mode Mode) (DB, error) {
	backendsMu.RLock()
	open, ok := backends[b]
	backendsMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("database %s: backend %v is not available", path, b)
	}
	db, err := open(path, mode)
	if err != nil {
		return nil, fmt.Errorf("opening %v database %s (%v): %w", b, path, mode, err)
	}
	return db, nil
}

// ParseBackend turns a command-line backend name ("lmdb", "leveldb", in
// any case) into the DataParameter enum.
func ParseBackend(name string) (caffepb.DataParameter_DB, error) {
	v, ok := caffepb.DataParameter_DB_value[strings.ToUpper(name)]
	if !ok {
		names := []string{}
		for n := range caffepb.DataParameter_DB_value {
			names = append(names, strings.ToLower(n))
		}
		slices.Sort(names)
		return 0, fmt.Errorf("unknown database backend %q (known: %s)", name, strings.Join(names, ", "))
	}
	return caffepb.DataParameter_DB(v), nil
}
