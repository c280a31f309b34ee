package main

import (
	"fmt"
	"math"
	"math/big"
	"strings"

	"gonum.org/v1/gonum/stat"

	"spiral"
)

// The comparison of a pair of arms (a variant and the arm it varies, such
// as spiral-balanced and spiral) over several training streams each. One
// stream's numbers carry that stream's noise, so the pair's outcomes are
// compared as means over the streams with standard errors, and the summary
// calls a difference real only beyond zThreshold standard errors.

// zThreshold is the |z| from which the pair verdict calls an outcome's
// difference real: about 1 in 370 by chance for one normal outcome, about 1
// in 50 that one of the seven compared outcomes passes it by chance.
const zThreshold = 3

// noiseLimited is the share of the search logits' squared movement
// ||θ_T - θ_0||^2 made by the step's noise from which the pair verdict calls
// training noise-limited.
const noiseLimited = 0.25

// estimate is a mean over streams with its standard error (NaN for one
// stream).
type estimate struct{ mean, se float64 }

// across returns the mean of get over the streams and its standard error.
func across(rs []streamResult, get func(streamResult) float64) estimate {
	xs := make([]float64, len(rs))
	for i, r := range rs {
		xs[i] = get(r)
	}
	return meanSE(xs)
}

// meanSE returns the mean of xs and its standard error (NaN for one
// value).
func meanSE(xs []float64) estimate {
	if len(xs) < 2 {
		return estimate{xs[0], math.NaN()}
	}
	m, sd := stat.MeanStdDev(xs, nil)
	return estimate{m, stat.StdErr(sd, float64(len(xs)))}
}

// difference returns a - b with the standard error of independent means,
// and z, the difference in standard errors.
func difference(a, b estimate) (d estimate, z float64) {
	d = estimate{a.mean - b.mean, math.Hypot(a.se, b.se)}
	return d, d.mean / d.se
}

// outcome is a final number of a training stream that the pair comparison
// tests.
type outcome struct {
	key string
	get func(streamResult) float64
}

// outcomes lists the outcomes the pair comparison tests: the final
// entropy and success rates, and coverage at k = 1, 8 and 64 (those <= kmax).
func (res *result) outcomes() []outcome {
	out := []outcome{
		{"entropy_bits.final", func(s streamResult) float64 { return s.final.Entropy }},
		{"single_success.final", func(s streamResult) float64 { return s.final.Single }},
		{"aggregated_success.final", func(s streamResult) float64 { return s.final.Aggregated }},
		{"best_action_success.final", func(s streamResult) float64 { return s.final.BestAction }},
	}
	for _, k := range []int{1, 8, 64} {
		if k <= res.opt.kmax {
			out = append(out, outcome{fmt.Sprintf("coverage@%d", k), func(s streamResult) float64 { return s.coverage[k-1] }})
		}
	}
	return out
}

func poolBest(s streamResult) float64 { return s.poolBest }

// pooledStats sums the training statistics of every stream.
func pooledStats(rs []streamResult) trainStats {
	var t trainStats
	for _, r := range rs {
		s := r.stats
		t.signal += s.signal
		t.noise += s.noise
		t.steps += s.steps
		t.plans += s.plans
		t.traces += s.traces
		t.uncredited += s.uncredited
		t.uncreditedSq += s.uncreditedSq
	}
	return t
}

// noise returns a stream's search-step noise over the whole run, lr^2 times
// the sum over steps of E||s - E[s]||^2, in squared logits: the expected
// squared distance that the noise alone moves the search logits.
func (res *result) noise(s streamResult) float64 {
	return res.opt.lr * res.opt.lr * s.stats.noise
}

func fmtEstimate(e estimate) string {
	switch {
	case math.IsNaN(e.se):
		return fmt.Sprintf("%.4f", e.mean)
	case e.se > 0 && e.se < 5e-5:
		return fmt.Sprintf("%.4f ± %.1e", e.mean, e.se)
	}
	return fmt.Sprintf("%.4f ± %.4f", e.mean, e.se)
}

