// Package data reads and writes Caffe's datasets: Datum records, the
// key-value databases that hold them (LMDB and LevelDB, with Caffe's
// cursor, transaction and open-mode semantics), and the transformations a
// Data layer applies to each record.
//
// A database is opened by backend:
//
//	db, err := data.Open(caffepb.DataParameter_LMDB, "train_lmdb", data.Read)
//	cur, err := db.NewCursor()
//	for ; cur.Valid(); cur.Next() {
//		d := &caffepb.Datum{}
//		proto.Unmarshal(cur.Value(), d)
//	}
//
// Both backends are pure Go (LMDB is package lmdb, LevelDB goleveldb), so
// reading and writing datasets needs no system library.
package data
