package main

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/gocaffe/gocaffe/internal/glog"
	"github.com/gocaffe/gocaffe/netproto"
	"github.com/gocaffe/gocaffe/netspec"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/solver"
)

// The dashboard: a page served by gocaffe itself (`train -ui ADDR`, or `ui
// LOGDIR` for finished runs) with the loss, test outputs and learning rate
// as they are logged, the iteration rate and time left, the solver's
// settings, the net's diagram, and Snapshot and Stop buttons (as SIGHUP and
// SIGINT). The page is embedded in the binary and loads nothing from
// elsewhere, so it works offline.
//
// Who may use it is dashboardAccess's (dashboard_access.go); how `gocaffe
// ui` follows a log file is logFollower's (dashboard_follow.go).

// The page, its script and its style: the script is a file of its own
// because the page's Content-Security-Policy forbids inline scripts.
var (
	//go:embed ui/index.html
	dashboardPage []byte
	//go:embed ui/dashboard.js
	dashboardScript []byte
	//go:embed ui/dashboard.css
	dashboardStyle []byte
)

const (
	// dashboardRowLimit bounds the rows kept of each table (train, test)
	// of a run followed: at a display every iteration that is 1000 rows at
	// full resolution and a thinned 2000 over the rest of the run, some
	// hundreds of kilobytes of JSON a poll.
	dashboardRowLimit = 4096
	// maxLogLine bounds one line of the log followed: a longer one (no
	// solver writes one; a corrupt or foreign file may hold gigabytes
	// without a newline) is dropped, up to its end.
	maxLogLine = 1 << 20
)

// dashboard follows a training log and answers the page's requests.
type dashboard struct {
	// mu guards what the log changes. It is taken by Write, which the
	// training's log writer calls with its own lock held, so the requests
	// hold it only to copy a snapshot (snapshot), never to encode or to
	// log: logging under mu would take the two locks in the other order.
	mu       sync.Mutex
	feed     *logFeed
	partial  []byte // a log line not yet complete
	skipping bool   // dropping the rest of a line longer than maxLogLine
	title    string
	problem  string // why the log cannot be followed (`gocaffe ui`), for the page

	// Set before serving, read only afterwards.
	rowLimit int // the tables' limit (logTable); dashboardRowLimit but in tests
	solver   string
	netSVG   []byte
	maxIter  int
	live     bool               // a run this process trains: the buttons work
	actions  chan solver.Action // the buttons' requests, read by the solver
}

// newFeed is an empty feed of the dashboard's bound.
func (d *dashboard) newFeed(year int) *logFeed { return newLogFeed(year).bounded(d.rowLimit) }

// Write takes the glog output of the run.
func (d *dashboard) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.take(p)
	return len(p), nil
}

// take cuts p into lines for the feed, keeping an incomplete last line for
// the next call and dropping lines longer than maxLogLine. Under mu.
func (d *dashboard) take(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		part := p
		if i >= 0 {
			part = p[:i]
		}
		if !d.skipping && len(d.partial)+len(part) > maxLogLine {
			d.skipping, d.partial = true, d.partial[:0]
		}
		if !d.skipping {
			d.partial = append(d.partial, part...)
		}
		if i < 0 {
			return
		}
		if !d.skipping {
			d.feed.line(string(d.partial)) // a line that is not the solver's is no error here
		}
		d.partial, d.skipping = d.partial[:0], false
		p = p[i+1:]
	}
}

// restart begins a new log (`gocaffe ui`: another file, or the same one
// truncated): nothing of the previous one is kept.
func (d *dashboard) restart(title string, year int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.feed, d.title = d.newFeed(year), title
	d.partial, d.skipping = d.partial[:0], false
}

// setProblem says on the page why the log cannot be followed ("" when it
// can).
func (d *dashboard) setProblem(problem string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.problem = problem
}

// tableSnapshot is a table's rows as they stand: the row pointers copied,
// the rows themselves shared (a pushed row does not change).
type tableSnapshot struct {
	rows    []*logRow
	firstLR float64
}

func snapshotTable(t *logTable) tableSnapshot {
	return tableSnapshot{rows: slices.Clone(t.rows), firstLR: t.firstLR()}
}

// dashboardSnapshot is what state needs of the feed, copied under mu.
type dashboardSnapshot struct {
	title, problem string
	iter           float64
	train, test    tableSnapshot
}

