package main

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"

	"spiral"
	"spiral/advise"
)

// The early-progress check of the -advice mode: package advise ranks by
// the expected improvement of one step with the best step size, (||G||^2/2L)
// rho/(1 + rho), rho = B SNR, at the trainer's tokens per step. At each of
// several step budgets the check trains the ranking's top at that budget,
// the reference and the former top (the top by SNR per token alone) for a
// few steps from the start, at every learning rate of a grid, and compares
// the ratio of their early progress at each arm's best learning rate (the
// well-chosen step size the prediction assumes) with the predicted ratio
// of their improvements. It does so on the toy's objective J as it is, and
// on J - (lambda/2) ||theta||^2 for each curvature lambda > 0 of a list:
// the same problem with every logit held towards 0 by a known curvature,
// so that the objective is lambda-smooth near the start as the prediction
// assumes (the penalty's gradient -lambda theta is exact, so the update's
// noise is the toy's).

// earlyOptions are the early check's settings.
type earlyOptions struct {
	// budgets are the step budgets, in the reference's problems of tokens
	// per step.
	budgets []int
	// lrs is the grid of learning rates each arm is trained at.
	lrs []float64
	// curvatures are the lambdas of the objectives J - (lambda/2)
	// ||theta||^2 the check trains on (0: J itself).
	curvatures []float64
	// steps is how many steps early progress is measured over; streams
	// how many independent runs each (curvature, budget, arm, learning
	// rate) has.
	steps, streams int
}

func earlyDefaults() earlyOptions {
	return earlyOptions{
		budgets:    []int{1, 7, 28, 112},
		lrs:        lrGrid(1.0/32, 128),
		curvatures: []float64{0, 4},
		steps:      3,
		streams:    128,
	}
}

// lrGrid returns lo, lo sqrt(2), lo 2, ... up to hi, rounded to four
// significant digits.
func lrGrid(lo, hi float64) []float64 {
	var out []float64
	for x := lo; x <= hi*1.0001; x *= math.Sqrt2 {
		r, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 4, 64), 64)
		out = append(out, r)
	}
	return out
}

// streamsAt returns the streams of the early check at a step budget of k
// reference problems: eo.streams times the ceiling of sqrt(largest budget
// / k), so that the smaller budgets' noisier gains get more streams.
func (eo earlyOptions) streamsAt(k int) int {
	return eo.streams * int(math.Ceil(math.Sqrt(float64(slices.Max(eo.budgets))/float64(k))))
}

// joinNumbers writes xs as the comma-separated list parseInts and
// parseFloats read.
func joinNumbers[T int | float64](xs []T) string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = strconv.FormatFloat(float64(x), 'g', -1, 64)
	}
	return strings.Join(out, ",")
}

// formatConfig writes c's sizes and design as parseConfig reads them.
func formatConfig(c spiral.Config) string {
	return fmt.Sprintf("%d,%d,%d,%d,%v", c.SearchTraces, c.SetSize, c.Sets, c.AggregationsPerSet, c.Design)
}

// parseInts parses a comma-separated list of positive integers.
func parseInts(name, s string) ([]int, error) {
	var out []int
	for p := range strings.SplitSeq(s, ",") {
		x, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || x < 1 || x > 4096 {
			return nil, fmt.Errorf("%s = %q: %q is not an integer in [1, 4096]", name, s, p)
		}
		out = append(out, x)
	}
	return out, nil
}

// parseFloats parses a comma-separated list of numbers in [lo, 1e6), lo
// itself allowed only if zero is.
func parseFloats(name, s string, zero bool) ([]float64, error) {
	var out []float64
	for p := range strings.SplitSeq(s, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || !(x > 0 || zero && x == 0) || !(x < 1e6) {
			return nil, fmt.Errorf("%s = %q: %q is not a number in (0, 1e6)%s", name, s, p, map[bool]string{true: " or 0", false: ""}[zero])
		}
		out = append(out, x)
	}
	return out, nil
}

// earlyArm is one configuration trained at one step budget.
type earlyArm struct {
	name string
	// cand is the configuration's row at its own problems per step: the
	// predicted improvement of one step, rho and the limits.
	cand     advise.Candidate
	problems int
	// rank is the configuration's rank at this budget (0 if the ranking
	// does not hold it).
	rank int
	// one[l] and early[l] are the gains of J after one step and after
	// earlyOptions.steps steps at learning rate lrs[l], over the streams.
	one, early []estimate
}

// earlyBudget is the check at one curvature and step budget.
type earlyBudget struct {
	curvature   float64
	refProblems int
	tokens      int64
	arms        [3]earlyArm // top, reference, former
}

// stable reports whether learning rate lr is trained at b's curvature:
// from lr lambda = 2 on, the penalty's own step theta (1 - lr lambda) no
// longer shrinks the logits, and the step overshoots the penalty's
// minimum.
func (b *earlyBudget) stable(lr float64) bool { return b.curvature*lr < 2 }

