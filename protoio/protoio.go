// Package protoio reads and writes Caffe's protobuf files: binary ones
// (.caffemodel, .solverstate, .binaryproto mean files) and text ones
// (.prototxt nets and solvers), as Caffe's util/io does.
//
// Errors name the file and the message type expected; text parse errors
// carry the line and column. Writes go to a temporary file in the same
// directory that is renamed over the target only once it is complete, so a
// crash or a full disk never leaves a half-written snapshot in place of the
// previous one.
package protoio

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/internal/fileio"
)

// ReadProtoFromBinaryFile parses the binary protobuf file at path into m.
func ReadProtoFromBinaryFile(path string, m proto.Message) error {
	b, err := fileio.ReadFile(path, fileio.ProtoLimit)
	if err != nil {
		return fmt.Errorf("protoio: %w", err)
	}
	if err := checkDecodeBinary(b, m); err != nil {
		return fmt.Errorf("protoio: %s: %w", path, err)
	}
	if err := proto.Unmarshal(b, m); err != nil {
		return fmt.Errorf("protoio: %s is not a valid binary %s: %w", path, typeName(m), err)
	}
	return nil
}

// WriteProtoToBinaryFile writes m to path in the binary wire format, fields
// in number order as Caffe writes them. A message over BinaryLimit bytes is
// refused before anything is written: no protobuf reader, Caffe's or
// gocaffe's, could read it back (Caffe's own writer fails on it too).
func WriteProtoToBinaryFile(m proto.Message, path string) error {
	if err := CheckBinarySize(typeName(m), path, int64(proto.Size(m))); err != nil {
		return fmt.Errorf("%w; nothing was written", err)
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return fmt.Errorf("protoio: encoding %s for %s: %w", typeName(m), path, err)
	}
	return WriteFileAtomic(path, b)
}

// BinaryLimit is the largest binary protobuf file that can be read back:
// protobuf's limit on one message, 2 GiB - 1 bytes, which is also Caffe's
// kProtoReadBytesLimit and gocaffe's reading limit.
const BinaryLimit = fileio.ProtoLimit

// CheckBinarySize says whether a binary protobuf file of size bytes (what
// a message of type what would take in path) can be read back; the error
// says how large it would be.
func CheckBinarySize(what, path string, size int64) error {
	if size <= BinaryLimit {
		return nil
	}
	return fmt.Errorf("protoio: %s would be %d bytes (%.2f GiB) as a binary %s, over the %d bytes (2 GiB - 1) that protobuf, Caffe's reader and gocaffe's, can read back",
		path, size, float64(size)/(1<<30), what, int64(BinaryLimit))
}

// ReadProtoFromTextFile parses the protobuf text file (a .prototxt) at path
// into m. Unknown fields are errors, as in Caffe (TextOptions can skip
// them).
func ReadProtoFromTextFile(path string, m proto.Message) error {
	return TextOptions{}.ReadFile(path, m)
}

// ParseText parses protobuf text into m; the error says which message type
// was expected and where (line:column) the text went wrong.
func ParseText(text []byte, m proto.Message) error { return TextOptions{}.Parse(text, m) }

// WriteProtoToTextFile writes m to path in the protobuf text format.
func WriteProtoToTextFile(m proto.Message, path string) error {
	b, err := prototext.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(m)
	if err != nil {
		return fmt.Errorf("protoio: encoding %s for %s: %w", typeName(m), path, err)
	}
	return WriteFileAtomic(path, b)
}

// WriteFileAtomic writes data to path through a temporary file in the same
// directory that is synced and then renamed over path, so readers see either
// the old file or the complete new one. The file is created with mode 0666
// less the process's umask, as Caffe's files are. Temporary files that a
// killed process left for the same path (named after that process, which no
// longer runs) are removed first.
func WriteFileAtomic(path string, data []byte) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	removeStaleTemps(dir, base)
	f, err := createTemp(dir, base)
	if err != nil {
		return fmt.Errorf("protoio: writing %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("protoio: writing %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("protoio: writing %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("protoio: writing %s: %w", path, err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("protoio: writing %s: %w", path, err)
	}
	return nil
}

// tempPrefix is the start of the temporary files' names for target base:
// hidden, then the writing process's id, so that a later writer can tell a
// dead process's leftovers from a live one's file in progress.
func tempPrefix(base string) string { return "." + base + ".tmp-" }

// createTemp makes a new temporary file for base in dir with mode 0666, the
// umask applied by the kernel (os.CreateTemp would make it 0600).
func createTemp(dir, base string) (*os.File, error) {
	for range 100 {
		name := filepath.Join(dir, fmt.Sprintf("%s%d-%d", tempPrefix(base), os.Getpid(), rand.Uint32()))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("no unused temporary file name in %s", dir)
}

// removeStaleTemps removes base's temporary files in dir whose writing
// process is gone (a snapshot killed half way). Errors are ignored: the
// files are only clutter.
func removeStaleTemps(dir, base string) {
	names, err := filepath.Glob(filepath.Join(dir, globEscape(tempPrefix(base))+"*"))
	if err != nil {
		return
	}
	for _, name := range names {
		rest := strings.TrimPrefix(filepath.Base(name), tempPrefix(base))
		pid, _, ok := strings.Cut(rest, "-")
		if !ok {
			// os.CreateTemp's names (gocaffe before the pid was written):
			// no process to ask, so only an hour's age makes one stale.
			if info, err := os.Stat(name); err == nil && time.Since(info.ModTime()) > time.Hour {
				os.Remove(name)
			}
			continue
		}
		if n, err := strconv.Atoi(pid); err == nil && !processRuns(n) {
			os.Remove(name)
		}
	}
}

// globEscape quotes the characters filepath.Match treats specially.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func typeName(m proto.Message) string {
	return string(m.ProtoReflect().Descriptor().FullName())
}
