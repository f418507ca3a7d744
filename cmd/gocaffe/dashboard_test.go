package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// dashboardRun is a gocaffe process serving a dashboard.
type dashboardRun struct {
	cmd *exec.Cmd
	url string
	mu  sync.Mutex
	log bytes.Buffer
}

// startDashboard runs gocaffe with args (which serve -ui 127.0.0.1:0) and
// waits for the dashboard's address in its log.
func startDashboard(t *testing.T, args ...string) *dashboardRun {
	t.Helper()
	r := &dashboardRun{cmd: exec.Command(gocaffeBin, args...)}
	stderr, err := r.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.cmd.Process.Kill(); r.cmd.Wait() })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`Dashboard on (http://\S+)`)
		for sc.Scan() {
			r.mu.Lock()
			r.log.WriteString(sc.Text() + "\n")
			r.mu.Unlock()
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		close(addr)
	}()
	select {
	case u, ok := <-addr:
		if !ok {
			t.Fatalf("gocaffe %v ended without serving:\n%s", args, r.logText())
		}
		r.url = u
	case <-time.After(30 * time.Second):
		t.Fatalf("no dashboard address in the log:\n%s", r.logText())
	}
	return r
}

func (r *dashboardRun) logText() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.log.String()
}

func (r *dashboardRun) state(t *testing.T) dashboardState {
	t.Helper()
	resp, err := http.Get(r.url + "api/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st dashboardState
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

func (r *dashboardRun) post(t *testing.T, what string) (int, string) {
	t.Helper()
	resp, err := http.Post(r.url+"api/"+what, "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// dashboardSolver writes a small net and a solver that would run for
// ever, displaying every 1000 iterations.
func dashboardSolver(t *testing.T) string {
	dir := t.TempDir()
	net := filepath.Join(dir, "net.prototxt")
	os.WriteFile(net, []byte(`name: "Teacher"
layer { name: "data" type: "DummyData" top: "x" top: "y"
  dummy_data_param { shape { dim: 16 dim: 8 } shape { dim: 16 dim: 3 } data_filler { type: "gaussian" std: 1 } } }
layer { name: "ip1" type: "InnerProduct" bottom: "x" top: "h" inner_product_param { num_output: 16 weight_filler { type: "gaussian" std: 0.1 } } }
layer { name: "relu" type: "ReLU" bottom: "h" top: "h" }
layer { name: "ip2" type: "InnerProduct" bottom: "h" top: "guess" inner_product_param { num_output: 3 weight_filler { type: "gaussian" std: 0.1 } } }
layer { name: "loss" type: "EuclideanLoss" bottom: "guess" bottom: "y" top: "loss" }
`), 0o644)
	solver := filepath.Join(dir, "solver.prototxt")
	os.WriteFile(solver, fmt.Appendf(nil, `net: %q base_lr: 0.01 momentum: 0.9 lr_policy: "step" gamma: 0.5 stepsize: 20000
display: 1000 max_iter: 1000000000 snapshot_prefix: %q random_seed: 1`, net, filepath.Join(dir, "t")), 0o644)
	return solver
}

// TestDashboardInChromium: headless Chromium loads the page of a running
// `gocaffe train -ui`; the train-loss curve it renders holds exactly the
// (iteration, loss) pairs of the log; the Stop button's request stops the
// run after a snapshot. GOCAFFE_DASHBOARD_SCREENSHOT=file.png keeps a
// screenshot.
func TestDashboardInChromium(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("no chromium here (Debian: chromium)")
	}
	r := startDashboard(t, "train", "-solver", dashboardSolver(t), "-ui", "127.0.0.1:0")
	deadline := time.Now().Add(60 * time.Second)
	for len(r.state(t).Train.Rows) < 5 {
		if time.Now().After(deadline) {
			t.Fatalf("fewer than 5 displays in a minute:\n%s", r.logText())
		}
		time.Sleep(200 * time.Millisecond)
	}
	browse := func(args ...string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, chromium, append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=4000"}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("chromium %v: %v", args, err)
		}
		return string(out)
	}
	dom := browse("--dump-dom", r.url)
	if shot := os.Getenv("GOCAFFE_DASHBOARD_SCREENSHOT"); shot != "" {
		browse("--window-size=1200,1100", "--screenshot="+shot, r.url)
	}
	m := regexp.MustCompile(`data-series="train loss" data-points="([^"]*)"`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("no train loss curve in the rendered page:\n%.2000s", dom)
	}
	if code, body := r.post(t, "stop"); code != http.StatusOK || !strings.Contains(body, "stop requested") {
		t.Fatalf("Stop: %d %s", code, body)
	}
	if err := r.cmd.Wait(); err != nil {
		t.Fatalf("after Stop: %v\n%s", err, r.logText())
	}
	log := r.logText()
	if !strings.Contains(log, "Dashboard asked: stop") || !strings.Contains(log, "Snapshotting to binary proto file") {
		t.Errorf("the log does not show the stop and its snapshot:\n%s", lastLines(log, 6))
	}
	feed := newLogFeed(time.Now().Year())
	for _, line := range strings.Split(log, "\n") {
		feed.line(line)
	}
	train, _ := feed.tables()
	loss := map[float64]float64{}
	for _, row := range train.rows {
		loss[row.values["NumIters"]] = row.values["loss"]
	}
	points := strings.Fields(m[1])
	if len(points) < 5 {
		t.Fatalf("the curve has %d points", len(points))
	}
	for _, p := range points {
		xs, ys, _ := strings.Cut(p, ",")
		x, err1 := strconv.ParseFloat(xs, 64)
		y, err2 := strconv.ParseFloat(ys, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("point %q", p)
		}
		if want, ok := loss[x]; !ok || want != y {
			t.Errorf("the page shows loss %v at iteration %v; the log says %v (%v)", y, x, want, ok)
		}
	}
	t.Logf("the rendered curve holds %d points, all in the log", len(points))
}

// TestUIServesALogDir: `gocaffe ui DIR` shows the newest log of DIR, its
// buttons refused; a -ui address others can reach needs -ui_public.
func TestUIServesALogDir(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "caffe.INFO"), []byte(caffeLog), 0o644)
	r := startDashboard(t, "ui", "-ui", "127.0.0.1:0", dir)
	st := r.state(t)
	if st.Live || st.Title != "caffe.INFO" || len(st.Train.Rows) != 3 || len(st.Test.Rows) != 2 || st.Test.Columns[3] != "accuracy" {
		t.Errorf("state: %+v", st)
	}
	if code, _ := r.post(t, "stop"); code != http.StatusConflict {
		t.Errorf("Stop with no training: %d", code)
	}
	resp, err := http.Get(r.url)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Contains(page, []byte(`id="charts"`)) || bytes.Contains(page, []byte("http://")) && !bytes.Contains(page, []byte("http://www.w3.org/2000/svg")) {
		t.Errorf("the page is not the embedded one, or loads from elsewhere")
	}
	if code, _, stderr := runCmd("train", "-solver", dashboardSolver(t), "-ui", "0.0.0.0:0"); code != 1 || !strings.Contains(stderr, "-ui_public") {
		t.Errorf("public address without -ui_public: exit %d, %s", code, lastLines(stderr, 2))
	}
}
