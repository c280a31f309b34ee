package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"spiral/internal/doccheck"
)

// The module's documents, checked with internal/doccheck, which TestSources
// also uses for the table's citations: every relative link and fragment of
// the Markdown files, every citation of docs/ in the Go and JSON sources,
// every test a document names as pinning a result; and doccheck's own
// parsing, on small trees the tests build.

// moduleRoot returns the directory that holds go.mod, two levels up.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root %s: %v", root, err)
	}
	return root
}

// TestRepositoryLinks checks every relative link and fragment of every
// Markdown file of the module.
func TestRepositoryLinks(t *testing.T) {
	root := moduleRoot(t)
	files, err := doccheck.MarkdownFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"README.md", "docs/method.md", "docs/findings.md"} {
		if !slices.Contains(files, want) {
			t.Errorf("%s not found among the Markdown files %v", want, files)
		}
	}
	problems, err := doccheck.Check(root, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestSourceReferences checks every citation of a document under docs/ in
// the module's Go files (tests excepted: some cite missing documents on
// purpose) and JSON files.
func TestSourceReferences(t *testing.T) {
	root := moduleRoot(t)
	all, err := doccheck.SourceFiles(root, ".go", ".json")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, f := range all {
		if !strings.HasSuffix(f, "_test.go") {
			files = append(files, f)
		}
	}
	problems, err := doccheck.CheckReferences(root, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

func TestReferences(t *testing.T) {
	src := "// see docs/method.md#notation and docs/findings.md.\n\"about\": \"docs/method.md, docs/x/y.md#a_b-1\"\n"
	var got []string
	for _, r := range doccheck.References("f.go", []byte(src)) {
		got = append(got, r.Target)
	}
	want := []string{"docs/method.md#notation", "docs/findings.md", "docs/method.md", "docs/x/y.md#a_b-1"}
	if !slices.Equal(got, want) {
		t.Errorf("References = %q, want %q", got, want)
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "docs", "method.md"), []byte("## Notation\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "a.go"), []byte("// docs/method.md#notation docs/method.md#nope docs/gone.md\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	problems, err := doccheck.CheckReferences(root, []string{"a.go"})
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, p := range problems {
		got = append(got, p.Target)
	}
	if want := []string{"docs/method.md#nope", "docs/gone.md"}; !slices.Equal(got, want) {
		t.Errorf("CheckReferences reports %q, want %q", got, want)
	}
}

// TestPinnedTestsExist checks that every test the documents name as pinning
// a result exists in the package they name.
func TestPinnedTestsExist(t *testing.T) {
	root := moduleRoot(t)
	files, err := doccheck.MarkdownFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, f := range files {
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		for _, ref := range doccheck.PinnedTests(f, src) {
			total++
			if why := doccheck.CheckTestRef(root, ref); why != "" {
				t.Errorf("%s:%d: %s: %s", ref.File, ref.Line, ref.Name, why)
			}
		}
	}
	if total == 0 {
		t.Error("no document names a test that pins a result")
	}
}

func TestPinnedTests(t *testing.T) {
	src := "**Pinned by** `combin`: `TestA` (a note with `code`),\n`ExampleB`; `spiral`: `TestC`.\n\n" +
		"Not pinned: `TestD`.\n\n**Pinned by** `TestE`; `internal/x`: `FuzzF`\n"
	var got []string
	for _, r := range doccheck.PinnedTests("f.md", []byte(src)) {
		got = append(got, r.Package+"."+r.Name)
	}
	want := []string{"combin.TestA", "combin.ExampleB", "spiral.TestC", ".TestE", "internal/x.FuzzF"}
	if !slices.Equal(got, want) {
		t.Errorf("PinnedTests = %q, want %q", got, want)
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "combin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "combin", "a_test.go"), []byte("package combin\n\nfunc TestA(t *testing.T) {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ref doccheck.TestRef
		ok  bool
	}{
		{doccheck.TestRef{Package: "combin", Name: "TestA"}, true},
		{doccheck.TestRef{Package: "combin", Name: "TestAB"}, false},
		{doccheck.TestRef{Package: "combin", Name: "TestB"}, false},
		{doccheck.TestRef{Package: "spiral", Name: "TestA"}, false},
		{doccheck.TestRef{Package: "", Name: "TestA"}, false},
	} {
		if why := doccheck.CheckTestRef(root, c.ref); (why == "") != c.ok {
			t.Errorf("doccheck.CheckTestRef(%+v) = %q, want ok %t", c.ref, why, c.ok)
		}
	}
}

func TestSlug(t *testing.T) {
	for _, c := range []struct{ heading, want string }{
		{"Proposition 3.1", "proposition-31"},
		{"The constant M", "the-constant-m"},
		{"Aggregation factor and role weights", "aggregation-factor-and-role-weights"},
		{"Finite K", "finite-k"},
		{"Using it from other languages: `cmd/spiral`", "using-it-from-other-languages-cmdspiral"},
		{"What a trainer should know (each settled by exact computation in `estimator`)",
			"what-a-trainer-should-know-each-settled-by-exact-computation-in-estimator"},
		{"Balanced set designs: when to prefer them", "balanced-set-designs-when-to-prefer-them"},
		{"A_search and [links](x.md) **bold**", "a_search-and-links-bold"},
		{"Ünïcode – dash", "ünïcode--dash"},
	} {
		if got := doccheck.Slug(c.heading); got != c.want {
			t.Errorf("doccheck.Slug(%q) = %q, want %q", c.heading, got, c.want)
		}
	}
}

func TestFragments(t *testing.T) {
	src := "# Title\n\n## Notation\n\n```\n## not a heading\n```\n\n## Notation\n\nSetext\n------\n\n" +
		"text\n\n| a |\n| --- |\n\n<a id=\"custom\"></a>\n### Closing ###\n"
	got := doccheck.Fragments([]byte(src))
	want := []string{"title", "notation", "notation-1", "setext", "custom", "closing"}
	if !slices.Equal(got, want) {
		t.Errorf("Fragments = %q, want %q", got, want)
	}
}

func TestLinks(t *testing.T) {
	src := "See [a](a.md), ![img](img/x.png \"title\") and [web](https://example.com).\n" +
		"`[code](no.md)` and [`code text`](code.md#frag)\n" +
		"```\n[fenced](no.md)\n```\n" +
		"[ref]: ref.md#x\n" +
		"<a href=\"html.md\">x</a> <img src='pic.png'> [same](#here) [paren](f(1).md)\n"
	var got []string
	for _, l := range doccheck.Links("dir/f.md", []byte(src)) {
		got = append(got, l.Target)
	}
	want := []string{"a.md", "img/x.png", "code.md#frag", "ref.md#x", "#here", "f(1).md", "html.md", "pic.png"}
	if !slices.Equal(got, want) {
		t.Errorf("Links = %q, want %q", got, want)
	}
}

// TestCheckFindsBrokenLinks builds a small tree with good and bad links and
// checks that exactly the bad ones are reported.
func TestCheckFindsBrokenLinks(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/method.md", "# Method\n\n## Proposition 3.1\n\nBack to [top](#method), [readme](../README.md#usage).\n")
	write("docs/img/x.png", "")
	write("README.md", "## Usage\n\n"+
		"[ok](docs/method.md#proposition-31)\n"+ // fine
		"[dir](docs/img) ![pic](docs/img/x.png)\n"+ // fine
		"[bad anchor](docs/method.md#proposition-3.1)\n"+ // line 5
		"[missing](docs/findings.md)\n"+ // line 6
		"[self](#usage) [self bad](#nothing)\n"+ // line 7
		"[outside](../x.md) [abs](/README.md)\n") // line 8
	files, err := doccheck.MarkdownFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"README.md", "docs/method.md"}; !slices.Equal(files, want) {
		t.Fatalf("MarkdownFiles = %q, want %q", files, want)
	}
	problems, err := doccheck.Check(root, files)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.Target)
		t.Log(p)
	}
	want := []string{"docs/method.md#proposition-3.1", "docs/findings.md", "#nothing", "../x.md", "/README.md"}
	if !slices.Equal(got, want) {
		t.Errorf("problems at %q, want %q", got, want)
	}
	if r := doccheck.Resolve(root, "README.md", "docs/method.md#proposition-31"); r != "" {
		t.Errorf("Resolve of a good link: %s", r)
	}
	if r := doccheck.Resolve(root, "README.md", "docs/method.md#nope"); r == "" {
		t.Error("Resolve of a bad fragment reports nothing")
	}
}
