package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

const solvingLine = "I1124 10:00:00.000000  1234 solver.cpp:279] Solving LeNet\n"

// displayLines are the log lines of one display at iteration iter: the
// loss, the train output and the learning rate (which differs at each
// display, so that rows can be told apart).
func displayLines(iter int) []byte {
	return fmt.Appendf(nil, "I1124 10:00:01.000000  1234 solver.cpp:228] Iteration %d, loss = %d\n"+
		"I1124 10:00:01.000010  1234 solver.cpp:244]     Train net output #0: loss = %d (* 1 = %d loss)\n"+
		"I1124 10:00:01.000020  1234 sgd_solver.cpp:106] Iteration %d, lr = %g\n", iter, iter, iter, iter, iter, 1/float64(iter+1))
}

func newTestFeedDashboard(limit int) *dashboard {
	d := &dashboard{rowLimit: limit}
	d.feed = d.newFeed(2026)
	return d
}

// heapInUse is the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestDashboardBoundedHistory: a run's rows stay within the limit however
// many are logged, and so does the memory they hold; the newest quarter
// of the limit is every row, the older rows are evenly spaced over the
// whole run from its first row, and each row kept is the row logged.
func TestDashboardBoundedHistory(t *testing.T) {
	const limit = 400
	const displays = 40 * limit
	d := newTestFeedDashboard(limit)
	d.Write([]byte(solvingLine))
	var heapBefore uint64
	for i := range displays {
		d.Write(displayLines(10 * i))
		if n := len(d.feed.train.rows); n > limit {
			t.Fatalf("%d rows kept after %d displays (limit %d)", n, i+1, limit)
		}
		if i == 10*limit {
			heapBefore = heapInUse()
		}
	}
	// Unbounded, 30x the limit's rows would hold some megabytes more.
	if grown := int64(heapInUse()) - int64(heapBefore); grown > 1<<20 {
		t.Errorf("the heap grew %d bytes over 30x the limit's rows: the history is not bounded", grown)
	}
	all := newLogFeed(2026) // unbounded: what parse_log reads
	all.line(strings.TrimSpace(solvingLine))
	for i := range displays {
		for _, l := range strings.Split(strings.TrimSpace(string(displayLines(10*i))), "\n") {
			all.line(l)
		}
	}
	full, _ := all.tables()
	s := d.snapshot().train
	rows := s.rows
	last := rows[len(rows)-1].seq
	k := len(rows) - 1 // rows[k:] are every row up to the last
	for k > 0 && rows[k-1].seq == rows[k].seq-1 {
		k--
	}
	if len(rows)-k < limit/4 || last != full.rows[len(full.rows)-1].seq {
		t.Errorf("%d recent rows at full resolution up to %d (want >= %d up to %d)", len(rows)-k, last, limit/4, full.rows[len(full.rows)-1].seq)
	}
	stride := rows[1].seq
	if stride < 2 || stride&(stride-1) != 0 || k > limit/2 {
		t.Fatalf("older rows: %d, spaced %d", k, stride)
	}
	for i, r := range rows[:k] {
		if r.seq != i*stride {
			t.Fatalf("older row %d is row %d of the log: not evenly spaced by %d", i, r.seq, stride)
		}
	}
	if rows[k].seq-rows[k-1].seq > stride {
		t.Errorf("a gap of %d rows between the older rows and the recent ones (spacing %d)", rows[k].seq-rows[k-1].seq, stride)
	}
	for _, r := range rows {
		want := full.rows[r.seq]
		for _, c := range want.names[:2] {
			if r.values[c] != want.values[c] || r.values["loss"] != want.values["loss"] {
				t.Fatalf("kept row %d differs from the log's: %v, want %v", r.seq, r.values, want.values)
			}
		}
	}
	table := tableJSON(s)
	if got, want := float64(table.Rows[0][2]), full.rows[0].values["LearningRate"]; got != want {
		t.Errorf("the first row's learning rate %v, want the second row's %v", got, want)
	}
	b, _ := json.Marshal(d.state())
	t.Logf("%d rows pushed, %d kept (%d recent, %d older every %d), state %d bytes", last+1, len(rows), len(rows)-k, k, stride, len(b))
}