// snapshot copies the feed's state: a copy of two slices of at most
// rowLimit pointers, the only work done under mu for a request.
func (d *dashboard) snapshot() dashboardSnapshot {
	d.mu.Lock()
	defer d.mu.Unlock()
	return dashboardSnapshot{title: d.title, problem: d.problem, iter: d.feed.iter,
		train: snapshotTable(&d.feed.train), test: snapshotTable(&d.feed.test)}
}

// jsonNum is a number for the page: null when it is missing (NaN) or not
// finite, which JSON cannot carry (encoding/json fails on them).
type jsonNum float64

func (n jsonNum) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

// finite is v, or 0 when v is NaN or infinite.
func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// jsonTable is a logTable for the page: its columns and rows.
type jsonTable struct {
	Columns []string    `json:"columns"`
	Rows    [][]jsonNum `json:"rows"`
}

func tableJSON(t tableSnapshot) jsonTable {
	out := jsonTable{Columns: []string{}, Rows: make([][]jsonNum, 0, len(t.rows))}
	if len(t.rows) == 0 {
		return out
	}
	out.Columns = t.rows[0].names
	for _, r := range t.rows {
		row := make([]jsonNum, len(out.Columns))
		for i, c := range out.Columns {
			v, ok := r.values[c]
			switch {
			case !ok:
				v = math.NaN()
			case r.seq == 0 && c == "LearningRate":
				v = t.firstLR
			}
			row[i] = jsonNum(v)
		}
		out.Rows = append(out.Rows, row)
	}
	return out
}

// dashboardState is what the page polls.
type dashboardState struct {
	Title   string    `json:"title"`
	Problem string    `json:"problem,omitempty"` // why the log cannot be followed
	Iter    float64   `json:"iter"`
	MaxIter int       `json:"max_iter"`
	Rate    float64   `json:"rate"` // iterations per second, recently
	ETA     float64   `json:"eta"`  // seconds left at that rate
	Live    bool      `json:"live"`
	Solver  string    `json:"solver"`
	Train   jsonTable `json:"train"`
	Test    jsonTable `json:"test"`
}

// state is the page's state, built from a snapshot outside mu.
func (d *dashboard) state() dashboardState {
	s := d.snapshot()
	st := dashboardState{Title: s.title, Problem: s.problem, Iter: math.Max(finite(s.iter), 0), MaxIter: d.maxIter,
		Live: d.live, Solver: d.solver, Train: tableJSON(s.train), Test: tableJSON(s.test)}
	if rows := s.train.rows; len(rows) >= 2 {
		a, b := rows[max(0, len(rows)-6)], rows[len(rows)-1]
		if dt := b.values["Seconds"] - a.values["Seconds"]; dt > 0 {
			st.Rate = finite((b.values["NumIters"] - a.values["NumIters"]) / dt)
		}
	}
	if st.Rate > 0 && d.maxIter > 0 {
		st.ETA = finite(math.Max(0, float64(d.maxIter)-st.Iter) / st.Rate)
	}
	return st
}

// writeJSON answers v as JSON, or, when it cannot be encoded, an error that
// the page shows (and the log), rather than a truncated body the page
// cannot read and silently stops on.
func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		glog.Errorf("dashboard: encoding the state: %v", err)
		http.Error(w, "encoding the state: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

// handler serves the page, its script and style, its state, the net's
// diagram and the buttons; access (dashboard_access.go) wraps it.
func (d *dashboard) handler(token string) http.Handler {
	mux := http.NewServeMux()
	page := pageWithToken(token)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(page)
	})
	for _, f := range []struct {
		path, typ string
		body      []byte
	}{{"/dashboard.js", "text/javascript; charset=utf-8", dashboardScript}, {"/dashboard.css", "text/css; charset=utf-8", dashboardStyle}} {
		mux.HandleFunc("GET "+f.path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", f.typ)
			w.Write(f.body)
		})
	}
	mux.HandleFunc("GET /api/state", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, d.state())
	})
	mux.HandleFunc("GET /net.svg", func(w http.ResponseWriter, r *http.Request) {
		if d.netSVG == nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "image/svg+xml")
		w.Header().Set("Content-Security-Policy", svgPolicy)
		w.Write(d.netSVG)
	})
	for path, a := range map[string]solver.Action{"POST /api/snapshot": solver.Snapshot, "POST /api/stop": solver.Stop} {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			if !d.live {
				http.Error(w, "no training runs here", http.StatusConflict)
				return
			}
			select {
			case d.actions <- a:
				fmt.Fprintf(w, "%v requested", a)
			default:
				http.Error(w, "a request is already waiting", http.StatusTooManyRequests)
			}
		})
	}
	return mux
}

