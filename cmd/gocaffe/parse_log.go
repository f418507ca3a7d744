package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gocaffe/gocaffe/internal/fileio"
)

// parse_log is Caffe's tools/extra/parse_log.py in Go: a training log in
// Caffe's glog format (gocaffe's or Caffe's) becomes LOG.train and LOG.test
// in OUTDIR, one row per iteration with NumIters, Seconds (since the
// "Solving" line), LearningRate and every net output, written as the
// script writes them (Python's float repr, CRLF line ends), so scripts
// built on its CSVs keep working.

var (
	logIteration   = regexp.MustCompile(`Iteration (\d+)`)
	logTrainOutput = regexp.MustCompile(`Train net output #(\d+): (\S+) = ([\.\deE+-]+)`)
	logTestOutput  = regexp.MustCompile(`Test net output #(\d+): (\S+) = ([\.\deE+-]+)`)
	logLR          = regexp.MustCompile(`lr = ([-+]?[0-9]*\.?[0-9]+([eE]?[-+]?[0-9]+)?)`)
)

func runParseLog(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("parse_log", stderr)
	delimiter := fs.String("delimiter", ",", "column delimiter of the CSV files")
	verbose := fs.Bool("verbose", false, "say which files are written")
	setUsage(fs, stderr, "gocaffe parse_log [-delimiter ,] [-verbose] LOGFILE OUTPUT_DIR",
		"Parses a Caffe-format training log into two CSV files, OUTPUT_DIR/LOGFILE.train\n"+
			"and OUTPUT_DIR/LOGFILE.test, as Caffe's tools/extra/parse_log.py.")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usageError(fs, stderr, "want 2 arguments (log file, output directory), got %d", len(pos))
	}
	if len(*delimiter) != 1 {
		return fmt.Errorf("-delimiter %q: want one character", *delimiter)
	}
	train, test, err := parseTrainingLog(pos[0])
	if err != nil {
		return err
	}
	base := filepath.Join(pos[1], filepath.Base(pos[0]))
	for _, t := range []struct {
		path string
		rows *logTable
	}{{base + ".train", train}, {base + ".test", test}} {
		if len(t.rows.rows) == 0 {
			if *verbose {
				fmt.Fprintf(stdout, "Not writing %s; no lines to write\n", t.path)
			}
			continue
		}
		if err := os.WriteFile(t.path, t.rows.csv((*delimiter)[0]), 0o666); err != nil {
			return err
		}
		if *verbose {
			fmt.Fprintf(stdout, "Wrote %s\n", t.path)
		}
	}
	return nil
}

// logRow is one row: its columns in order of first appearance. A row is
// not changed once its table has pushed it, so that a copy of the table's
// row pointers is a snapshot (the dashboard's).
type logRow struct {
	names  []string
	values map[string]float64
	seq    int // the row's place among all rows pushed, from 0
}

func newLogRow(iter, seconds, lr float64) *logRow {
	r := &logRow{values: map[string]float64{}}
	r.set("NumIters", iter)
	r.set("Seconds", seconds)
	r.set("LearningRate", lr)
	return r
}

func (r *logRow) set(name string, v float64) {
	if _, ok := r.values[name]; !ok {
		r.names = append(r.names, name)
	}
	r.values[name] = v
}

// logTable collects the rows of train or test outputs as the script does:
// a row is complete when it has as many columns as the first row; the first
// row is pushed when the next iteration's outputs start.
//
// With a limit (the dashboard's, which follows a run for as long as it
// lasts), the table keeps at most limit rows, as TensorBoard keeps a
// bounded sample of a long run: the newest limit/4 rows all, and of the
// older ones an evenly spaced subset (every stride-th row pushed, the
// stride doubling whenever they would be more than limit/2), so memory
// stays O(limit) however long the run and the whole run stays drawn. The
// first row is always kept: it names the columns.
type logTable struct {
	rows []*logRow
	row  *logRow

	limit  int     // most rows kept; 0: all (parse_log, plot)
	pushed int     // rows pushed so far: the next row's seq
	stride int     // of the older rows, those whose seq is a multiple are kept
	lr1    float64 // the second row's learning rate, for fixInitialLR
}

// minRowLimit keeps the thinning meaningful: at least a few recent rows and
// room for more than the first of the older ones.
const minRowLimit = 8

