package main

import (
	"flag"
	"fmt"
	"io"
	"math/big"

	"spiral/combin"
)

const constantsHelp = `usage: spiral constants -traces N -size n -sets K [-ordered | -balanced]

constants writes one JSON object with the exact constants of Proposition 3.1
for K distinct groups drawn uniformly without replacement from the family of
the C(N, n) unordered n-subsets of N traces, or with -ordered of the
(N)_n = N!/(N-n)! ordered n-tuples of distinct traces. With -balanced they
are the constants of the balanced design of K subsets (combin.Balanced), in
which every trace is in K n / N groups (or the two nearest whole numbers):
a trace is in no group with probability 1 - min(N, K n)/N, and
M = min(N, K n)/n - 1.

Flags:
  -traces N   the number of search traces, 1 <= N <= 2^24 (required)
  -size n     the set size, 1 <= n <= N (required)
  -sets K     the number of groups, 1 <= K <= family_size (required)
  -ordered    ordered tuples instead of unordered subsets
  -balanced   the balanced design instead of the uniform draw (subsets only)

Output (one line):
  {"family_size": "T",           T = C(N, n) or (N)_n, a decimal string, exact
   "miss_prob": "p/q",           C(T_avoid, K)/C(T, K): the probability that a
                                 given trace is in no group (T_avoid = C(N-1, n)
                                 or (N-1)_n), an exact fraction in lowest terms
   "cover_prob": "p/q",          q_K = 1 - miss_prob, exact
   "m": "p/q",                   M = (N/n) q_K - 1, the multiplier of Proposition
                                 3.1, exact
   "miss_prob_float": x,         miss_prob as a float64 (relative error < 1e-12
                                 when miss_prob >= 1e-300)
   "cover_prob_float": x,        the float64 nearest cover_prob
   "m_float": x,                 the float64 nearest m
   "expected_appearances": x}    K n / N, the expected number of groups that
                                 hold a given trace (the float64 nearest it)
  Fractions are written "p/q" always, so 0 is "0/1" and 1 is "1/1".

For N = 8, n = 4, K = 4 (the paper): family_size "70", miss_prob
"88/1541" (about 5.71%), cover_prob "1453/1541", m "1365/1541",
expected_appearances 2; with -balanced, miss_prob "0/1", cover_prob "1/1",
m "1/1".

Exit status: 0 on success, 2 for bad flags or values (the error on stderr).
`

// flagSymbols ends the error of a size flag that the library rejected,
// whose message uses the paper's symbols.
const flagSymbols = " (-traces is N, -size is n, -sets is K)"

// constantsOutput is the output of constants.
type constantsOutput struct {
	FamilySize          string  `json:"family_size"`
	MissProb            string  `json:"miss_prob"`
	CoverProb           string  `json:"cover_prob"`
	M                   string  `json:"m"`
	MissProbFloat       float64 `json:"miss_prob_float"`
	CoverProbFloat      float64 `json:"cover_prob_float"`
	MFloat              float64 `json:"m_float"`
	ExpectedAppearances float64 `json:"expected_appearances"`
}

// constants computes the output of constants for N traces, sets of n and K
// groups.
func constants(N, n, K int, ordered, balanced bool) (constantsOutput, error) {
	if balanced {
		if ordered {
			return constantsOutput{}, fmt.Errorf("-balanced with -ordered: balanced designs are drawn from subsets")
		}
		return balancedConstants(N, n, K)
	}
	makeFamily := combin.Subsets
	if ordered {
		makeFamily = combin.Tuples
	}
	fam, err := makeFamily(N, n)
	if err != nil {
		return constantsOutput{}, err
	}
	miss, err := fam.MissProb(K)
	if err != nil {
		return constantsOutput{}, err
	}
	missFloat, err := fam.MissProbFloat(K)
	if err != nil {
		return constantsOutput{}, err
	}
	c, err := fam.Constants(combin.Uniform, K)
	if err != nil {
		return constantsOutput{}, err
	}
	if c.CoverProb == nil || c.M == nil {
		return constantsOutput{}, fmt.Errorf("%v, K = %d: the exact constants are beyond combin's cost bound", fam, K)
	}
	return newConstantsOutput(fam, K, miss, c.CoverProb, c.M, missFloat, c.CoverProbFloat, c.MFloat), nil
}

// newConstantsOutput writes the constants of K groups of the family fam.
func newConstantsOutput(fam combin.Family, K int, miss, cover, m *big.Rat, missFloat, coverFloat, mFloat float64) constantsOutput {
	N, n := fam.Traces(), fam.SetSize()
	appear, _ := new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(int64(K)), big.NewInt(int64(n))), big.NewInt(int64(N))).Float64()
	familySize := fmt.Sprintf("about exp(%.6g)", fam.LogCount())
	if T, err := fam.Count(); err == nil {
		familySize = T.String()
	}
	return constantsOutput{
		FamilySize:          familySize,
		MissProb:            miss.String(),
		CoverProb:           cover.String(),
		M:                   m.String(),
		MissProbFloat:       missFloat,
		CoverProbFloat:      coverFloat,
		MFloat:              mFloat,
		ExpectedAppearances: appear,
	}
}

// balancedConstants computes the output of constants -balanced: the design
// covers min(N, K n) of the N traces and is exchangeable, so a given trace is
// in no group with probability 1 - min(N, K n)/N, and M is combin's
// balanced M.
func balancedConstants(N, n, K int) (constantsOutput, error) {
	fam, err := combin.Subsets(N, n)
	if err != nil {
		return constantsOutput{}, err
	}
	c, err := fam.Constants(combin.Balanced, K)
	if err != nil {
		return constantsOutput{}, err
	}
	m := c.M
	covered := int64(N)
	if kn := int64(K) * int64(n); kn < covered {
		covered = kn
	}
	cover := big.NewRat(covered, int64(N))
	miss := new(big.Rat).Sub(big.NewRat(1, 1), cover)
	missFloat, _ := miss.Float64()
	coverFloat, _ := cover.Float64()
	mFloat, _ := m.Float64()
	return newConstantsOutput(fam, K, miss, cover, m, missFloat, coverFloat, mFloat), nil
}

func runConstants(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("constants", stderr)
	N := fs.Int("traces", 0, "")
	n := fs.Int("size", 0, "")
	K := fs.Int("sets", 0, "")
	ordered := fs.Bool("ordered", false, "")
	balanced := fs.Bool("balanced", false, "")
	if code, done := parseFlags(fs, constantsHelp, args, stdout, stderr); done {
		return code
	}
	if err := requireFlags(fs, "traces", "size", "sets"); err != nil {
		return usageError(stderr, "constants", err.Error())
	}
	out, err := constants(*N, *n, *K, *ordered, *balanced)
	if err != nil {
		return usageError(stderr, "constants", err.Error()+flagSymbols)
	}
	var o jsonOut
	if _, err := fmt.Fprintf(stdout, "%s\n", o.encode(out)); err != nil {
		fmt.Fprintf(stderr, "spiral constants: writing standard output: %v\n", err)
		return exitUsage
	}
	return exitOK
}

// requireFlags returns an error naming the first of names not set on the
// command line.
func requireFlags(fs *flag.FlagSet, names ...string) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, name := range names {
		if !set[name] {
			return fmt.Errorf("flag -%s is required", name)
		}
	}
	return nil
}
