package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/gocaffe/gocaffe/data"
	"github.com/gocaffe/gocaffe/internal/glog"
	"github.com/gocaffe/gocaffe/internal/progress"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// This file holds what the dataset tools (convert_mnist_data,
// convert_imageset, compute_image_mean) share: argument parsing, the
// output database and the progress reporter.

// commitEvery is how many records the tools put in one transaction, as
// Caffe's tools commit every 1000.
const commitEvery = 1000

// parseArgs parses flags that may come before, between or after the
// positional arguments, as gflags (Caffe's flag library) allows: Caffe
// users write `convert_imageset ROOT/ list.txt db --shuffle`. Everything
// after "--" is positional.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// setUsage makes fs print a usage line with the positional arguments, a
// description, then the flags.
func setUsage(fs *flag.FlagSet, stderr io.Writer, synopsis, about string) {
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s\n\n%s\n\nflags:\n", synopsis, about)
		fs.PrintDefaults()
	}
}

// usageError prints the usage and then what was wrong (run prints
// nothing for usage errors) and returns an error that makes run exit 2.
func usageError(fs *flag.FlagSet, stderr io.Writer, format string, args ...any) error {
	fs.Usage()
	msg := fmt.Sprintf(format, args...)
	fmt.Fprintf(stderr, "\n%s: %s\n", fs.Name(), msg)
	return fmt.Errorf("%s: %w", msg, errUsage)
}

// parseBackendFlag reads a -backend value.
func parseBackendFlag(name string) (caffepb.DataParameter_DB, error) {
	b, err := data.ParseBackend(name)
	if err != nil {
		return 0, fmt.Errorf("-backend: %w", err)
	}
	return b, nil
}

// outDB is a database a tool creates and fills, committing every
// commitEvery records.
type outDB struct {
	db      data.DB
	path    string
	backend caffepb.DataParameter_DB
	txn     data.Transaction
	pending int
	closed  bool
}

// createDB creates the database at path. Like Caffe's tools it never adds
// to an existing database; it refuses any existing path, not only one
// holding a database, so that abort can remove what it made without
// touching anything that was there before.
func createDB(backend caffepb.DataParameter_DB, path string) (*outDB, error) {
	if _, err := os.Lstat(path); err == nil {
		return nil, fmt.Errorf("database %s already exists: remove it or choose another name", path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("database %s: %w", path, err)
	}
	glog.Infof("Opening %s %s", strings.ToLower(backend.String()), path)
	db, err := data.Open(backend, path, data.New)
	if err != nil {
		// A backend may have made the directory before failing.
		os.RemoveAll(path)
		return nil, err
	}
	o := &outDB{db: db, path: path, backend: backend}
	if o.txn, err = db.NewTransaction(); err != nil {
		o.abort()
		return nil, fmt.Errorf("database %s: starting a transaction: %w", path, err)
	}
	return o, nil
}

// put adds a record, committing when commitEvery are pending.
func (o *outDB) put(key, value []byte) error {
	if err := o.txn.Put(key, value); err != nil {
		return fmt.Errorf("database %s: writing record %q: %w", o.path, key, err)
	}
	o.pending++
	if o.pending == commitEvery {
		return o.commit()
	}
	return nil
}

// commit writes the pending records and starts a new transaction, as
// Caffe's tools do after each commit.
func (o *outDB) commit() error {
	if err := o.txn.Commit(); err != nil {
		return fmt.Errorf("database %s: committing %d records: %w", o.path, o.pending, err)
	}
	o.pending = 0
	txn, err := o.db.NewTransaction()
	if err != nil {
		return fmt.Errorf("database %s: starting a transaction: %w", o.path, err)
	}
	o.txn = txn
	return nil
}

// finish commits what is pending and closes the database.
func (o *outDB) finish() error {
	if o.pending > 0 {
		if err := o.txn.Commit(); err != nil {
			return fmt.Errorf("database %s: committing %d records: %w", o.path, o.pending, err)
		}
		o.pending = 0
	}
	o.closed = true
	if err := o.db.Close(); err != nil {
		return fmt.Errorf("database %s: closing: %w", o.path, err)
	}
	return nil
}

// abort closes the database and removes it, so that a failed conversion
// leaves nothing that could pass for a complete database (scripts such as
// examples/lenet skip the conversion when the database exists).
func (o *outDB) abort() {
	if !o.closed {
		o.closed = true
		o.db.Close()
	}
	if err := os.RemoveAll(o.path); err != nil {
		glog.Warningf("removing the incomplete database %s: %v", o.path, err)
		return
	}
	glog.Warningf("removed the incomplete database %s", o.path)
}

// startProgress makes the reporter for a conversion of total items
// (0 if unknown). On a terminal it draws a status line on stderr and routes
// log lines around it. The caller calls the reporter's Finish when the
// conversion succeeds, and the returned function in every case (deferred):
// it clears the status line and restores the log output.
func startProgress(stderr io.Writer, label, unit string, total int) (*progress.Reporter, func()) {
	term := progress.IsTerminal(stderr)
	rep := progress.New(progress.Options{
		Label: label, Unit: unit, Total: total,
		Terminal: term, Out: stderr, Logf: glog.Infof,
	})
	if !term {
		return rep, rep.Stop
	}
	prev := glog.SetOutput(io.Discard)
	glog.SetOutput(rep.Writer(prev))
	return rep, func() {
		rep.Stop()
		glog.SetOutput(prev)
	}
}
