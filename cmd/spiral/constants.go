package main

import (
	"flag"
	"fmt"
	"io"
	"math/big"
	"strings"

	"spiral"
	"spiral/combin"
	"spiral/internal/names"
	"spiral/loss"
)

const constantsHelp = `usage: spiral constants -traces N1 -size n -sets K [-ordered | -balanced]
         [-aggregations N2 -reduction NAME [-baseline B] [-split-roles]
          [-missing-rate D]]

constants writes one JSON object with the constants of Proposition 3.1 for
K distinct sets drawn uniformly without replacement from the family of the
C(N1, n) unordered n-subsets of N1 traces, or with -ordered of the
(N1)_n = N1!/(N1-n)! ordered n-tuples of distinct traces, as the root
package's Config.Constants (combin.Family.Constants) computes them. With
-balanced they are the constants of the balanced design of K subsets
(combin.Balanced), in which every trace is in K n / N1 sets (or the two
nearest whole numbers): a trace is in no set with probability
1 - min(N1, K n)/N1, and M = min(N1, K n)/n - 1.

Flags:
  -traces N1  the number of search traces, 1 <= N1 <= 2^24 (required)
  -size n     the set size, 1 <= n <= N1 (required)
  -sets K     the number of sets, 1 <= K <= the family size, K n <= 2^24 (required)
  -ordered    ordered tuples instead of unordered subsets
  -balanced   the balanced design instead of the uniform draw (subsets only)

Role weights (Config.RoleWeights), written when -reduction is given:
  -aggregations N2  aggregation outputs per set, N2 >= 1 (required with -reduction)
  -reduction NAME   the trainer's loss reduction, as the loss package names it:
                    sum, seq-mean-token-sum, seq-mean-token-sum-norm, trl-rloo,
                    trl-dr-grpo (constant role weights); token-mean,
                    seq-mean-token-mean, trl-grpo, trl-bnpo, trl-dapo,
                    openrlhf-token, openrlhf-sequence, nemo-rl-token and
                    nemo-rl-sequence weight outputs by
                    their lengths and are refused (spiral credit -coefficients
                    gives their exact coefficients per batch)
  -baseline B       the aggregation baseline: within-set (default, the paper's)
                    or leave-one-out
  -split-roles      the search and aggregation outputs are two loss terms, each
                    reduced over its own outputs
  -missing-rate D   each aggregation output is missing (dropped or unscorable)
                    with probability D in [0, 1), independently of its content:
                    the weights are the expected counts E[M(K')] and
                    K E[(S-1)+] (K E[S; S >= 2] leave one out), for the
                    uniform design and -reduction sum or seq-mean-token-sum-norm
                    (default 0: every output scored)

Output (one line):
  {"family_size": "T",           T = C(N1, n) or (N1)_n, a decimal string, exact;
                                 null when T has more than 2^17 bits
   "log_family_size": x,         ln T
   "miss_prob": "p/q",           C(T_avoid, K)/C(T, K): the probability that a
                                 given trace is in no set (T_avoid = C(N1-1, n)
                                 or (N1-1)_n), an exact fraction in lowest terms
   "cover_prob": "p/q",          q_K = 1 - miss_prob, exact
   "m": "p/q",                   M = (N1/n) q_K - 1, the multiplier of Proposition
                                 3.1, exact
   "miss_prob_float": x,         miss_prob as a float64 (relative error < 1e-12)
   "cover_prob_float": x,        cover_prob as a float64
   "m_float": x,                 M as a float64 (absolute error < (N1/n) 1e-12;
                                 the nearest float64 when m is exact)
   "expected_appearances": x,    K n / N1, the expected number of sets that
                                 hold a given trace (the float64 nearest it)
   "role_weights": {             only with -reduction: the expected update with the
                                 advantages as they are is search grad_search J +
                                 aggregation grad_agg J, per problem
     "search": "p/q",            M/d_s, exact (null beyond the exact cost bound)
     "aggregation": "p/q",       K a/d_a, a = N2-1 within the set, N2 leave one out
     "search_float": x, "aggregation_float": x,
     "search_multiplier": x,     1/search: the factor that makes the update unbiased
     "aggregation_multiplier": x}  1/aggregation (0 for a zero weight)
  Fractions are written "p/q" always, so 0 is "0/1" and 1 is "1/1". The exact
  fractions are null when they would need numbers of more than 2^17 bits
  (combin.MaxExactBits); the floats are always given. Every valid input is
  answered or refused in well under a second.

For N1 = 8, n = 4, K = 4 (the paper): family_size "70", miss_prob
"88/1541" (about 5.71%), cover_prob "1453/1541", m "1365/1541",
expected_appearances 2; with -balanced, miss_prob "0/1", cover_prob "1/1",
m "1/1". With -aggregations 4 -reduction sum: role weights 1365/1541 and 12,
multipliers 1.1289 and 1/12; -reduction seq-mean-token-sum -split-roles:
1365/12328 and 3/4. -traces 2 -size 1 -sets 2 -aggregations 3 -reduction
sum -missing-rate 0.25: aggregation weight 81/32 (135/32 leave one out),
not 4 (6).

Exit status: 0 on success, 2 for bad flags or values (the error on stderr).
`