// TestDashboardNonFiniteNumbers: a log line whose iteration is past
// float64's range (+Inf when parsed), and values that overflow, leave the
// state encodable: the iteration stays the last finite one, the values
// are null. An encoding error is answered as an error, not a truncated
// body.
func TestDashboardNonFiniteNumbers(t *testing.T) {
	d := newTestFeedDashboard(dashboardRowLimit)
	d.live, d.maxIter = true, 1000
	d.Write([]byte(caffeLog))
	huge := strings.Repeat("9", 400)
	d.Write([]byte("I1124 10:00:06.000000  1234 solver.cpp:228] Iteration " + huge + ", loss = 1e999\n" +
		"I1124 10:00:06.000010  1234 solver.cpp:244]     Train net output #0: loss = 1e999 (* 1 = inf loss)\n" +
		"I1124 10:00:06.000020  1234 sgd_solver.cpp:106] Iteration " + huge + ", lr = 1e999\n" +
		"I1124 10:00:07.000000  1234 solver.cpp:228] Iteration 300, loss = 0.1\n" +
		"I1124 10:00:07.000010  1234 solver.cpp:244]     Train net output #0: loss = 0.1 (* 1 = 0.1 loss)\n"))
	st := d.state()
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatalf("the state does not encode: %v", err)
	}
	var back struct {
		Iter  float64 `json:"iter"`
		Train struct {
			Rows [][]*float64 `json:"rows"`
		} `json:"train"`
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Iter != 200 && back.Iter != 300 {
		t.Errorf("iteration %v, want the last finite one", back.Iter)
	}
	for _, r := range back.Train.Rows {
		if r[0] == nil || math.IsInf(*r[0], 0) {
			t.Errorf("a row without a finite iteration: %v", r)
		}
	}
	rec := httptest.NewRecorder()
	writeJSON(rec, map[string]float64{"x": math.Inf(1)})
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "encoding the state") {
		t.Errorf("an encoding error answered %d %q", rec.Code, rec.Body.String())
	}
}

// writeLog writes b to path, or appends it.
func writeLog(t *testing.T, path string, b []byte, appending bool) {
	t.Helper()
	flag := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if appending {
		flag = os.O_WRONLY | os.O_APPEND
	}
	f, err := os.OpenFile(path, flag, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// pollRows polls f to the end of the log and returns the train rows'
// iterations.
func pollRows(t *testing.T, f *logFollower) []float64 {
	t.Helper()
	for {
		more, err := f.poll()
		if err != nil {
			t.Fatal(err)
		}
		if !more {
			break
		}
	}
	var iters []float64
	for _, r := range f.d.state().Train.Rows {
		iters = append(iters, float64(r[0]))
	}
	return iters
}

// TestLogFollowerReadsIncrementally: each poll reads only what was
// appended since the last (a line cut between two appends included),
// and at most its bound of bytes.
func TestLogFollowerReadsIncrementally(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "caffe.INFO")
	cut := strings.Index(caffeLog, "Train net output #0: loss = 0.221") + 4 // inside the line that pushes the first row
	writeLog(t, path, []byte(caffeLog[:cut]), false)
	f := newLogFollower(dir, newTestFeedDashboard(dashboardRowLimit))
	if got := pollRows(t, f); len(got) != 0 || f.read != int64(cut) {
		t.Fatalf("first poll: rows %v, %d bytes read of %d", got, f.read, cut)
	}
	writeLog(t, path, []byte(caffeLog[cut:]), true)
	if got := pollRows(t, f); fmt.Sprint(got) != "[0 100 200]" || f.read != int64(len(caffeLog)) {
		t.Fatalf("after appending: rows %v, %d bytes read in all of %d", got, f.read, len(caffeLog))
	}
	pollRows(t, f)
	if f.read != int64(len(caffeLog)) {
		t.Errorf("a poll with nothing appended read %d bytes", f.read-int64(len(caffeLog)))
	}
	more := displayLines(300)
	writeLog(t, path, more, true)
	pollRows(t, f)
	writeLog(t, path, displayLines(400), true)
	if got := pollRows(t, f); fmt.Sprint(got) != "[0 100 200 300 400]" || f.read != int64(len(caffeLog)+2*len(more)) {
		t.Errorf("after two more displays: rows %v, %d bytes read, want %d", got, f.read, len(caffeLog)+2*len(more))
	}

	g := newLogFollower(dir, newTestFeedDashboard(dashboardRowLimit))
	g.maxPerPoll = 100
	if more, err := g.poll(); err != nil || !more || g.read != 100 {
		t.Errorf("a poll bounded to 100 bytes: more %v, %v, %d read", more, err, g.read)
	}
	if got := pollRows(t, g); fmt.Sprint(got) != "[0 100 200 300 400]" {
		t.Errorf("read 100 bytes a poll: rows %v", got)
	}
}

// TestLogFollowerStartsOver: the log truncated, truncated and rewritten
// past the point read, replaced by another file of its name, or a newer
// log in the directory: what is shown is the new log's only.
func TestLogFollowerStartsOver(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "caffe.INFO")
	writeLog(t, path, []byte(caffeLog), false)
	f := newLogFollower(dir, newTestFeedDashboard(dashboardRowLimit))
	pollRows(t, f)
	second := append([]byte(solvingLine), displayLines(7)...)
	second = append(second, displayLines(8)...)

	writeLog(t, path, second, false) // truncated: shorter
	if got := pollRows(t, f); fmt.Sprint(got) != "[7 8]" {
		t.Errorf("truncated and rewritten shorter: rows %v", got)
	}
	long := []byte("I1125 08:00:00.000000  999 caffe.cpp:217] another run\n" + solvingLine)
	for i := range 30 {
		long = append(long, displayLines(100+i)...)
	}
	writeLog(t, path, long, false) // rewritten longer than what was read
	if got := pollRows(t, f); len(got) != 30 || got[0] != 100 {
		t.Errorf("rewritten longer than read (copytruncate): rows %v", got)
	}

	tmp := filepath.Join(t.TempDir(), "next")
	writeLog(t, tmp, append([]byte(solvingLine), append(displayLines(50), displayLines(51)...)...), false)
	if err := os.Rename(tmp, path); err != nil { // the same name, another file
		t.Fatal(err)
	}
	if got := pollRows(t, f); fmt.Sprint(got) != "[50 51]" {
		t.Errorf("replaced by another file: rows %v", got)
	}

	newer := filepath.Join(dir, "caffe.INFO.2")
	writeLog(t, newer, append([]byte(solvingLine), append(displayLines(60), displayLines(61)...)...), false)
	later := time.Now().Add(time.Minute)
	os.Chtimes(newer, later, later)
	if got := pollRows(t, f); fmt.Sprint(got) != "[60 61]" || f.d.state().Title != "caffe.INFO.2" {
		t.Errorf("a newer log: rows %v, title %q", got, f.d.state().Title)
	}
}