// best returns the index of the learning rate with the largest mean gain
// among those trained (se > 0).
func best(xs []estimate) int {
	i := -1
	for j, x := range xs {
		if x.se > 0 && (i < 0 || x.mean > xs[i].mean) {
			i = j
		}
	}
	return max(i, 0)
}

// ratioOf returns a/b with its standard error (delta method).
func ratioOf(a, b estimate) estimate {
	r := a.mean / b.mean
	return estimate{r, math.Abs(r) * math.Hypot(a.se/a.mean, b.se/b.mean)}
}

func sameSizes(a, b spiral.Config) bool {
	return a.SearchTraces == b.SearchTraces && a.SetSize == b.SetSize && a.Sets == b.Sets &&
		a.AggregationsPerSet == b.AggregationsPerSet && a.Design == b.Design
}

// runEarly runs the early check on the ranking adv (the reference's and
// the former top's rows given apart, as Evaluate computes them).
func (res *adviceResult) runEarly(adv advise.Result, ref, former advise.Candidate) error {
	eo := res.eopt
	for _, lambda := range eo.curvatures {
		for _, k := range eo.budgets {
			if err := res.addEarly(lambda, k, adv, ref, former); err != nil {
				return err
			}
		}
	}
	var errs []error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for bi := range res.early {
		b := &res.early[bi]
		for ai := range b.arms {
			a := &b.arms[ai]
			for l, lr := range eo.lrs {
				if !b.stable(lr) {
					continue
				}
				wg.Go(func() {
					name := fmt.Sprintf("advice/early/%g/%d/%s/%g", b.curvature, b.refProblems, a.name, lr)
					one, early, err := trainEarly(a.cand.Config, a.problems, lr, b.curvature, eo.steps, eo.streamsAt(b.refProblems), stream(res.opt.seed, name))
					mu.Lock()
					defer mu.Unlock()
					if err != nil {
						errs = append(errs, fmt.Errorf("%s: %w", name, err))
						return
					}
					a.one[l], a.early[l] = one, early
				})
			}
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

// addEarly adds the arms of the check at curvature lambda and a step
// budget of k reference problems' tokens.
func (res *adviceResult) addEarly(lambda float64, k int, adv advise.Result, ref, former advise.Candidate) error {
	eo := res.eopt
	{
		b := earlyBudget{curvature: lambda, refProblems: k, tokens: int64(k) * res.budget}
		step := advise.Step{Tokens: b.tokens}
		order := adv.At(step).Candidates
		for i, c := range []advise.Candidate{order[0], ref, former} {
			a := &b.arms[i]
			a.name = []string{"top", "reference", "former"}[i]
			a.problems = int(max(1, (b.tokens+c.Tokens/2)/c.Tokens))
			a.cand = c.At(advise.Step{Problems: int64(a.problems)})
			a.rank = 1 + slices.IndexFunc(order, func(d advise.Candidate) bool { return sameSizes(d.Config, c.Config) })
			a.one, a.early = make([]estimate, len(eo.lrs)), make([]estimate, len(eo.lrs))
		}
		res.early = append(res.early, b)
	}
	return nil
}

// trainEarly trains streams runs of cfg from the uniform policy for steps
// steps of P problems at learning rate lr on J - (lambda/2) ||theta||^2,
// and returns that objective's gains after the first step and after the
// last.
func trainEarly(cfg spiral.Config, P int, lr, lambda float64, steps, streams int, rnd *rand.Rand) (one, early estimate, err error) {
	tr, err := newAdviceTrainer(cfg)
	if err != nil {
		return one, early, err
	}
	n := cfg.SetSize
	gains1, gainsK := make([]float64, streams), make([]float64, streams)
	gs := make([]float64, adviceToy.V)
	var ga [][actions]float64
	for r := range streams {
		pol := newAdvicePolicy(n)
		if ga == nil {
			ga = make([][actions]float64, len(pol.agg))
		}
		objective := func() float64 { return gradJ(pol, n, gs, ga).Objective - lambda/2*pol.sqNorm() }
		j0 := objective()
		for s := range steps {
			if _, _, _, err := tr.sample(pol, P, rnd); err != nil {
				return one, early, err
			}
			for v, x := range tr.sumS {
				pol.search[v] += lr * (x - lambda*pol.search[v])
			}
			for c := range tr.sumA {
				for k, x := range tr.sumA[c] {
					pol.agg[c][k] += lr * (x - lambda*pol.agg[c][k])
				}
			}
			if s == 0 {
				gains1[r] = objective() - j0
			}
		}
		gainsK[r] = objective() - j0
	}
	return meanSE(gains1), meanSE(gainsK), nil
}

// sqNorm returns ||theta||^2 over every logit of the policy.
func (p *advicePolicy) sqNorm() float64 {
	s := 0.0
	for _, x := range p.search {
		s += x * x
	}
	for _, a := range p.agg {
		for _, x := range a {
			s += x * x
		}
	}
	return s
}

// earlyVerdict names how a measured ratio stands to the predicted one.
func earlyVerdict(measured estimate, predicted float64) string {
	z := (measured.mean - predicted) / measured.se
	switch {
	case math.Abs(z) < adviceZ:
		return fmt.Sprintf("matches (z = %.1f)", z)
	case z < 0:
		return fmt.Sprintf("below the prediction, %.2f of it (z = %.1f)", measured.mean/predicted, z)
	}
	return fmt.Sprintf("above the prediction, %.2f of it (z = %.1f)", measured.mean/predicted, z)
}

// earlyReport writes the early check's lines with kv.
func (res *adviceResult) earlyReport(kv func(k, f string, args ...any)) {
	eo := res.eopt
	lrs := strings.Split(joinNumbers(eo.lrs), ",")
	kv("early", "on the objective J - (lambda/2) ||theta||^2 for lambda in %s (0: the toy's J), at each step budget (tokens per step, in reference problems), the top of the ranking at that budget, the reference and the former top (-advice-former) trained from the start for %d steps, %d streams each times the ceiling of sqrt(largest budget/budget), at every learning rate of %s with lr lambda < 2 (update: theta += lr (scaled update - lambda theta)); the progress of an arm is its gain in that objective at its best learning rate (the well-chosen step size the prediction assumes), the verdict's after one step (the prediction's own quantity); predicted: the ratio of the arms' Improvement, (||G||^2/2L) rho/(1 + rho) at the problems each trains per step",
		strings.ReplaceAll(joinNumbers(eo.curvatures), ",", ", "), eo.steps, eo.streams, strings.Join(lrs, ", "))
	fixed := slices.Index(eo.lrs, res.opt.lr)
	matched, total := map[float64]int{}, map[float64]int{}
	for _, b := range res.early {
		key := fmt.Sprintf("early.lambda_%g.budget_%d", b.curvature, b.refProblems)
		for _, a := range b.arms {
			c := a.cand
			rank := "not ranked"
			if a.rank > 0 {
				rank = fmt.Sprintf("rank %d", a.rank)
			}
			i1, ik := best(a.one), best(a.early)
			edge := func(i int) string {
				if i == len(lrs)-1 || !b.stable(eo.lrs[min(i+1, len(lrs)-1)]) {
					return " (the largest trained)"
				}
				return ""
			}
			kv(key+"."+a.name, "%s (%s at %d tokens per step), %d problems per step: rho %.3g, ||G||^2 %.4g, predicted improvement %.4g/L per step; gain at the best learning rate %s%s: %s after 1 step, at %s%s: %s after %d",
				configString(c.Config), rank, b.tokens, a.problems, ratFloat(c.Rho), ratFloat(c.Signal), ratFloat(c.Improvement),
				lrs[i1], edge(i1), fmtEstimate(a.one[i1]), lrs[ik], edge(ik), fmtEstimate(a.early[ik]), eo.steps)
		}
		top := b.arms[0]
		for _, o := range b.arms[1:] {
			pred := ratFloat(top.cand.Improvement) / ratFloat(o.cand.Improvement)
			lb := ratFloat(top.cand.Signal) / ratFloat(o.cand.Signal)
			tl := ratFloat(top.cand.TokenLimited) * float64(top.cand.Tokens) / (ratFloat(o.cand.TokenLimited) * float64(o.cand.Tokens))
			snr := ratFloat(top.cand.Rho) / ratFloat(o.cand.Rho)
			m1 := ratioOf(top.one[best(top.one)], o.one[best(o.one)])
			mk := ratioOf(top.early[best(top.early)], o.early[best(o.early)])
			fixedText := ""
			if fixed >= 0 && b.stable(res.opt.lr) {
				mf := ratioOf(top.early[fixed], o.early[fixed])
				fixedText = fmt.Sprintf("; at learning rate %s for both, %s after %d steps", lrs[fixed], fmtEstimate(mf), eo.steps)
			}
			kv(key+".ratio_"+o.name, "predicted %.3f (limits: %.3f as rho -> 0, %.3f at large batch; SNR per token alone %.3f); measured at the best learning rates %s after 1 step, %s after %d steps%s: one step %s",
				pred, tl, lb, snr, fmtEstimate(m1), fmtEstimate(mk), eo.steps, fixedText, earlyVerdict(m1, pred))
			total[b.curvature]++
			if math.Abs(m1.mean-pred) < adviceZ*m1.se {
				matched[b.curvature]++
			}
		}
	}
	for _, lambda := range eo.curvatures {
		kv(fmt.Sprintf("early.lambda_%g.verdict", lambda), "the predicted ratio of one step's progress matches the measured one within %d standard errors in %d of %d comparisons",
			adviceZ, matched[lambda], total[lambda])
	}
}

// earlyKeys are the report keys of the early check at curvature lambda and
// step budget k.
func earlyKeys(lambda float64, k int) []string {
	p := fmt.Sprintf("early.lambda_%g.budget_%d.", lambda, k)
	return []string{p + "top", p + "reference", p + "former", p + "ratio_reference", p + "ratio_former"}
}
