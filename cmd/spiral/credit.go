package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"spiral"
	"spiral/advantage"
	"spiral/combin"
	"spiral/internal/names"
	"spiral/lengthgate"
)

const creditHelp = `usage: spiral credit [-search-target L] [-aggregation-target L] [-boundary gate|keep]
                     [-overlong-max L [-overlong-buffer B] [-overlong-factor F]]
                     [-reward-range LOW,HIGH] [-ordered]
                     [-coefficients REDUCTION [-update joint|paper|scored] [-split-roles]
                      [-missing-rate D]] < lines

credit computes SPIRAL's credit for one problem per input line, with the
root package's Config.CreditBatch (the credit of package advantage, then the
length gates of Eq. 8), and writes one output line per input line, in order.

Flags:
  -search-target L       L_target of the search gate, in tokens; 0 (default) disables it
  -aggregation-target L  L_target of the aggregation gate, in tokens; 0 (default) disables it
  -boundary gate|keep    what a gate does to a positive advantage of an output
                         whose length equals L_target exactly: "gate" (default;
                         Eq. 8's first case read literally, L < L_target keeps)
                         or "keep" (only L > L_target is gated); both gates
  -overlong-max L        DAPO's soft overlong punishment: L_max in tokens (0, the
                         default, switches it off). The penalty of an
                         aggregation output of length L, 0 up to L_max - B,
                         falling linearly to -F at L_max and -F beyond, is added
                         to its reward before any score or baseline
                         (lengthgate.SoftOverlong); needs aggregation_lengths
  -overlong-buffer B     DAPO's L_cache in tokens, 0 <= B <= L_max (default 0)
  -overlong-factor F     the penalty's factor, 0 < F <= 1e30 (default 1)
  -reward-range LOW,HIGH OpenRLHF's dynamic-sampling filter: a problem whose mean
                         raw reward is not strictly between LOW and HIGH gets
                         zero search and aggregation advantages and
                         "out_of_range": true (decided before any shaping)
  -ordered               sets are ordered tuples (the family of Proposition
                         3.1): two sets with the same traces in different
                         orders are distinct. Without it sets are subsets,
                         in any presentation order, and no two sets may hold
                         the same traces.
  -coefficients REDUCTION
                         also write the loss coefficients (Config.LossCoefficients)
                         for a trainer whose loss reduces the line's outputs with
                         REDUCTION, named as the loss package names it (sum,
                         token-mean, seq-mean-token-sum, seq-mean-token-mean,
                         seq-mean-token-sum-norm, trl-grpo, trl-bnpo, trl-dr-grpo,
                         trl-dapo, trl-rloo, openrlhf-token, openrlhf-sequence,
                         nemo-rl-token, nemo-rl-sequence):
                         put them where the trainer puts its advantages, and its
                         gradient is "scale" times the chosen update, whatever the
                         lengths. The line's N1 + K N2 outputs are the rows reduced
                         together; for a batch of several lines reduced together,
                         take -coefficients sum (the update itself) and spiral
                         loss over the batch's rows. Needs
                         search_lengths and aggregation_lengths
  -update joint|paper|scored
                         the update the coefficients produce: joint (default),
                         SPIRAL's unbiased joint gradient (search advantages over
                         M, aggregation advantages over K (N2 - 1)); paper, the
                         advantages as they are; or scored, the joint gradient
                         from the counts actually scored (search over
                         M(K') P(K' >= 2) for K' sets with a scored output,
                         aggregation over K (S - 1) P(S >= 2) for S scored
                         outputs), unbiased when outputs go missing at the rate
                         -missing-rate
  -missing-rate D        each aggregation output is missing (dropped or
                         unscorable) with probability D in [0, 1), independently
                         of its content (default 0): joint divides by the
                         expected counts, scored by P(K' >= 2) and P(S >= 2)
  -split-roles           the trainer reduces the search traces and the aggregation
                         outputs as two loss terms, each over its own outputs

Input line (one JSON object; numbers in rewards are finite):
  {"traces": N1,                      required: the number of search traces, N1 >= 1;
                                      at most 4096 or the line's length in bytes,
                                      whichever is more (the answer has N1 entries)
   "sets": [[y, ...], ...],           required: the K candidate sets, each of n distinct
                                      trace indices in [0, N1), in presentation order
   "rewards": [[r, ...], ...],        required: rewards[i][j] is the reward of aggregation
                                      output j of set i; K rows, each with 1 or more
                                      rewards (rows may differ in length: a dropped
                                      generation); |r| <= 1e30
   "unscorable": [[b, ...], ...],     optional, the shape of rewards: true marks an
                                      output that could not be scored (its reward, any
                                      number, is not read): it is left out of its set's
                                      score and of the baselines, and its advantage is 0;
                                      a set with none scored is left out of the baseline
   "search_lengths": [L, ...],        length in tokens of each search trace (N1 of
                                      them); required with -search-target
   "aggregation_lengths": [[L, ...]]} length of each aggregation output, the shape of
                                      rewards; required with -aggregation-target and
                                      -overlong-max
  Lengths are integers >= 0. A length field may be given with its gate off: it
  is then checked and unused. JSON has no NaN: a reward that could not be
  computed goes in unscorable, not as NaN.

Output line:
  {"search": [a, ...],                A_search(y) of each trace y after the search gate
                                      (0 for a trace in no scored set); N1 numbers
   "aggregation": [[a, ...], ...],    A_agg(i, j) = r_ij - f_i after the aggregation gate,
                                      the shape of rewards (0 for an unscorable output)
   "set_scores": [f, ...],            f_i = mean of the scored rewards of set i
   "set_advantages": [a, ...],        A_set(G_i) = f_i - the mean of f over scored sets
   "appearances": [c, ...],           |G(y)|, the number of scored sets holding trace y
   "in_no_set": c,                    the number of traces in no scored set
   "scored_outputs": [c, ...],        the number of scored outputs of each set
   "no_signal": b,                    true when the rewards give no gradient (every
                                      advantage is 0); dynamic sampling resamples it
   "out_of_range": b,                 with -reward-range only: the mean raw reward is
                                      outside (LOW, HIGH), so every advantage is 0
   "overlong": P,                     with -overlong-max only: what the punishment did,
                                      {"outputs": c, "penalized": c, "overlong": c,
                                       "total": t}: rewards examined, how many got a
                                      penalty < 0, how many had L > L_max, and the
                                      sum of the penalties (<= 0)
   "search_gate": G,                  what the search gate did, and
   "aggregation_gate": G}             what the aggregation gate did, each
                                      {"outputs": c, "positive": c, "at_target": c,
                                       "gated": c, "mass_removed": m}:
                                      advantages examined, how many were > 0,
                                      positive ones with length == L_target,
                                      positive ones set to 0, and their sum
                                      (all 0 but outputs and positive when the
                                      gate is off)
   "search_coefficients": [c, ...],   with -coefficients only: each search trace's
   "aggregation_coefficients": [[c]], and each aggregation output's coefficient
                                      (the shape of rewards; 0 for an output of
                                      no tokens)
   "scale": x}                        with -coefficients only: the trainer's gradient
                                      is scale times the chosen update (1 for sum,
                                      1/R for the means, R the outputs with a token;
                                      the trainer's own constants aside)
  The answer's size is proportional to the line's.

Errors name the line's fields and positions, such as rewards[1][0] or
sets[2][3]; N1 is traces, K is len(sets), n is len(sets[0]) and N2 is the
length of the longest row of rewards.
` + streamHelp

