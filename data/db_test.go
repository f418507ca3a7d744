package data

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/gocaffe/gocaffe/internal/kvtest"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// The contract every backend keeps, Caffe's db::DB semantics:
//
//   - Read needs an existing database; New refuses one; Write creates a
//     missing one and adds to an existing one.
//   - A cursor yields the records in key order, and starts over after
//     SeekToFirst.
//   - Put copies its arguments: the caller may reuse them at once.
//   - Only committed records count. Records Put but not committed when
//     the database is closed are lost, as in Caffe, whose transactions
//     hold Puts until Commit and drop them when destroyed. LMDB writes
//     them ahead of time but Close cuts them off; LevelDB drops its batch.
//   - A cursor of a database open for writing reads what is committed.
//   - A database opened with Read refuses writes.
//
// The LMDB writer also needs keys in increasing order (package lmdb), so
// these tests Put keys in order.

var allBackends = []caffepb.DataParameter_DB{caffepb.DataParameter_LEVELDB, caffepb.DataParameter_LMDB}

func forEachBackend(t *testing.T, f func(t *testing.T, b caffepb.DataParameter_DB, dir string)) {
	for _, b := range allBackends {
		t.Run(b.String(), func(t *testing.T) { f(t, b, filepath.Join(t.TempDir(), "db")) })
	}
}

type record = kvtest.Record

func keyed(from, to int) []record {
	var recs []record
	for i := from; i < to; i++ {
		recs = append(recs, record{Key: fmt.Appendf(nil, "%08d", i), Val: fmt.Appendf(nil, "value %d", i)})
	}
	return recs
}

func mustOpen(t *testing.T, b caffepb.DataParameter_DB, dir string, mode Mode) DB {
	t.Helper()
	db, err := Open(b, dir, mode)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func writeDB(t *testing.T, b caffepb.DataParameter_DB, dir string, mode Mode, recs []record) {
	t.Helper()
	db := mustOpen(t, b, dir, mode)
	kvtest.PutAll(t, db.NewTransaction, recs, 97)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func readDB(t *testing.T, b caffepb.DataParameter_DB, dir string) []record {
	t.Helper()
	db := mustOpen(t, b, dir, Read)
	defer db.Close()
	return kvtest.ReadAll(t, db.NewCursor)
}

func TestDBOpenModes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b caffepb.DataParameter_DB, dir string) {
		if _, err := Open(b, dir, Read); err == nil {
			t.Fatal("Read of a missing database succeeded")
		}
		writeDB(t, b, dir, New, keyed(0, 5))
		if db, err := Open(b, dir, New); err == nil {
			db.Close()
			t.Fatal("New on an existing database succeeded")
		}
		kvtest.Same(t, readDB(t, b, dir), keyed(0, 5)) // and left it alone

		other := filepath.Join(t.TempDir(), "other")
		writeDB(t, b, other, Write, keyed(0, 3)) // Write creates
		writeDB(t, b, other, Write, keyed(3, 7)) // and adds
		kvtest.Same(t, readDB(t, b, other), keyed(0, 7))
	})
}

func TestDBKeyOrder(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b caffepb.DataParameter_DB, dir string) {
		recs := keyed(0, 1000)
		writeDB(t, b, dir, New, recs)
		kvtest.Same(t, readDB(t, b, dir), recs)
	})
}

func TestDBPutCopies(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b caffepb.DataParameter_DB, dir string) {
		db := mustOpen(t, b, dir, New)
		txn, err := db.NewTransaction()
		if err != nil {
			t.Fatal(err)
		}
		key, val := make([]byte, 8), make([]byte, 3000) // past a node: an overflow value
		for i := range 20 {
			copy(key, fmt.Sprintf("%08d", i))
			for j := range val {
				val[j] = byte(i)
			}
			if err := txn.Put(key, val); err != nil {
				t.Fatal(err)
			}
		}
		clear(key)
		clear(val)
		if err := txn.Commit(); err != nil {
			t.Fatal(err)
		}
		db.Close()
		got := readDB(t, b, dir)
		for i, r := range got {
			if string(r.Key) != fmt.Sprintf("%08d", i) || !bytes.Equal(r.Val, bytes.Repeat([]byte{byte(i)}, 3000)) {
				t.Fatalf("record %d: key %q, value starting %v: the buffers were not copied", i, r.Key, r.Val[:4])
			}
		}
		if len(got) != 20 {
			t.Fatalf("%d records, want 20", len(got))
		}
	})
}

func TestDBUncommittedRecordsAreLost(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b caffepb.DataParameter_DB, dir string) {
		db := mustOpen(t, b, dir, New)
		txn, _ := db.NewTransaction()
		for _, r := range keyed(0, 10) {
			txn.Put(r.Key, r.Val)
		}
		db.Close()
		if got := readDB(t, b, dir); len(got) != 0 {
			t.Fatalf("%d records visible after Close without Commit, want none", len(got))
		}

		db = mustOpen(t, b, dir, Write)
		txn, _ = db.NewTransaction()
		for i, r := range keyed(0, 10) {
			txn.Put(r.Key, r.Val)
			if i == 5 {
				txn.Commit()
			}
		}
		db.Close()
		kvtest.Same(t, readDB(t, b, dir), keyed(0, 6))
	})
}

func TestDBCursorWhileWriting(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b caffepb.DataParameter_DB, dir string) {
		db := mustOpen(t, b, dir, New)
		defer db.Close()
		txn, _ := db.NewTransaction()
		for _, r := range keyed(0, 4) {
			txn.Put(r.Key, r.Val)
		}
		txn.Commit()
		txn.Put([]byte("00000004"), []byte("uncommitted"))
		kvtest.Same(t, kvtest.ReadAll(t, db.NewCursor), keyed(0, 4))
	})
}

func TestDBReadModeRefusesWrites(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b caffepb.DataParameter_DB, dir string) {
		writeDB(t, b, dir, New, keyed(0, 2))
		db := mustOpen(t, b, dir, Read)
		defer db.Close()
		txn, err := db.NewTransaction()
		if err == nil {
			err = txn.Put([]byte("00000009"), nil)
		}
		if err == nil {
			err = txn.Commit()
		}
		if err == nil {
			t.Fatal("writing to a database opened with Read succeeded")
		}
	})
}

func TestDBCursorStartsOver(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b caffepb.DataParameter_DB, dir string) {
		writeDB(t, b, dir, New, keyed(0, 3))
		db := mustOpen(t, b, dir, Read)
		defer db.Close()
		c, err := db.NewCursor()
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var keys []string
		for range 7 {
			if !c.Valid() {
				if err := c.SeekToFirst(); err != nil {
					t.Fatal(err)
				}
			}
			keys = append(keys, string(c.Key()[7:]))
			if err := c.Next(); err != nil {
				t.Fatal(err)
			}
		}
		if got := fmt.Sprint(keys); got != "[0 1 2 0 1 2 0]" {
			t.Fatalf("keys %s, want the three records over and over", got)
		}
	})
}

func TestDBEmpty(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b caffepb.DataParameter_DB, dir string) {
		writeDB(t, b, dir, New, nil)
		db := mustOpen(t, b, dir, Read)
		defer db.Close()
		c, err := db.NewCursor()
		if err != nil {
			t.Fatal(err)
		}
		if c.Valid() {
			t.Fatal("cursor of an empty database is valid")
		}
		if err := c.Next(); err != nil || c.Valid() {
			t.Fatalf("Next on an empty database: valid=%v err=%v", c.Valid(), err)
		}
	})
}