// pageWithToken is the page with the run's token in its meta tag, where
// its script reads it (an inline script would need the policy to allow
// inline scripts). The token's characters need no escaping (base32).
func pageWithToken(token string) []byte {
	return bytes.Replace(dashboardPage, []byte("{{TOKEN}}"), []byte(token), 1)
}

// serveDashboard listens on addr (a missing host means localhost; another
// host than loopback only with -ui_public, since the page can stop
// training, and then only with a token or basic authentication) and serves
// d until the returned function is called.
func serveDashboard(addr string, flags *uiAccessFlags, d *dashboard) (stop func(), err error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("-ui %q: want host:port or :port: %w", addr, err)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	local := isLoopbackHost(host)
	if !local && !flags.public {
		return nil, fmt.Errorf("-ui %q is not on this machine only: add -ui_public to serve it to others (the page can stop training)", addr)
	}
	user, password, err := flags.basicAuth()
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, fmt.Errorf("-ui: %w", err)
	}
	served := l.Addr().(*net.TCPAddr).Port
	a := newDashboardAccess(served, local, user, password)
	srv := &http.Server{Handler: a.wrap(d.handler(a.token)), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			glog.Errorf("dashboard: %v", err)
		}
	}()
	a.announce(net.JoinHostPort(host, strconv.Itoa(served))) // the host as asked: 0.0.0.0 rather than [::]
	return func() { shutdownDashboard(srv) }, nil
}

// dashboardDrain bounds how long the end of a run waits for the
// dashboard's requests in flight.
const dashboardDrain = 5 * time.Second

// shutdownDashboard lets the requests in flight finish before the server
// closes. The Stop button's request is one of them: the solver can see it,
// snapshot and return before its handler has written "stop requested",
// and a plain Close would then cut that answer off (the page saw a failed
// request for a stop that happened).
func shutdownDashboard(srv *http.Server) {
	ctx, cancel := context.WithTimeout(context.Background(), dashboardDrain)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		srv.Close()
	}
}

// runUI serves the dashboard over the newest log in a directory.
func runUI(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("ui", stderr)
	addr := fs.String("ui", "127.0.0.1:8080", "where to serve the dashboard")
	access := registerUIAccessFlags(fs)
	setUsage(fs, stderr, "gocaffe ui [-ui 127.0.0.1:8080] [-ui_public [-ui_auth FILE]] LOGDIR",
		"Serves the dashboard over the newest training log in LOGDIR, following it as it grows.")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError(fs, stderr, "want the log directory")
	}
	d := &dashboard{rowLimit: dashboardRowLimit}
	d.feed = d.newFeed(time.Now().Year())
	f := newLogFollower(pos[0], d)
	// The first poll before serving: a log that is there is shown from
	// the first request on (all of it, unless it is large: the follower
	// goes on reading in the background), and a directory with no log is
	// an error now rather than a page that says so.
	if _, err := f.poll(); err != nil {
		return err
	}
	if _, err := serveDashboard(*addr, access, d); err != nil {
		return err
	}
	f.follow(nil) // until interrupted
	return nil
}

// newTrainDashboard makes the dashboard of a run of the solver in
// solverFile: its settings, and the diagram of its train net when it can be
// read (a net file, or the solver's own net_param).
func newTrainDashboard(solverFile string, p *caffepb.SolverParameter) *dashboard {
	d := &dashboard{rowLimit: dashboardRowLimit, title: filepath.Base(solverFile), solver: netspec.Text(p),
		maxIter: int(p.GetMaxIter()), live: true, actions: make(chan solver.Action, 1)}
	d.feed = d.newFeed(time.Now().Year())
	var np *caffepb.NetParameter
	var err error
	switch {
	case p.NetParam != nil:
		np = p.NetParam
	case p.TrainNetParam != nil:
		np = p.TrainNetParam
	case p.GetNet() != "" || p.GetTrainNet() != "":
		path := p.GetNet()
		if path == "" {
			path = p.GetTrainNet()
		}
		np, err = netproto.ReadNetParamsFromTextFile(path, slog.New(slog.DiscardHandler))
	}
	if np != nil && err == nil {
		var g *drawGraph
		if g, err = netGraphOf(np, caffepb.Phase_TRAIN); err == nil {
			var b bytes.Buffer
			if err = g.render("net.svg", false, &b); err == nil {
				d.netSVG = b.Bytes()
			}
		}
	}
	if err != nil {
		glog.Warningf("dashboard: no net diagram: %v", err)
	}
	return d
}
