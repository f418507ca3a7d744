package main

import (
	"crypto/rand"
	"crypto/subtle"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/gocaffe/gocaffe/internal/glog"
)

// Who may use the dashboard. Its page stops and snapshots a run and shows
// the solver's settings and file paths, and the browser that opens it runs
// pages of other sites beside it, which can send requests to any address
// (cross-site request forgery) and can make their own name resolve to
// 127.0.0.1 (DNS rebinding), so:
//
//   - every response forbids inline script, framing, type sniffing and
//     loading by other origins (setSecurityHeaders), so that a name in the
//     log never runs as script and no other page embeds ours;
//   - on a loopback address the Host header must name it (localhost or a
//     loopback IP, and the port served): a rebound name is refused rather
//     than answered as if it were the page's own origin;
//   - a request that says it comes from another origin (Origin, or the
//     browser's Sec-Fetch-Site) is refused, except a plain navigation to
//     the page, whose answer the other origin cannot read;
//   - every /api/ request carries the run's random token in the
//     X-Gocaffe-Token header. The page has it in a meta tag, which another
//     origin's script cannot read, and a custom header turns any
//     cross-origin fetch into a CORS preflight, which is never granted;
//   - on any other address (-ui_public) the names the machine is reached by
//     are unknown, so every request authenticates instead: HTTP basic
//     authentication with -ui_auth, else the token, from the link printed
//     at start (which leaves a cookie for the page's own requests).

// tokenHeader carries the run's token on the page's API requests.
const tokenHeader = "X-Gocaffe-Token"

// pagePolicy is the Content-Security-Policy of everything served but the
// net's diagram: scripts, styles, images and requests of the dashboard's
// own origin only, no inline script or style, no framing.
const pagePolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// svgPolicy is the diagram's: the SVG gonum writes styles its text inline
// and embeds its fonts as data, and nothing in it may run.
const svgPolicy = "default-src 'none'; style-src 'unsafe-inline'; font-src data:; img-src data:; frame-ancestors 'none'"

// uiAccessFlags are the flags that open the dashboard to other machines,
// the same for `train` and `ui`.
type uiAccessFlags struct {
	public   bool
	authFile string
}

func registerUIAccessFlags(fs *flag.FlagSet) *uiAccessFlags {
	f := &uiAccessFlags{}
	fs.BoolVar(&f.public, "ui_public", false, "allow a -ui address other machines can reach (0.0.0.0:8080); "+
		"every request then needs the token in the link printed at start, or -ui_auth's user and password")
	fs.StringVar(&f.authFile, "ui_auth", "", "a file holding user:password, which the dashboard then asks for (HTTP basic authentication) instead of the token")
	return f
}

// maxAuthFile bounds what is read of -ui_auth's file: one line is expected.
const maxAuthFile = 4096

