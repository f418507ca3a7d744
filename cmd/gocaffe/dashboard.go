package main

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
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

//go:embed ui/index.html
var dashboardPage []byte

// dashboard follows a training log and answers the page's requests.
type dashboard struct {
	mu      sync.Mutex
	feed    *logFeed
	partial []byte // a log line not yet complete
	title   string
	solver  string
	netSVG  []byte
	maxIter int
	live    bool               // a run this process trains: the buttons work
	actions chan solver.Action // the buttons' requests, read by the solver
	logDir  string             // `gocaffe ui`: the directory of logs to show
}

// Write takes the glog output of the run, line by line.
func (d *dashboard) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.partial = append(d.partial, p...)
	for {
		i := bytes.IndexByte(d.partial, '\n')
		if i < 0 {
			break
		}
		d.feed.line(string(d.partial[:i]))
		d.partial = d.partial[i+1:]
	}
	return len(p), nil
}

// jsonTable is a logTable for the page: its columns and rows, missing or
// NaN values as null.
type jsonTable struct {
	Columns []string     `json:"columns"`
	Rows    [][]*float64 `json:"rows"`
}

func tableJSON(t *logTable) jsonTable {
	out := jsonTable{Columns: []string{}, Rows: [][]*float64{}}
	if len(t.rows) == 0 {
		return out
	}
	out.Columns = t.rows[0].names
	for _, r := range t.rows {
		row := make([]*float64, len(out.Columns))
		for i, c := range out.Columns {
			if v, ok := r.values[c]; ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
				row[i] = &v
			}
		}
		out.Rows = append(out.Rows, row)
	}
	return out
}

// dashboardState is what the page polls.
type dashboardState struct {
	Title   string    `json:"title"`
	Iter    float64   `json:"iter"`
	MaxIter int       `json:"max_iter"`
	Rate    float64   `json:"rate"` // iterations per second, recently
	ETA     float64   `json:"eta"`  // seconds left at that rate
	Live    bool      `json:"live"`
	Solver  string    `json:"solver"`
	Train   jsonTable `json:"train"`
	Test    jsonTable `json:"test"`
}

func (d *dashboard) state() (dashboardState, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.logDir != "" {
		if err := d.reload(); err != nil {
			return dashboardState{}, err
		}
	}
	train, test := d.feed.tables()
	st := dashboardState{Title: d.title, Iter: math.Max(d.feed.iter, 0), MaxIter: d.maxIter, Live: d.live, Solver: d.solver,
		Train: tableJSON(train), Test: tableJSON(test)}
	if rows := train.rows; len(rows) >= 2 {
		a, b := rows[max(0, len(rows)-6)], rows[len(rows)-1]
		if dt := b.values["Seconds"] - a.values["Seconds"]; dt > 0 {
			st.Rate = (b.values["NumIters"] - a.values["NumIters"]) / dt
		}
	}
	if st.Rate > 0 && d.maxIter > 0 {
		st.ETA = math.Max(0, float64(d.maxIter)-st.Iter) / st.Rate
	}
	return st, nil
}

// reload re-reads the newest log of logDir (`gocaffe ui`).
func (d *dashboard) reload() error {
	entries, err := os.ReadDir(d.logDir)
	if err != nil {
		return err
	}
	var newest string
	var when time.Time
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		if info.ModTime().After(when) {
			newest, when = filepath.Join(d.logDir, e.Name()), info.ModTime()
		}
	}
	if newest == "" {
		return fmt.Errorf("no log file in %s", d.logDir)
	}
	b, err := os.ReadFile(newest)
	if err != nil {
		return err
	}
	d.feed, d.title = newLogFeed(when.Year()), filepath.Base(newest)
	for _, line := range bytes.Split(b, []byte("\n")) {
		d.feed.line(string(line))
	}
	return nil
}

// handler serves the page, its state, the net's diagram and the buttons.
func (d *dashboard) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(dashboardPage)
	})
	mux.HandleFunc("GET /api/state", func(w http.ResponseWriter, r *http.Request) {
		st, err := d.state()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(st)
	})
	mux.HandleFunc("GET /net.svg", func(w http.ResponseWriter, r *http.Request) {
		if d.netSVG == nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "image/svg+xml")
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

// serveDashboard listens on addr (a missing host means localhost; another
// host than loopback only with public, since the page can stop training)
// and serves d until the returned function is called.
func serveDashboard(addr string, public bool, d *dashboard) (stop func(), err error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("-ui %q: want host:port or :port: %w", addr, err)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if ip := net.ParseIP(host); (ip == nil && host != "localhost") || (ip != nil && !ip.IsLoopback()) {
		if !public {
			return nil, fmt.Errorf("-ui %q is not on this machine only: add -ui_public to serve it to others (the page can stop training)", addr)
		}
	}
	l, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, fmt.Errorf("-ui: %w", err)
	}
	srv := &http.Server{Handler: d.handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			glog.Errorf("dashboard: %v", err)
		}
	}()
	glog.Infof("Dashboard on http://%s/", l.Addr())
	return func() { srv.Close() }, nil
}

// runUI serves the dashboard over the newest log in a directory.
func runUI(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("ui", stderr)
	addr := fs.String("ui", "127.0.0.1:8080", "where to serve the dashboard")
	public := fs.Bool("ui_public", false, "allow an address other machines can reach")
	setUsage(fs, stderr, "gocaffe ui [-ui 127.0.0.1:8080] LOGDIR",
		"Serves the dashboard over the newest training log in LOGDIR, read again at each refresh.")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError(fs, stderr, "want the log directory")
	}
	d := &dashboard{logDir: pos[0]}
	if err := d.reload(); err != nil {
		return err
	}
	if _, err := serveDashboard(*addr, *public, d); err != nil {
		return err
	}
	select {} // until interrupted
}

// newTrainDashboard makes the dashboard of a run of the solver in
// solverFile: its settings, and the diagram of its train net when it can be
// read (a net file, or the solver's own net_param).
func newTrainDashboard(solverFile string, p *caffepb.SolverParameter) *dashboard {
	d := &dashboard{feed: newLogFeed(time.Now().Year()), title: filepath.Base(solverFile), solver: netspec.Text(p),
		maxIter: int(p.GetMaxIter()), live: true, actions: make(chan solver.Action, 1)}
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
