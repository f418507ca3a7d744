package data

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"

	"github.com/gocaffe/gocaffe/internal/fileio"
)

// ImageListEntry is one line of an image list file, the input of the
// ImageData layer and of convert_imageset.
type ImageListEntry struct {
	// Path is the image's path as written, relative to the root folder.
	Path string
	// Label is the image's class.
	Label int32
	// Line is the entry's 1-based line number in the list file.
	Line int
}

// ReadImageList parses a list file of "<path> <label>" lines. The label
// follows the last run of blanks, as Caffe reads it, so that paths may hold
// spaces. Blank lines are skipped; a line without an integer label is an
// error naming the file and line.
func ReadImageList(path string) ([]ImageListEntry, error) {
	f, _, err := fileio.Open(path, fileio.NoLimit)
	if err != nil {
		return nil, fmt.Errorf("image list: %w", err)
	}
	defer f.Close()
	var out []ImageListEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		e, err := parseImageListLine(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w: want \"<image path> <integer label>\"", path, n, err)
		}
		e.Line = n
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("image list %s: %w", path, err)
	}
	return out, nil
}

// parseImageListLine splits a trimmed, non-blank line at its last blank.
func parseImageListLine(line string) (ImageListEntry, error) {
	i := strings.LastIndexAny(line, " \t")
	if i < 0 {
		return ImageListEntry{}, fmt.Errorf("%q has no label", line)
	}
	name, lab := strings.TrimSpace(line[:i]), line[i+1:]
	v, err := strconv.ParseInt(lab, 10, 32)
	if err != nil {
		return ImageListEntry{}, fmt.Errorf("label %q of %s is not a 32-bit integer", lab, name)
	}
	return ImageListEntry{Path: name, Label: int32(v)}, nil
}