// bounded sets the table's limit (see logTable); limit 0 keeps every row.
func (t *logTable) bounded(limit int) {
	if limit > 0 {
		limit = max(limit, minRowLimit)
	}
	t.limit, t.stride = limit, 1
}

func (t *logTable) add(re *regexp.Regexp, line string, iter, seconds, lr float64) {
	if m := re.FindStringSubmatch(line); m != nil {
		if t.row == nil || t.row.values["NumIters"] != iter {
			if t.row != nil {
				t.push(t.row)
			}
			t.row = newLogRow(iter, seconds, lr)
		}
		v, _ := strconv.ParseFloat(m[3], 64)
		t.row.set(m[2], v)
	}
	if t.row != nil && len(t.rows) >= 1 && len(t.row.names) == len(t.rows[0].names) {
		t.push(t.row)
		t.row = nil
	}
}

// push appends a complete row, thinning the older rows at the limit.
func (t *logTable) push(r *logRow) {
	r.seq = t.pushed
	t.pushed++
	if r.seq == 1 {
		t.lr1 = r.values["LearningRate"]
	}
	t.rows = append(t.rows, r)
	if t.limit > 0 && len(t.rows) >= t.limit {
		t.thin()
	}
}

// thin keeps the newest limit/4 rows and, of the rows before them, those
// whose seq is a multiple of the stride, doubling the stride until they
// are at most limit/2. It leaves at most 3/4 of the limit, so it runs once
// every limit/4 rows at most: O(1) a row, amortised.
func (t *logTable) thin() {
	cut := len(t.rows) - t.limit/4
	old := keepEvery(t.rows[:cut], t.stride)
	for len(old) > t.limit/2 {
		t.stride *= 2
		old = keepEvery(old, t.stride)
	}
	n := len(old) + copy(t.rows[len(old):], t.rows[cut:])
	clear(t.rows[n:]) // the dropped rows are garbage now
	t.rows = t.rows[:n]
}

// keepEvery keeps, in place, the rows whose seq is a multiple of stride.
func keepEvery(rows []*logRow, stride int) []*logRow {
	kept := rows[:0]
	for _, r := range rows {
		if r.seq%stride == 0 {
			kept = append(kept, r)
		}
	}
	return kept
}

// firstLR is the learning rate the first row shows: the second row's, as
// the script fixes it at the end (the first row comes before the solver
// prints one); NaN while there is no second row.
func (t *logTable) firstLR() float64 {
	if t.pushed > 1 {
		return t.lr1
	}
	if len(t.rows) > 0 {
		return t.rows[0].values["LearningRate"]
	}
	return math.NaN()
}

// fixInitialLR copies the second row's learning rate into the first.
func (t *logTable) fixInitialLR() {
	if len(t.rows) > 1 {
		t.rows[0].values["LearningRate"] = t.firstLR()
	}
}

// csv writes the table as Python's csv.DictWriter with the excel dialect:
// the first row's columns, CRLF line ends, missing values empty.
func (t *logTable) csv(delim byte) []byte {
	var b strings.Builder
	cols := t.rows[0].names
	b.WriteString(strings.Join(cols, string(delim)))
	b.WriteString("\r\n")
	for _, r := range t.rows {
		for i, c := range cols {
			if i > 0 {
				b.WriteByte(delim)
			}
			if v, ok := r.values[c]; ok {
				b.WriteString(pyFloat(v))
			}
		}
		b.WriteString("\r\n")
	}
	return []byte(b.String())
}

// parseTrainingLog reads the log's train and test rows. Timestamps carry no
// year in glog's format; as the script, the year is the file's and rolls
// over when the month goes back.
func parseTrainingLog(path string) (train, test *logTable, err error) {
	f, _, err := fileio.Open(path, fileio.NoLimit)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	feed := newLogFeed(info.ModTime().Year())
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		if err := feed.line(sc.Text()); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if feed.start.IsZero() {
		return nil, nil, fmt.Errorf("%s: no \"Solving\" line: not a training log", path)
	}
	train, test = feed.tables()
	return train, test, nil
}

// logFeed parses a training log line by line, as parse_log.py does, so
// that a log can be followed while it is written (the dashboard).
type logFeed struct {
	year        int
	start, last time.Time
	iter, lr    float64
	train, test logTable
}

func newLogFeed(year int) *logFeed { return &logFeed{year: year, iter: -1, lr: math.NaN()} }

// bounded keeps at most limit rows in each table (see logTable).
func (f *logFeed) bounded(limit int) *logFeed {
	f.train.bounded(limit)
	f.test.bounded(limit)
	return f
}

