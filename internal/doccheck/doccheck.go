// Package doccheck checks that the relative links of the module's Markdown
// files resolve: every link to a file names a file or directory that exists,
// and every #fragment names a heading of its Markdown target, with
// fragments formed as the repository page forms them (the heading text in
// lower case, spaces as hyphens, punctuation dropped, a repeated heading
// suffixed -1, -2, ...).
//
// Links are inline links and images, [text](target) and ![alt](target),
// reference definitions, [label]: target, and the href and src attributes of
// HTML tags. Links with a scheme (https:, mailto:) and links inside code
// spans or fenced code blocks are not checked.
//
// Source files cite the documents in plain text, as docs/method.md#notation;
// [References] finds those citations so that they can be checked the same
// way. A document names the tests that pin a result in paragraphs that start
// with "**Pinned by**"; [PinnedTests] finds those names so that a renamed or
// deleted test is noticed.
package doccheck

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// A Link is one relative link found in a Markdown file.
type Link struct {
	File   string // the Markdown file, slash-separated, relative to the root
	Line   int    // 1-based line of the link in File
	Target string // the link target as written
}

// A Problem is a link that does not resolve.
type Problem struct {
	Link
	Reason string
}

func (p Problem) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", p.File, p.Line, p.Target, p.Reason)
}

// MarkdownFiles returns the slash-separated paths, relative to root, of every
// *.md file under root, skipping directories whose name starts with a dot.
func MarkdownFiles(root string) ([]string, error) { return SourceFiles(root, ".md") }

// Check checks the relative links of the given Markdown files (paths
// relative to root, as from MarkdownFiles) and returns the links that do not
// resolve, in file and line order.
func Check(root string, files []string) ([]Problem, error) {
	return check(root, files, Links, func(l Link) string { return l.File })
}

// check reads each file, extracts its links with extract and returns those
// that do not resolve relative to the file base(link) names.
func check(root string, files []string, extract func(file string, src []byte) []Link, base func(Link) string) ([]Problem, error) {
	c := checker{root: root, anchors: map[string]map[string]bool{}}
	var problems []Problem
	for _, f := range files {
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			return nil, err
		}
		for _, l := range extract(f, src) {
			if reason := c.resolve(base(l), l.Target); reason != "" {
				problems = append(problems, Problem{l, reason})
			}
		}
	}
	return problems, nil
}

// docRefRE matches a plain-text citation of a document under docs/.
var docRefRE = regexp.MustCompile(`\bdocs/[A-Za-z0-9_./-]*[A-Za-z0-9_]\.md(?:#[A-Za-z0-9_-]+)?`)

// References returns the citations of documents under docs/ (such as
// docs/method.md#notation) in src, the text of file, with their lines. A
// citation is resolved from the module root, whatever file it is written in.
func References(file string, src []byte) []Link {
	var refs []Link
	if !bytes.Contains(src, []byte("docs/")) {
		return nil
	}
	for n, line := range strings.Split(string(src), "\n") {
		if !strings.Contains(line, "docs/") { // every citation does; most lines do not
			continue
		}
		for _, m := range docRefRE.FindAllString(line, -1) {
			refs = append(refs, Link{File: file, Line: n + 1, Target: m})
		}
	}
	return refs
}

// CheckReferences checks the citations that References finds in the given
// files (paths relative to root) and returns those that do not resolve.
func CheckReferences(root string, files []string) ([]Problem, error) {
	// A citation is resolved from the module root, as if from README.md.
	return check(root, files, References, func(Link) string { return "README.md" })
}

// SourceFiles returns the slash-separated paths, relative to root, of the
// files under root whose names end in one of the suffixes, skipping
// directories whose name starts with a dot.
func SourceFiles(root string, suffixes ...string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		for _, s := range suffixes {
			if strings.HasSuffix(d.Name(), s) {
				rel, err := filepath.Rel(root, p)
				if err != nil {
					return err
				}
				files = append(files, filepath.ToSlash(rel))
				break
			}
		}
		return nil
	})
	slices.Sort(files)
	return files, err
}

// Resolve reports why the relative link target, written in the Markdown
// file from (slash-separated, relative to root), does not resolve, or ""
// when it does.
func Resolve(root, from, target string) string {
	c := checker{root: root, anchors: map[string]map[string]bool{}}
	return c.resolve(from, target)
}

type checker struct {
	root    string
	anchors map[string]map[string]bool // Markdown file -> its fragments
}

