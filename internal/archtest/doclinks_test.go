package archtest

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// pendingPages are pages the README links to that are being written on
// other branches. While one is missing its links are logged, not failed;
// once it exists its links and headings are checked like any other page's,
// and its entry here can go.
var pendingPages = []string{
	"docs/configuration.md",
	"docs/architecture.md",
	"docs/writing-a-layer.md",
}

// TestDocLinks fails when a relative link in README.md or a page under
// docs/ points at a file or folder the repository lacks, or at a heading
// (#anchor) a Markdown page lacks, as GitHub would render them. Links to
// other sites (http:, mailto:, ...) are not followed.
func TestDocLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	pages := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			pages = append(pages, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]map[string]bool{} // page -> its anchors, read once
	anchorsOf := func(page string) (map[string]bool, error) {
		if a, ok := anchors[page]; ok {
			return a, nil
		}
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
		if err != nil {
			return nil, err
		}
		a := markdownAnchors(string(b))
		anchors[page] = a
		return a, nil
	}
	checked := map[string]int{}
	for _, page := range pages {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range markdownLinks(string(b)) {
			if err := checkLink(root, page, l.target, anchorsOf); err != nil {
				if pending := (*pendingError)(nil); errors.As(err, &pending) {
					t.Logf("%s:%d: %s", page, l.line, err)
					continue
				}
				t.Errorf("%s:%d: link %q: %v", page, l.line, l.target, err)
			}
			checked[page]++
		}
	}
	// A parser that finds nothing would pass every page.
	if checked["README.md"] < 10 {
		t.Errorf("found %d relative links in README.md; the link parser is broken", checked["README.md"])
	}
}

// pendingError is a link to one of pendingPages that does not exist yet.
type pendingError struct{ page string }

func (e *pendingError) Error() string {
	return fmt.Sprintf("links to %s, which is not written yet (pendingPages)", e.page)
}

// checkLink checks one link target written in page (a slash path from the
// repository root).
func checkLink(root, page, target string, anchorsOf func(string) (map[string]bool, error)) error {
	if hasScheme(target) {
		return nil
	}
	rawPath, fragment, _ := strings.Cut(target, "#")
	p, err := url.PathUnescape(rawPath)
	if err != nil {
		return err
	}
	var dest string // slash path from the root
	switch {
	case p == "":
		dest = page
	case strings.HasPrefix(p, "/"):
		dest = path.Clean(strings.TrimPrefix(p, "/"))
	default:
		dest = path.Join(path.Dir(page), p)
	}
	if dest == ".." || strings.HasPrefix(dest, "../") {
		return fmt.Errorf("points outside the repository (%s)", dest)
	}
	info, err := os.Stat(filepath.Join(root, filepath.FromSlash(dest)))
	if err != nil {
		if os.IsNotExist(err) && slices.Contains(pendingPages, dest) {
			return &pendingError{dest}
		}
		return fmt.Errorf("no file %s", dest)
	}
	if fragment == "" {
		return nil
	}
	if info.IsDir() || !strings.HasSuffix(dest, ".md") {
		return nil // GitHub's line anchors and the like: not checked
	}
	a, err := anchorsOf(dest)
	if err != nil {
		return err
	}
	if !a[strings.ToLower(fragment)] {
		return fmt.Errorf("%s has no heading #%s", dest, fragment)
	}
	return nil
}

var schemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

func hasScheme(target string) bool { return schemeRE.MatchString(target) }

// docLink is a link target and the line it is on.
type docLink struct {
	target string
	line   int
}

var (
	// inlineLinkRE matches [text](target) and ![alt](target), with an
	// optional "title"; the text may hold one level of brackets.
	inlineLinkRE = regexp.MustCompile(`!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^()\s<>]+)>?(?:\s+"[^"]*")?\s*\)`)
	// refDefRE matches a reference definition: [label]: target
	refDefRE   = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$`)
	codeSpanRE = regexp.MustCompile("`+[^`]*`+")
	fenceRE    = regexp.MustCompile("^ {0,3}(```|~~~)")
	headingRE  = regexp.MustCompile(`^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$`)
	htmlIDRE   = regexp.MustCompile(`<a\s+(?:[^>]*\s)?(?:name|id)="([^"]+)"`)
)

// markdownLinks returns the link targets of a Markdown text outside code
// blocks and code spans.
func markdownLinks(text string) []docLink {
	var links []docLink
	inFence := ""
	for i, line := range strings.Split(text, "\n") {
		if m := fenceRE.FindStringSubmatch(line); m != nil {
			switch inFence {
			case "":
				inFence = m[1]
			case m[1]:
				inFence = ""
			}
			continue
		}
		if inFence != "" {
			continue
		}
		line = codeSpanRE.ReplaceAllString(line, "")
		for _, m := range inlineLinkRE.FindAllStringSubmatch(line, -1) {
			links = append(links, docLink{m[1], i + 1})
		}
		if m := refDefRE.FindStringSubmatch(line); m != nil {
			links = append(links, docLink{m[1], i + 1})
		}
	}
	return links
}

// markdownAnchors returns the anchors of a Markdown page's headings, as
// GitHub makes them (lower case, punctuation dropped, spaces to hyphens, a
// repeated one numbered -1, -2, ...), and of its <a name/id> tags.
func markdownAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	inFence := ""
	for _, line := range strings.Split(text, "\n") {
		if m := fenceRE.FindStringSubmatch(line); m != nil {
			switch inFence {
			case "":
				inFence = m[1]
			case m[1]:
				inFence = ""
			}
			continue
		}
		if inFence != "" {
			continue
		}
		for _, m := range htmlIDRE.FindAllStringSubmatch(line, -1) {
			anchors[strings.ToLower(m[1])] = true
		}
		m := headingRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		slug := headingSlug(m[2])
		if n := seen[slug]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}

var mdLinkTextRE = regexp.MustCompile(`!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\([^)]*\)`)

// headingSlug is GitHub's anchor for a heading's text: links become their
// text, then letters, digits, '_', '-' and spaces are kept (lower case)
// and spaces become hyphens.
func headingSlug(heading string) string {
	heading = mdLinkTextRE.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestHeadingSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"Caffe's forks":                  "caffes-forks",
		"Matrix products (GEMM)":         "matrix-products-gemm",
		"GPU (H100)":                     "gpu-h100",
		"`convert_annoset`, and more":    "convert_annoset-and-more",
		"Caffe, gocaffe and PyTorch":     "caffe-gocaffe-and-pytorch",
		"[Links](x.md) in a heading":     "links-in-a-heading",
		"Several GPUs, several machines": "several-gpus-several-machines",
	} {
		if got := headingSlug(heading); got != want {
			t.Errorf("headingSlug(%q) = %q, want %q", heading, got, want)
		}
	}
	a := markdownAnchors("# A\n\n```\n# not a heading\n```\n## A\n<a id=\"Here\"></a>\n")
	for _, want := range []string{"a", "a-1", "here"} {
		if !a[want] {
			t.Errorf("anchors %v lack %q", a, want)
		}
	}
	if a["not-a-heading"] {
		t.Error("a # line in a code block made an anchor")
	}
	links := markdownLinks("see [a](a.md#x) and ![b](b.png \"t\")\n`[c](c.md)`\n```\n[d](d.md)\n```\n[e]: e.md\n")
	var got []string
	for _, l := range links {
		got = append(got, l.target)
	}
	if want := []string{"a.md#x", "b.png", "e.md"}; !slices.Equal(got, want) {
		t.Errorf("links %q, want %q", got, want)
	}
}