// creditSchema lists the fields of a credit input line.
var creditSchema = schema{
	names:     []string{"traces", "sets", "rewards", "unscorable", "search_lengths", "aggregation_lengths"},
	required:  []bool{true, true, true, false, false, false},
	nonFinite: `write any number in its place and mark the output unscorable ("unscorable": [[false, true, ...], ...], the shape of rewards), or leave it out of its set's rewards`,
}

// Indices of the optional fields in creditSchema.names.
const (
	fieldUnscorable         = 3
	fieldSearchLengths      = 4
	fieldAggregationLengths = 5
)

// MinTraceBound is the number of traces a credit line may always name. A
// line may name more, up to its own length in bytes: the answer holds two
// numbers per trace, so a short line naming millions of traces (most in no
// set) would otherwise get an answer millions of times its size.
const MinTraceBound = 4096

// creditLine is one decoded credit input line.
type creditLine struct {
	Traces             int         `json:"traces"`
	Sets               [][]int     `json:"sets"`
	Rewards            [][]float64 `json:"rewards"`
	Unscorable         [][]bool    `json:"unscorable"`
	SearchLengths      []int       `json:"search_lengths"`
	AggregationLengths [][]int     `json:"aggregation_lengths"`
}

// creditOutput is one credit output line.
type creditOutput struct {
	Search          []float64      `json:"search"`
	Aggregation     [][]float64    `json:"aggregation"`
	SetScores       []float64      `json:"set_scores"`
	SetAdvantages   []float64      `json:"set_advantages"`
	Appearances     []int          `json:"appearances"`
	InNoSet         int            `json:"in_no_set"`
	ScoredOutputs   []int          `json:"scored_outputs"`
	NoSignal        bool           `json:"no_signal"`
	OutOfRange      *bool          `json:"out_of_range,omitempty"`
	Overlong        *penaltyReport `json:"overlong,omitempty"`
	SearchGate      gateReport     `json:"search_gate"`
	AggregationGate gateReport     `json:"aggregation_gate"`

	SearchCoefficients      []float64   `json:"search_coefficients,omitempty"`
	AggregationCoefficients [][]float64 `json:"aggregation_coefficients,omitempty"`
	Scale                   *float64    `json:"scale,omitempty"`
}