func (c *checker) resolve(from, target string) string {
	if hasScheme(target) {
		return ""
	}
	file, frag, _ := strings.Cut(target, "#")
	if f, err := url.PathUnescape(file); err == nil {
		file = f
	}
	rel := from
	if file != "" {
		if strings.HasPrefix(file, "/") {
			return "absolute path: write it relative to the file"
		}
		rel = path.Clean(path.Join(path.Dir(from), file))
		if rel == ".." || strings.HasPrefix(rel, "../") {
			return "points outside the repository"
		}
		if _, err := os.Stat(filepath.Join(c.root, filepath.FromSlash(rel))); err != nil {
			return "no such file or directory"
		}
	}
	if frag == "" || !strings.HasSuffix(rel, ".md") {
		return ""
	}
	anchors, err := c.fragments(rel)
	if err != nil {
		return err.Error()
	}
	if !anchors[frag] {
		return fmt.Sprintf("no heading with fragment #%s in %s", frag, rel)
	}
	return ""
}

func (c *checker) fragments(file string) (map[string]bool, error) {
	if a, ok := c.anchors[file]; ok {
		return a, nil
	}
	src, err := os.ReadFile(filepath.Join(c.root, filepath.FromSlash(file)))
	if err != nil {
		return nil, err
	}
	a := map[string]bool{}
	for _, f := range Fragments(src) {
		a[f] = true
	}
	c.anchors[file] = a
	return a, nil
}

var (
	schemeRE   = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
	atxRE      = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	setextRE   = regexp.MustCompile(`^ {0,3}(=+|-+)[ \t]*$`)
	fenceRE    = regexp.MustCompile("^ {0,3}(```+|~~~+)")
	inlineRE   = regexp.MustCompile(`!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*(<[^>]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)(?:\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?\s*\)`)
	refDefRE   = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)`)
	htmlRE     = regexp.MustCompile(`(?i)<(?:a|img|source)\b[^>]*?\s(?:href|src)\s*=\s*("[^"]*"|'[^']*')`)
	htmlIDRE   = regexp.MustCompile(`(?i)<[a-z][^>]*?\s(?:id|name)\s*=\s*("[^"]*"|'[^']*')`)
	linkTextRE = regexp.MustCompile(`!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\([^)]*\)`)
	htmlTagRE  = regexp.MustCompile(`<[^>]+>`)
)

func hasScheme(target string) bool { return schemeRE.MatchString(target) }

// lines returns the lines of src outside fenced code blocks, with their
// 1-based numbers.
func lines(src []byte) (text []string, numbers []int) {
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	fence := ""
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if m := fenceRE.FindStringSubmatch(line); m != nil {
			switch {
			case fence == "":
				fence = m[1]
				continue
			case m[1][0] == fence[0] && len(m[1]) >= len(fence) &&
				strings.TrimSpace(line[strings.Index(line, m[1])+len(m[1]):]) == "":
				fence = ""
				continue
			}
		}
		if fence != "" {
			continue
		}
		text = append(text, line)
		numbers = append(numbers, n)
	}
	return text, numbers
}

// blankCode returns line with its code spans (text between two runs of the
// same number of backticks) replaced by spaces.
func blankCode(line string) string {
	b := []byte(line)
	run := func(i int) int { // length of the backtick run at i
		j := i
		for j < len(b) && b[j] == '`' {
			j++
		}
		return j - i
	}
	for i := 0; i < len(b); {
		if b[i] != '`' {
			i++
			continue
		}
		k := run(i)
		end := -1
		for j := i + k; j < len(b); {
			if b[j] != '`' {
				j++
				continue
			}
			if r := run(j); r == k {
				end = j + r
				break
			} else {
				j += r
			}
		}
		if end < 0 {
			i += k
			continue
		}
		for j := i; j < end; j++ {
			b[j] = ' '
		}
		i = end
	}
	return string(b)
}

// Links returns the relative links of the Markdown source src of file.
func Links(file string, src []byte) []Link {
	var links []Link
	text, numbers := lines(src)
	add := func(n int, target string) {
		target = strings.TrimSpace(target)
		target = strings.TrimSuffix(strings.TrimPrefix(target, "<"), ">")
		if target == "" || hasScheme(target) {
			return
		}
		links = append(links, Link{File: file, Line: n, Target: target})
	}
	for i, line := range text {
		line = blankCode(line)
		for _, m := range inlineRE.FindAllStringSubmatch(line, -1) {
			add(numbers[i], m[2])
		}
		if m := refDefRE.FindStringSubmatch(line); m != nil {
			add(numbers[i], m[1])
		}
		for _, m := range htmlRE.FindAllStringSubmatch(line, -1) {
			add(numbers[i], m[1][1:len(m[1])-1])
		}
	}
	return links
}

