package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"spiral"
	"spiral/advantage"
	"spiral/combin"
	"spiral/lengthgate"
)

const creditHelp = `usage: spiral credit [-search-target L] [-aggregation-target L] [-boundary gate|keep] [-ordered] < lines

credit computes SPIRAL's credit for one problem per input line, with the
root package's Config.Credit, after the length gates of Eq. 8 (package
lengthgate), and writes one output line per input line, in order.

Flags:
  -search-target L       L_target of the search gate, in tokens; 0 (default) disables it
  -aggregation-target L  L_target of the aggregation gate, in tokens; 0 (default) disables it
  -boundary gate|keep    what a gate does to a positive advantage of an output
                         whose length equals L_target exactly: "gate" (default;
                         Eq. 8's first case read literally, L < L_target keeps)
                         or "keep" (only L > L_target is gated); both gates
  -ordered               groups are ordered tuples (the family of Proposition
                         3.1): two groups with the same traces in different
                         orders are distinct. Without it groups are subsets,
                         in any presentation order, and no two groups may hold
                         the same traces.

Input line (one JSON object; numbers in rewards are finite):
  {"traces": N1,                      required: the number of search traces, 1 <= N1 <= 2^20
   "groups": [[y, ...], ...],         required: K groups of n distinct trace indices in
                                      [0, N1), in presentation order; every group has n
   "rewards": [[r, ...], ...],        required: rewards[i][j] is the reward of aggregation
                                      output j of set i; K sets, each with 1 or more
                                      rewards (sets may differ in length: a dropped
                                      generation); |r| <= 1e30
   "search_lengths": [L, ...],        length in tokens of each search trace (N1 of
                                      them); required with -search-target
   "aggregation_lengths": [[L, ...]]} length of each aggregation output, the shape of
                                      rewards; required with -aggregation-target
  Lengths are integers >= 0. A length field may be given with its gate off: it
  is then checked and unused.

Output line:
  {"search": [a, ...],                A_search(y) of each trace y after the search gate
                                      (0 for a trace in no group); N1 numbers
   "aggregation": [[a, ...], ...],    A_agg(i, j) = r_ij - f_i after the aggregation gate,
                                      the shape of rewards
   "set_scores": [f, ...],            f_i = mean of rewards[i]
   "set_advantages": [a, ...],        A_set(G_i) = f_i - mean_i f_i
   "appearances": [c, ...],           |G(y)|, the number of groups holding trace y
   "in_no_set": c,                    the number of traces in no group
   "no_signal": b,                    true when every advantage of both roles is 0
   "search_gate": G,                  what the search gate did, and
   "aggregation_gate": G}             what the aggregation gate did, each
                                      {"outputs": c, "positive": c, "at_target": c,
                                       "gated": c, "mass_removed": m}:
                                      advantages examined, how many were > 0,
                                      positive ones with length == L_target,
                                      positive ones set to 0, and their sum
                                      (all 0 but outputs and positive when the
                                      gate is off)

Errors from the library use its names: SearchTraces (N1) is traces,
Sets (K) is len(groups), SetSize (n) is len(groups[0]), AggregationsPerSet
(N2) is the length of the longest rewards[i], lengths.Search is
search_lengths and lengths.Aggregation is aggregation_lengths.
` + streamHelp

// creditSchema lists the fields of a credit input line.
var creditSchema = schema{
	names:    []string{"traces", "groups", "rewards", "search_lengths", "aggregation_lengths"},
	required: []bool{true, true, true, false, false},
}

// Indices of the optional fields in creditSchema.names.
const (
	fieldSearchLengths      = 3
	fieldAggregationLengths = 4
)

// creditLine is one decoded credit input line.
type creditLine struct {
	Traces             int         `json:"traces"`
	Groups             [][]int     `json:"groups"`
	Rewards            [][]float64 `json:"rewards"`
	SearchLengths      []int       `json:"search_lengths"`
	AggregationLengths [][]int     `json:"aggregation_lengths"`
}

// creditOutput is one credit output line.
type creditOutput struct {
	Search          []float64   `json:"search"`
	Aggregation     [][]float64 `json:"aggregation"`
	SetScores       []float64   `json:"set_scores"`
	SetAdvantages   []float64   `json:"set_advantages"`
	Appearances     []int       `json:"appearances"`
	InNoSet         int         `json:"in_no_set"`
	NoSignal        bool        `json:"no_signal"`
	SearchGate      gateReport  `json:"search_gate"`
	AggregationGate gateReport  `json:"aggregation_gate"`
}

// gateReport is a lengthgate.Report in the output's JSON.
type gateReport struct {
	Outputs     int     `json:"outputs"`
	Positive    int     `json:"positive"`
	AtTarget    int     `json:"at_target"`
	Gated       int     `json:"gated"`
	MassRemoved float64 `json:"mass_removed"`
}

