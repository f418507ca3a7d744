package data

import (
	"fmt"

	"github.com/gocaffe/gocaffe/lmdb"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// The LMDB backend is package lmdb, pure Go, with Caffe's open modes.

func init() { RegisterBackend(caffepb.DataParameter_LMDB, openLMDB) }

// openLMDB opens with Caffe's semantics: Read needs an existing
// database, New refuses one, Write appends to one or creates it.
func openLMDB(path string, mode Mode) (DB, error) {
	switch mode {
	case Read:
		r, err := lmdb.OpenReader(path)
		if err != nil {
			return nil, err
		}
		return lmdbReader{r}, nil
	case New:
		w, err := lmdb.Create(path)
		if err != nil {
			return nil, err
		}
		return lmdbWriter{w}, nil
	case Write:
		w, err := lmdb.OpenWriter(path)
		if err != nil {
			return nil, err
		}
		return lmdbWriter{w}, nil
	}
	return nil, fmt.Errorf("%s: unknown open mode %v", path, mode)
}

// lmdbReader is an environment opened with Read.
type lmdbReader struct{ r *lmdb.Reader }

func (d lmdbReader) NewCursor() (Cursor, error) { return cursor(d.r.NewCursor()) }

func (d lmdbReader) NewTransaction() (Transaction, error) {
	return nil, fmt.Errorf("%s: opened read-only (mode %v); open it with Write to add records", d.r.File(), Read)
}

func (d lmdbReader) Close() error { return d.r.Close() }

// lmdbWriter is an environment opened with New or Write.
type lmdbWriter struct{ w *lmdb.Writer }

func (d lmdbWriter) NewCursor() (Cursor, error) { return cursor(d.w.NewCursor()) }

func (d lmdbWriter) NewTransaction() (Transaction, error) {
	txn, err := d.w.NewTransaction()
	if txn == nil {
		return nil, err // not a non-nil interface holding nil
	}
	return txn, err
}

func (d lmdbWriter) Close() error { return d.w.Close() }

// cursor returns c as a Cursor, nil when c is.
func cursor(c *lmdb.Cursor, err error) (Cursor, error) {
	if c == nil {
		return nil, err
	}
	return c, err
}
