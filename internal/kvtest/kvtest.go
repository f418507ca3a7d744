// Package kvtest holds the helpers of the tests of key-value stores
// (package lmdb, and package data's backends): records, and writing and
// reading them through any store's transactions and cursors.
package kvtest

import (
	"bytes"
	"testing"
)

// Record is one key and value.
type Record struct{ Key, Val []byte }

// Txn is what PutAll needs of a store's transaction.
type Txn interface {
	Put(key, value []byte) error
	Commit() error
}

// Cursor is what ReadAll needs of a store's cursor.
type Cursor interface {
	Valid() bool
	Key() []byte
	Value() []byte
	Next() error
	Close() error
}

// PutAll puts recs through one transaction of newTxn, committing every
// commitEvery records (never when 0) and at the end.
func PutAll[X Txn](t testing.TB, newTxn func() (X, error), recs []Record, commitEvery int) {
	t.Helper()
	txn, err := newTxn()
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range recs {
		if err := txn.Put(r.Key, r.Val); err != nil {
			t.Fatal(err)
		}
		if commitEvery > 0 && (i+1)%commitEvery == 0 {
			if err := txn.Commit(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
}

// ReadAll copies every record a cursor of newCursor yields.
func ReadAll[C Cursor](t testing.TB, newCursor func() (C, error)) []Record {
	t.Helper()
	c, err := newCursor()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var recs []Record
	for ; c.Valid(); err = c.Next() {
		recs = append(recs, Record{bytes.Clone(c.Key()), bytes.Clone(c.Value())})
	}
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// Same fails the test unless got and want hold the same records in the
// same order.
func Same(t testing.TB, got, want []Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i].Key, want[i].Key) || !bytes.Equal(got[i].Val, want[i].Val) {
			t.Fatalf("record %d: got key %.40q (%d-byte value), want key %.40q (%d-byte value)",
				i, got[i].Key, len(got[i].Val), want[i].Key, len(want[i].Val))
		}
	}
}