// line takes the next line of the log.
func (f *logFeed) line(line string) error {
	if f.start.IsZero() {
		if strings.Contains(line, "Solving") {
			t, err := glogTime(line, f.year)
			if err != nil {
				return fmt.Errorf("the \"Solving\" line has no glog time: %w", err)
			}
			f.start, f.last = t, t
		}
		return nil
	}
	if m := logIteration.FindStringSubmatch(line); m != nil {
		// An iteration past float64's range (ParseFloat's ErrRange, +Inf)
		// is no solver's (Caffe counts in int32): the line is not taken as
		// one, so that no row has an infinite NumIters.
		if it, err := strconv.ParseFloat(m[1], 64); err == nil {
			f.iter = it
		}
	}
	if f.iter == -1 {
		return nil
	}
	t, err := glogTime(line, f.year)
	if err != nil {
		return nil // not a log line (a resumed solver's output, a stack trace)
	}
	if t.Month() < f.last.Month() {
		f.year++
		t, _ = glogTime(line, f.year)
	}
	f.last = t
	seconds := float64(t.Sub(f.start).Microseconds()) / 1e6
	if m := logLR.FindStringSubmatch(line); m != nil {
		f.lr, _ = strconv.ParseFloat(m[1], 64)
	}
	f.train.add(logTrainOutput, line, f.iter, seconds, f.lr)
	f.test.add(logTestOutput, line, f.iter, seconds, f.lr)
	return nil
}

// tables returns copies of the rows so far, the first rows' learning
// rates fixed as the script fixes them at the end.
func (f *logFeed) tables() (train, test *logTable) {
	cp := func(t *logTable) *logTable {
		out := &logTable{rows: make([]*logRow, len(t.rows)), pushed: t.pushed, lr1: t.lr1}
		for i, r := range t.rows {
			c := &logRow{names: r.names, values: make(map[string]float64, len(r.values)), seq: r.seq}
			for k, v := range r.values {
				c.values[k] = v
			}
			out.rows[i] = c
		}
		out.fixInitialLR()
		return out
	}
	return cp(&f.train), cp(&f.test)
}

// glogTime reads the time of a glog line: "I0210 13:39:22.381027 ..." in
// the year given, or "I20260210 13:39:22.381027 ..." as glog 0.6 and later
// write it (Caffe built against Debian's or Homebrew's glog today), in its
// own year.
func glogTime(line string, year int) (time.Time, error) {
	f := strings.Fields(line)
	if len(f) < 2 || len(f[0]) != 5 && len(f[0]) != 9 {
		return time.Time{}, fmt.Errorf("not a glog line")
	}
	date := f[0][1:]
	if len(date) == 8 {
		y, err := strconv.Atoi(date[:4])
		if err != nil {
			return time.Time{}, fmt.Errorf("not a glog line")
		}
		year, date = y, date[4:]
	}
	month, err1 := strconv.Atoi(date[:2])
	day, err2 := strconv.Atoi(date[2:])
	clock, frac, ok := strings.Cut(f[1], ".")
	hms := strings.Split(clock, ":")
	if err1 != nil || err2 != nil || !ok || len(hms) != 3 {
		return time.Time{}, fmt.Errorf("not a glog line")
	}
	var n [3]int
	for i, s := range hms {
		v, err := strconv.Atoi(s)
		if err != nil {
			return time.Time{}, err
		}
		n[i] = v
	}
	us, err := strconv.Atoi(frac)
	if err != nil || month < 1 || month > 12 || us >= 1e6 {
		return time.Time{}, fmt.Errorf("not a glog line")
	}
	return time.Date(year, time.Month(month), day, n[0], n[1], n[2], us*1000, time.UTC), nil
}

// pyFloat formats v as Python's repr(float): the shortest digits that read
// back, fixed notation from 1e-4 up to 1e16 (with ".0" for integers), else
// scientific with a two-digit exponent at least; nan, inf, -inf.
func pyFloat(v float64) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	sci := strconv.FormatFloat(v, 'e', -1, 64) // d.ddde±XX
	mant, expText, _ := strings.Cut(sci, "e")
	exp, _ := strconv.Atoi(expText)
	if exp < -4 || exp >= 16 {
		sign := "+"
		if exp < 0 {
			sign, exp = "-", -exp
		}
		return fmt.Sprintf("%se%s%02d", mant, sign, exp)
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}
