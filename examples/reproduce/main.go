// Command reproduce checks, claim by claim, the numbers that follow from the
// SPIRAL paper's configuration and mathematics, and prints one row per
// claim: the claim, the expected value, the value the library computes at
// run time, whether they match, and where the expected value comes from.
//
// A source is either the paper ("paper, " and the location where it prints
// the value; of these numbers it prints only the generated-token ceilings)
// or a derivation in this repository ("derived, " and the section of
// docs/method.md or docs/findings.md that works the value out from the
// paper's formulas at its configuration, N1 = 8, n = 4, K = 4, N2 = 4).
// Expected values are written here as printed or as derived by hand; every
// library value comes from the library's own functions: combin for the set
// family, its selection probabilities and Proposition 3.1's constants, the
// root package spiral for the configuration, the role weights and the credit
// of the worked example, and budget for the token ceilings.
//
// Values are compared exactly, as rational numbers, except a value written
// rounded (5.71%), which is compared with the library's exact value rounded
// to the same number of decimals (half away from zero).
//
// The exit status is 1 if any row does not match, and 2 if the library
// returned an error.
//
// Usage:
//
//	go run ./examples/reproduce [-json]
//
// With -json the same rows are printed as a JSON array of objects with the
// fields claim, expected, library, exact (the library's exact value, for
// rounded rows only), match and source.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"os"
	"strings"
	"text/tabwriter"

	"spiral"
	"spiral/budget"
	"spiral/combin"
)

// row is one claim, as expected and as computed.
type row struct {
	Claim string `json:"claim"`
	// Expected is the value as printed in the paper or as derived in the
	// source.
	Expected string `json:"expected"`
	// Library is the library's value, written in the style of Expected
	// (rounded to the same decimals for a rounded claim).
	Library string `json:"library"`
	// Exact is the library's exact value when Library is rounded.
	Exact string `json:"exact,omitempty"`
	Match bool   `json:"match"`
	// Source says where Expected comes from: "paper, " and a location in
	// the paper, or "derived, " and a docs/ section of this repository.
	Source string `json:"source"`
}

// claim is a row before it is computed: compute returns the library's values
// (one, or one per element of a tuple such as "(0.25, 0, -0.25, 0)").
type claim struct {
	claim, expected, source string
	compute                 func() ([]*big.Rat, error)
}

func main() {
	os.Exit(run(os.Stdout, os.Stderr, os.Args[1:]))
}

// run is the program: it parses args, writes the table (or JSON) to stdout
// and errors to stderr, and returns the exit status.
func run(stdout, stderr io.Writer, args []string) int {
	flags := flag.NewFlagSet("reproduce", flag.ContinueOnError)
	flags.SetOutput(stderr)
	asJSON := flags.Bool("json", false, "print the rows as JSON")
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	rows, err := compute()
	if err == nil {
		if *asJSON {
			err = writeJSON(stdout, rows)
		} else {
			err = writeTable(stdout, rows)
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "reproduce:", err)
		return 2
	}
	return status(rows)
}

// status is the exit status for computed rows: 1 if any row does not match,
// else 0.
func status(rows []row) int {
	if mismatches(rows) > 0 {
		return 1
	}
	return 0
}

// compute computes every claim and compares it with its expected value.
func compute() ([]row, error) {
	claims, err := claims()
	if err != nil {
		return nil, err
	}
	rows := make([]row, 0, len(claims))
	for _, c := range claims {
		got, err := c.compute()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.claim, err)
		}
		r, err := compare(c.expected, got)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.claim, err)
		}
		r.Claim, r.Source = c.claim, c.source
		rows = append(rows, r)
	}
	return rows, nil
}

// mismatches returns the number of rows that do not match.
func mismatches(rows []row) int {
	n := 0
	for _, r := range rows {
		if !r.Match {
			n++
		}
	}
	return n
}

