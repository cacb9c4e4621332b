// Package housecheck keeps build output and oversized files out of the
// repository, and its import graph in layers (Layers: no public package
// imports an internal one but its own; the runner, internal/lab, is
// imported only by commands and by itself). Two rules hold for every
// tracked file:
//
//   - A file with the executable bit (git's mode 100755) is a script: it
//     begins with "#!". An executable that is not one is almost always a
//     binary that `go build` left behind (.gitignore names those).
//   - A file is at most Limit bytes, unless an Exception names it, with its
//     reason and a larger bound of its own.
//
// A third rule holds for the two go.mod files that build the lab and its
// tools (SharedVersions): a module both require, at one version.
//
// Limit and Exceptions are the one statement of the size rule; the
// Makefile and the documents point here rather than repeat the figure.
// `make test` runs the check (TestRepository, through `make house` and
// `make unit`) over what `git ls-files` lists, at the sizes of the
// working tree.
package housecheck

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"path"
	"slices"
	"strings"
)

// Limit is the most bytes a committed file may hold: 200 KB, so that a
// clone stays quick and a diff stays readable. Raw runs that would be
// larger are kept gzipped (docs/results/store/bench.txt.gz) or split.
const Limit = 200 << 10

// An Exception lets the files its pattern matches be larger than Limit,
// up to Max.
type Exception struct {
	// Pattern is slash-separated, from the root: each element is matched
	// as by path.Match, and "**" matches any number of folders.
	Pattern string
	Max     int64
	Why     string
}

// Exceptions are the only files allowed past Limit; a file takes the first
// whose pattern matches it. They name kinds of file, never one study's: a
// study whose files would be larger cuts them smaller (a packed archive
// comes in volumes) or keeps its generated views out of git
// (docs/results/.gitignore), and none is larger than 1 MB.
var Exceptions = []Exception{
	{
		Pattern: "docs/results/**/runs*.tar.gz",
		Max:     1 << 20,
		Why:     "a study's raw runs — every run's record, logs and profiles' figures, hundreds of files — packed into one archive (make pack-results), in volumes of at most 1 MB where it is larger (runs.tar.gz, runs.2.tar.gz, …), which -rerender reads as they are",
	},
	{
		Pattern: "docs/results/**/rounds.jsonl*",
		Max:     1 << 20,
		Why:     "a side-by-side study's record: every round's figures for every arm of every group (the bank over a database: ten arms in six groups, each group up to 60 rounds, about 2.4 KB a round of ten arms), which its report is rendered from, gzipped once the study is finished (make pack-results, about a seventh of its size)",
	},
	{
		Pattern: "docs/results/**/capacity.json",
		Max:     512 << 10,
		Why:     "a capacity study's record: every point of its search — each design at each ladder rate and refinement in each of the blocks, and every overload run — with its figures, which its report is rendered from",
	},
}

// Results is the folder of every study's report and raw runs, and
// ResultsLimit the most bytes its tracked files may hold together: each
// study's files are within their own bounds, and the studies together must
// not make every clone heavy. A study that would pass it keeps fewer bytes
// of its raw runs (an archive drops what no report reads) rather than
// raise it.
const (
	Results      = "docs/results/"
	ResultsLimit = 10_000_000
)

// CheckTotal returns the problem of files whose tracked bytes under
// Results add up to more than ResultsLimit, or none.
func CheckTotal(files []File) []Problem {
	var n int64
	for _, f := range files {
		if strings.HasPrefix(f.Path, Results) {
			n += f.Size
		}
	}
	if n <= ResultsLimit {
		return nil
	}
	return []Problem{{strings.TrimSuffix(Results, "/"), fmt.Sprintf("%d bytes tracked together, over the %d the folder may hold (internal/housecheck ResultsLimit): "+
		"make a study's files smaller, or keep them out of git", n, ResultsLimit)}}
}

// MakefileLimit is the most lines the Makefile may have: it builds,
// installs and tests; studies are rows of internal/lab/study, and the
// tuning of a script lives in the script.
const MakefileLimit = 200

// CheckMakefile returns the problem of a Makefile of more than
// MakefileLimit lines, or none.
func CheckMakefile(text string) []Problem {
	n := strings.Count(text, "\n")
	if text != "" && !strings.HasSuffix(text, "\n") {
		n++
	}
	if n <= MakefileLimit {
		return nil
	}
	return []Problem{{"Makefile", fmt.Sprintf("%d lines, over the %d it may have (internal/housecheck MakefileLimit): a study is a row of internal/lab/study, a script's tuning lives in the script", n, MakefileLimit)}}
}

