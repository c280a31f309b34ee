package main

import (
	"bytes"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"spiral"
	"spiral/combin"
	"spiral/internal/spiraltest"
)

// TestSearchMeter checks the step statistics on contributions worked by
// hand: c = (1, 0), (0, 1), (1, 1) has mean s = (2/3, 2/3), ||s||^2 = 8/9,
// sum ||c||^2 = 4, so T = (4 - 3*8/9)/2 = 2/3, noise T/3 = 2/9 and signal
// 8/9 - 2/9 = 2/3. A step of one problem gives no estimate.
func TestSearchMeter(t *testing.T) {
	m := newSearchMeter(2)
	var st trainStats
	for _, c := range [][]float64{{1, 0}, {0, 1}, {1, 1}} {
		copy(m.one, c)
		m.problemDone()
	}
	m.stepDone(&st)
	if math.Abs(st.noise-2.0/9) > 1e-15 || math.Abs(st.signal-2.0/3) > 1e-15 || st.steps != 1 {
		t.Errorf("noise %v signal %v steps %d; want 2/9, 2/3, 1", st.noise, st.signal, st.steps)
	}
	if got := st.snr(); math.Abs(got-3) > 1e-14 {
		t.Errorf("snr %v, want (2/3)/(2/9) = 3", got)
	}
	// The meter starts afresh: a second step of one problem adds nothing.
	copy(m.one, []float64{5, -5})
	m.problemDone()
	m.stepDone(&st)
	if st.steps != 1 || math.Abs(st.noise-2.0/9) > 1e-15 {
		t.Errorf("after a one-problem step: steps %d noise %v", st.steps, st.noise)
	}
	if !math.IsNaN((trainStats{}).snr()) {
		t.Error("snr without steps is not NaN")
	}
}

// TestNoCreditStats checks noCredit's fraction and standard error on counts
// worked by hand: plans of 4 traces with 0, 1 and 2 uncredited give 3/12 =
// 1/4, per-plan sample variance 1, standard error sqrt(1/3)/4.
func TestNoCreditStats(t *testing.T) {
	st := trainStats{plans: 3, traces: 12, uncredited: 3, uncreditedSq: 5}
	f, se := st.noCredit()
	if f != 0.25 || math.Abs(se-math.Sqrt(1.0/3)/4) > 1e-15 {
		t.Errorf("noCredit = %v ± %v, want 1/4 ± sqrt(1/3)/4", f, se)
	}
	if f, _ := (trainStats{}).noCredit(); !math.IsNaN(f) {
		t.Errorf("noCredit without plans = %v, want NaN", f)
	}
}

