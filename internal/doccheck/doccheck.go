// Package doccheck finds dead references in the repository's documents, so
// that a moved file or a renamed heading fails a test instead of leaving a
// reader at a dead end.
//
// Three kinds of reference are checked:
//
//   - Markdown links and images, [text](target), in README.md and every .md
//     under docs/: a relative target must exist, and a #fragment on a Markdown
//     target (or on the document itself) must name one of its headings, by
//     GitHub's rules for heading anchors, or an explicit <a id>/<a name>.
//   - § references, written "FILE.md §anchor" (the path optionally in
//     backticks) or, inside a Markdown document, "§anchor" for one of its own
//     headings. The anchor is the heading's GitHub anchor, compared without
//     regard to case: "docs/design.md §api", "docs/decisions.md §close". They
//     are checked in the documents above and in every source file
//     (sourceExts), where a § must always name its document.
//   - Paths quoted in a Markdown code span that name a document or a folder
//     of docs/ (`docs/results/store/store.md`): they must exist too.
//
// Everything inside fenced code blocks is skipped: it is example text.
package doccheck

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// Problem is one dead reference.
type Problem struct {
	File string // slash-separated, relative to the root
	Line int
	Ref  string // the reference as written
	Why  string
}

func (p Problem) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", p.File, p.Line, p.Ref, p.Why)
}

// sourceExts are the files, besides the Markdown documents, whose § references
// are checked.
var sourceExts = []string{".go", ".proto", ".js", ".sh", ".yaml", ".yml"}

// skipDirs are never walked: version control, build output, and the raw
// files of committed runs (JSON and logs, no references).
var skipDirs = []string{".git", "bin", "node_modules", "runs"}

// selfDir is this package: its comments and test fixtures describe and plant
// references, they do not make them.
const selfDir = "internal/doccheck"

// Check walks fsys, the repository's root, and returns every dead reference
// in file order.
func Check(fsys fs.FS) ([]Problem, error) {
	c := &checker{fsys: fsys, anchors: map[string]map[string]bool{}}
	var probs []Problem
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && slices.Contains(skipDirs, d.Name()) || p == selfDir {
				return fs.SkipDir
			}
			return nil
		}
		switch {
		case isDocument(p):
			ps, err := c.document(p)
			probs = append(probs, ps...)
			return err
		case isSource(p):
			ps, err := c.source(p)
			probs = append(probs, ps...)
			return err
		}
		return nil
	})
	return probs, err
}

// isDocument: README.md at the root and Markdown under docs/.
func isDocument(p string) bool {
	return p == "README.md" || strings.HasPrefix(p, "docs/") && strings.HasSuffix(p, ".md")
}

func isSource(p string) bool {
	return slices.Contains(sourceExts, path.Ext(p)) || path.Base(p) == "Makefile"
}

type checker struct {
	fsys    fs.FS
	anchors map[string]map[string]bool // document → its anchors, read once
}

var (
	// linkRe matches an inline link or image; the target stops at the first
	// space (a title may follow) or the closing parenthesis.
	linkRe = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)`)
	// refDefRe matches a reference-style link definition.
	refDefRe = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$`)
	// sectionRe matches a § reference, with the document it names if any.
	// The anchor follows the § at once: a § before a space is prose about
	// the sign, not a reference.
	sectionRe  = regexp.MustCompile("(?:`?([A-Za-z0-9_./-]+\\.md)`?\\s*)?§([\\p{L}\\p{N}_-]+)")
	codeSpanRe = regexp.MustCompile("`+[^`]*`+")
	// pathSpanRe is a code span holding only a path.
	pathSpanRe = regexp.MustCompile("^`([A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*/?)`$")
	headingRe  = regexp.MustCompile(`^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	htmlIDRe   = regexp.MustCompile(`<a\s+(?:[^>]*\s)?(?:id|name)="([^"]+)"`)
)

// lines returns the file's lines with those inside fenced code blocks blanked,
// so that line numbers stay true.
func (c *checker) lines(p string, markdown bool) ([]string, error) {
	b, err := fs.ReadFile(c.fsys, p)
	if err != nil {
		return nil, err
	}
	var out []string
	fence := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20) // generated reports have long lines
	for sc.Scan() {
		line := sc.Text()
		if markdown {
			t := strings.TrimLeft(line, " ")
			switch {
			case fence != "":
				if strings.HasPrefix(t, fence) {
					fence = ""
				}
				line = ""
			case strings.HasPrefix(t, "```"), strings.HasPrefix(t, "~~~"):
				fence = t[:3]
				line = ""
			}
		}
		out = append(out, line)
	}
	return out, sc.Err()
}

func (c *checker) document(p string) ([]Problem, error) {
	lines, err := c.lines(p, true)
	if err != nil {
		return nil, err
	}
	var probs []Problem
	bad := func(i int, ref, why string) {
		probs = append(probs, Problem{File: p, Line: i + 1, Ref: ref, Why: why})
	}
	for i, line := range lines {
		for _, span := range codeSpanRe.FindAllString(line, -1) {
			if why := c.pathSpan(p, span); why != "" {
				bad(i, span, why)
			}
		}
		// Links and § references inside code spans are examples, not
		// references; the spans are blanked so that a path span right
		// before a § still names its document.
		plain := codeSpanRe.ReplaceAllStringFunc(line, func(s string) string {
			if pathSpanRe.MatchString(s) {
				return s
			}
			return strings.Repeat(" ", len(s))
		})
		var targets []string
		for _, m := range linkRe.FindAllStringSubmatch(plain, -1) {
			targets = append(targets, m[1])
		}
		if m := refDefRe.FindStringSubmatch(plain); m != nil {
			targets = append(targets, m[1])
		}
		for _, t := range targets {
			if why := c.link(p, t); why != "" {
				bad(i, t, why)
			}
		}
		for _, m := range sectionRe.FindAllStringSubmatch(plain, -1) {
			if why := c.section(p, m[1], m[2], true); why != "" {
				bad(i, strings.TrimSpace(m[0]), why)
			}
		}
	}
	return probs, nil
}

