package main

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/solver"
)

// testDashboard serves a live dashboard (caffeLog in its feed) on
// 127.0.0.1 with the access rules of a loopback address (local) or of a
// public one, basic authentication when user is not empty.
func testDashboard(t *testing.T, local bool, user, password string) (*httptest.Server, *dashboard, *dashboardAccess) {
	t.Helper()
	d := &dashboard{rowLimit: dashboardRowLimit, live: true, actions: make(chan solver.Action, 1)}
	d.feed = d.newFeed(2026)
	d.Write([]byte(caffeLog))
	srv := httptest.NewUnstartedServer(nil)
	a := newDashboardAccess(srv.Listener.Addr().(*net.TCPAddr).Port, local, user, password)
	srv.Config.Handler = a.wrap(d.handler(a.token))
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, d, a
}

// send makes a request of srv with the given Host (srv's own when "") and
// headers (name, value, ...), and returns the response with its body read.
func send(t *testing.T, srv *httptest.Server, method, path, host string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestDashboardHostOriginToken: on a loopback address the dashboard
// answers only Host headers naming it (not a rebound name), refuses
// requests from other origins, and serves /api/ only with the run's token,
// which its page carries.
func TestDashboardHostOriginToken(t *testing.T) {
	srv, d, a := testDashboard(t, true, "", "")
	port := strconv.Itoa(a.port)
	self := "127.0.0.1:" + port
	tok := a.token
	for _, c := range []struct {
		name, method, path, host string
		header                   []string
		want                     int
	}{
		{"the page", "GET", "/", self, nil, 200},
		{"the page as localhost", "GET", "/", "localhost:" + port, nil, 200},
		{"the page as [::1]", "GET", "/", "[::1]:" + port, nil, 200},
		{"the page followed from a link elsewhere", "GET", "/", self, []string{"Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "navigate"}, 200},
		{"the page fetched by another site", "GET", "/", self, []string{"Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "cors"}, 403},
		{"the page under a rebound name", "GET", "/", "evil.test:" + port, nil, 403},
		{"the page under another port", "GET", "/", "127.0.0.1:1", nil, 403},
		{"the page without a port (80)", "GET", "/", "localhost", nil, 403},
		{"a subdomain of localhost", "GET", "/", "evil.localhost:" + port, nil, 403},
		{"the script", "GET", "/dashboard.js", self, nil, 200},
		{"state", "GET", "/api/state", self, []string{tokenHeader, tok}, 200},
		{"state without the token", "GET", "/api/state", self, nil, 403},
		{"state with a wrong token", "GET", "/api/state", self, []string{tokenHeader, tok + "x"}, 403},
		{"state under a rebound name", "GET", "/api/state", "evil.test:" + port, []string{tokenHeader, tok}, 403},
		{"state from another origin", "GET", "/api/state", self, []string{tokenHeader, tok, "Origin", "http://evil.test"}, 403},
		{"state from another site", "GET", "/api/state", self, []string{tokenHeader, tok, "Sec-Fetch-Site", "cross-site"}, 403},
		{"stop without the token", "POST", "/api/stop", self, nil, 403},
		{"stop from another origin", "POST", "/api/stop", self, []string{tokenHeader, tok, "Origin", "http://evil.test:" + port}, 403},
		{"stop from a sandboxed page", "POST", "/api/stop", self, []string{tokenHeader, tok, "Origin", "null"}, 403},
		{"stop from another port of this host", "POST", "/api/stop", self, []string{tokenHeader, tok, "Origin", "http://127.0.0.1:1", "Sec-Fetch-Site", "same-site"}, 403},
		{"snapshot without the token", "POST", "/api/snapshot", self, []string{"Origin", "http://" + self}, 403},
	} {
		resp, body := send(t, srv, c.method, c.path, c.host, c.header...)
		if resp.StatusCode != c.want {
			t.Errorf("%s: %d %q, want %d", c.name, resp.StatusCode, body, c.want)
		}
		if resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%s: allows another origin (CORS)", c.name)
		}
	}
	select {
	case got := <-d.actions:
		t.Fatalf("a refused request reached the solver: %v", got)
	default:
	}
	resp, body := send(t, srv, "POST", "/api/stop", self, tokenHeader, tok, "Origin", "http://"+self, "Sec-Fetch-Site", "same-origin")
	if resp.StatusCode != 200 || len(d.actions) != 1 || <-d.actions != solver.Stop {
		t.Errorf("the page's own stop: %d %q", resp.StatusCode, body)
	}
	resp, _ = send(t, srv, "OPTIONS", "/api/stop", self, "Origin", "http://evil.test", "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", tokenHeader)
	if resp.Header.Get("Access-Control-Allow-Origin") != "" || resp.Header.Get("Access-Control-Allow-Headers") != "" {
		t.Errorf("a CORS preflight is granted: %v", resp.Header)
	}
	resp, page := send(t, srv, "GET", "/", self)
	if !strings.Contains(page, `<meta name="gocaffe-token" content="`+tok+`">`) {
		t.Errorf("the page does not carry the run's token:\n%s", page)
	}
	if a2 := newDashboardAccess(a.port, true, "", ""); a2.token == tok || len(tok) < 26 {
		t.Errorf("tokens are not random per run: %q, %q", tok, a2.token)
	}
}

// TestDashboardSecurityHeaders: every answer forbids inline script,
// framing and type sniffing; the page has no inline script, style or event
// handler for that policy to forbid, and its script inserts nothing as
// HTML.
func TestDashboardSecurityHeaders(t *testing.T) {
	srv, _, a := testDashboard(t, true, "", "")
	for _, c := range []struct{ path, host string }{{"/", ""}, {"/dashboard.js", ""}, {"/api/state", ""}, {"/", "evil.test"}} {
		resp, _ := send(t, srv, "GET", c.path, c.host, tokenHeader, a.token)
		csp := resp.Header.Get("Content-Security-Policy")
		script := regexp.MustCompile(`script-src ([^;]*)`).FindStringSubmatch(csp)
		if script == nil || strings.Contains(script[1], "unsafe") || !strings.Contains(csp, "default-src 'none'") ||
			!strings.Contains(csp, "frame-ancestors 'none'") || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s (Host %q): Content-Security-Policy %q, X-Content-Type-Options %q", c.path, c.host, csp, resp.Header.Get("X-Content-Type-Options"))
		}
	}
	for _, bad := range []*regexp.Regexp{regexp.MustCompile(`<script(\s[^>]*)?>[^<]*\S[^<]*</script>|<script>`), regexp.MustCompile(`(?i)<style|\son[a-z]+=|style=`)} {
		if m := bad.Find(dashboardPage); m != nil {
			t.Errorf("the page has inline script or style: %s", m)
		}
	}
	if m := regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function`).Find(dashboardScript); m != nil {
		t.Errorf("the page's script inserts HTML or evaluates text: %s", m)
	}
}

// TestDashboardPublicToken: on an address others reach, every request
// needs the token (the printed link's query, then its cookie, or the
// header), whatever the Host; /api/ needs the header itself.
func TestDashboardPublicToken(t *testing.T) {
	srv, _, a := testDashboard(t, false, "", "")
	if resp, _ := send(t, srv, "GET", "/", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the page without the token: %d", resp.StatusCode)
	}
	if resp, _ := send(t, srv, "GET", "/?token=x"+a.token, ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the page with a wrong token: %d", resp.StatusCode)
	}
	if resp, _ := send(t, srv, "GET", "/net.svg", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the diagram without the token: %d", resp.StatusCode)
	}
	resp, page := send(t, srv, "GET", "/?token="+a.token, "gpu-box.example:8080")
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == a.cookie {
			cookie = c
		}
	}
	if resp.StatusCode != 200 || !strings.Contains(page, a.token) || cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode {
		t.Fatalf("the printed link: %d, cookie %v", resp.StatusCode, cookie)
	}
	if resp, _ := send(t, srv, "GET", "/dashboard.css", "", "Cookie", cookie.String()); resp.StatusCode != 200 {
		t.Errorf("the page's style with the cookie: %d", resp.StatusCode)
	}
	if resp, _ := send(t, srv, "GET", "/api/state", "", "Cookie", cookie.String()); resp.StatusCode != http.StatusForbidden {
		t.Errorf("state with the cookie but not the header: %d", resp.StatusCode)
	}
	if resp, _ := send(t, srv, "GET", "/api/state", "", tokenHeader, a.token); resp.StatusCode != 200 {
		t.Errorf("state with the header: %d", resp.StatusCode)
	}
}

// TestUIPublicNeedsTokenOrPassword: `gocaffe ui -ui_public` prints a link
// with the token and refuses requests without it; with -ui_auth it asks
// for the file's user and password instead, and the token alone is not
// enough (it is printed nowhere then).
func TestUIPublicNeedsTokenOrPassword(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs")
	os.Mkdir(logs, 0o755)
	os.WriteFile(filepath.Join(logs, "caffe.INFO"), []byte(caffeLog), 0o644)

	r := startDashboard(t, "ui", "-ui", "0.0.0.0:0", "-ui_public", logs)
	if r.token == "" {
		t.Fatalf("no token in the printed link:\n%s", r.logText())
	}
	if resp, err := http.Get(r.url); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the page without the token: %v %v", resp, err)
	}
	if got := pageToken(t, r.url+"?token="+r.token); got != r.token {
		t.Errorf("the page's token %q is not the link's %q", got, r.token)
	}
	if st := r.state(t); len(st.Train.Rows) != 3 {
		t.Errorf("state with the token: %+v", st)
	}

	auth := filepath.Join(dir, "auth")
	os.WriteFile(auth, []byte("alice:correct horse\n"), 0o600)
	r = startDashboard(t, "ui", "-ui", "0.0.0.0:0", "-ui_public", "-ui_auth", auth, logs)
	if r.token != "" || strings.Contains(r.logText(), "token=") {
		t.Errorf("the token is printed with -ui_auth:\n%s", r.logText())
	}
	get := func(user, password, query string) *http.Response {
		req, _ := http.NewRequest("GET", r.url+query, nil)
		if user != "" {
			req.SetBasicAuth(user, password)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := get("", "", ""); resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic") {
		t.Errorf("no password: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	if resp := get("alice", "wrong", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a wrong password: %d", resp.StatusCode)
	}
	if resp := get("alice", "correct horse", ""); resp.StatusCode != 200 {
		t.Errorf("the right password: %d", resp.StatusCode)
	}

	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte("no colon here\n"), 0o600)
	if code, _, stderr := runCmd("ui", "-ui", "0.0.0.0:0", "-ui_public", "-ui_auth", bad, logs); code != 1 || !strings.Contains(stderr, "-ui_auth "+bad+": want user:password") {
		t.Errorf("a bad -ui_auth file: exit %d, %s", code, lastLines(stderr, 2))
	}
}