// gateReport is a lengthgate.Report in the output's JSON.
type gateReport struct {
	Outputs     int     `json:"outputs"`
	Positive    int     `json:"positive"`
	AtTarget    int     `json:"at_target"`
	Gated       int     `json:"gated"`
	MassRemoved float64 `json:"mass_removed"`
}

// penaltyReport is a lengthgate.PenaltyReport in the output's JSON.
type penaltyReport struct {
	Outputs   int     `json:"outputs"`
	Penalized int     `json:"penalized"`
	Overlong  int     `json:"overlong"`
	Total     float64 `json:"total"`
}

func newGateReport(r lengthgate.Report) gateReport {
	return gateReport{Outputs: r.Outputs, Positive: r.Positive, AtTarget: r.AtTarget, Gated: r.Gated, MassRemoved: r.MassRemoved}
}

// gateOf returns the report of gate g, which is r when g is enabled; for a
// disabled gate, which reports nothing, the outputs it would have examined
// and how many of their advantages adv are positive.
func gateOf(g lengthgate.Gate, r lengthgate.Report, adv []float64) gateReport {
	if !g.Enabled() {
		r.Outputs += len(adv)
		for _, a := range adv {
			if a > 0 {
				r.Positive++
			}
		}
	}
	return newGateReport(r)
}

// inNoSet returns the number of traces in no set.
func inNoSet(appearances []int) int {
	m := 0
	for _, a := range appearances {
		if a == 0 {
			m++
		}
	}
	return m
}

// creditHandler computes the credit of one line with the Config that the
// flags give (gates, family) and the sizes the line gives, through
// Config.CreditBatch on a batch of one problem.
type creditHandler struct {
	base    spiral.Config
	in      creditLine // decoded into again and again, reusing its slices
	batch   spiral.Batch
	members []int // the line's sets, flat
	plans   spiral.Plans
	credit  spiral.BatchCredit
	rows    [][]float64
	out     jsonOut
	coef    coefficients
}

func (h *creditHandler) handle(line []byte) ([]byte, error) {
	in := &h.in
	present, err := creditSchema.decode(line, in)
	if err != nil {
		return nil, err
	}
	if !present[fieldUnscorable] {
		in.Unscorable = nil
	}
	if !present[fieldSearchLengths] {
		in.SearchLengths = nil
	}
	if !present[fieldAggregationLengths] {
		in.AggregationLengths = nil
	}
	c, err := h.layout(in, len(line))
	if err != nil {
		return nil, err
	}
	if err := c.CreditBatch(&h.credit, h.batch); err != nil {
		return nil, configError(err)
	}
	b := &h.credit
	h.rows = h.rows[:0]
	o := 0
	for _, rs := range in.Rewards {
		h.rows = append(h.rows, b.Aggregation[o:o+len(rs)])
		o += len(rs)
	}
	out := creditOutput{
		Search:          b.Search,
		Aggregation:     h.rows,
		SetScores:       b.SetScores,
		SetAdvantages:   b.SetAdvantages,
		Appearances:     b.Appearances,
		InNoSet:         inNoSet(b.Appearances),
		ScoredOutputs:   b.ScoredOutputs,
		NoSignal:        b.NoSignal[0],
		SearchGate:      gateOf(c.Gates.Search, b.Gates.Search, b.Search),
		AggregationGate: gateOf(c.Gates.Aggregation, b.Gates.Aggregation, b.Aggregation),
	}
	if c.RewardRange.Enabled() {
		out.OutOfRange = &b.OutOfRange[0]
	}
	if c.Overlong != nil {
		r := b.Overlong
		out.Overlong = &penaltyReport{Outputs: r.Outputs, Penalized: r.Penalized, Overlong: r.Overlong, Total: r.Total}
	}
	if err := h.coef.write(&out, c, b, h.batch, in); err != nil {
		return nil, err
	}
	return h.out.encode(out), nil
}

