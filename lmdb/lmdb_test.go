package lmdb

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/internal/badinput"
	"github.com/gocaffe/gocaffe/internal/kvtest"
)

// The tests check the LMDB format against real liblmdb through its
// command-line tools (Debian's lmdb-utils): mdb_load builds databases for
// the reader, and mdb_dump and mdb_stat read the writer's. Tests needing
// a tool skip, naming it, where it is not on PATH; the rest always run.

type record = kvtest.Record

// needTool returns the path of an lmdb-utils program or skips the test.
func needTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not on PATH (install lmdb-utils)", name)
	}
	return p
}

func run(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(needTool(t, name), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// genRecords makes n records with increasing keys of varied length and
// values of varied size: small ones, ones around the node size limit,
// and ones spanning several overflow pages.
func genRecords(rng *rand.Rand, n int) []record {
	recs := make([]record, n)
	for i := range recs {
		key := fmt.Appendf(nil, "%08d", i)
		switch rng.IntN(10) {
		case 0:
			key = append(key, bytes.Repeat([]byte{'k'}, maxKeySize-len(key))...)
		case 1, 2, 3:
			key = append(key, randBytes(rng, rng.IntN(300))...)
		}
		var size int
		switch r := rng.IntN(20); {
		case r < 10:
			size = rng.IntN(400)
		case r < 16:
			size = 1500 + rng.IntN(1000) // around nodeMax (2038 for 4 KiB pages)
		case r < 19:
			size = 4096 + rng.IntN(20000)
		default:
			size = nodeMax(defaultPageSize) - nodeHeaderSize - len(key) + rng.IntN(2) // the exact limit and one past it
		}
		recs[i] = record{Key: key, Val: randBytes(rng, size)}
	}
	return recs
}

func randBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// writeLMDB writes recs with our writer, committing every commitEvery
// records (and at the end), and closes the database.
func writeLMDB(t testing.TB, dir string, recs []record, commitEvery int) {
	t.Helper()
	db, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	putAll(t, db, recs, commitEvery)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func putAll(t testing.TB, db *Writer, recs []record, commitEvery int) {
	t.Helper()
	kvtest.PutAll(t, db.NewTransaction, recs, commitEvery)
}

// readAll copies every record a cursor yields.
func readAll(t testing.TB, db interface{ NewCursor() (*Cursor, error) }) []record {
	t.Helper()
	return kvtest.ReadAll(t, db.NewCursor)
}

func readLMDB(t testing.TB, dir string) []record {
	t.Helper()
	db, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	return readAll(t, db)
}

// dumpData is the data section mdb_dump prints for recs: hex pairs, or
// with -p (print) printable bytes as they are and other bytes as \xx.
// backslash is how -p prints a backslash: liblmdb 0.9.24 prints it bare
// (so -p output is ambiguous there), later releases double it.
func dumpData(recs []record, print bool, backslash string) string {
	var sb strings.Builder
	enc := func(b []byte) {
		sb.WriteByte(' ')
		for _, c := range b {
			switch {
			case !print:
				fmt.Fprintf(&sb, "%02x", c)
			case c == '\\':
				sb.WriteString(backslash)
			case c >= 0x20 && c < 0x7f:
				sb.WriteByte(c)
			default:
				fmt.Fprintf(&sb, `\%02x`, c)
			}
		}
		sb.WriteByte('\n')
	}
	for _, r := range recs {
		enc(r.Key)
		enc(r.Val)
	}
	return sb.String()
}

// mdbDump runs mdb_dump, with -p when print is set, and returns its
// data section.
func mdbDump(t testing.TB, dir string, print bool) string {
	t.Helper()
	args := []string{dir}
	if print {
		args = []string{"-p", dir}
	}
	out := run(t, "mdb_dump", args...)
	_, data, ok := strings.Cut(out, "HEADER=END\n")
	if !ok || !strings.HasSuffix(data, "DATA=END\n") {
		t.Fatalf("mdb_dump -p %s: unexpected output:\n%.500s", dir, out)
	}
	return strings.TrimSuffix(data, "DATA=END\n")
}

// dumpBackslash asks mdb_dump -p how it prints a backslash.
func dumpBackslash(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "backslash")
	writeLMDB(t, dir, []record{{Key: []byte("k"), Val: []byte(`\`)}}, 0)
	return strings.TrimSpace(strings.Split(mdbDump(t, dir, true), "\n")[1])
}

// mdbStat parses mdb_stat -e: "  Name: value" lines.
func mdbStat(t testing.TB, dir string) map[string]string {
	t.Helper()
	st := map[string]string{}
	for _, line := range strings.Split(run(t, "mdb_stat", "-e", dir), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ": "); ok {
			st[k] = v
		}
	}
	return st
}

// mdbLoad builds an environment with liblmdb from recs, inserted in the
// given order (mdb_load without -a sorts them itself).
func mdbLoad(t testing.TB, dir string, recs []record) {
	t.Helper()
	in := filepath.Join(t.TempDir(), "dump.txt")
	hdr := "VERSION=3\nformat=bytevalue\ntype=btree\nmapsize=1073741824\nmaxreaders=126\nHEADER=END\n"
	if err := os.WriteFile(in, []byte(hdr+dumpData(recs, false, "")+"DATA=END\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, "mdb_load", "-f", in, dir)
}

// walkStats counts what the main tree really holds, to check the counts
// a meta page claims.
func walkStats(t testing.TB, e *readEnv) treeInfo {
	t.Helper()
	info := e.meta.dbs[mainDBI]
	got := treeInfo{root: info.root}
	if info.root == invalidPgno {
		return got
	}
	var walk func(pgno uint64, level int)
	walk = func(pgno uint64, level int) {
		p, err := e.treePage(pgno)
		if err != nil {
			t.Fatal(err)
		}
		got.depth = uint16(max(int(got.depth), level))
		if !p.leaf {
			got.branchPages++
			for i := 0; i < p.n; i++ {
				c, err := p.branchChild(i)
				if err != nil {
					t.Fatal(err)
				}
				walk(c, level+1)
			}
			return
		}
		got.leafPages++
		for i := 0; i < p.n; i++ {
			_, flags, _, data, err := p.leafNode(i)
			if err != nil {
				t.Fatal(err)
			}
			if flags&nodeBigData != 0 {
				first, err := e.pages(le.Uint64(data), 1)
				if err != nil {
					t.Fatal(err)
				}
				got.overflowPages += pageRunCount(first)
			}
			got.entries++
		}
	}
	walk(info.root, 1)
	return got
}

// checkMetaCounts compares the meta's tree statistics with a walk.
func checkMetaCounts(t testing.TB, dir string) *readEnv {
	t.Helper()
	e, err := openReadEnv(filepath.Join(dir, dataName), true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.close() })
	info, got := e.meta.dbs[mainDBI], walkStats(t, e)
	info.flags, info.pad = 0, 0
	if info != got {
		t.Errorf("%s: meta says %+v, the tree holds %+v", dir, info, got)
	}
	if st, _ := os.Stat(filepath.Join(dir, dataName)); uint64(st.Size()) != (e.meta.lastPg+1)*e.psize {
		t.Errorf("%s: file is %d bytes, want %d pages up to last page %d", dir, st.Size(), e.meta.lastPg+1, e.meta.lastPg)
	}
	if e.meta.mapSize < (e.meta.lastPg+1)*e.psize {
		t.Errorf("%s: map size %d is below the %d pages used", dir, e.meta.mapSize, e.meta.lastPg+1)
	}
	return e
}

// checkWithLiblmdb has mdb_dump and mdb_stat read an environment that
// should hold recs.
func checkWithLiblmdb(t testing.TB, dir string, recs []record) {
	t.Helper()
	if got, want := mdbDump(t, dir, false), dumpData(recs, false, ""); got != want {
		t.Fatalf("mdb_dump %s differs from the records written (%d vs %d bytes)", dir, len(got), len(want))
	}
	if got, want := mdbDump(t, dir, true), dumpData(recs, true, dumpBackslash(t)); got != want {
		t.Fatalf("mdb_dump -p %s differs from the records written (%d vs %d bytes)", dir, len(got), len(want))
	}
	e := checkMetaCounts(t, dir)
	info, st := e.meta.dbs[mainDBI], mdbStat(t, dir)
	for name, want := range map[string]uint64{
		"Tree depth":           uint64(info.depth),
		"Branch pages":         info.branchPages,
		"Leaf pages":           info.leafPages,
		"Overflow pages":       info.overflowPages,
		"Entries":              uint64(len(recs)),
		"Number of pages used": e.meta.lastPg + 1,
		"Last transaction ID":  e.meta.txnID,
		"Page size":            defaultPageSize,
	} {
		if st[name] != strconv.FormatUint(want, 10) {
			t.Errorf("mdb_stat %s: %s is %q, want %d", dir, name, st[name], want)
		}
	}
}

func TestLMDBReadsLiblmdbDatabase(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	recs := genRecords(rng, 6000)
	shuffled := append([]record(nil), recs...)
	rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	dir := filepath.Join(t.TempDir(), "liblmdb")
	mdbLoad(t, dir, shuffled)

	e := checkMetaCounts(t, dir)
	info := e.meta.dbs[mainDBI]
	if info.depth < 3 || info.overflowPages == 0 || e.meta.txnID < 2 {
		t.Fatalf("want a tree of depth >= 3 with overflow pages over several commits; got %+v, txn %d", info, e.meta.txnID)
	}
	kvtest.Same(t, readLMDB(t, dir), recs)
	kvtest.Same(t, readLMDB(t, filepath.Join(dir, dataName)), recs) // the data file's own path

	// The ReadAt fallback reads the same.
	r, err := openReadEnv(filepath.Join(dir, dataName), false)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	kvtest.Same(t, readAll(t, &Reader{env: r}), recs)
}

func TestLMDBWriterReadByLiblmdb(t *testing.T) {
	recs := genRecords(rand.New(rand.NewPCG(3, 4)), 5000)
	dir := filepath.Join(t.TempDir(), "ours")
	writeLMDB(t, dir, recs, 0)
	checkWithLiblmdb(t, dir, recs)
	e := checkMetaCounts(t, dir)
	if d := e.meta.dbs[mainDBI].depth; d < 3 {
		t.Errorf("tree depth %d, want >= 3 to cover branch levels", d)
	}
	kvtest.Same(t, readLMDB(t, dir), recs)
}

// After each commit the data file holds a complete snapshot: a copy
// taken between commits is read by liblmdb with exactly the records
// committed.
func TestLMDBWriterCommitsReadByLiblmdb(t *testing.T) {
	needTool(t, "mdb_dump")
	recs := genRecords(rand.New(rand.NewPCG(5, 6)), 2000)
	dir := filepath.Join(t.TempDir(), "ours")
	db, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	const every = 300
	txn, err := db.NewTransaction()
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range recs {
		if err := txn.Put(r.Key, r.Val); err != nil {
			t.Fatal(err)
		}
		if (i+1)%every != 0 {
			continue
		}
		if err := txn.Commit(); err != nil {
			t.Fatal(err)
		}
		if (i+1)/every == 3 { // a middle commit: copy the file aside
			snap := filepath.Join(t.TempDir(), "snap")
			copyFile(t, filepath.Join(dir, dataName), filepath.Join(snap, dataName))
			checkWithLiblmdb(t, snap, recs[:i+1])
			kvtest.Same(t, readLMDB(t, snap), recs[:i+1])
			kvtest.Same(t, readLMDB(t, dir), recs[:i+1]) // and live, beside the writer
		}
	}
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	checkWithLiblmdb(t, dir, recs)
	if e := checkMetaCounts(t, dir); e.meta.txnID != uint64(len(recs)+every-1)/every {
		t.Errorf("last transaction id %d, want one per commit", e.meta.txnID)
	}
}

func copyFile(t testing.TB, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// liblmdb can go on writing a database we wrote: it splits and copies
// our pages, so their layout must be what it expects.
func TestLMDBLiblmdbWritesAfterUs(t *testing.T) {
	needTool(t, "mdb_load")
	all := genRecords(rand.New(rand.NewPCG(7, 8)), 3000)
	var ours, theirs []record
	for i, r := range all {
		if i%3 == 0 {
			theirs = append(theirs, r)
		} else {
			ours = append(ours, r)
		}
	}
	dir := filepath.Join(t.TempDir(), "mixed")
	writeLMDB(t, dir, ours, 500)
	mdbLoad(t, dir, theirs)
	checkWithLiblmdb(t, dir, all)
	kvtest.Same(t, readLMDB(t, dir), all)
}

// Write on an existing environment appends greater keys, to ours and to
// one liblmdb built in random order (half-full pages on its right edge).
func TestLMDBAppend(t *testing.T) {
	recs := genRecords(rand.New(rand.NewPCG(9, 10)), 3000)
	build := map[string]func(t *testing.T, dir string, recs []record){
		"ours": func(t *testing.T, dir string, recs []record) { writeLMDB(t, dir, recs, 700) },
		"liblmdb": func(t *testing.T, dir string, recs []record) {
			shuffled := append([]record(nil), recs...)
			rand.New(rand.NewPCG(1, 1)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			mdbLoad(t, dir, shuffled)
		},
	}
	for name, create := range build {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "env")
			create(t, dir, recs[:1000])
			for _, part := range [][]record{recs[1000:1001], recs[1001:2500], recs[2500:]} {
				db, err := OpenWriter(dir)
				if err != nil {
					t.Fatal(err)
				}
				putAll(t, db, part, 400)
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
			}
			kvtest.Same(t, readLMDB(t, dir), recs)
			checkMetaCounts(t, dir)
			if _, err := exec.LookPath("mdb_dump"); err == nil {
				checkWithLiblmdb(t, dir, recs)
			}
		})
	}
}

func TestLMDBAppendRejectsSmallerKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "env")
	writeLMDB(t, dir, []record{{Key: []byte("b"), Val: []byte("1")}}, 0)
	db, err := OpenWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	txn, err := db.NewTransaction()
	if err != nil {
		t.Fatal(err)
	}
	err = txn.Put([]byte("a"), nil)
	if err == nil || !strings.Contains(err.Error(), `"a"`) || !strings.Contains(err.Error(), `"b"`) {
		t.Fatalf("Put of a key before the existing last key: got %v, want an error naming both keys", err)
	}
}

func TestLMDBRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	big := randBytes(rng, 3<<20)
	cases := map[string][]record{
		"empty":      nil,
		"one":        {{Key: []byte("00000000"), Val: []byte("value")}},
		"emptyValue": {{Key: []byte("a"), Val: nil}, {Key: []byte("b"), Val: []byte{}}},
		"many":       genRecords(rng, 4000),
		"big":        {{Key: []byte("a"), Val: big}, {Key: []byte("b"), Val: big[:nodeMax(defaultPageSize)]}, {Key: []byte("c"), Val: big[:1<<20]}},
		"small":      smallRecords(20000),
	}
	for name, recs := range cases {
		// One commit at the end, then about 7 commits.
		for _, every := range []int{0, max(1, (len(recs)+6)/7)} {
			t.Run(fmt.Sprintf("%s/every%d", name, every), func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "env")
				writeLMDB(t, dir, recs, every)
				kvtest.Same(t, readLMDB(t, dir), recs)
				checkMetaCounts(t, dir)
			})
		}
	}
}

// smallRecords are MNIST-like: "%08d" keys and 784-byte values.
func smallRecords(n int) []record {
	recs := make([]record, n)
	for i := range recs {
		v := make([]byte, 784)
		for j := range v {
			v[j] = byte(i * j)
		}
		recs[i] = record{Key: fmt.Appendf(nil, "%08d", i), Val: v}
	}
	return recs
}

// After the last record the cursor stays invalid; SeekToFirst starts
// over, as Caffe's DataReader does to loop over a dataset.
func TestLMDBCursorWrapsAround(t *testing.T) {
	recs := genRecords(rand.New(rand.NewPCG(13, 14)), 500)
	dir := filepath.Join(t.TempDir(), "env")
	writeLMDB(t, dir, recs, 0)
	db, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err := db.NewCursor()
	if err != nil {
		t.Fatal(err)
	}
	for pass := 0; pass < 3; pass++ {
		n := 0
		for ; c.Valid(); n++ {
			if !bytes.Equal(c.Key(), recs[n].Key) {
				t.Fatalf("pass %d record %d: key %q, want %q", pass, n, c.Key(), recs[n].Key)
			}
			if err := c.Next(); err != nil {
				t.Fatal(err)
			}
		}
		if n != len(recs) {
			t.Fatalf("pass %d: %d records, want %d", pass, n, len(recs))
		}
		if err := c.Next(); err != nil || c.Valid() {
			t.Fatalf("Next past the end: valid=%v err=%v", c.Valid(), err)
		}
		if err := c.SeekToFirst(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLMDBBadInput(t *testing.T) {
	tmp := t.TempDir()
	garbage := filepath.Join(tmp, "garbage")
	os.MkdirAll(garbage, 0o755)
	os.WriteFile(filepath.Join(garbage, dataName), randBytes(rand.New(rand.NewPCG(1, 1)), 64<<10), 0o644)
	short := filepath.Join(tmp, "short")
	os.MkdirAll(short, 0o755)
	os.WriteFile(filepath.Join(short, dataName), []byte("tiny"), 0o644)
	empty := filepath.Join(tmp, "emptydir")
	os.MkdirAll(empty, 0o755)

	for name, c := range map[string]struct{ path, want string }{
		"missing dir": {filepath.Join(tmp, "nope"), "nope"},
		"no data.mdb": {empty, filepath.Join(empty, dataName)},
		"garbage":     {garbage, "not an LMDB data file"},
		"short":       {short, "too short"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := OpenReader(c.path)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.path) {
				t.Fatalf("got %v, want an error naming %s and saying %q", err, c.path, c.want)
			}
			if strings.HasPrefix(name, "missing") && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%v is not fs.ErrNotExist", err)
			}
		})
	}
}

// A truncated or damaged data file gives errors naming the file and the
// page, on open or while reading, never a panic.
func TestLMDBCorruptFile(t *testing.T) {
	recs := genRecords(rand.New(rand.NewPCG(15, 16)), 1500)
	src := filepath.Join(t.TempDir(), "env")
	writeLMDB(t, src, recs, 0)
	orig, err := os.ReadFile(filepath.Join(src, dataName))
	if err != nil {
		t.Fatal(err)
	}
	e := checkMetaCounts(t, src)
	root := e.meta.dbs[mainDBI].root

	damage := map[string]func(b []byte) []byte{
		"truncated": func(b []byte) []byte { return b[:len(b)/2] },
		"root flags": func(b []byte) []byte {
			le.PutUint16(b[root*defaultPageSize+10:], pageOverflow)
			return b
		},
		"root bounds": func(b []byte) []byte {
			le.PutUint16(b[root*defaultPageSize+14:], 0xffff)
			return b
		},
		"root pointer": func(b []byte) []byte {
			le.PutUint16(b[root*defaultPageSize+pageHeaderSize:], 3)
			return b
		},
		"child number": func(b []byte) []byte {
			off := le.Uint16(b[root*defaultPageSize+pageHeaderSize:])
			le.PutUint16(b[root*defaultPageSize+uint64(off)+4:], 0x7777)
			return b
		},
	}
	for name, f := range damage {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "env")
			os.MkdirAll(dir, 0o755)
			os.WriteFile(filepath.Join(dir, dataName), f(bytes.Clone(orig)), 0o644)
			err := readErr(dir)
			if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, dataName)) || !strings.Contains(err.Error(), "page ") {
				t.Fatalf("got %v, want an error naming the file and a page", err)
			}
			t.Log(err)
		})
	}
}

// readErr reads every record of the environment at dir, returning the
// first error.
func readErr(dir string) error {
	db, err := OpenReader(dir)
	if err != nil {
		return err
	}
	defer db.Close()
	c, err := db.NewCursor()
	for n := 0; err == nil && c.Valid() && n < 1e6; n++ {
		_, _ = c.Key(), c.Value()
		err = c.Next()
	}
	return err
}

// Random damage anywhere in the file must give errors, never a panic.
func TestLMDBRandomDamageNeverPanics(t *testing.T) {
	recs := genRecords(rand.New(rand.NewPCG(17, 18)), 400)
	src := filepath.Join(t.TempDir(), "env")
	writeLMDB(t, src, recs, 100)
	orig, err := os.ReadFile(filepath.Join(src, dataName))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(19, 20))
	dir := filepath.Join(t.TempDir(), "env")
	os.MkdirAll(dir, 0o755)
	for i := 0; i < 200; i++ {
		b := bytes.Clone(orig)
		for range 1 + rng.IntN(8) {
			p := rng.IntN(len(b))
			if rng.IntN(2) == 0 { // aim at page headers and node pointers
				p = p/defaultPageSize*defaultPageSize + rng.IntN(24)
			}
			b[p] = byte(rng.Uint32())
		}
		os.WriteFile(filepath.Join(dir, dataName), b, 0o644)
		readErr(dir) // a panic fails the test
	}
}

func TestLMDBWriterRejectsBadKeys(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "env")
	db, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	txn, err := db.NewTransaction()
	if err != nil {
		t.Fatal(err)
	}
	if err := txn.Put([]byte("00000002"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	long := bytes.Repeat([]byte{'z'}, maxKeySize+1)
	for _, c := range []struct {
		key  []byte
		want []string
	}{
		{[]byte("00000001"), []string{`"00000001"`, `"00000002"`, "increasing"}},
		{[]byte("00000002"), []string{"duplicate", `"00000002"`}},
		{long, []string{"512 bytes", "511"}},
		{nil, []string{"0 bytes"}},
	} {
		err := txn.Put(c.key, []byte("y"))
		if err == nil {
			t.Fatalf("Put(%.20q) succeeded", c.key)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Put(%.20q): %v, want it to say %s", c.key, err, w)
			}
		}
	}
	// The rejected keys leave the writer usable.
	if err := txn.Put([]byte("00000003"), []byte("z")); err != nil {
		t.Fatal(err)
	}
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, db); len(got) != 2 {
		t.Fatalf("got %d records, want 2", len(got))
	}
}

func TestLMDBOneWriterAtATime(t *testing.T) {
	db, err := Create(filepath.Join(t.TempDir(), "env"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	txn, _ := db.NewTransaction()
	txn.Put([]byte("a"), nil)
	if _, err := db.NewTransaction(); err == nil || !strings.Contains(err.Error(), "not committed") {
		t.Fatalf("NewTransaction with uncommitted records: %v, want an error", err)
	}
	txn.Commit()
	if _, err := db.NewTransaction(); err != nil {
		t.Fatal(err)
	}
}

// A liblmdb process holding the environment open makes Write refuse it.
func TestLMDBWriteRefusesEnvInUse(t *testing.T) {
	if !canMmap {
		t.Skip("no fcntl locks here")
	}
	py := pythonWithLMDB()
	if py == "" {
		t.Skip("no python3 with the lmdb module (install python3-lmdb) to hold an environment open")
	}
	dir := filepath.Join(t.TempDir(), "env")
	writeLMDB(t, dir, []record{{Key: []byte("a"), Val: []byte("1")}}, 0)
	cmd := exec.Command(py, "-c", "import lmdb,sys; e=lmdb.open(sys.argv[1], readonly=True); print('open', flush=True); sys.stdin.read()", dir)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	buf := make([]byte, 5)
	if _, err := stdout.Read(buf); err != nil {
		t.Fatal(err)
	}
	_, err := OpenWriter(dir)
	if err == nil || !strings.Contains(err.Error(), "open in another process") {
		t.Fatalf("Write while liblmdb has the environment open: %v, want an error", err)
	}
	if _, err := OpenReader(dir); err != nil {
		t.Fatalf("Read while liblmdb has it open: %v", err)
	}
}

// pythonWithLMDB finds a python3 that imports liblmdb's binding: the
// one on PATH may be another installation than Debian's.
func pythonWithLMDB() string {
	for _, name := range []string{"python3", "/usr/bin/python3"} {
		if p, err := exec.LookPath(name); err == nil && exec.Command(p, "-c", "import lmdb").Run() == nil {
			return p
		}
	}
	return ""
}

func FuzzLMDBRead(f *testing.F) {
	dir := f.TempDir()
	for i, recs := range [][]record{
		{{Key: []byte("a"), Val: []byte("1")}},
		{{Key: []byte("a"), Val: make([]byte, 5000)}, {Key: []byte("b"), Val: nil}},
		smallRecords(40),
	} {
		d := filepath.Join(dir, strconv.Itoa(i))
		writeLMDB(f, d, recs, 0)
		b, err := os.ReadFile(filepath.Join(d, dataName))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, dataName), b, 0o644); err != nil {
			t.Fatal(err)
		}
		readErr(dir)
	})
}

// benchEnv writes n records of size-byte values for the read benchmarks.
func benchEnv(b *testing.B, n, size int) string {
	dir := filepath.Join(b.TempDir(), "env")
	rng := rand.New(rand.NewPCG(1, 2))
	recs := make([]record, n)
	for i := range recs {
		recs[i] = record{Key: fmt.Appendf(nil, "%08d", i), Val: randBytes(rng, size)}
	}
	writeLMDB(b, dir, recs, 1000)
	return dir
}

// BenchmarkLMDBRead walks whole databases with a cursor. "walk" touches
// each value's first and last byte, the cost of a zero-copy read;
// "crc32" reads every byte, as decoding a Datum does.
func BenchmarkLMDBRead(b *testing.B) {
	for _, c := range []struct {
		name    string
		n, size int
	}{{"784B", 20000, 784}, {"60KB", 2000, 60 << 10}} {
		dir := benchEnv(b, c.n, c.size)
		for _, touch := range []string{"walk", "crc32"} {
			b.Run(c.name+"/"+touch, func(b *testing.B) {
				db, err := OpenReader(dir)
				if err != nil {
					b.Fatal(err)
				}
				defer db.Close()
				cur, err := db.NewCursor()
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(c.n * c.size))
				var sink uint32
				for b.Loop() {
					if err := cur.SeekToFirst(); err != nil {
						b.Fatal(err)
					}
					for n := 0; cur.Valid(); n++ {
						v := cur.Value()
						if touch == "walk" {
							sink += uint32(v[0]) + uint32(v[len(v)-1])
						} else {
							sink += crc32.ChecksumIEEE(v)
						}
						if err := cur.Next(); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.ReportMetric(float64(c.n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
				_ = sink
			})
		}
	}
}

// BenchmarkLMDBWrite writes databases as convert_imageset does,
// committing every 1000 records.
func BenchmarkLMDBWrite(b *testing.B) {
	for _, c := range []struct {
		name    string
		n, size int
	}{{"784B", 20000, 784}, {"60KB", 2000, 60 << 10}} {
		b.Run(c.name, func(b *testing.B) {
			val := randBytes(rand.New(rand.NewPCG(1, 2)), c.size)
			b.SetBytes(int64(c.n * c.size))
			tmp := b.TempDir()
			i := 0
			for b.Loop() {
				dir := filepath.Join(tmp, strconv.Itoa(i))
				i++
				db, err := Create(dir)
				if err != nil {
					b.Fatal(err)
				}
				txn, _ := db.NewTransaction()
				key := make([]byte, 8)
				for j := 0; j < c.n; j++ {
					key = fmt.Appendf(key[:0], "%08d", j)
					if err := txn.Put(key, val); err != nil {
						b.Fatal(err)
					}
					if (j+1)%1000 == 0 {
						txn.Commit()
					}
				}
				if err := txn.Commit(); err != nil {
					b.Fatal(err)
				}
				db.Close()
				os.RemoveAll(dir)
			}
			b.ReportMetric(float64(c.n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// Branch pages that share children (a DAG: every node points to the
// first child) are refused on the second visit of a page, not walked
// fanout^depth times; the meta page's record count is not trusted either
// way.
func TestLMDBBranchesSharingChildren(t *testing.T) {
	src := filepath.Join(t.TempDir(), "env")
	writeLMDB(t, src, genRecords(rand.New(rand.NewPCG(21, 22)), 3000), 0)
	e := checkMetaCounts(t, src)
	if d := e.meta.dbs[mainDBI].depth; d < 2 {
		t.Fatalf("depth %d: the test needs branch pages", d)
	}
	orig, err := os.ReadFile(filepath.Join(src, dataName))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "env")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, dataName), badinput.LMDBShareChildren(orig), 0o644)
	db, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err := db.NewCursor()
	n := 0
	for ; err == nil && c.Valid() && n < 1e6; n++ {
		err = c.Next()
	}
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, dataName)) || !strings.Contains(err.Error(), "reached a second time") {
		t.Fatalf("after %d records: %v", n, err)
	}
	// A second pass (the Data layer's wrap-around) fails the same way.
	if err := c.SeekToFirst(); err != nil {
		t.Fatal(err)
	}
	for err == nil && c.Valid() {
		err = c.Next()
	}
	if err == nil {
		t.Error("the second pass went through")
	}
}