// sizeError says what a Config error about the flags' sizes means in the
// flags' names: each *spiral.InputError renamed to its flag, the first
// per field (a K too large for K*n is also too large for K*N2 = K, which
// the flags do not set).
func sizeError(err error) string {
	var parts []string
	seen := map[string]bool{}
	for _, e := range inputErrors(err) {
		if seen[e.Field] {
			continue
		}
		seen[e.Field] = true
		parts = append(parts, e.In("", names.Spiral.Flag(e.Field)).Error())
	}
	if parts == nil {
		return err.Error()
	}
	return strings.Join(parts, "; ")
}

// inputErrors returns the *spiral.InputErrors that err joins, in order.
func inputErrors(err error) []*spiral.InputError {
	if e, ok := err.(*spiral.InputError); ok {
		return []*spiral.InputError{e}
	}
	var out []*spiral.InputError
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			out = append(out, inputErrors(e)...)
		}
	}
	return out
}

// constantsOutput is the output of constants.
type constantsOutput struct {
	FamilySize          *string            `json:"family_size"`
	LogFamilySize       float64            `json:"log_family_size"`
	MissProb            *string            `json:"miss_prob"`
	CoverProb           *string            `json:"cover_prob"`
	M                   *string            `json:"m"`
	MissProbFloat       float64            `json:"miss_prob_float"`
	CoverProbFloat      float64            `json:"cover_prob_float"`
	MFloat              float64            `json:"m_float"`
	ExpectedAppearances float64            `json:"expected_appearances"`
	RoleWeights         *roleWeightsOutput `json:"role_weights,omitempty"`
}

// roleWeightsOutput is the role_weights object of constants.
type roleWeightsOutput struct {
	Search                *string `json:"search"`
	Aggregation           *string `json:"aggregation"`
	SearchFloat           float64 `json:"search_float"`
	AggregationFloat      float64 `json:"aggregation_float"`
	SearchMultiplier      float64 `json:"search_multiplier"`
	AggregationMultiplier float64 `json:"aggregation_multiplier"`
}

// roleWeights computes the role_weights of constants through
// Config.RoleWeights.
func roleWeights(N1, n, K, N2 int, ordered, balanced bool, b spiral.AggregationBaseline, opt spiral.LossOptions) (*roleWeightsOutput, error) {
	c := spiral.Config{SearchTraces: N1, SetSize: n, Sets: K, AggregationsPerSet: N2, Ordered: ordered, AggregationBaseline: b}
	if balanced {
		c.Design = combin.Balanced
	}
	w, err := c.RoleWeights(opt)
	if err != nil {
		return nil, err
	}
	return &roleWeightsOutput{
		Search: ratString(w.Search), Aggregation: ratString(w.Aggregation),
		SearchFloat: w.SearchFloat, AggregationFloat: w.AggregationFloat,
		SearchMultiplier: w.SearchMultiplier, AggregationMultiplier: w.AggregationMultiplier,
	}, nil
}

// baselines are the names of -baseline.
var baselines = map[string]spiral.AggregationBaseline{"within-set": spiral.WithinSet, "leave-one-out": spiral.LeaveOneOut}

