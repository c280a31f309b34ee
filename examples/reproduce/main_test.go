package main

import (
	"bytes"
	"encoding/json"
	"math/big"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"spiral/internal/doccheck"
)

// TestRowsMatch runs the program and checks that every claim matches and
// that the JSON form holds the same rows as the table.
func TestRowsMatch(t *testing.T) {
	rows, err := compute()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if !r.Match {
			t.Errorf("%s: expected %s, library %s", r.Claim, r.Expected, r.Library)
		}
	}
	// The claims the table must hold, by their expected values.
	for _, want := range []string{"70", "24", "16", "52360/916895", "5.71%", "2", "1453/1541",
		"1365/1541", "1760221/1877122", "821660/938561", "(+0.25, 0, -0.25, 0)",
		"(0.25, 0.25, 0.25, -0.75)", "98,304", "16,384", "262,144", "12", "1"} {
		found := false
		for _, r := range rows {
			found = found || r.Expected == want
		}
		if !found {
			t.Errorf("no row claims %s", want)
		}
	}

	var table, js, errs bytes.Buffer
	if status := run(&table, &errs, nil); status != 0 {
		t.Fatalf("exit status %d, stderr %q", status, errs.String())
	}
	if status := run(&js, &errs, []string{"-json"}); status != 0 {
		t.Fatalf("-json: exit status %d, stderr %q", status, errs.String())
	}
	var decoded []row
	if err := json.Unmarshal(js.Bytes(), &decoded); err != nil {
		t.Fatalf("-json output does not parse: %v\n%s", err, js.String())
	}
	if diff := cmp.Diff(rows, decoded); diff != "" {
		t.Errorf("JSON rows differ from the computed rows (-computed +json):\n%s", diff)
	}
	out := table.String()
	if !strings.Contains(out, "all 23 claims match") || len(rows) != 23 {
		t.Errorf("%d rows; table:\n%s", len(rows), out)
	}
	for _, r := range rows {
		if !strings.Contains(out, r.Claim) || !strings.Contains(out, r.Library) {
			t.Errorf("table lacks row %q with library value %q", r.Claim, r.Library)
		}
	}
}

// TestCompare checks that the comparison fails on a wrong value, a wrong
// rounding or a wrong element, so that a match is not a formality.
func TestCompare(t *testing.T) {
	rat := func(a, b int64) *big.Rat { return big.NewRat(a, b) }
	for _, c := range []struct {
		paper   string
		got     []*big.Rat
		library string
		match   bool
	}{
		{"70", []*big.Rat{rat(70, 1)}, "70", true},
		{"70", []*big.Rat{rat(71, 1)}, "71", false},
		{"98,304", []*big.Rat{rat(98304, 1)}, "98,304", true},
		{"98,304", []*big.Rat{rat(98305, 1)}, "98,305", false},
		{"52360/916895", []*big.Rat{rat(88, 1541)}, "88/1541", true},
		{"52360/916895", []*big.Rat{rat(89, 1541)}, "89/1541", false},
		{"5.71%", []*big.Rat{rat(88, 1541)}, "5.71%", true},
		{"5.71%", []*big.Rat{rat(571, 10000)}, "5.71%", true},
		{"5.71%", []*big.Rat{rat(5715, 100000)}, "5.72%", false}, // half away from zero
		{"5.71%", []*big.Rat{rat(5705, 100000)}, "5.71%", true},
		{"5.71%", []*big.Rat{rat(5704, 100000)}, "5.70%", false},
		{"0.50", []*big.Rat{rat(1, 2)}, "0.50", true},
		{"0.50", []*big.Rat{rat(1, 3)}, "1/3", false},
		{"0", []*big.Rat{rat(0, 1)}, "0", true},
		{"0", []*big.Rat{rat(1, 1<<40)}, "1/1099511627776", false},
		{"(+0.25, 0, -0.25, 0)", []*big.Rat{rat(1, 4), rat(0, 1), rat(-1, 4), rat(0, 1)}, "(+0.25, 0, -0.25, 0)", true},
		{"(+0.25, 0, -0.25, 0)", []*big.Rat{rat(1, 4), rat(0, 1), rat(-1, 4), rat(1, 8)}, "(+0.25, 0, -0.25, 1/8)", false},
		{"(0.25, 0.25, 0.25, -0.75)", []*big.Rat{rat(1, 4), rat(1, 4), rat(-3, 4), rat(1, 4)}, "(0.25, 0.25, -0.75, 0.25)", false},
		{"+0.25", []*big.Rat{rat(0, 1)}, "0.00", false}, // no sign on zero
	} {
		r, err := compare(c.paper, c.got)
		if err != nil {
			t.Errorf("compare(%q): %v", c.paper, err)
			continue
		}
		if r.Library != c.library || r.Match != c.match {
			t.Errorf("compare(%q, %v) = %q, match %t; want %q, %t", c.paper, c.got, r.Library, r.Match, c.library, c.match)
		}
	}
	for _, c := range []struct {
		paper string
		got   []*big.Rat
	}{
		{"(1, 2)", []*big.Rat{big.NewRat(1, 1)}},
		{"5.71%", []*big.Rat{big.NewRat(1, 1), big.NewRat(1, 1)}},
		{"seventy", []*big.Rat{big.NewRat(70, 1)}},
	} {
		if _, err := compare(c.paper, c.got); err == nil {
			t.Errorf("compare(%q, %d values) gave no error", c.paper, len(c.got))
		}
	}
}

