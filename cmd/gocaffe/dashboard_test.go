package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gocaffe/gocaffe/internal/glog"
	"github.com/gocaffe/gocaffe/solver"
)

// dashboardRun is a gocaffe process serving a dashboard.
type dashboardRun struct {
	cmd   *exec.Cmd
	url   string // http://host:port/, to reach it from here
	token string // the run's token: the printed link's, else read from the page
	mu    sync.Mutex
	log   bytes.Buffer
}

// startDashboard runs gocaffe with args (which serve -ui 127.0.0.1:0) and
// waits for the dashboard's address in its log.
func startDashboard(t *testing.T, args ...string) *dashboardRun {
	t.Helper()
	return startDashboardCmd(t, exec.Command(gocaffeBin, args...))
}

// startDashboardCmd is startDashboard for a command of one's own (gocaffe
// under a memory limit).
func startDashboardCmd(t *testing.T, cmd *exec.Cmd) *dashboardRun {
	t.Helper()
	r := &dashboardRun{cmd: cmd}
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
	case link, ok := <-addr:
		if !ok {
			t.Fatalf("gocaffe %v ended without serving:\n%s", cmd.Args, r.logText())
		}
		r.setURL(t, link)
	case <-time.After(30 * time.Second):
		t.Fatalf("no dashboard address in the log:\n%s", r.logText())
	}
	return r
}

// setURL takes the printed link apart: its token, and an address to reach
// it from here (a public dashboard prints the address it listens on, such
// as 0.0.0.0).
func (r *dashboardRun) setURL(t *testing.T, link string) {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	r.token = u.Query().Get("token")
	u.RawQuery = ""
	if ip := net.ParseIP(u.Hostname()); ip != nil && ip.IsUnspecified() {
		u.Host = net.JoinHostPort("127.0.0.1", u.Port())
	}
	r.url = u.String()
}

func (r *dashboardRun) logText() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.log.String()
}

// pageToken reads the token from the meta tag of the page served at u.
func pageToken(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`<meta name="gocaffe-token" content="([A-Z2-7]+)">`).FindSubmatch(b)
	if resp.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("GET %s: %s, no token in the page:\n%.500s", u, resp.Status, b)
	}
	return string(m[1])
}

// apiToken is the token the page sends.
func (r *dashboardRun) apiToken(t *testing.T) string {
	t.Helper()
	if r.token == "" {
		r.token = pageToken(t, r.url)
	}
	return r.token
}