// basicAuth reads -ui_auth's file: user:password on its first line. Empty
// strings without the flag.
func (f *uiAccessFlags) basicAuth() (user, password string, err error) {
	if f.authFile == "" {
		return "", "", nil
	}
	file, err := os.Open(f.authFile)
	if err != nil {
		return "", "", fmt.Errorf("-ui_auth: %w", err)
	}
	defer file.Close()
	b, err := io.ReadAll(io.LimitReader(file, maxAuthFile))
	if err != nil {
		return "", "", fmt.Errorf("-ui_auth: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	user, password, ok := strings.Cut(strings.TrimSuffix(line, "\r"), ":")
	if !ok || user == "" || password == "" {
		return "", "", fmt.Errorf("-ui_auth %s: want user:password on the first line", f.authFile)
	}
	return user, password, nil
}

// dashboardAccess applies the rules above to every request.
type dashboardAccess struct {
	token          string // this run's secret, random
	port           int    // the port served
	local          bool   // a loopback address: Host is checked
	user, password string // basic authentication ("": none)
	cookie         string // the token's cookie: one per port, as cookies are shared by a host's ports
}

func newDashboardAccess(port int, local bool, user, password string) *dashboardAccess {
	return &dashboardAccess{token: rand.Text(), port: port, local: local, user: user, password: password,
		cookie: "gocaffe_token_" + strconv.Itoa(port)}
}

// authenticates says whether every request must prove who sends it: on an
// address others reach, or wherever basic authentication was asked for.
func (a *dashboardAccess) authenticates() bool { return !a.local || a.user != "" }

// announce logs where the dashboard is, and how to get in.
func (a *dashboardAccess) announce(addr string) {
	switch {
	case a.user != "":
		glog.Infof("Dashboard on http://%s/ (HTTP basic authentication as %q)", addr, a.user)
	case !a.local:
		glog.Infof("Dashboard on http://%s/?token=%s (from another machine, with its name or address for the host; "+
			"whoever has this link can use the dashboard, its Stop button included)", addr, a.token)
	default:
		glog.Infof("Dashboard on http://%s/", addr)
	}
}

// wrap applies the rules to every request before next answers it.
func (a *dashboardAccess) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setSecurityHeaders(w.Header())
		if a.local && !localHost(r.Host, a.port) {
			http.Error(w, "this dashboard answers to localhost only: open it as http://localhost:"+strconv.Itoa(a.port)+"/", http.StatusForbidden)
			return
		}
		if why := crossOrigin(r); why != "" {
			http.Error(w, why, http.StatusForbidden)
			return
		}
		if a.authenticates() && !a.authenticated(w, r) {
			return
		}
		if strings.HasPrefix(r.URL.Path, "/api/") && !a.tokenIn(r.Header.Get(tokenHeader)) {
			http.Error(w, "missing or wrong "+tokenHeader+" header (the page sends it)", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// setSecurityHeaders are the headers of every response (see pagePolicy).
// Cache-Control: the page holds the token and the state is live.
func setSecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", pagePolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
}

// localHost says whether a Host header names the loopback address served:
// localhost or a loopback IP, with port (no port: 80).
func localHost(hostHeader string, port int) bool {
	host, p, err := net.SplitHostPort(hostHeader)
	if err != nil { // no port
		host, p = strings.TrimSuffix(strings.TrimPrefix(hostHeader, "["), "]"), "80"
	}
	return p == strconv.Itoa(port) && isLoopbackHost(host)
}

// isLoopbackHost says whether host is localhost or a loopback IP.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// crossOrigin says why a request comes from another origin than the Host
// it names ("" when it does not). Browsers send Origin with every
// cross-origin request and with same-origin POSTs, and Sec-Fetch-Site
// with every request; tools such as curl send neither. A navigation to
// the page itself (a link followed from elsewhere) is let through.
func crossOrigin(r *http.Request) string {
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !strings.EqualFold(u.Host, r.Host) {
			return "cross-origin request refused (Origin " + o + ")"
		}
	}
	site := r.Header.Get("Sec-Fetch-Site")
	if site == "" || site == "same-origin" || site == "none" {
		return ""
	}
	if r.Method == http.MethodGet && r.URL.Path == "/" && r.Header.Get("Sec-Fetch-Mode") == "navigate" {
		return ""
	}
	return "cross-origin request refused (Sec-Fetch-Site " + site + ")"
}

// tokenIn says whether s is the run's token, in constant time.
func (a *dashboardAccess) tokenIn(s string) bool {
	return subtle.ConstantTimeCompare([]byte(s), []byte(a.token)) == 1
}

// authenticated checks a request's credentials, answering it when they
// fail. With basic authentication only that counts (the token is then in
// no log); else the token, as the header, the cookie, or the query of the
// page's link printed at start, which leaves the cookie for the page's
// diagram, script and style (its API requests send the header).
func (a *dashboardAccess) authenticated(w http.ResponseWriter, r *http.Request) bool {
	if a.user != "" {
		u, p, ok := r.BasicAuth()
		if ok && subtle.ConstantTimeCompare([]byte(u), []byte(a.user))&subtle.ConstantTimeCompare([]byte(p), []byte(a.password)) == 1 {
			return true
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="gocaffe dashboard", charset="UTF-8"`)
		http.Error(w, "this dashboard needs its user and password", http.StatusUnauthorized)
		return false
	}
	if a.tokenIn(r.Header.Get(tokenHeader)) {
		return true
	}
	if c, err := r.Cookie(a.cookie); err == nil && a.tokenIn(c.Value) {
		return true
	}
	if r.Method == http.MethodGet && r.URL.Path == "/" && a.tokenIn(r.URL.Query().Get("token")) {
		http.SetCookie(w, &http.Cookie{Name: a.cookie, Value: a.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		return true
	}
	http.Error(w, "this dashboard needs its token: open the link it printed at start (…/?token=…)", http.StatusUnauthorized)
	return false
}