// perStudy reports whether an exception's pattern names a study's folder
// under docs/results rather than a kind of file anywhere in it.
func perStudy(pattern string) bool {
	rest, ok := strings.CutPrefix(pattern, "docs/results/")
	if !ok {
		return false
	}
	file, ok := strings.CutPrefix(rest, "**/")
	return !ok || strings.Contains(file, "/")
}

// A File is one tracked file as the check sees it.
type File struct {
	Path string // slash-separated, from the root
	// Mode is git's: 100644 a file, 100755 an executable, 120000 a
	// symbolic link, 160000 a submodule.
	Mode   string
	Size   int64
	Script bool // it begins with "#!"
}

// Problem is one file out of order.
type Problem struct {
	Path string
	Why  string
}

func (p Problem) String() string { return p.Path + ": " + p.Why }

// Check returns the problems of files, in their order; a file may have
// two.
func Check(files []File) []Problem {
	var probs []Problem
	for _, f := range files {
		if f.Mode != "100644" && f.Mode != "100755" {
			continue // a link or a submodule: nothing to read
		}
		if f.Mode == "100755" && !f.Script {
			probs = append(probs, Problem{f.Path, "executable (mode 100755) but not a script (no #! line): a build output? " +
				"git rm --cached it and let .gitignore name it, or git update-index --chmod=-x"})
		}
		if max, e := Allowed(f.Path); f.Size > max {
			why := fmt.Sprintf("%s, over the %s limit for committed files (internal/housecheck): make it smaller, gzip it, keep it out of git, "+
				"or add an Exception with its reason", kb(f.Size), kb(Limit))
			if e != nil {
				why = fmt.Sprintf("%s, over the %s its exception %s allows (%s)", kb(f.Size), kb(e.Max), e.Pattern, e.Why)
			}
			probs = append(probs, Problem{f.Path, why})
		}
	}
	return probs
}

// Allowed is the most bytes the file at p may hold, and the exception that
// allows more than Limit, if one does (the first that matches).
func Allowed(p string) (int64, *Exception) {
	for i, e := range Exceptions {
		if Match(e.Pattern, p) {
			return e.Max, &Exceptions[i]
		}
	}
	return Limit, nil
}

func kb(n int64) string {
	if n%1024 == 0 {
		return fmt.Sprintf("%d KB", n/1024)
	}
	return fmt.Sprintf("%.1f KB", float64(n)/1024)
}

// Match reports whether the slash-separated path p matches pattern: element
// by element as path.Match does, "**" standing for any number of elements,
// none included. A malformed pattern matches nothing.
func Match(pattern, p string) bool {
	return matchElems(strings.Split(pattern, "/"), strings.Split(p, "/"))
}

func matchElems(pat, elems []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(elems); i++ {
				if matchElems(pat[1:], elems[i:]) {
					return true
				}
			}
			return false
		}
		if len(elems) == 0 {
			return false
		}
		if ok, err := path.Match(pat[0], elems[0]); err != nil || !ok {
			return false
		}
		pat, elems = pat[1:], elems[1:]
	}
	return len(elems) == 0
}

// LsFiles is `git ls-files --stage -z` run in root: every tracked file,
// with its mode.
func LsFiles(root string) ([]byte, error) {
	cmd := exec.Command("git", "ls-files", "--stage", "-z")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files in %s: %v: %s", root, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return out, nil
}

// Tracked reads the files a `git ls-files --stage -z` listing names from
// fsys, the repository's root: each one's size and first bytes. A file the
// listing names but the working tree no longer holds is left out: it is
// being removed.
func Tracked(fsys fs.FS, listing []byte) ([]File, error) {
	var files []File
	for entry := range bytes.SplitSeq(listing, []byte{0}) {
		if len(entry) == 0 {
			continue
		}
		// <mode> SP <object> SP <stage> TAB <path>
		meta, p, ok := bytes.Cut(entry, []byte{'\t'})
		fields := strings.Fields(string(meta))
		if !ok || len(fields) != 3 {
			return nil, fmt.Errorf("git ls-files: unexpected entry %q", entry)
		}
		f := File{Path: string(p), Mode: fields[0]}
		if n := len(files); n > 0 && files[n-1].Path == f.Path {
			continue // another stage of a conflicted file
		}
		if f.Mode == "100644" || f.Mode == "100755" {
			info, err := fs.Stat(fsys, f.Path)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, err
			}
			f.Size = info.Size()
			if f.Script, err = script(fsys, f.Path); err != nil {
				return nil, err
			}
		}
		files = append(files, f)
	}
	return files, nil
}

// script reports whether the file begins with "#!".
func script(fsys fs.FS, p string) (bool, error) {
	r, err := fsys.Open(p)
	if err != nil {
		return false, err
	}
	defer r.Close()
	head := make([]byte, 2)
	n, err := io.ReadFull(r, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return false, err
	}
	return slices.Equal(head[:n], []byte("#!")), nil
}