// request sends method to the dashboard's path with the page's token and
// the headers given, and returns the status and body.
func (r *dashboardRun) request(t *testing.T, method, path string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, r.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(tokenHeader, r.apiToken(t))
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := freshConnections.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v%s", method, path, err, r.diagnosis())
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// freshConnections opens a connection per request: a POST on a kept-alive
// connection that the other end has let go fails with EOF rather than being
// sent again (it is not idempotent), which would fail a test over a
// connection pool's timing rather than the dashboard's answer.
var freshConnections = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// diagnosis is what a failed request's message adds for a gocaffe
// process: whether it is still running, and the end of its log (a request
// cut off by the process ending, or by a server error, shows why there).
func (r *dashboardRun) diagnosis() string {
	if r.cmd == nil || r.cmd.Process == nil {
		return ""
	}
	alive := "running"
	if err := r.cmd.Process.Signal(syscall.Signal(0)); err != nil {
		alive = "ended: " + err.Error()
	}
	return fmt.Sprintf("\ngocaffe %s; its log ends:\n%s", alive, lastLines(r.logText(), 15))
}

func (r *dashboardRun) state(t *testing.T) dashboardState {
	t.Helper()
	code, body := r.request(t, "GET", "api/state")
	var st dashboardState
	if err := json.Unmarshal([]byte(body), &st); code != http.StatusOK || err != nil {
		t.Fatalf("api/state: %d %v\n%.500s", code, err, body)
	}
	return st
}

func (r *dashboardRun) post(t *testing.T, what string) (int, string) {
	t.Helper()
	return r.request(t, "POST", "api/"+what)
}

// waitRows waits until the run's train table has n rows.
func (r *dashboardRun) waitRows(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for len(r.state(t).Train.Rows) < n {
		if time.Now().After(deadline) {
			t.Fatalf("fewer than %d train rows in a minute:\n%s", n, lastLines(r.logText(), 20))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// chromiumPath finds Chromium for the browser tests. Where
// GOCAFFE_REQUIRE_CHROMIUM is set (CI sets it) a missing Chromium fails
// the test, since a skip would hide the dashboard's security checks;
// elsewhere it skips.
func chromiumPath(t *testing.T) string {
	t.Helper()
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("GOCAFFE_REQUIRE_CHROMIUM") != "" {
			t.Fatalf("no chromium, and GOCAFFE_REQUIRE_CHROMIUM is set (Debian: chromium)")
		}
		t.Skip("no chromium here (Debian: chromium)")
	}
	return chromium
}

// browse runs headless Chromium with args and returns what it prints
// (--dump-dom: the page's DOM after its scripts ran).
func browse(t *testing.T, chromium string, args ...string) string {
	t.Helper()
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

// dashboardSolver writes a small net whose loss is the top named loss, and
// a solver that would run for ever, displaying every 1000 iterations.
func dashboardSolver(t *testing.T, loss string) string {
	dir := t.TempDir()
	net := filepath.Join(dir, "net.prototxt")
	os.WriteFile(net, fmt.Appendf(nil, `name: "Teacher"
layer { name: "data" type: "DummyData" top: "x" top: "y"
  dummy_data_param { shape { dim: 16 dim: 8 } shape { dim: 16 dim: 3 } data_filler { type: "gaussian" std: 1 } } }
layer { name: "ip1" type: "InnerProduct" bottom: "x" top: "h" inner_product_param { num_output: 16 weight_filler { type: "gaussian" std: 0.1 } } }
layer { name: "relu" type: "ReLU" bottom: "h" top: "h" }
layer { name: "ip2" type: "InnerProduct" bottom: "h" top: "guess" inner_product_param { num_output: 3 weight_filler { type: "gaussian" std: 0.1 } } }
layer { name: "loss" type: "EuclideanLoss" bottom: "guess" bottom: "y" top: %q }
`, loss), 0o644)
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
	chromium := chromiumPath(t)
	r := startDashboard(t, "train", "-solver", dashboardSolver(t, "loss"), "-ui", "127.0.0.1:0")
	r.waitRows(t, 5)
	browse := func(args ...string) string { return browse(t, chromium, args...) }
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
	if code, _, stderr := runCmd("train", "-solver", dashboardSolver(t, "loss"), "-ui", "0.0.0.0:0"); code != 1 || !strings.Contains(stderr, "-ui_public") {
		t.Errorf("public address without -ui_public: exit %d, %s", code, lastLines(stderr, 2))
	}
}

// hostileName is an output name written as HTML that runs script where it
// is inserted as HTML (without spaces, which end a name in the log; the
// quotes end src's value so that onerror is an attribute of its own).
// Where it ran, the page's body would carry data-pwned (it did, before the
// page built its charts with the DOM).
const hostileName = `<img/src="x"/onerror=document.body.dataset.pwned=1>`

// evilPage is another origin's page, open in the same browser as the
// dashboard at dash: it tries to stop and snapshot the run (a script's
// POSTs, a form's) and to read its state and its page (for the token), and
// writes what it got into its body's data-result.
const evilPage = `<!doctype html>
<html><body>
<iframe name="sink"></iframe>
<form id="form" method="post" target="sink" action="%[1]sapi/stop"></form>
<script>
const dash = %[1]q, out = {};
async function attempt(name, f) {
  try { out[name] = await f(); } catch (e) { out[name] = "refused: " + e.name; }
}
// post sends a POST that needs no CORS preflight; its answer is opaque
// (or refused, by Cross-Origin-Resource-Policy) but it is sent.
async function post(what) {
  try { await fetch(dash + "api/" + what, {method: "POST", mode: "no-cors"}); } catch (e) {}
  return "sent";
}
(async () => {
  await attempt("stop", () => post("stop"));
  await attempt("snapshot", () => post("snapshot"));
  await attempt("stopWithHeader", async () => {
    const r = await fetch(dash + "api/stop", {method: "POST", headers: {"X-Gocaffe-Token": "guess"}});
    return "answered " + r.status;
  });
  await attempt("state", async () => "read " + (await (await fetch(dash + "api/state")).text()).slice(0, 60));
  await attempt("page", async () => "read " + (await (await fetch(dash)).text()).slice(0, 60));
  document.getElementById("form").submit();
  await new Promise(done => setTimeout(done, 1000));
  document.body.dataset.result = JSON.stringify(out);
})();
</script>
</body></html>`

// domText is s as Chromium's --dump-dom writes a text node.
func domText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// TestDashboardSecurityInChromium: a live run whose loss top is named
// with HTML, its dashboard opened in headless Chromium beside pages of
// other origins. Its own page shows the name as text (nothing runs); a
// page of another origin cannot stop or snapshot the run nor read its
// state or page; a name rebound to 127.0.0.1 (DNS rebinding) is refused
// the page and its token; the page's own Stop still works.
func TestDashboardSecurityInChromium(t *testing.T) {
	chromium := chromiumPath(t)
	r := startDashboard(t, "train", "-solver", dashboardSolver(t, hostileName), "-ui", "127.0.0.1:0")
	r.waitRows(t, 3)
	token := r.apiToken(t)

	dom := browse(t, chromium, "--dump-dom", r.url)
	if strings.Contains(dom, "data-pwned") || strings.Contains(dom, `<img src="x"`) {
		t.Errorf("the output name ran as HTML in the page:\n%.3000s", dom)
	}
	shown := "train " + domText(hostileName)
	if !strings.Contains(dom, ">"+shown+"</text>") {
		t.Errorf("the output name is not shown as text (want %q in a <text>):\n%.3000s", shown, dom)
	}

	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, evilPage, r.url)
	}))
	defer evil.Close()
	dom = browse(t, chromium, "--dump-dom", evil.URL)
	m := regexp.MustCompile(`data-result="([^"]*)"`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the other origin's page did not finish:\n%.3000s", dom)
	}
	var got map[string]string
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &got); err != nil {
		t.Fatal(err)
	}
	t.Logf("the other origin's page got %v", got)
	for _, what := range []string{"state", "page"} {
		if !strings.HasPrefix(got[what], "refused") {
			t.Errorf("another origin reads the dashboard's %s: %q", what, got[what])
		}
	}

	// DNS rebinding: Chromium resolves the attacker's name to 127.0.0.1,
	// so that its origin (evil.test:port) reaches the dashboard.
	_, port, _ := net.SplitHostPort(strings.TrimSuffix(strings.TrimPrefix(r.url, "http://"), "/"))
	rebound := "http://evil.test:" + port + "/"
	dom = browse(t, chromium, "--host-resolver-rules=MAP evil.test 127.0.0.1", "--dump-dom", rebound)
	if strings.Contains(dom, token) || strings.Contains(dom, `id="charts"`) || !strings.Contains(dom, "localhost only") {
		t.Errorf("%s (a rebound name) is served the dashboard:\n%.2000s", rebound, dom)
	}

	before := r.state(t).Iter
	time.Sleep(500 * time.Millisecond)
	if log := r.logText(); r.cmd.ProcessState != nil || strings.Contains(log, "Dashboard asked") {
		t.Fatalf("the other origin's requests reached the solver:\n%s", lastLines(log, 10))
	}
	if after := r.state(t).Iter; after <= before {
		t.Errorf("the run does not go on after the other origin's page: iteration %v, then %v", before, after)
	}
	if code, body := r.post(t, "stop"); code != http.StatusOK {
		t.Fatalf("Stop with the page's token: %d %s", code, body)
	}
	if err := r.cmd.Wait(); err != nil || !strings.Contains(r.logText(), "Dashboard asked: stop") {
		t.Errorf("the page's own Stop: %v\n%s", err, lastLines(r.logText(), 6))
	}
}