// claims lists the claims, where each expected value comes from, and how the
// library computes each.
func claims() ([]claim, error) {
	cfg := spiral.Paper()
	subsets, err := combin.Subsets(cfg.SearchTraces, cfg.SetSize)
	if err != nil {
		return nil, err
	}
	tuples, err := combin.Tuples(cfg.SearchTraces, cfg.SetSize)
	if err != nil {
		return nil, err
	}
	K := cfg.Sets
	example, err := workedExample(cfg)
	if err != nil {
		return nil, err
	}
	spiralBudget, err := budget.SPIRAL(cfg, budget.PaperLimits(0))
	if err != nil {
		return nil, err
	}
	grpoBudget, err := budget.PaperGRPO().Budget(0)
	if err != nil {
		return nil, err
	}
	roles, err := cfg.RoleWeights(spiral.LossOptions{})
	if err != nil {
		return nil, err
	}
	balanced := cfg
	balanced.Design = combin.Balanced
	constants := func(f combin.Family, d combin.Design, K int, field func(combin.Constants) *big.Rat) func() ([]*big.Rat, error) {
		return func() ([]*big.Rat, error) {
			c, err := f.Constants(d, K)
			if err != nil {
				return nil, err
			}
			if field(c) == nil {
				return nil, fmt.Errorf("%v, K = %d: no exact constant", f, K)
			}
			return []*big.Rat{field(c)}, nil
		}
	}
	cover := func(c combin.Constants) *big.Rat { return c.CoverProb }
	m := func(c combin.Constants) *big.Rat { return c.M }

	return []claim{
		{"possible sets of 4 of 8 traces, C(8, 4)", "70",
			"derived, docs/method.md#the-procedure",
			func() ([]*big.Rat, error) { T, err := subsets.Count(); return ints(T.Int64()), err }},
		{"rollouts per problem, 8 + 16", "24",
			"derived, docs/method.md#the-procedure",
			func() ([]*big.Rat, error) { return ints(int64(cfg.Generations())), nil }},
		{"rewarded rollouts per problem (K·N2)", "16",
			"derived, docs/method.md#the-procedure",
			func() ([]*big.Rat, error) { return ints(int64(cfg.AggregationOutputs())), nil }},
		{"P(trace in no set) = C(35, 4)/C(70, 4)", "52360/916895",
			"derived, docs/method.md#proposition-31",
			func() ([]*big.Rat, error) { return one(subsets.MissProb(K)) }},
		{"P(trace in no set), rounded", "5.71%",
			"derived, docs/method.md#proposition-31",
			func() ([]*big.Rat, error) { return one(subsets.MissProb(K)) }},
		{"expected appearances of a trace, K·n/N1", "2",
			"derived, docs/method.md#proposition-31",
			func() ([]*big.Rat, error) { return one(meanAppearances(subsets, K)) }},
		{"q_K, subsets: 1 − 88/1541", "1453/1541",
			"derived, docs/method.md#proposition-31",
			constants(subsets, combin.Uniform, K, cover)},
		{"M = (N1/n)·q_K − 1, subsets", "1365/1541",
			"derived, docs/method.md#proposition-31",
			constants(subsets, combin.Uniform, K, m)},
		{"q_K, tuples: 1 − C(840, 4)/C(1680, 4)", "1760221/1877122",
			"derived, docs/method.md#proposition-31",
			constants(tuples, combin.Uniform, K, cover)},
		{"M = (N1/n)·q_K − 1, tuples", "821660/938561",
			"derived, docs/method.md#proposition-31",
			constants(tuples, combin.Uniform, K, m)},
		{"M at K = 1 (a lone set has no advantage)", "0",
			"derived, docs/method.md#proposition-31",
			constants(subsets, combin.Uniform, 1, m)},
		{"M with the balanced design, min(N1, K·n)/n − 1", "1",
			"derived, docs/findings.md#set-designs",
			func() ([]*big.Rat, error) { return one(balanced.M()) }},
		{"worked example: set scores f", "(0.75, 0.50, 0.25, 0.50)",
			"derived, docs/method.md#worked-example",
			func() ([]*big.Rat, error) { return floats(example.SetScores...) }},
		{"worked example: set baseline fbar", "0.50",
			"derived, docs/method.md#worked-example",
			func() ([]*big.Rat, error) { return floats(example.SetScores[0] - example.SetAdvantages[0]) }},
		{"worked example: set advantages A_set", "(+0.25, 0, -0.25, 0)",
			"derived, docs/method.md#worked-example",
			func() ([]*big.Rat, error) { return floats(example.SetAdvantages...) }},
		{"worked example: A_search of a trace in G1 and G3 only", "0",
			"derived, docs/method.md#worked-example",
			func() ([]*big.Rat, error) { return floats(example.Search[exampleTrace]) }},
		{"worked example: A_agg of G1 with rewards (1, 1, 1, 0)", "(0.25, 0.25, 0.25, -0.75)",
			"derived, docs/method.md#worked-example",
			func() ([]*big.Rat, error) { return floats(example.Aggregation[0]...) }},
		{"SPIRAL generated-token ceiling, 8·4096 + 4·4·4096", "98,304",
			"paper, Section 4, Table 1",
			func() ([]*big.Rat, error) { return ints(spiralBudget.Generated()), nil }},
		{"GRPO generated-token ceiling, 12·8192", "98,304",
			"paper, Section 4, Table 1",
			func() ([]*big.Rat, error) { return ints(grpoBudget.Generated()), nil }},
		{"uncounted candidate prefill per aggregation call, n·4096", "16,384",
			"derived, docs/method.md#token-budget",
			func() ([]*big.Rat, error) {
				return ints(spiralBudget.AggregationPrefill / spiralBudget.AggregationCalls), nil
			}},
		{"uncounted candidate prefill per problem, 16·4·4096", "262,144",
			"derived, docs/method.md#token-budget",
			func() ([]*big.Rat, error) { return ints(spiralBudget.AggregationPrefill), nil }},
		{"role weight of the search gradient (= M)", "1365/1541",
			"derived, docs/findings.md#aggregation-factor-and-role-weights",
			func() ([]*big.Rat, error) { return []*big.Rat{roles.Search}, nil }},
		{"role weight of the aggregation gradient, K·(N2 − 1)", "12",
			"derived, docs/findings.md#aggregation-factor-and-role-weights",
			func() ([]*big.Rat, error) { return []*big.Rat{roles.Aggregation}, nil }},
	}, nil
}