func newGateReport(r lengthgate.Report) gateReport {
	return gateReport{Outputs: r.Outputs, Positive: r.Positive, AtTarget: r.AtTarget, Gated: r.Gated, MassRemoved: r.MassRemoved}
}

// gateOf returns the report of gate g, which is r when g is enabled; for a
// disabled gate, which reports nothing, the outputs it would have examined
// and how many of their advantages adv are positive.
func gateOf(g lengthgate.Gate, r lengthgate.Report, adv ...[]float64) gateReport {
	if !g.Enabled() {
		for _, as := range adv {
			r.Outputs += len(as)
			for _, a := range as {
				if a > 0 {
					r.Positive++
				}
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
// flags give (gates, family, order) and the sizes the line gives.
type creditHandler struct {
	base spiral.Config
	in   creditLine // decoded into again and again, reusing its slices
	out  jsonOut
}

func (h *creditHandler) handle(line []byte) ([]byte, error) {
	in := &h.in
	present, err := creditSchema.decode(line, in)
	if err != nil {
		return nil, err
	}
	c := h.base
	c.SearchTraces = in.Traces
	c.Sets = len(in.Groups)
	if c.Sets > 0 {
		c.SetSize = len(in.Groups[0])
	}
	c.AggregationsPerSet = 1
	for _, rs := range in.Rewards {
		c.AggregationsPerSet = max(c.AggregationsPerSet, len(rs))
	}
	var lengths spiral.Lengths
	if present[fieldSearchLengths] {
		lengths.Search = in.SearchLengths
	}
	if present[fieldAggregationLengths] {
		lengths.Aggregation = in.AggregationLengths
	}
	cr, err := c.Credit(spiral.Plan{Sets: in.Groups}, in.Rewards, lengths)
	if err != nil {
		if e, ok := errors.AsType[*advantage.InputError](err); ok {
			return nil, inputError(c, in, lengths, e)
		}
		// Config.Validate joins its errors with newlines.
		return nil, errors.New(strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return h.out.encode(creditOutput{
		Search:          cr.Search,
		Aggregation:     cr.Aggregation,
		SetScores:       cr.SetScores,
		SetAdvantages:   cr.SetAdvantages,
		Appearances:     cr.Appearances,
		InNoSet:         inNoSet(cr.Appearances),
		NoSignal:        cr.NoSignal,
		SearchGate:      gateOf(c.Gates.Search, cr.Gates.Search, cr.Search),
		AggregationGate: gateOf(c.Gates.Aggregation, cr.Gates.Aggregation, cr.Aggregation...),
	}), nil
}

// inputError says what e, an error of the library about one line, means in
// the line's own field names.
func inputError(c spiral.Config, in *creditLine, l spiral.Lengths, e *advantage.InputError) error {
	i, j := e.Set, e.Output
	switch e.Field {
	case "Rewards":
		return fmt.Errorf("rewards[%d][%d] = %v: %v", i, j, e.Value, e.Err)
	case "RewardCounts":
		return fmt.Errorf("rewards[%d] is empty", i)
	case "Sets":
		return fmt.Errorf("len(groups[%d]) = %v, want %d, the size of groups[0]", i, e.Value, c.SetSize)
	case "SearchLengths":
		switch {
		case j >= 0:
			return fmt.Errorf("search_lengths[%d] = %v < 0", j, e.Value)
		case l.Search == nil:
			return fmt.Errorf("search_lengths is missing, but -search-target = %d gates on it", c.Gates.Search.Target)
		}
		return fmt.Errorf("len(search_lengths) = %d, want traces = %d", len(l.Search), in.Traces)
	case "AggregationLengths":
		switch {
		case j >= 0:
			return fmt.Errorf("aggregation_lengths[%d][%d] = %v < 0", i, j, e.Value)
		case l.Aggregation == nil:
			return fmt.Errorf("aggregation_lengths is missing, but -aggregation-target = %d gates on it", c.Gates.Aggregation.Target)
		}
	case "Members":
		if se, ok := errors.AsType[*combin.SetError](e.Err); ok {
			switch se.Reason {
			case combin.OutOfRange:
				return fmt.Errorf("groups[%d][%d] = %d out of range [0, traces = %d)", se.Set, se.Position, se.Index, in.Traces)
			case combin.Repeated:
				return fmt.Errorf("groups[%d][%d] = %d repeats groups[%d][%d]", se.Set, se.Position, se.Index, se.Set, se.Other)
			case combin.Duplicate:
				what := "subset"
				if c.Ordered {
					what = "tuple"
				}
				return fmt.Errorf("groups[%d] = %v and groups[%d] = %v are the same %s", se.Other, in.Groups[se.Other], se.Set, in.Groups[se.Set], what)
			}
		}
	}
	return errors.New(strings.TrimPrefix(e.Error(), "advantage: "))
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
	ordered := fs.Bool("ordered", false, "")
	if code, done := parseFlags(fs, creditHelp, args, stdout, stderr); done {
		return code
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
	return runStream("credit", stdin, stdout, stderr, &creditHandler{base: c})
}