func (c *checker) source(p string) ([]Problem, error) {
	b, err := fs.ReadFile(c.fsys, p)
	if err != nil {
		return nil, err
	}
	if !bytes.ContainsRune(b, '§') {
		return nil, nil
	}
	lines, err := c.lines(p, false)
	if err != nil {
		return nil, err
	}
	var probs []Problem
	for i, line := range lines {
		for _, m := range sectionRe.FindAllStringSubmatch(line, -1) {
			if why := c.section(p, m[1], m[2], false); why != "" {
				probs = append(probs, Problem{File: p, Line: i + 1, Ref: strings.TrimSpace(m[0]), Why: why})
			}
		}
	}
	return probs, nil
}

// link checks one link target written in document p; "" means it resolves.
func (c *checker) link(p, target string) string {
	if target == "" {
		return "empty link"
	}
	if u, err := url.Parse(target); err == nil && (u.Scheme != "" || strings.HasPrefix(target, "//")) {
		return "" // the web is not checked here
	}
	file, frag, _ := strings.Cut(target, "#")
	file, err := url.PathUnescape(file)
	if err != nil {
		return "bad escape in link"
	}
	doc := p
	if file != "" {
		if strings.HasPrefix(file, "/") {
			return "absolute path: write it relative to " + p
		}
		doc = path.Join(path.Dir(p), file)
		if !c.exists(doc) {
			return "no such file or folder " + doc
		}
	}
	if frag == "" || !strings.HasSuffix(doc, ".md") {
		return ""
	}
	frag, err = url.PathUnescape(frag)
	if err != nil {
		return "bad escape in fragment"
	}
	return c.anchor(doc, frag, false)
}

// section checks a § reference: doc as written (empty if none) and its
// anchor. Inside a Markdown document a § without a document means the
// document itself.
func (c *checker) section(p, doc, anchor string, markdown bool) string {
	switch {
	case doc == "" && !markdown:
		return "§ names no document: write FILE.md §anchor"
	case doc == "":
		doc = p
	default:
		// Relative to the file first, as a link is; else from the root,
		// as paths are usually written in comments.
		if rel := path.Join(path.Dir(p), doc); c.exists(rel) {
			doc = rel
		} else if c.exists(path.Clean(doc)) {
			doc = path.Clean(doc)
		} else {
			return "no such document " + doc
		}
	}
	return c.anchor(doc, anchor, true)
}

// pathSpan checks a code span that quotes a path to a document or into docs/.
func (c *checker) pathSpan(p, span string) string {
	m := pathSpanRe.FindStringSubmatch(span)
	if m == nil {
		return ""
	}
	target := m[1]
	if !strings.Contains(strings.TrimSuffix(target, "/"), "/") {
		return "" // a bare name (`report.md`) is a name, not a path
	}
	if !strings.HasSuffix(target, ".md") && !strings.HasPrefix(target, "docs/") {
		return ""
	}
	if c.exists(path.Join(path.Dir(p), target)) || c.exists(path.Clean(target)) {
		return ""
	}
	return "quoted path names no file or folder"
}

func (c *checker) exists(p string) bool {
	_, err := fs.Stat(c.fsys, p)
	return err == nil
}

// anchor reports whether document doc has the anchor.
func (c *checker) anchor(doc, anchor string, foldCase bool) string {
	as, ok := c.anchors[doc]
	if !ok {
		lines, err := c.lines(doc, true)
		if err != nil {
			return "cannot read " + doc
		}
		as = Anchors(lines)
		c.anchors[doc] = as
	}
	if foldCase {
		anchor = strings.ToLower(anchor)
	}
	if as[anchor] {
		return ""
	}
	return "no heading with anchor #" + anchor + " in " + doc
}

// Anchors returns the anchors GitHub gives a Markdown document's headings
// (lines already outside fenced code), and its explicit <a id>/<a name> ones.
func Anchors(lines []string) map[string]bool {
	as := map[string]bool{}
	seen := map[string]int{}
	for _, line := range lines {
		for _, m := range htmlIDRe.FindAllStringSubmatch(line, -1) {
			as[m[1]] = true
		}
		m := headingRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		s := Slug(m[2])
		// A repeated heading gets -1, -2, ... in order.
		if n := seen[s]; n > 0 {
			seen[s]++
			s = fmt.Sprintf("%s-%d", s, n)
		} else {
			seen[s] = 1
		}
		as[s] = true
	}
	return as
}

var (
	inlineLinkRe = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	htmlTagRe    = regexp.MustCompile(`<[^>]+>`)
)

// Slug is GitHub's anchor for a heading: the rendered text (link targets and
// HTML tags dropped) in lower case, every character that is not a letter,
// mark, digit, connector, space or hyphen removed, and spaces made hyphens.
func Slug(heading string) string {
	text := inlineLinkRe.ReplaceAllString(heading, "$1")
	text = htmlTagRe.ReplaceAllString(text, "")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-', unicode.IsLetter(r), unicode.IsMark(r), unicode.IsDigit(r), unicode.Is(unicode.Pc, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