// TestExitStatus checks that a mismatch gives a non-zero status: a table with
// one wrong row reports it.
func TestExitStatus(t *testing.T) {
	rows, err := compute()
	if err != nil {
		t.Fatal(err)
	}
	rows[0].Match = false
	if mismatches(rows) != 1 {
		t.Errorf("mismatches = %d, want 1", mismatches(rows))
	}
	if got := status(rows); got != 1 {
		t.Errorf("status with one mismatch = %d, want 1", got)
	}
	rows[0].Match = true
	if got := status(rows); got != 0 {
		t.Errorf("status with every row matching = %d, want 0", got)
	}
	rows[0].Match = false
	var out bytes.Buffer
	if err := writeTable(&out, rows); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "1 of 23 claims do NOT match") {
		t.Errorf("table does not report the mismatch:\n%s", out.String())
	}
	var errs bytes.Buffer
	if status := run(&out, &errs, []string{"-nosuchflag"}); status != 2 {
		t.Errorf("bad flag: exit status %d, want 2", status)
	}
}

// paperSource is a source printed in the paper: "paper, " and a location
// that names a section, appendix, equation, proposition, table or figure.
var paperSource = regexp.MustCompile(`^paper, .*\b(Section|Appendix|Eq\.|Proposition|Table|Figure) [0-9A-Z]`)

// derivedSource is a source derived in this repository: "derived, " and a
// path relative to the module root, with an optional #fragment.
var derivedSource = regexp.MustCompile(`^derived, (\S+)$`)

// checkSource returns why a row's source is not acceptable, or "" if it is:
// it must be a location in the paper or a docs/ file (and heading) that
// exists in the repository.
func checkSource(root, source string) string {
	if paperSource.MatchString(source) {
		return ""
	}
	m := derivedSource.FindStringSubmatch(source)
	if m == nil {
		return `neither "paper, <Section|Appendix|Eq.|Proposition|Table|Figure> ..." nor "derived, <file>#<heading>"`
	}
	if !strings.HasPrefix(m[1], "docs/") {
		return "a derivation must be cited from docs/"
	}
	return doccheck.Resolve(root, "README.md", m[1])
}

// TestSources checks that every row says where its expected value comes
// from, and that every cited file and heading exists in the repository.
func TestSources(t *testing.T) {
	root := moduleRoot(t)
	rows, err := compute()
	if err != nil {
		t.Fatal(err)
	}
	paper := 0
	for _, r := range rows {
		if why := checkSource(root, r.Source); why != "" {
			t.Errorf("%s: source %q: %s", r.Claim, r.Source, why)
		}
		if strings.HasPrefix(r.Source, "paper, ") {
			paper++
		}
	}
	if paper == 0 {
		t.Error("no row cites a value printed in the paper")
	}
	// The check itself rejects what it must.
	for _, bad := range []string{
		"",
		"paper",
		"paper, somewhere",
		"derived",
		"derived, docs/nosuchfile.md#x",
		"derived, docs/method.md#no-such-heading",
		"derived, docs/method.md#proposition-31 and more",
		"derived, README.md",
		"Prop. 3.1, derived",
	} {
		if checkSource(root, bad) == "" {
			t.Errorf("source %q is accepted", bad)
		}
	}
	for _, good := range []string{
		"paper, Section 4, Table 1",
		"derived, docs/method.md#proposition-31",
		"derived, docs/findings.md",
	} {
		if why := checkSource(root, good); why != "" {
			t.Errorf("source %q is rejected: %s", good, why)
		}
	}
}