// layout checks the shapes of a decoded line, in its own field names, and
// lays it out in h.batch as one problem of the Config it returns. It checks
// only what the flat layout needs (every set as long as sets[0], one row
// of rewards per set, lengths and marks in the shape of the rewards) and
// the bound on traces; the library checks the rest.
func (h *creditHandler) layout(in *creditLine, lineSize int) (spiral.Config, error) {
	if bound := max(MinTraceBound, lineSize); in.Traces > bound {
		return spiral.Config{}, fmt.Errorf("traces = %d > %d: a line may name at most %d traces or as many as it has bytes, whichever is more, so that the answer stays proportional to the line", in.Traces, bound, MinTraceBound)
	}
	if in.Traces < 1 {
		return spiral.Config{}, fmt.Errorf("traces = %d < 1", in.Traces)
	}
	k := len(in.Sets)
	if k == 0 {
		return spiral.Config{}, errors.New("sets is empty: want at least one set")
	}
	n := len(in.Sets[0])
	if len(in.Rewards) != k {
		return spiral.Config{}, fmt.Errorf("len(rewards) = %d, want len(sets) = %d: one row per set", len(in.Rewards), k)
	}
	if in.Unscorable != nil && len(in.Unscorable) != k {
		return spiral.Config{}, fmt.Errorf("len(unscorable) = %d, want len(sets) = %d: one row per set", len(in.Unscorable), k)
	}
	if in.AggregationLengths != nil && len(in.AggregationLengths) != k {
		return spiral.Config{}, fmt.Errorf("len(aggregation_lengths) = %d, want len(sets) = %d: one row per set", len(in.AggregationLengths), k)
	}
	c := h.base
	c.SearchTraces, c.Sets, c.SetSize, c.AggregationsPerSet = in.Traces, k, n, 1
	b := &h.batch
	h.members, b.Rewards, b.RewardCounts = h.members[:0], b.Rewards[:0], b.RewardCounts[:0]
	b.Unscorable, b.AggregationLengths = b.Unscorable[:0], b.AggregationLengths[:0]
	for i, s := range in.Sets {
		if len(s) != n {
			return spiral.Config{}, fmt.Errorf("len(sets[%d]) = %d, want %d, the length of sets[0]: every set has n members", i, len(s), n)
		}
		rs := in.Rewards[i]
		if in.Unscorable != nil && len(in.Unscorable[i]) != len(rs) {
			return spiral.Config{}, fmt.Errorf("len(unscorable[%d]) = %d, want len(rewards[%d]) = %d", i, len(in.Unscorable[i]), i, len(rs))
		}
		if in.AggregationLengths != nil && len(in.AggregationLengths[i]) != len(rs) {
			return spiral.Config{}, fmt.Errorf("len(aggregation_lengths[%d]) = %d, want len(rewards[%d]) = %d", i, len(in.AggregationLengths[i]), i, len(rs))
		}
		c.AggregationsPerSet = max(c.AggregationsPerSet, len(rs))
		h.members = append(h.members, s...)
		b.RewardCounts = append(b.RewardCounts, len(rs))
		b.Rewards = append(b.Rewards, rs...)
		if in.Unscorable != nil {
			b.Unscorable = append(b.Unscorable, in.Unscorable[i]...)
		}
		if in.AggregationLengths != nil {
			b.AggregationLengths = append(b.AggregationLengths, in.AggregationLengths[i]...)
		}
	}
	if in.Unscorable == nil {
		b.Unscorable = nil
	}
	if in.AggregationLengths == nil {
		b.AggregationLengths = nil
	}
	b.SearchLengths = in.SearchLengths
	b.Plans = &h.plans
	if err := c.CheckPlans(&h.plans, h.members); err != nil {
		return c, configError(err)
	}
	return c, nil
}

// configError says what an error of the root package about a credit
// line's sizes means in the line's field names: each *spiral.InputError
// renamed to the line's field (names.Spiral).
func configError(err error) error {
	var parts []string
	for _, e := range inputErrors(err) {
		parts = append(parts, inLine(e).Error())
	}
	if parts == nil {
		return err
	}
	return errors.New(strings.Join(parts, "; "))
}

// inLine returns e, an error of the library about one line, in the
// line's own words: its field renamed to the line's (names.Spiral), and,
// since a line is one problem, its set folded into the field as an index
// ("rewards[1]"), so that a position reads rewards[1][0]. The reason is
// the library's.
func inLine(e *spiral.InputError) *spiral.InputError {
	name := names.Spiral.Line(e.Field)
	c := e.In("", name)
	if c.Problem == 0 {
		c.Problem = -1
	}
	if c.Problem < 0 && c.Set >= 0 {
		c.Field, c.Set = fmt.Sprintf("%s[%d]", name, c.Set), -1
	}
	return c
}