// exampleTrace is the trace of the worked example that is in G1 and G3 only.
const exampleTrace = 0

// workedExample computes, with the root package's Credit, the credit of
// docs/method.md's worked example at the paper's configuration: four sets of four
// of the eight traces, trace 0 in G1 and G3 only, and four rewards per set
// whose means are f = (0.75, 0.50, 0.25, 0.50), G1's being (1, 1, 1, 0).
func workedExample(cfg spiral.Config) (spiral.Credit, error) {
	plan := spiral.Plan{Sets: [][]int{
		{0, 1, 2, 3}, // G1
		{1, 4, 5, 6}, // G2
		{0, 5, 6, 7}, // G3
		{2, 3, 4, 7}, // G4
	}}
	rewards := [][]float64{
		{1, 1, 1, 0}, // f = 0.75
		{1, 0, 1, 0}, // f = 0.50
		{0, 0, 1, 0}, // f = 0.25
		{0, 1, 0, 1}, // f = 0.50
	}
	c, err := cfg.Credit(plan, rewards, spiral.Lengths{})
	if err != nil {
		return spiral.Credit{}, err
	}
	if got := c.Appearances[exampleTrace]; got != 2 {
		return spiral.Credit{}, fmt.Errorf("worked example: trace %d is in %d sets, want 2 (G1 and G3)", exampleTrace, got)
	}
	return c, nil
}

// meanAppearances returns the mean of f.AppearanceDist(K), the expected number
// of the K sets that hold a given trace.
func meanAppearances(f combin.Family, K int) (*big.Rat, error) {
	dist, err := f.AppearanceDist(K)
	if err != nil {
		return nil, err
	}
	mean := new(big.Rat)
	for j, p := range dist {
		mean.Add(mean, new(big.Rat).Mul(big.NewRat(int64(j), 1), p))
	}
	return mean, nil
}

func ints(v ...int64) []*big.Rat {
	out := make([]*big.Rat, len(v))
	for i, x := range v {
		out[i] = big.NewRat(x, 1)
	}
	return out
}

// floats converts float64 values to their exact rational values.
func floats(v ...float64) ([]*big.Rat, error) {
	out := make([]*big.Rat, len(v))
	for i, x := range v {
		if out[i] = new(big.Rat).SetFloat64(x); out[i] == nil {
			return nil, fmt.Errorf("library value %v is not finite", x)
		}
	}
	return out, nil
}

func one(r *big.Rat, err error) ([]*big.Rat, error) {
	if err != nil {
		return nil, err
	}
	return []*big.Rat{r}, nil
}

