package data

import (
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/internal/badinput"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// One flipped bit in the journal: goleveldb's default checks drop the
// damaged block and read on (1,000 records of 2,000, no error); opened
// strictly, the database is an error naming it.
func TestLevelDBCorruptJournalIsAnError(t *testing.T) {
	dir := t.TempDir() + "/db"
	db := mustOpen(t, caffepb.DataParameter_LEVELDB, dir, New)
	for _, recs := range [][]record{keyed(0, 1000), keyed(1000, 2000)} {
		txn, err := db.NewTransaction()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			txn.Put(r.Key, r.Val)
		}
		if err := txn.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := badinput.FlipJournalBit(dir); err != nil {
		t.Fatal(err)
	}
	db, err := Open(caffepb.DataParameter_LEVELDB, dir, Read)
	n := 0
	if err == nil {
		defer db.Close()
		var c Cursor
		for c, err = db.NewCursor(); err == nil && c.Valid(); err = c.Next() {
			n++
		}
	}
	if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("read %d records; error %v, want one naming %s and the corruption", n, err, dir)
	}
	t.Log(err)
}