// TestNoCredit checks the fraction of search traces in no set that the
// SPIRAL trainer measures from the credit's appearance counts against the
// design's value: 88/1541 (the paper's) and 0 at the paper's configuration,
// and at N1 = 8, n = 2, K = 2, where the uniform design misses a trace with
// probability C(21, 2)/C(28, 2) = 5/9 and the balanced one draws 2 disjoint
// sets, missing exactly half. Uniform: within 5 standard errors (from the
// spread of the per-plan counts); balanced: exactly.
func TestNoCredit(t *testing.T) {
	steps := 200
	if spiraltest.Long() {
		steps = 1000
	}
	small := spiral.Config{SearchTraces: 8, SetSize: 2, Sets: 2, AggregationsPerSet: 2}
	smallBalanced := small
	smallBalanced.Design = combin.Balanced
	tt := defaults().toy
	rnd := stream(5, "problems")
	batch := make([]problem, 8)
	for i := range batch {
		batch[i] = tt.newProblem(rnd)
	}
	for _, c := range []struct {
		cfg   spiral.Config
		want  *big.Rat
		exact bool
	}{
		{spiral.Paper(), big.NewRat(88, 1541), false},
		{balancedPaper(), new(big.Rat), true},
		{small, big.NewRat(5, 9), false},
		{smallBalanced, big.NewRat(1, 2), true},
	} {
		got, err := expectedNoCredit(c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got.Cmp(c.want) != 0 {
			t.Errorf("%+v: expectedNoCredit = %v, want %v", c.cfg, got, c.want)
		}
		tr, err := newSPIRAL(tt, c.cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		pol := newPolicy(tt.V)
		rnd := stream(6, c.cfg.Design.String())
		for range steps {
			if err := tr.step(pol, batch, rnd); err != nil {
				t.Fatal(err)
			}
		}
		st := tr.stats()
		if st.plans != steps*len(batch) || st.traces != st.plans*c.cfg.SearchTraces {
			t.Fatalf("%+v: %d plans of %d traces after %d steps of %d", c.cfg, st.plans, st.traces, steps, len(batch))
		}
		f, se := st.noCredit()
		want, _ := c.want.Float64()
		if c.exact && (f != want || se != 0) || !c.exact && !(math.Abs(f-want) <= 5*se) {
			t.Errorf("%+v: no-credit fraction %v ± %v, want %v", c.cfg, f, se, want)
		}
	}
}

// TestAcross checks the mean and standard error over streams: 1, 2, 3 has
// mean 2, sample deviation 1, standard error 1/sqrt(3); differences of
// independent means add variances.
func TestAcross(t *testing.T) {
	rs := []streamResult{{moved: 1}, {moved: 2}, {moved: 3}}
	e := across(rs, func(s streamResult) float64 { return s.moved })
	if math.Abs(e.mean-2) > 1e-15 || math.Abs(e.se-1/math.Sqrt(3)) > 1e-15 {
		t.Errorf("across = %+v, want 2 ± 1/sqrt(3)", e)
	}
	d, z := difference(estimate{3, 0.3}, estimate{1, 0.4})
	if d.mean != 2 || math.Abs(d.se-0.5) > 1e-15 || math.Abs(z-4) > 1e-14 {
		t.Errorf("difference = %+v, z = %v; want 2 ± 0.5, z = 4", d, z)
	}
	if one := across(rs[:1], func(s streamResult) float64 { return s.moved }); one.mean != 1 || !math.IsNaN(one.se) {
		t.Errorf("one stream: %+v, want 1 and a NaN standard error", one)
	}
}

// TestPairVerdict checks the pair verdict on made-up streams: equal
// outcomes up to noise are indistinguishable, a shift of many standard
// errors in one outcome is named, and one stream per arm gives no verdict.
func TestPairVerdict(t *testing.T) {
	streams := func(entropy float64, n int) []streamResult {
		rs := make([]streamResult, n)
		for i := range rs {
			rs[i].final.Entropy = entropy + 0.01*float64(i%3-1)
			rs[i].final.Aggregated = 0.3 + 0.001*float64(i%2)
			rs[i].coverage = []float64{0.1 + 0.001*float64(i%4)}
			rs[i].history = []point{{0, metrics{Entropy: 3, BestAction: 0.4}}, {5, metrics{Entropy: 2.8, BestAction: 0.402}}, {10, metrics{Entropy: entropy, BestAction: 0.401}}}
			rs[i].stats = trainStats{noise: 0.01, steps: 10}
			rs[i].moved = 1
		}
		return rs
	}
	mk := func(ev, er float64, n int) *result {
		res := &result{opt: options{kmax: 1, steps: 10, lr: 1, trainProblems: 64}}
		for _, a := range []struct {
			name string
			e    float64
			w    *big.Rat
		}{{"ref", er, big.NewRat(455, 12328)}, {"var", ev, big.NewRat(1, 24)}} {
			rs := streams(a.e, n)
			res.arms = append(res.arms, armResult{arm: arm{name: a.name}, searchWeight: a.w, streamResult: rs[0], replicates: rs})
		}
		res.pairs = []pair{{variant: 1, reference: 0}}
		return res
	}
	v := mk(2.5, 2.5, 8).pairVerdict(pair{1, 0})
	for _, want := range []string{
		"verdict.var_vs_ref: var and ref are indistinguishable on this toy: over 8 training streams each",
		"1.129 times larger for var, which climbs faster",
		"rose at most 0.0020 above the uniform start's 0.4000",
		"var, with the larger step, gets further",
		// noise 0.01 of a squared movement of 1 for both, with weights
		// 1/24 and 1365/(1541*24): 1365^2/1541^2 = 0.785 per unit step.
		"not noise-limited", "a noise ratio of 0.785",
	} {
		if !strings.Contains(v, want) {
			t.Errorf("equal arms: no %q in %q", want, v)
		}
	}
	v = mk(2.4, 2.5, 8).pairVerdict(pair{1, 0})
	if !strings.Contains(v, "verdict.var_vs_ref: var differs from ref by more than 3 standard errors over 8 training streams each in entropy_bits.final -0.1000") {
		t.Errorf("shifted entropy: %q", v)
	}
	if strings.Contains(v, "aggregated_success") {
		t.Errorf("shifted entropy names an unshifted outcome: %q", v)
	}
	if v := mk(2.4, 2.5, 1).pairVerdict(pair{1, 0}); !strings.Contains(v, "one stream per arm") {
		t.Errorf("one stream: %q", v)
	}
}

// TestDocsSummaryCurrent checks that the committed copy of the default
// run's summary, docs/toytrain/summary.txt, is what the program writes now.
// It runs the full default (a few seconds), so only with SPIRAL_LONG=1.
func TestDocsSummaryCurrent(t *testing.T) {
	spiraltest.SkipUnlessLong(t)
	want, err := os.ReadFile(filepath.Join("..", "..", "docs", "toytrain", summaryFile))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	if status := cli(&stdout, &stderr, []string{"-out", dir}); status != 0 {
		t.Fatalf("exit status %d: %s", status, stderr.String())
	}
	got, err := os.ReadFile(filepath.Join(dir, summaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/toytrain/summary.txt is not the default run's summary: rerun go run ./examples/toytrain and copy out/toytrain/*.png and summary.txt to docs/toytrain/")
	}
}