// TestLogFollowerHugeLine: a line longer than maxLogLine (a corrupt or
// foreign file) is dropped whole without being held, and the lines after
// it are read.
func TestLogFollowerHugeLine(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "caffe.INFO")
	i := strings.Index(caffeLog, "I1124 10:00:01.300000")
	huge := bytes.Repeat([]byte("x"), 3*maxLogLine+5)
	writeLog(t, path, append(append([]byte(caffeLog[:i]), huge...), "\n"+caffeLog[i:]...), false)
	f := newLogFollower(dir, newTestFeedDashboard(dashboardRowLimit))
	if got := pollRows(t, f); fmt.Sprint(got) != "[0 100 200]" {
		t.Errorf("rows %v around a line of %d bytes", got, len(huge))
	}
	writeLog(t, path, huge, true) // no newline: held as incomplete, but not whole
	pollRows(t, f)
	if n := cap(f.d.partial); n > maxLogLine+followChunk {
		t.Errorf("%d bytes held for an incomplete line (maxLogLine %d)", n, maxLogLine)
	}
}

// TestUIHugeLogUnderMemoryLimit: `gocaffe ui` over a 3 GB log (sparse:
// one line of zeros, then a training log), under the address-space limit
// of the hardening tests, stays up and shows the training log; it read
// the whole file at each poll before (out of memory at once).
func TestUIHugeLogUnderMemoryLimit(t *testing.T) {
	startsUnderLimit(t)
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "caffe.INFO"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("\n"+caffeLog), 3<<30); err != nil {
		t.Skipf("no 3 GB sparse file here: %v", err)
	}
	f.Close()
	cmd := exec.Command("sh", "-c", fmt.Sprintf(`ulimit -v %d && exec "$0" "$@"`, memoryLimitKB), gocaffeBin, "ui", "-ui", "127.0.0.1:0", dir)
	cmd.Env = append(os.Environ(), "MALLOC_ARENA_MAX=1")
	r := startDashboardCmd(t, cmd)
	deadline := time.Now().Add(90 * time.Second)
	for len(r.state(t).Train.Rows) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("the log after 3 GB is not shown in 90 s:\n%s", lastLines(r.logText(), 10))
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// FuzzDashboardLog: whatever the log holds, the dashboard keeps its
// bounds (rows, an incomplete line) and its state encodes as JSON.
func FuzzDashboardLog(f *testing.F) {
	f.Add([]byte(caffeLog), 7)
	f.Add([]byte(solvingLine+string(displayLines(1))+string(displayLines(2))), 50)
	f.Add([]byte(solvingLine+"I1124 10:00:06.000000  1 s.cpp:1] Iteration "+strings.Repeat("9", 400)+", lr = 1e999\n"), 10)
	f.Add([]byte(strings.ReplaceAll(caffeLog, "accuracy", "<img/src=\"x\"/onerror=alert(1)>")), 100)
	f.Fuzz(func(t *testing.T, log []byte, cut int) {
		d := newTestFeedDashboard(minRowLimit)
		cut = min(max(cut, 0), len(log))
		d.Write(log[:cut])
		d.Write(log[cut:])
		if n := len(d.feed.train.rows) + len(d.feed.test.rows); n > 2*minRowLimit {
			t.Fatalf("%d rows kept (limit %d a table)", n, minRowLimit)
		}
		if len(d.partial) > maxLogLine {
			t.Fatalf("an incomplete line of %d bytes held", len(d.partial))
		}
		if _, err := json.Marshal(d.state()); err != nil {
			t.Fatalf("the state does not encode: %v", err)
		}
		for _, table := range []*logTable{&d.feed.train, &d.feed.test} {
			if len(table.rows) > 0 { // runParseLog writes no file for none
				table.csv(',') // parse_log's CSV of the same rows must not panic
			}
		}
	})
}