// TestUIHostileLogInChromium: `gocaffe ui` over a log whose file name and
// output names are HTML that would run as script; the page shows them as
// text.
func TestUIHostileLogInChromium(t *testing.T) {
	chromium := chromiumPath(t)
	dir := t.TempDir()
	title := "<svg onload=document.body.dataset.pwned=2>.log"
	log := strings.ReplaceAll(caffeLog, "accuracy", hostileName)
	if err := os.WriteFile(filepath.Join(dir, title), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	r := startDashboard(t, "ui", "-ui", "127.0.0.1:0", dir)
	dom := browse(t, chromium, "--dump-dom", r.url)
	if strings.Contains(dom, "data-pwned") || strings.Contains(dom, `<img src="x"`) || strings.Contains(dom, "<svg onload") {
		t.Errorf("a name in the log ran as HTML in the page:\n%.3000s", dom)
	}
	for _, want := range []string{`<h1 id="title">` + domText(title) + `</h1>`, ">test " + domText(hostileName) + "</text>"} {
		if !strings.Contains(dom, want) {
			t.Errorf("not shown as text: want %s in:\n%.3000s", want, dom)
		}
	}
}

// TestDashboardStopIsAnswered: the solver takes the Stop button's request
// and ends the run (closing the dashboard) at once, as a small net does;
// the request is still answered "stop requested", not cut off.
func TestDashboardStopIsAnswered(t *testing.T) {
	var logged bytes.Buffer
	prev := glog.SetOutput(&logged)
	defer glog.SetOutput(prev)
	addr := regexp.MustCompile(`Dashboard on (http://\S+)`)
	for range 50 {
		d := newTestFeedDashboard(dashboardRowLimit)
		d.live, d.actions = true, make(chan solver.Action, 1)
		logged.Reset()
		stop, err := serveDashboard("127.0.0.1:0", &uiAccessFlags{}, d)
		if err != nil {
			t.Fatal(err)
		}
		m := addr.FindStringSubmatch(logged.String())
		if m == nil {
			stop()
			t.Fatalf("no address logged: %q", logged.String())
		}
		stopped := make(chan struct{})
		go func() { // the solver: take the request, end the run
			<-d.actions
			stop()
			close(stopped)
		}()
		r := &dashboardRun{url: m[1]}
		code, body := r.post(t, "stop")
		<-stopped
		if code != http.StatusOK || body != "stop requested" {
			t.Fatalf("Stop: %d %q", code, body)
		}
	}
}