// noCreditLine reports the measured fraction of search traces in no set
// with the design's expected value.
func noCreditLine(st trainStats, c spiral.Config) string {
	f, se := st.noCredit()
	exp := ""
	if want, err := expectedNoCredit(c); err == nil {
		wf, _ := want.Float64()
		exp = fmt.Sprintf("; the design's 1 - n(M+1)/N1 = %s = %.5f", want.RatString(), wf)
	}
	return fmt.Sprintf("%.5f ± %.5f (search traces in no set during training, from the credit's appearance counts, over %d plans%s)", f, se, st.plans, exp)
}

// comparePair writes the pair's "compare.<variant>_vs_<reference>.*" lines.
func (res *result) comparePair(b *strings.Builder, pr pair) {
	v, r := res.arms[pr.variant], res.arms[pr.reference]
	p := fmt.Sprintf("compare.%s_vs_%s.", v.arm.name, r.arm.name)
	kv := func(k, val string) { fmt.Fprintf(b, "%s%s: %s\n", p, k, val) }
	n := len(v.replicates)
	kv("streams", fmt.Sprintf("%d per arm (the main stream and %d more, trained from train/<arm>#i); values are %s first, then %s, mean ± standard error over the streams",
		n, n-1, v.arm.name, r.arm.name))
	for _, o := range res.outcomes() {
		a, c := across(v.replicates, o.get), across(r.replicates, o.get)
		d, z := difference(a, c)
		kv(o.key, fmt.Sprintf("%s vs %s (difference %+.4f ± %.4f, z = %.1f)", fmtEstimate(a), fmtEstimate(c), d.mean, d.se, z))
	}
	pa, pc := across(v.replicates, poolBest), across(r.replicates, poolBest)
	pd, pz := difference(pa, pc)
	kv("train_pool_best_action_success.final", fmt.Sprintf("%s vs %s (difference %+.4f ± %.4f, z = %.1f; on the %d training problems, not an outcome)", fmtEstimate(pa), fmtEstimate(pc), pd.mean, pd.se, pz, res.opt.trainProblems))
	for _, a := range []armResult{v, r} {
		if a.arm.config != nil {
			kv("no_credit_fraction."+a.arm.name, noCreditLine(pooledStats(a.replicates), *a.arm.config))
		}
	}
	moved := func(s streamResult) float64 { return s.moved }
	kv("search_logits_moved_sq", fmt.Sprintf("%s vs %s (||θ_T - θ_0||^2 of the search logits at the end of training)",
		fmtEstimate(across(v.replicates, moved)), fmtEstimate(across(r.replicates, moved))))
	kv("search_noise_sq", fmt.Sprintf("%s vs %s (lr^2 sum over steps of E||s - E[s]||^2, the squared distance the step's noise alone moves the search logits, estimated from the spread of each batch's problems)",
		fmtEstimate(across(v.replicates, res.noise)), fmtEstimate(across(r.replicates, res.noise))))
	snr := func(s streamResult) float64 { return s.stats.snr() }
	kv("search_step_snr", fmt.Sprintf("%s vs %s (||E[s]||^2 / E||s - E[s]||^2 per step, each stream's estimate over its steps; noisy, since the expected step is small)",
		fmtEstimate(across(v.replicates, snr)), fmtEstimate(across(r.replicates, snr))))
	if ratio, ok := res.noisePerStep(v, r); ok {
		kv("search_noise_per_expected_step_ratio", fmt.Sprintf("%.3f (the noise divided by the squared search weight w^2, E[s] = w grad J: the noise of the update scaled to be unbiased, %s over %s)", ratio, v.arm.name, r.arm.name))
	}
}

