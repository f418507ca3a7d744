package data

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/util"

	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// levelDBSeed writes a database with records in a sorted table and more
// in the journal, and returns its directory and the names of its
// manifest, journal and table.
func levelDBSeed(f *testing.F) (dir, manifest, journal, table string) {
	dir = filepath.Join(f.TempDir(), "seed")
	db, err := leveldb.OpenFile(dir, nil)
	if err != nil {
		f.Fatal(err)
	}
	put := func(from, to int) {
		b := new(leveldb.Batch)
		for i := from; i < to; i++ {
			b.Put(fmt.Appendf(nil, "%08d", i), fmt.Appendf(nil, "value %d", i))
		}
		if err := db.Write(b, nil); err != nil {
			f.Fatal(err)
		}
	}
	put(0, 60)
	if err := db.CompactRange(util.Range{}); err != nil { // into a table
		f.Fatal(err)
	}
	put(60, 90) // stays in the journal
	if err := db.Close(); err != nil {
		f.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		switch name := e.Name(); {
		case strings.HasPrefix(name, "MANIFEST-"):
			manifest = name
		case strings.HasSuffix(name, ".log"):
			journal = name
		case strings.HasSuffix(name, ".ldb"):
			table = name
		}
	}
	if manifest == "" || journal == "" || table == "" {
		f.Fatalf("seed database %s lacks a manifest, journal or table: %v", dir, entries)
	}
	return dir, manifest, journal, table
}

// FuzzLevelDB reads a LevelDB database whose manifest, journal and sorted
// table are what the fuzzer writes, as the Data layer and
// compute_image_mean read one: errors are fine, panics and hangs are not.
func FuzzLevelDB(f *testing.F) {
	seed, manifest, journal, table := levelDBSeed(f)
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(seed, name))
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	current := read("CURRENT")
	m, j, tb := read(manifest), read(journal), read(table)
	f.Add(m, j, tb)
	f.Add(m, j[:len(j)/2], tb)
	f.Add(m, []byte{}, tb[:len(tb)-10])
	f.Fuzz(func(t *testing.T, m, j, tb []byte) {
		dir := t.TempDir()
		for name, b := range map[string][]byte{"CURRENT": current, manifest: m, journal: j, table: tb} {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		db, err := Open(caffepb.DataParameter_LEVELDB, dir, Read)
		if err != nil {
			return
		}
		defer db.Close()
		c, err := db.NewCursor()
		for n := 0; err == nil && c.Valid() && n < 10000; n++ {
			_, _ = c.Key(), c.Value()
			err = c.Next()
		}
		if c != nil {
			c.Close()
		}
	})
}