// ratString returns x as "p/q", or nil for nil.
func ratString(x *big.Rat) *string {
	if x == nil {
		return nil
	}
	s := x.String()
	return &s
}

// constants computes the output of constants for N1 traces, sets of n and
// K sets, through Config.Constants.
func constants(N1, n, K int, ordered, balanced bool) (constantsOutput, error) {
	c := spiral.Config{SearchTraces: N1, SetSize: n, Sets: K, AggregationsPerSet: 1, Ordered: ordered}
	if balanced {
		c.Design = combin.Balanced
	}
	k, err := c.Constants()
	if err != nil {
		return constantsOutput{}, err
	}
	fam, err := combin.NewFamily(N1, n, ordered)
	if err != nil {
		return constantsOutput{}, err
	}
	out := constantsOutput{
		LogFamilySize:  fam.LogCount(),
		MissProb:       ratString(k.MissProb),
		CoverProb:      ratString(k.CoverProb),
		M:              ratString(k.M),
		MissProbFloat:  k.MissProbFloat,
		CoverProbFloat: k.CoverProbFloat,
		MFloat:         k.MFloat,
	}
	if T, err := fam.Count(); err == nil {
		s := T.String()
		out.FamilySize = &s
	}
	out.ExpectedAppearances, _ = new(big.Rat).SetFrac(big.NewInt(int64(K)*int64(n)), big.NewInt(int64(N1))).Float64()
	return out, nil
}

func runConstants(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("constants", stderr)
	N := fs.Int("traces", 0, "")
	n := fs.Int("size", 0, "")
	K := fs.Int("sets", 0, "")
	ordered := fs.Bool("ordered", false, "")
	balanced := fs.Bool("balanced", false, "")
	N2 := fs.Int("aggregations", 0, "")
	reduction := fs.String("reduction", "", "")
	baseline := fs.String("baseline", "within-set", "")
	split := fs.Bool("split-roles", false, "")
	missing := fs.Float64("missing-rate", 0, "")
	if code, done := parseFlags(fs, constantsHelp, args, stdout, stderr); done {
		return code
	}
	if err := requireFlags(fs, "traces", "size", "sets"); err != nil {
		return usageError(stderr, "constants", err.Error())
	}
	roles := false
	fs.Visit(func(f *flag.Flag) {
		roles = roles || f.Name == "aggregations" || f.Name == "reduction" || f.Name == "baseline" || f.Name == "split-roles" || f.Name == "missing-rate"
	})
	var opt spiral.LossOptions
	var base spiral.AggregationBaseline
	if roles {
		if err := requireFlags(fs, "aggregations", "reduction"); err != nil {
			return usageError(stderr, "constants", err.Error()+" with -aggregations, -reduction, -baseline, -split-roles or -missing-rate")
		}
		if *N2 < 1 {
			return usageError(stderr, "constants", fmt.Sprintf("-aggregations (N2) = %d < 1", *N2))
		}
		r, err := parseName[loss.Reduction]("-reduction", *reduction)
		if err != nil {
			return usageError(stderr, "constants", err.Error())
		}
		opt.Reduction = r
		b, ok := baselines[*baseline]
		if !ok {
			return usageError(stderr, "constants", fmt.Sprintf("-baseline = %q, want within-set or leave-one-out", *baseline))
		}
		base, opt.SplitRoles, opt.MissingRate = b, *split, *missing
		if b == spiral.LeaveOneOut && *N2 < 2 {
			return usageError(stderr, "constants", fmt.Sprintf("-baseline leave-one-out needs -aggregations (N2) >= 2, have %d", *N2))
		}
		if opt.Reduction.LengthWeighted() {
			return usageError(stderr, "constants", fmt.Sprintf("-reduction %s weights each output by its length (or the batch's tokens): its role weights are not constants; spiral credit -coefficients %s gives the exact coefficients of a batch", opt.Reduction, opt.Reduction))
		}
	}
	out, err := constants(*N, *n, *K, *ordered, *balanced)
	if err != nil {
		return usageError(stderr, "constants", sizeError(err))
	}
	if roles {
		if out.RoleWeights, err = roleWeights(*N, *n, *K, *N2, *ordered, *balanced, base, opt); err != nil {
			return usageError(stderr, "constants", sizeError(err))
		}
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