// noisePerStep returns the ratio of the pair's search-step noise, each
// divided by the square of its arm's search weight (the noise of the
// update scaled so that both are unbiased for grad J), variant over
// reference; ok is false without search weights.
func (res *result) noisePerStep(v, r armResult) (ratio float64, ok bool) {
	if v.searchWeight == nil || r.searchWeight == nil || v.searchWeight.Sign() == 0 || r.searchWeight.Sign() == 0 {
		return 0, false
	}
	w, _ := new(big.Rat).Quo(r.searchWeight, v.searchWeight).Float64()
	nv := across(v.replicates, res.noise).mean
	nr := across(r.replicates, res.noise).mean
	return nv / nr * w * w, true
}

// pairVerdict states, from the numbers, whether the pair's outcomes differ,
// and why, as "verdict.<variant>_vs_<reference>" and "why.<...>.<i>" lines.
func (res *result) pairVerdict(pr pair) string {
	v, r := res.arms[pr.variant], res.arms[pr.reference]
	V, R := v.arm.name, r.arm.name
	name := V + "_vs_" + R
	var b strings.Builder
	n := len(v.replicates)
	if n < 2 {
		fmt.Fprintf(&b, "verdict.%s: one stream per arm, no standard errors: no verdict (use -replicates >= 2)\n", name)
		return b.String()
	}
	type diff struct {
		key string
		d   estimate
		z   float64
	}
	var diffs, real []diff
	largest := -1
	for _, o := range res.outcomes() {
		a, c := across(v.replicates, o.get), across(r.replicates, o.get)
		d, z := difference(a, c)
		diffs = append(diffs, diff{o.key, d, z})
		if largest < 0 || math.Abs(z) > math.Abs(diffs[largest].z) || math.IsNaN(diffs[largest].z) {
			largest = len(diffs) - 1
		}
		if math.Abs(z) >= zThreshold {
			real = append(real, diffs[len(diffs)-1])
		}
	}
	show := func(d diff) string {
		return fmt.Sprintf("%s %+.4f ± %.4f (z = %.1f)", d.key, d.d.mean, d.d.se, d.z)
	}
	if len(real) == 0 {
		fmt.Fprintf(&b, "verdict.%s: %s and %s are indistinguishable on this toy: over %d training streams each, no outcome differs by %d standard errors (largest: %s, %s minus %s)\n",
			name, V, R, n, zThreshold, show(diffs[largest]), V, R)
	} else {
		parts := make([]string, len(real))
		for i, d := range real {
			parts[i] = show(d)
		}
		fmt.Fprintf(&b, "verdict.%s: %s differs from %s by more than %d standard errors over %d training streams each in %s (%s minus %s)\n",
			name, V, R, zThreshold, n, strings.Join(parts, ", "), V, R)
	}

	var why []string
	if v.arm.config != nil && r.arm.config != nil {
		fv, sev := pooledStats(v.replicates).noCredit()
		fr, ser := pooledStats(r.replicates).noCredit()
		why = append(why, fmt.Sprintf("%s's design left %.2f%% ± %.2f%% of search traces without credit during training against %s's %.2f%% ± %.2f%% (from the credit's appearance counts); the multiplier M accounts for those traces, so both updates are unbiased for the same objective, with different sizes and noise",
			V, 100*fv, 100*sev, R, 100*fr, 100*ser))
	}
	ent := func(s streamResult) float64 { return s.final.Entropy }
	larger := "" // the arm with the larger expected search step
	if wv, wr := v.searchWeight, r.searchWeight; wv != nil && wr != nil && wr.Sign() > 0 && wv.Cmp(wr) != 0 {
		ratio, _ := new(big.Rat).Quo(wv, wr).Float64()
		fv, _ := wv.Float64()
		fr, _ := wr.Float64()
		faster, fell := ratio, "its"
		larger = V
		if ratio < 1 {
			larger, faster = R, 1/ratio
			fell = V + "'s"
		}
		H0 := v.history[0].Entropy
		dv, dr := H0-across(v.replicates, ent).mean, H0-across(r.replicates, ent).mean
		pd, pz := difference(across(v.replicates, poolBest), across(r.replicates, poolBest))
		ended := "equally good"
		if math.Abs(pz) >= zThreshold {
			ended = "different"
		}
		why = append(why, fmt.Sprintf("at the same learning rate the expected search step is lr times %s = %.4f of grad J for %s and %s = %.4f for %s (spiral.Config.M over the 24 outputs): %.3f times larger for %s, which climbs faster: %s search entropy fell by %.4f bits against %.4f (ratio %.3f, means over streams); on the training problems, whose aggregated reward both climb, their search ended %s (best-action success %s vs %s, difference %+.4f, z = %.1f)",
			wv.RatString(), fv, V, wr.RatString(), fr, R, faster, larger, fell, dv, dr, dv/dr, ended,
			fmtEstimate(across(v.replicates, poolBest)), fmtEstimate(across(r.replicates, poolBest)), pd.mean, pz))
	}
	nv, nr := across(v.replicates, res.noise).mean, across(r.replicates, res.noise).mean
	noiseRatio, haveRatio := res.noisePerStep(v, r)
	if haveRatio {
		why = append(why, fmt.Sprintf("the noise of the search update scaled to be unbiased for grad J is %.3f times %s's for %s (the designs' difference in variance on this toy, problem and aggregation noise included); unscaled, at the same learning rate, %s's step noise is %.3f times %s's",
			noiseRatio, R, V, V, nv/nr, R))
	}
	sv, pv, fv := peak(v.history)
	sr, pr2, fr := peak(r.history)
	start := v.history[0].BestAction
	if rise := max(pv, pr2) - start; rise < 0.02 {
		overfit := ""
		if larger != "" && (fv < pv || fr < pr2) {
			overfit = fmt.Sprintf("; past its peak the one search distribution keeps fitting the mix of the %d training problems, and %s, with the larger step, gets further into that in the same steps", res.opt.trainProblems, larger)
		}
		why = append(why, fmt.Sprintf("there is little for the search to gain on this toy: on held-out problems the search distribution's worth to a perfect aggregator (best-action success) rose at most %.4f above the uniform start's %.4f (main streams: %s peaked at %.4f at step %d and ended at %.4f, %s at %.4f at step %d, ending at %.4f), so a faster or quieter climb moves the outcomes by thousandths%s",
			rise, start, V, pv, sv, fv, R, pr2, sr, fr, overfit))
	}
	mv := across(v.replicates, func(s streamResult) float64 { return s.moved }).mean
	mr := across(r.replicates, func(s streamResult) float64 { return s.moved }).mean
	shareV, shareR := nv/mv, nr/mr
	if max(shareV, shareR) < noiseLimited {
		scaled := ""
		if haveRatio {
			scaled = fmt.Sprintf(", so a noise ratio of %.3f per unit of expected step changes little", noiseRatio)
		}
		why = append(why, fmt.Sprintf("and training here is not noise-limited: one step's expected move is small against its noise (||E[s]||^2 / E||s - E[s]||^2 = %.4f for %s), but over %d steps the expected moves add up and the noise averages out: the noise accounts for %.3f of the squared distance the search logits moved for %s (%.4f of %.4f) and %.3f for %s%s; it would matter where the step is noise-limited (fewer steps, smaller batches) and the objective has more to give",
			across(r.replicates, func(s streamResult) float64 { return s.stats.snr() }).mean, R, res.opt.steps, shareV, V, nv, mv, shareR, R, scaled))
	} else {
		why = append(why, fmt.Sprintf("training here is noise-limited: the step's noise accounts for %.3f of the squared distance the search logits moved for %s (%.4f of %.4f) and %.3f for %s, so lowering the noise per unit of expected step can change where training ends, as far as the objective has something to give",
			shareV, V, nv, mv, shareR, R))
	}
	for j, w := range why {
		fmt.Fprintf(&b, "why.%s.%d: %s\n", name, j+1, w)
	}
	return b.String()
}

// peak returns the step and value of the largest held-out best-action
// success in a history, and the final one.
func peak(h []point) (step int, best, final float64) {
	best = math.Inf(-1)
	for _, p := range h {
		if p.BestAction > best {
			step, best = p.step, p.BestAction
		}
	}
	return step, best, h[len(h)-1].BestAction
}
