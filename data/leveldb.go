package data

import (
	"fmt"

	"github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/iterator"
	"github.com/syndtr/goleveldb/leveldb/opt"

	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() { RegisterBackend(caffepb.DataParameter_LEVELDB, openLevelDB) }

// levelDB is a LevelDB database through goleveldb, whose files Caffe's
// LevelDB backend reads and writes.
type levelDB struct {
	db   *leveldb.DB
	path string
}

// strict is every check goleveldb can make. Its default drops a journal
// block whose checksum fails and reads on: one flipped bit, and a dataset
// of 2,000 records reads as 1,000 with no word said. A training set that
// is not what was written is an error here, whatever the cost of reading
// it whole (a database torn by a crash while it was written is refused
// too; it needs writing again).
const strict = opt.StrictAll

// openLevelDB opens with Caffe's options: 100 MB write buffer for
// writing, a missing database created only for writing, an existing one
// refused for New; and with strict checks. Reading keeps goleveldb's
// default buffer: a read-only open replays the journal into a buffer of
// that size, and 100 MB taken at once for a journal of a few kilobytes is
// enough to fail under a memory limit.
func openLevelDB(path string, mode Mode) (DB, error) {
	o := &opt.Options{WriteBuffer: 100 << 20, Strict: strict}
	switch mode {
	case Read:
		o.ReadOnly, o.ErrorIfMissing = true, true
		o.WriteBuffer = 0
	case New:
		o.ErrorIfExist = true
	}
	db, err := leveldb.OpenFile(path, o)
	if err != nil {
		return nil, err
	}
	return &levelDB{db, path}, nil
}

func (l *levelDB) NewCursor() (Cursor, error) {
	c := &levelCursor{path: l.path, it: l.db.NewIterator(nil, &opt.ReadOptions{DontFillCache: true, Strict: strict})}
	return c, c.SeekToFirst()
}

func (l *levelDB) NewTransaction() (Transaction, error) {
	return &levelTxn{db: l.db, batch: new(leveldb.Batch)}, nil
}

func (l *levelDB) Close() error { return l.db.Close() }

type levelCursor struct {
	path  string
	it    iterator.Iterator
	valid bool
}

func (c *levelCursor) SeekToFirst() error {
	c.valid = c.it.First()
	return c.err()
}

func (c *levelCursor) Next() error {
	c.valid = c.it.Next()
	return c.err()
}

// err is the iterator's error naming the database: goleveldb's name only
// the table file.
func (c *levelCursor) err() error {
	if err := c.it.Error(); err != nil {
		return fmt.Errorf("LevelDB database %s: %w", c.path, err)
	}
	return nil
}

func (c *levelCursor) Valid() bool   { return c.valid }
func (c *levelCursor) Key() []byte   { return c.it.Key() }
func (c *levelCursor) Value() []byte { return c.it.Value() }

func (c *levelCursor) Close() error {
	c.it.Release()
	return c.it.Error()
}

type levelTxn struct {
	db    *leveldb.DB
	batch *leveldb.Batch
}

// Put copies key and value into the batch (goleveldb's Batch.Put does).
func (t *levelTxn) Put(key, value []byte) error {
	t.batch.Put(key, value)
	return nil
}

func (t *levelTxn) Commit() error {
	err := t.db.Write(t.batch, nil)
	t.batch.Reset()
	return err
}