// boundaryFlag is the -boundary flag.
type boundaryFlag struct{ b lengthgate.Boundary }

func (f *boundaryFlag) String() string {
	if f.b == lengthgate.KeepAtTarget {
		return "keep"
	}
	return "gate"
}

func (f *boundaryFlag) Set(s string) error {
	switch s {
	case "gate":
		f.b = lengthgate.GateAtTarget
	case "keep":
		f.b = lengthgate.KeepAtTarget
	default:
		return fmt.Errorf("want gate or keep, got %q", s)
	}
	return nil
}

func runCredit(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("credit", stderr)
	searchTarget := fs.Int("search-target", 0, "")
	aggTarget := fs.Int("aggregation-target", 0, "")
	var boundary boundaryFlag
	fs.Var(&boundary, "boundary", "")
	overlongMax := fs.Int("overlong-max", 0, "")
	overlongBuffer := fs.Int("overlong-buffer", 0, "")
	overlongFactor := fs.Float64("overlong-factor", 1, "")
	var rewardRange rangeFlag
	fs.Var(&rewardRange, "reward-range", "")
	ordered := fs.Bool("ordered", false, "")
	var coef coefficients
	coef.flags(fs)
	if code, done := parseFlags(fs, creditHelp, args, stdout, stderr); done {
		return code
	}
	if err := coef.parse(); err != nil {
		return usageError(stderr, "credit", err.Error())
	}
	c := spiral.Config{
		Gates: lengthgate.Gates{
			Search:      lengthgate.Gate{Target: *searchTarget, Boundary: boundary.b},
			Aggregation: lengthgate.Gate{Target: *aggTarget, Boundary: boundary.b},
		},
	}
	if *ordered {
		c.Ordered = true
	} else {
		// Subsets in any presentation order: a trainer may have shuffled.
		c.Order = combin.Shuffled
	}
	if *searchTarget < 0 {
		return usageError(stderr, "credit", fmt.Sprintf("-search-target = %d < 0", *searchTarget))
	}
	if *aggTarget < 0 {
		return usageError(stderr, "credit", fmt.Sprintf("-aggregation-target = %d < 0", *aggTarget))
	}
	switch {
	case *overlongMax > 0:
		o := lengthgate.SoftOverlong{MaxLength: *overlongMax, Buffer: *overlongBuffer, Factor: *overlongFactor}
		if err := o.Validate(); err != nil {
			return usageError(stderr, "credit", overlongError(err))
		}
		c.Overlong = &o
	case *overlongMax < 0:
		return usageError(stderr, "credit", fmt.Sprintf("-overlong-max = %d < 0 (0 switches the punishment off)", *overlongMax))
	case *overlongBuffer != 0 || *overlongFactor != 1:
		return usageError(stderr, "credit", "-overlong-buffer and -overlong-factor need -overlong-max")
	}
	c.RewardRange = rewardRange.r
	return runStream("credit", stdin, stdout, stderr, &creditHandler{base: c, coef: coef})
}

// overlongError returns the error of lengthgate.SoftOverlong.Validate in
// the flags' names: its field (a field of Config.Overlong) renamed to the
// flag that sets it.
func overlongError(err error) string {
	if e, ok := errors.AsType[*lengthgate.InputError](err); ok {
		return e.In("", names.Spiral.Flag("Config.Overlong."+e.Field)).Error()
	}
	return err.Error()
}

// rangeFlag is the -reward-range flag: LOW,HIGH, finite with LOW < HIGH.
type rangeFlag struct{ r advantage.RewardRange }

func (f *rangeFlag) String() string {
	if !f.r.Enabled() {
		return ""
	}
	return fmt.Sprintf("%v,%v", f.r.Low, f.r.High)
}

func (f *rangeFlag) Set(s string) error {
	low, high, ok := strings.Cut(s, ",")
	if !ok {
		return fmt.Errorf("want LOW,HIGH, got %q", s)
	}
	var r advantage.RewardRange
	var err error
	if r.Low, err = strconv.ParseFloat(strings.TrimSpace(low), 64); err != nil {
		return fmt.Errorf("LOW in %q is not a number", s)
	}
	if r.High, err = strconv.ParseFloat(strings.TrimSpace(high), 64); err != nil {
		return fmt.Errorf("HIGH in %q is not a number", s)
	}
	if err := r.Validate(); err != nil || !r.Enabled() {
		return fmt.Errorf("want finite LOW < HIGH, got %q", s)
	}
	f.r = r
	return nil
}