// Fragments returns the fragments that the headings of the Markdown source
// src get on the repository page, in order, and the ids and names of its
// HTML elements.
func Fragments(src []byte) []string {
	var out []string
	seen := map[string]int{}
	add := func(heading string) {
		slug := Slug(heading)
		k := seen[slug]
		seen[slug] = k + 1
		if k > 0 {
			slug = fmt.Sprintf("%s-%d", slug, k)
		}
		out = append(out, slug)
	}
	text, _ := lines(src)
	for i, line := range text {
		for _, m := range htmlIDRE.FindAllStringSubmatch(line, -1) {
			out = append(out, m[1][1:len(m[1])-1])
		}
		if m := atxRE.FindStringSubmatch(line); m != nil {
			add(m[2])
			continue
		}
		if i > 0 && setextRE.MatchString(line) && isParagraphLine(text[i-1]) &&
			(i < 2 || strings.TrimSpace(text[i-2]) == "") {
			add(strings.TrimSpace(text[i-1]))
		}
	}
	return out
}

// isParagraphLine reports whether line can be the text of a setext heading.
func isParagraphLine(line string) bool {
	t := strings.TrimSpace(line)
	if t == "" || strings.HasPrefix(t, "|") || strings.HasPrefix(t, ">") || strings.HasPrefix(t, "<") {
		return false
	}
	if atxRE.MatchString(line) || setextRE.MatchString(line) {
		return false
	}
	for _, p := range []string{"- ", "* ", "+ "} {
		if strings.HasPrefix(t, p) {
			return false
		}
	}
	return true
}

// Slug returns the fragment of a heading with the given Markdown text: its
// rendered text (links reduced to their text, code and emphasis markers and
// HTML tags removed) in lower case, every character other than a letter,
// digit, mark, space, hyphen or underscore dropped, and spaces replaced by
// hyphens.
func Slug(heading string) string {
	s := linkTextRE.ReplaceAllString(heading, "$1")
	s = htmlTagRE.ReplaceAllString(s, "")
	s = strings.NewReplacer("`", "", "*", "").Replace(s)
	s = strings.TrimSpace(s)
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// A TestRef is a test, example, benchmark or fuzz target named in a
// document.
type TestRef struct {
	File    string // the document
	Line    int    // 1-based line of the name
	Package string // import path inside the module: "spiral" for the root
	Name    string // TestX, ExampleX, BenchmarkX or FuzzX
}

var (
	codeTokenRE = regexp.MustCompile("`([^`]+)`(:?)")
	testNameRE  = regexp.MustCompile(`^(Test|Example|Benchmark|Fuzz)[A-Za-z0-9_]*$`)
	packageRE   = regexp.MustCompile(`^[a-z][a-z0-9]*(/[a-z][a-z0-9]*)*$`)
)

// PinnedTests returns the tests named in the "**Pinned by**" paragraphs of
// the Markdown source src of file. In such a paragraph a code span holding a
// package path and followed by a colon, as `combin`:, sets the package of
// the test names in code spans that follow it, as `TestConstantsPaper`. A
// test name before any package is returned with an empty Package.
func PinnedTests(file string, src []byte) []TestRef {
	var refs []TestRef
	in, pkg := false, ""
	for n, line := range strings.Split(string(src), "\n") {
		switch {
		case strings.HasPrefix(line, "**Pinned by**"):
			in, pkg = true, ""
		case strings.TrimSpace(line) == "":
			in = false
		}
		if !in {
			continue
		}
		for _, m := range codeTokenRE.FindAllStringSubmatch(line, -1) {
			switch tok := m[1]; {
			case m[2] == ":" && packageRE.MatchString(tok):
				pkg = tok
			case testNameRE.MatchString(tok):
				refs = append(refs, TestRef{File: file, Line: n + 1, Package: pkg, Name: tok})
			}
		}
	}
	return refs
}

// CheckTestRef reports why ref does not name a function of a _test.go file
// of its package in the module at root, or "" if it does.
func CheckTestRef(root string, ref TestRef) string {
	if ref.Package == "" {
		return "no package named before it"
	}
	dir := root
	if ref.Package != "spiral" {
		dir = filepath.Join(root, filepath.FromSlash(ref.Package))
	}
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil || len(files) == 0 {
		return fmt.Sprintf("package %s has no test files", ref.Package)
	}
	decl := []byte("func " + ref.Name + "(") // at the start of a line
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err == nil && (bytes.HasPrefix(src, decl) || bytes.Contains(src, append([]byte("\n"), decl...))) {
			return ""
		}
	}
	return fmt.Sprintf("no func %s in the tests of package %s", ref.Name, ref.Package)
}