// compare compares the library's values got with the expected value as
// written, and writes the library's values in the same style.
//
// A printed value ending in % is a rounded percentage: it matches when the
// library's exact value, times 100 and rounded to the same number of decimals,
// prints the same. Otherwise the printed value is one number or a
// parenthesised, comma-separated tuple of numbers (integers, decimals or
// fractions a/b, with an optional sign; outside a tuple commas may group an
// integer's digits), and it matches
// when every element equals the library's value exactly.
func compare(expected string, got []*big.Rat) (row, error) {
	r := row{Expected: expected}
	if pct, ok := strings.CutSuffix(expected, "%"); ok {
		if len(got) != 1 {
			return r, fmt.Errorf("a percentage needs one library value, got %d", len(got))
		}
		decimals := 0
		if _, frac, ok := strings.Cut(pct, "."); ok {
			decimals = len(frac)
		}
		r.Library = new(big.Rat).Mul(got[0], big.NewRat(100, 1)).FloatString(decimals) + "%"
		r.Exact = got[0].RatString()
		r.Match = r.Library == expected
		return r, nil
	}
	elems := []string{expected}
	tuple := strings.HasPrefix(expected, "(") && strings.HasSuffix(expected, ")")
	if tuple {
		elems = strings.Split(expected[1:len(expected)-1], ",")
	}
	if len(elems) != len(got) {
		return r, fmt.Errorf("expected value %q has %d elements, the library %d", expected, len(elems), len(got))
	}
	r.Match = true
	lib := make([]string, len(got))
	for i, e := range elems {
		e = strings.TrimSpace(e)
		want, err := parseNumber(e)
		if err != nil {
			return r, err
		}
		r.Match = r.Match && want.Cmp(got[i]) == 0
		lib[i] = formatLike(e, got[i])
	}
	r.Library = lib[0]
	if tuple {
		r.Library = "(" + strings.Join(lib, ", ") + ")"
	}
	return r, nil
}

// parseNumber parses a printed number: an optional sign, then an integer
// (its digits possibly grouped by commas), a decimal or a fraction a/b.
func parseNumber(s string) (*big.Rat, error) {
	t := strings.ReplaceAll(s, ",", "")
	r, ok := new(big.Rat).SetString(t)
	if !ok || t == "" {
		return nil, fmt.Errorf("expected value %q is not a number", s)
	}
	return r, nil
}

// formatLike writes v in the style of the printed number like: a fraction,
// a decimal with the same number of places, an integer grouped by commas,
// an explicit + sign. A value that the printed style cannot show exactly is
// written in full, as a fraction.
func formatLike(like string, v *big.Rat) string {
	var s string
	switch {
	case strings.Contains(like, "/"):
		s = v.RatString()
	case strings.Contains(like, "."):
		_, frac, _ := strings.Cut(like, ".")
		s = v.FloatString(len(frac))
		if back, _ := new(big.Rat).SetString(s); back.Cmp(v) != 0 {
			s = v.RatString()
		}
	case v.IsInt():
		s = v.Num().String()
		if strings.Contains(like, ",") {
			s = groupDigits(s)
		}
	default:
		s = v.RatString()
	}
	if strings.HasPrefix(like, "+") && v.Sign() > 0 {
		s = "+" + s
	}
	return s
}

// groupDigits writes an integer's digits in groups of three, separated by
// commas.
func groupDigits(s string) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	var b strings.Builder
	for i, d := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	return sign + b.String()
}

// writeTable writes the rows as an aligned table and a closing verdict.
func writeTable(w io.Writer, rows []row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "claim\texpected\tlibrary\tmatch\tsource")
	for _, r := range rows {
		lib := r.Library
		if r.Exact != "" {
			lib += " (" + r.Exact + ")"
		}
		match := "yes"
		if !r.Match {
			match = "NO"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Claim, r.Expected, lib, match, r.Source)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var err error
	if n := mismatches(rows); n == 0 {
		_, err = fmt.Fprintf(w, "\nall %d claims match\n", len(rows))
	} else {
		_, err = fmt.Fprintf(w, "\n%d of %d claims do NOT match\n", n, len(rows))
	}
	return err
}

// writeJSON writes the rows as an indented JSON array.
func writeJSON(w io.Writer, rows []row) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rows)
}
