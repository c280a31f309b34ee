package main

import (
	"bufio"
	"bytes"
	"image/png"
	"math"
	"math/big"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"spiral"
	"spiral/internal/spiraltest"
	"spiral/loss"
)

func TestMain(m *testing.M) { spiraltest.Main(m) }

// small returns options for a quick run into dir.
func small(dir string) options {
	o := defaults()
	o.steps, o.batch, o.trainProblems, o.evalProblems, o.evalEvery = 30, 8, 64, 32, 10
	o.evalSamples = o.kmax
	o.out = dir
	return o
}

// summaryFields parses summary.txt's "key: value" lines.
func summaryFields(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, ": ")
		if !ok {
			t.Errorf("summary line %q is not key: value", line)
			continue
		}
		if _, dup := fields[k]; dup {
			t.Errorf("summary key %q twice", k)
		}
		fields[k] = v
	}
	return fields
}

// TestRunOutputs runs the program with a small budget and checks its files:
// three PNGs that decode, and a summary with every expected field, numbers
// in range, and the same numbers for the same seed.
func TestRunOutputs(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	args := []string{"-steps", "30", "-batch", "8", "-eval-every", "10", "-samples", "64", "-out", dir}
	if status := cli(&stdout, &stderr, args); status != 0 {
		t.Fatalf("exit status %d: %s", status, stderr.String())
	}
	if out := stdout.String(); !strings.Contains(out, "wrote ") || !strings.Contains(out, filepath.Join(dir, summaryFile)) {
		t.Errorf("stdout does not say where the files are:\n%s", stdout.String())
	}
	for _, name := range []string{entropyFile, successFile, coverageFile} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if b := img.Bounds(); b.Dx() < 300 || b.Dy() < 200 {
			t.Errorf("%s is %v", name, b)
		}
	}

	fields := summaryFields(t, filepath.Join(dir, summaryFile))
	prob := func(key string) float64 {
		t.Helper()
		v, err := strconv.ParseFloat(fields[key], 64)
		if err != nil || v < 0 || v > 1 {
			t.Errorf("%s = %q, want a probability", key, fields[key])
		}
		return v
	}
	if fields["seed"] != "1" || fields["steps"] != "30" || fields["batch_problems"] != "8" {
		t.Errorf("summary run fields: seed %q steps %q batch %q", fields["seed"], fields["steps"], fields["batch_problems"])
	}
	if !strings.HasPrefix(fields["outputs_per_problem"], "24 for every arm") {
		t.Errorf("outputs_per_problem = %q", fields["outputs_per_problem"])
	}
	for _, a := range []string{"grpo", "spiral", "spiral-balanced"} {
		for _, k := range []string{"entropy_bits.start", "entropy_bits.final"} {
			v, err := strconv.ParseFloat(fields[a+"."+k], 64)
			if err != nil || v < 0 || v > 3+1e-9 {
				t.Errorf("%s.%s = %q, want bits in [0, 3]", a, k, fields[a+"."+k])
			}
		}
		if fields[a+".entropy_bits.start"] != "3.0000" {
			t.Errorf("%s starts at entropy %s, want log2(8) = 3 (uniform)", a, fields[a+".entropy_bits.start"])
		}
		for _, k := range []string{"single_success.final", "aggregated_success.final", "best_action_success.start", "best_action_success.final", "adopt_prob.single", "adopt_prob.complementary"} {
			prob(a + "." + k)
		}
		prev := 0.0
		for _, k := range reportKs {
			c := prob(a + ".coverage@" + strconv.Itoa(k))
			if c < prev {
				t.Errorf("%s coverage@%d = %v < coverage at the previous width %v", a, k, c, prev)
			}
			prev = c
		}
	}
	if fields["grpo.adopt_prob.single"] != "0.5000" {
		t.Errorf("grpo trained the aggregation head: adopt %s", fields["grpo.adopt_prob.single"])
	}
	for _, a := range []string{"spiral", "spiral-balanced"} {
		n := 0
		for _, s := range []string{"reached", "lower_bound", "unreached", "saturated"} {
			c, err := strconv.Atoi(fields["efficiency."+a+"_vs_grpo.points_"+s])
			if err != nil {
				t.Errorf("%s efficiency status %s: %v", a, s, err)
			}
			n += c
		}
		if n != 64 {
			t.Errorf("%s efficiency statuses count %d points, want 64", a, n)
		}
		for _, k := range []string{"efficiency." + a + "_vs_grpo.max", "efficiency." + a + "_vs_grpo.at_k64", "verdict." + a, "why." + a + ".1"} {
			if fields[k] == "" {
				t.Errorf("summary lacks %s", k)
			}
		}
	}
	// The no-credit fraction: 0 for the balanced design, near 88/1541 for
	// the uniform one (240 plans here: within 0.03).
	noCredit := func(key string) float64 {
		t.Helper()
		v, err := strconv.ParseFloat(strings.Fields(fields[key] + " x")[0], 64)
		if err != nil {
			t.Errorf("%s = %q", key, fields[key])
		}
		return v
	}
	if f := noCredit("spiral.no_credit_fraction"); math.Abs(f-88.0/1541) > 0.03 {
		t.Errorf("spiral no-credit fraction %v, want about 88/1541", f)
	}
	if f := noCredit("spiral-balanced.no_credit_fraction"); f != 0 {
		t.Errorf("spiral-balanced no-credit fraction %v, want 0", f)
	}
	if _, ok := fields["grpo.no_credit_fraction"]; ok {
		t.Error("grpo reports a no-credit fraction")
	}
	const cmpPrefix = "compare.spiral-balanced_vs_spiral."
	if !strings.HasPrefix(fields[cmpPrefix+"streams"], "16 per arm") {
		t.Errorf("%sstreams = %q, want the default 16", cmpPrefix, fields[cmpPrefix+"streams"])
	}
	for _, k := range []string{"entropy_bits.final", "aggregated_success.final", "coverage@1", "coverage@8", "coverage@64"} {
		if !strings.Contains(fields[cmpPrefix+k], " vs ") || !strings.Contains(fields[cmpPrefix+k], "z = ") {
			t.Errorf("%s%s = %q, want two means and a z", cmpPrefix, k, fields[cmpPrefix+k])
		}
	}
	for _, k := range []string{"no_credit_fraction.spiral", "no_credit_fraction.spiral-balanced", "search_noise_sq", "search_logits_moved_sq", "search_step_snr", "search_noise_per_expected_step_ratio", "train_pool_best_action_success.final"} {
		if fields[cmpPrefix+k] == "" {
			t.Errorf("summary lacks %s%s", cmpPrefix, k)
		}
	}
	if v := fields["verdict.spiral-balanced_vs_spiral"]; !strings.Contains(v, "indistinguishable") && !strings.Contains(v, "differs") {
		t.Errorf("verdict.spiral-balanced_vs_spiral = %q", v)
	}
	if fields["why.spiral-balanced_vs_spiral.1"] == "" {
		t.Error("summary lacks why.spiral-balanced_vs_spiral.1")
	}

	// The same seed gives the same summary; another seed another one (run
	// without the plots: write writes the summary as res.summary() gives it).
	a, err := os.ReadFile(filepath.Join(dir, summaryFile))
	if err != nil {
		t.Fatal(err)
	}
	o := defaults()
	o.steps, o.batch, o.evalEvery, o.evalSamples, o.out = 30, 8, 10, 64, dir
	again, err := run(o)
	if err != nil {
		t.Fatal(err)
	}
	if b := again.summary(); string(a) != b {
		t.Errorf("same seed, different summaries:\n%s\n---\n%s", a, b)
	}
	o.seed = 2
	other, err := run(o)
	if err != nil {
		t.Fatal(err)
	}
	if other.summary() == string(a) {
		t.Error("seeds 1 and 2 give the same summary")
	}
}

// TestArmsIndependent checks that an arm's numbers do not depend on which
// other arms run beside it, nor on the replicate streams of a compared pair,
// so that adding an arm changes nothing else.
func TestArmsIndependent(t *testing.T) {
	o := small(t.TempDir())
	all, err := run(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(all.arms) != 3 || len(all.pairs) != 1 || len(all.arms[1].replicates) != o.replicates || len(all.arms[2].replicates) != o.replicates || len(all.arms[0].replicates) != 1 {
		t.Fatalf("default run: %d arms, %d pairs", len(all.arms), len(all.pairs))
	}
	for i, name := range o.arms {
		one := o
		one.arms, one.replicates = []string{name}, 1
		alone, err := run(one)
		if err != nil {
			t.Fatal(err)
		}
		x, y := all.arms[i], alone.arms[0]
		if x.final != y.final || !equalFloats(x.coverage, y.coverage) || x.stats != y.stats || x.moved != y.moved {
			t.Errorf("%s beside the others: %+v, alone: %+v", name, x.final, y.final)
		}
		if len(alone.eff) != 0 || len(alone.pairs) != 0 || !strings.Contains(alone.verdict(), "one arm only") {
			t.Errorf("%s alone: %d efficiency curves, %d pairs, verdict %q", name, len(alone.eff), len(alone.pairs), alone.verdict())
		}
	}
	// Replicate streams differ from the main one and from each other.
	reps := all.arms[2].replicates
	for i := 1; i < len(reps); i++ {
		if reps[i].final == reps[0].final || reps[i].final == reps[i-1].final {
			t.Errorf("spiral-balanced replicate %d has the same final metrics as another stream", i)
		}
	}
}

func (p *policy) clone() *policy {
	c := *p
	c.search = append([]float64(nil), p.search...)
	return &c
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestBadOptions checks that bad flags and options are errors naming them.
func TestBadOptions(t *testing.T) {
	for _, c := range []struct {
		change func(*options)
		want   string
	}{
		{func(o *options) { o.steps = 0 }, "steps = 0"},
		{func(o *options) { o.batch = 0 }, "batch = 0"},
		{func(o *options) { o.evalSamples = 10 }, "samples = 10"},
		{func(o *options) { o.lr = math.NaN() }, "lr = NaN"},
		{func(o *options) { o.arms = []string{"grpo", "ppo"} }, `"ppo"`},
		{func(o *options) { o.arms = []string{"grpo", "grpo"} }, `"grpo" twice`},
		{func(o *options) { o.toy.V = 1 }, "strategies = 1"},
		{func(o *options) { o.toy.single = 1.5 }, "single = 1.5"},
		{func(o *options) { o.toy.luck = -0.1 }, "luck = -0.1"},
		{func(o *options) { o.toy.need = 4 }, "need = 4"},
	} {
		o := small(t.TempDir())
		c.change(&o)
		if _, err := run(o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one naming %s", err, c.want)
		}
	}
	var out, errs bytes.Buffer
	if status := cli(&out, &errs, []string{"-nosuchflag"}); status != 2 {
		t.Errorf("bad flag: status %d, want 2", status)
	}
	if status := cli(&out, &errs, []string{"-arms", "nope", "-out", t.TempDir()}); status != 1 || !strings.Contains(errs.String(), `"nope"`) {
		t.Errorf("unknown arm: status %d, stderr %q", status, errs.String())
	}
}

// enumerateSetOutcome is setOutcome by enumeration of the V^n strategy
// tuples of a set, each with its probability: the definition.
func (t toy) enumerateSetOutcome(x problem, p []float64, n int) (adoptP, synthP, bestP float64) {
	var rec func(pos int, w, allWrong float64, mask uint64)
	rec = func(pos int, w, allWrong float64, mask uint64) {
		if pos == n {
			a := 1 - allWrong
			s := 0.0
			if x.kind == complementary && bits.OnesCount64(mask&x.subset) >= t.need {
				s = 1
			}
			adoptP += w * a
			synthP += w * s
			bestP += w * math.Max(a, s)
			return
		}
		for v := range t.V {
			rec(pos+1, w*p[v], allWrong*(1-t.solveProb(x, v)), mask|1<<v)
		}
	}
	rec(0, 1, 1, 0)
	return adoptP, synthP, bestP
}

// TestSetOutcomeEnumeration checks setOutcome against the enumeration of
// every strategy tuple, for random policies, toys (V up to 6, c up to V,
// m up to c, any ε) and set sizes n up to 5, to 1e-12.
func TestSetOutcomeEnumeration(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		V := rapid.IntRange(2, 6).Draw(t, "V")
		c := rapid.IntRange(1, V).Draw(t, "c")
		tt := toy{V: V, single: 0.5, comp: c, need: rapid.IntRange(1, c).Draw(t, "m"), luck: rapid.Float64Range(0, 1).Draw(t, "luck")}
		pol := newPolicy(V)
		for v := range pol.search {
			pol.search[v] = rapid.Float64Range(-3, 3).Draw(t, "logit")
		}
		p := make([]float64, V)
		softmax(p, pol.search)
		n := rapid.IntRange(1, 5).Draw(t, "n")
		x := tt.newProblem(rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 1)))
		a, s, b := tt.setOutcome(x, p, n)
		ea, es, eb := tt.enumerateSetOutcome(x, p, n)
		if math.Abs(a-ea) > 1e-12 || math.Abs(s-es) > 1e-12 || math.Abs(b-eb) > 1e-12 {
			t.Fatalf("problem %+v, n = %d: (adopt, synthesize, best) = (%v, %v, %v), enumeration (%v, %v, %v)", x, n, a, s, b, ea, es, eb)
		}
	})
}

// TestSetOutcome checks the exact set probabilities against closed forms:
// for a single problem with answer a, adopt is right with probability
// 1 - (1-p_a)^n and synthesize never; for a complementary problem with
// subset C, P_C = sum_{v in C} p_v, adopt is right with probability
// 1 - (1 - ε P_C)^n, and synthesize (m = 2) with 1 - P(no strategy of C) -
// P(exactly one distinct strategy of C) = 1 - (1-P_C)^n - sum_{v in C}
// [(1-P_C+p_v)^n - (1-P_C)^n].
func TestSetOutcome(t *testing.T) {
	tt := toy{V: 5, single: 0.5, comp: 3, need: 2, luck: 0.1}
	pol := &policy{search: []float64{0.7, -0.2, 0.1, 1.3, -1}}
	p := make([]float64, tt.V)
	softmax(p, pol.search)
	const n = 4
	pow := func(x float64) float64 { return math.Pow(x, n) }
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-12 {
			t.Errorf("%s = %.15f, want %.15f", what, got, want)
		}
	}
	for a := range tt.V {
		ad, sy, best := tt.setOutcome(problem{kind: single, answer: a}, p, n)
		near("single adopt", ad, 1-pow(1-p[a]))
		near("single synthesize", sy, 0)
		near("single best", best, ad)
	}
	x := problem{kind: complementary, subset: 1<<0 | 1<<2 | 1<<4}
	pc := p[0] + p[2] + p[4]
	ad, sy, best := tt.setOutcome(x, p, n)
	near("complementary adopt", ad, 1-pow(1-tt.luck*pc))
	one := 0.0
	for _, v := range []int{0, 2, 4} {
		one += pow(1-pc+p[v]) - pow(1-pc)
	}
	near("complementary synthesize", sy, 1-pow(1-pc)-one)
	if best < math.Max(ad, sy) || best > ad+sy {
		t.Errorf("best %v outside [max(%v, %v), sum]", best, ad, sy)
	}
	// evaluate averages these over the problems, with the head's weights.
	pol.agg[complementary] = [actions]float64{0.4, -0.3}
	q := make([]float64, actions)
	softmax(q, pol.agg[complementary][:])
	m := tt.evaluate(pol, []problem{x, x, {kind: single, answer: 3}}, n)
	sa, _, _ := tt.setOutcome(problem{kind: single, answer: 3}, p, n)
	near("evaluate aggregated", m.Aggregated, (2*(q[adopt]*ad+q[synthesize]*sy)+0.5*sa)/3)
	near("evaluate single", m.Single, (2*tt.luck*pc+p[3])/3)
	near("evaluate entropy", m.Entropy, entropyBits(p))
}

// TestProblems checks the problem distribution: the fraction of single
// problems and the 1/(v+1) law of their answers, within 5 standard errors.
func TestProblems(t *testing.T) {
	tt := defaults().toy
	rnd := stream(7, "test")
	const draws = 50000
	counts := make([]int, tt.V)
	singles := 0
	for range draws {
		x := tt.newProblem(rnd)
		if x.kind == single {
			singles++
			counts[x.answer]++
			continue
		}
		if c := popcount(x.subset); c != tt.comp || x.subset>>tt.V != 0 {
			t.Fatalf("subset %b: %d strategies", x.subset, c)
		}
	}
	check := func(what string, k, n int, p float64) {
		t.Helper()
		if se := math.Sqrt(p * (1 - p) / float64(n)); math.Abs(float64(k)/float64(n)-p) > 5*se {
			t.Errorf("%s: %d of %d, want probability %v (se %v)", what, k, n, p, se)
		}
	}
	check("single", singles, draws, tt.single)
	h := 0.0
	for v := range tt.V {
		h += 1 / float64(v+1)
	}
	for v, c := range counts {
		check("answer "+strconv.Itoa(v), c, singles, 1/float64(v+1)/h)
	}
}

func popcount(x uint64) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

// TestExpectedSteps checks each trainer's update against the library's
// constants: averaged over many steps from one policy, GRPO's search step is
// lr * (G-1)/G * grad E[single-trace reward], and SPIRAL's search step is
// lr * M/24 * grad J and its aggregation step lr * K(N2-1)/24 * grad J, with
// J the expected aggregation reward and M the design's own multiplier
// (Config.M: 1365/1541 for the uniform design and 1 for the balanced one,
// as Config.RoleWeights with the pooled mean gives), each gradient by
// central differences of the exact metrics. Tolerance: 5 standard errors of
// the mean step, per coordinate.
func TestExpectedSteps(t *testing.T) {
	reps := 8000
	if spiraltest.Long() {
		reps = 40000
	}
	tt := toy{V: 4, single: 0.5, comp: 3, need: 2, luck: 0.2}
	start := &policy{search: []float64{0.5, -0.3, 0.2, 0}}
	start.agg[single] = [actions]float64{0.2, -0.2}
	start.agg[complementary] = [actions]float64{-0.4, 0.1}
	batch := []problem{{kind: single, answer: 1}, {kind: complementary, subset: 0b1011}}
	const lr = 1
	cfg := spiral.Paper()
	roles, err := cfg.RoleWeights(spiral.LossOptions{Reduction: loss.SeqMeanTokenSum})
	if err != nil {
		t.Fatal(err)
	}
	grpoArm, err := findArm("grpo")
	if err != nil {
		t.Fatal(err)
	}
	grpoW, err := grpoArm.searchWeight()
	if err != nil {
		t.Fatal(err)
	}
	if grpoW.Cmp(big.NewRat(23, 24)) != 0 || roles.Search.Cmp(big.NewRat(455, 12328)) != 0 || roles.Aggregation.Cmp(big.NewRat(1, 2)) != 0 {
		t.Fatalf("weights %v, %v, %v; want 23/24, 1365/(1541*24) = 455/12328, 12/24", grpoW, roles.Search, roles.Aggregation)
	}
	armWeight := func(name string) *big.Rat {
		t.Helper()
		a, err := findArm(name)
		if err != nil {
			t.Fatal(err)
		}
		w, err := a.searchWeight()
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	// The uniform arm's weight Config.M()/24 is RoleWeights' pooled one.
	uniformW, balancedW := armWeight("spiral"), armWeight("spiral-balanced")
	paperM, err := cfg.M()
	if err != nil {
		t.Fatal(err)
	}
	if uniformW.Cmp(roles.Search) != 0 || uniformW.Cmp(new(big.Rat).Quo(paperM, big.NewRat(24, 1))) != 0 {
		t.Fatalf("spiral arm's search weight %v, want RoleWeights' %v = Paper().M()/24 = %v/24", uniformW, roles.Search, paperM)
	}
	if balancedW.Cmp(big.NewRat(1, 24)) != 0 {
		t.Fatalf("spiral-balanced arm's search weight %v, want M/24 = (8/4 - 1)/24 = 1/24", balancedW)
	}

	// params lists a policy's parameters: the search logits, then the
	// aggregation logits of both kinds.
	params := func(p *policy) []*float64 {
		var out []*float64
		for v := range p.search {
			out = append(out, &p.search[v])
		}
		for k := range kinds {
			for a := range actions {
				out = append(out, &p.agg[k][a])
			}
		}
		return out
	}
	grad := func(J func(*policy) float64) []float64 {
		const h = 1e-5
		n := len(params(start))
		g := make([]float64, n)
		for i := range n {
			up, down := start.clone(), start.clone()
			*params(up)[i] += h
			*params(down)[i] -= h
			g[i] = (J(up) - J(down)) / (2 * h)
		}
		return g
	}
	meanStep := func(tr trainer, name string) (mean, se []float64) {
		rnd := stream(3, name)
		n := len(params(start))
		sum, sq := make([]float64, n), make([]float64, n)
		for range reps {
			p := start.clone()
			if err := tr.step(p, batch, rnd); err != nil {
				t.Fatal(err)
			}
			for i, x := range params(p) {
				d := (*x - *params(start)[i]) / lr
				sum[i] += d
				sq[i] += d * d
			}
		}
		mean, se = make([]float64, n), make([]float64, n)
		for i := range n {
			mean[i] = sum[i] / float64(reps)
			v := (sq[i] - float64(reps)*mean[i]*mean[i]) / float64(reps-1)
			se[i] = math.Sqrt(math.Max(v, 0) / float64(reps))
		}
		return mean, se
	}
	check := func(name string, mean, se, g []float64, weights []float64) {
		t.Helper()
		for i := range mean {
			want := weights[i] * g[i]
			if z := (mean[i] - want) / se[i]; math.Abs(z) > 5 || se[i] == 0 && mean[i] != want {
				t.Errorf("%s: parameter %d: mean step %.6f ± %.6f, want %.6f (z = %.1f)", name, i, mean[i], se[i], want, z)
			}
		}
	}
	nSearch := tt.V
	weights := func(search, agg *big.Rat) []float64 {
		s, _ := search.Float64()
		a, _ := agg.Float64()
		w := make([]float64, len(params(start)))
		for i := range w {
			w[i] = a
			if i < nSearch {
				w[i] = s
			}
		}
		return w
	}

	g := newGRPO(tt, cfg.Generations(), lr)
	mean, se := meanStep(g, "grpo")
	gradSingle := grad(func(p *policy) float64 { return tt.evaluate(p, batch, cfg.SetSize).Single })
	check("grpo", mean, se, gradSingle, weights(grpoW, new(big.Rat)))

	s, err := newSPIRAL(tt, cfg, lr)
	if err != nil {
		t.Fatal(err)
	}
	mean, se = meanStep(s, "spiral")
	gradAgg := grad(func(p *policy) float64 { return tt.evaluate(p, batch, cfg.SetSize).Aggregated })
	check("spiral", mean, se, gradAgg, weights(roles.Search, roles.Aggregation))
	// The test can tell the pooled weight M/24 from the per-role one M/8.
	perRole := weights(new(big.Rat).Mul(roles.Search, big.NewRat(3, 1)), roles.Aggregation)
	far := false
	for i := range nSearch {
		far = far || math.Abs(mean[i]-perRole[i]*gradAgg[i]) > 5*se[i]
	}
	if !far {
		t.Error("the mean SPIRAL search step is within 5 standard errors of M/8 * grad J as well: the test has no power")
	}

	// The balanced design: the search step has its own weight 1/24, the
	// aggregation step the same as the uniform design's.
	sb, err := newSPIRAL(tt, balancedPaper(), lr)
	if err != nil {
		t.Fatal(err)
	}
	mean, se = meanStep(sb, "spiral-balanced")
	check("spiral-balanced", mean, se, gradAgg, weights(balancedW, roles.Aggregation))
	// The test can tell the balanced weight 1/24 from the uniform one
	// 455/12328 (|z| about 19 with 40000 steps, 8 with 8000).
	uniform := weights(uniformW, roles.Aggregation)
	zmax := 0.0
	for i := range nSearch {
		zmax = math.Max(zmax, math.Abs(mean[i]-uniform[i]*gradAgg[i])/se[i])
	}
	if zmax <= 5 {
		t.Errorf("the mean balanced search step is within 5 standard errors (|z| <= %.1f) of the uniform weight's 455/12328 * grad J as well: the test has no power", zmax)
	}
}

// TestCoverageVerdict checks the comparison of two coverage curves.
func TestCoverageVerdict(t *testing.T) {
	for _, c := range []struct {
		base, arm []float64
		want      string
	}{
		{[]float64{0.2, 0.3, 0.4}, []float64{0.3, 0.4, 0.5}, "b beats a at every k = 1..3"},
		{[]float64{0.2, 0.3, 0.4}, []float64{0.1, 0.3, 0.5}, "b beats a at every k >= 3; at k = 2 it does not"},
		{[]float64{0.2, 0.3, 0.4}, []float64{0.3, 0.3, 0.5}, "b beats a at every k >= 3; at k = 2 it does not"},
		{[]float64{0.2, 0.3, 0.4}, []float64{0.3, 0.4, 0.4}, "b beats a at 2 of the 3 widths k, not at k = 3"},
		{[]float64{0.2, 0.3, 0.4}, []float64{0.2, 0.3, 0.4}, "b does NOT beat a at any k = 1..3"},
		{[]float64{0.2, 0.3, 0.4}, []float64{0.1, 0.2, 0.3}, "b does NOT beat a at any k = 1..3"},
	} {
		res := &result{opt: options{kmax: 3}, arms: []armResult{
			{arm: arm{name: "a"}, streamResult: streamResult{coverage: c.base}},
			{arm: arm{name: "b"}, streamResult: streamResult{coverage: c.arm}},
		}}
		if got := res.coverageVerdict(res.arms[1]); !strings.HasPrefix(got, c.want) {
			t.Errorf("%v vs %v: %q, want %q", c.arm, c.base, got, c.want)
		}
	}
}

// adviceSmallArgs run the -advice mode on a small advisor search (N1 <= 4,
// K <= 3, N2 <= 4) against the reference N1 = 4, n = 3, K = 2, N2 = 2, for
// 12 steps.
func adviceSmallArgs(dir string) []string {
	return []string{"-advice", "-advice-max-traces", "4", "-advice-max-sets", "3", "-advice-max-aggregations", "4",
		"-advice-reference", "4,3,2,2", "-advice-former", "4,2,2,2,uniform", "-steps", "12", "-out", dir,
		"-advice-budgets", "1,7", "-advice-lrs", "0.25,4", "-advice-early-streams", "16", "-advice-early-steps", "2"}
}

// TestAdviceSmall runs the -advice mode small and checks its report: every
// field, both arms within one problem's tokens per step of the step's
// budget, the measured variance of each arm's update at the start within
// 4 standard errors of the advisor's exact one (the toy is the advisor's
// model there), a verdict that follows from the difference and its
// standard error, and the same report for the same seed.
func TestAdviceSmall(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	if status := cli(&stdout, &stderr, adviceSmallArgs(dir)); status != 0 {
		t.Fatalf("exit status %d: %s", status, stderr.String())
	}
	f := summaryFields(t, filepath.Join(dir, adviceFile))
	for _, k := range []string{"seed", "toy", "reward_model", "lengths", "budget_per_problem", "advisor",
		"advised.config", "advised.predicted", "advised.scaling", "advised.step", "advised.init_variance",
		"reference.config", "reference.predicted", "reference.scaling", "reference.step", "reference.init_variance",
		"predicted_ratio", "step_tokens", "training", "curve.step_0", "curve.step_12",
		"outcome.success", "outcome.search_success", "outcome.aggregator_found_success",
		"outcome.success_gap_closed", "outcome.noise_cost", "outcome.measured_snr_per_mtoken", "noise_share",
		"verdict", "verdict.curve", "verdict.noise_cost", "why.1", "why.5", "early", "early.lambda_0.verdict", "early.lambda_4.verdict"} {
		if _, ok := f[k]; !ok {
			t.Errorf("report has no %q", k)
		}
	}
	for _, lambda := range []float64{0, 4} {
		for _, k := range []int{1, 7} {
			for _, key := range earlyKeys(lambda, k) {
				if _, ok := f[key]; !ok {
					t.Errorf("report has no %q", key)
				}
			}
		}
	}
	if got := f["reward_model"]; !strings.HasPrefix(got, "correct = 1/2, found = 1/2, missed = 0 ") {
		t.Errorf("reward_model: %q, want the uniform start's 1/2, 1/2, 0", got)
	}
	if got := f["reference.config"]; !strings.HasPrefix(got, "N1 = 4, n = 3, K = 2, N2 = 2, uniform") {
		t.Errorf("reference.config: %q", got)
	}
	if got := f["advised.config"]; !strings.Contains(got, "(rank 1 of ") {
		t.Errorf("advised.config: %q, want rank 1", got)
	}

	// Rerun in process for the numbers; the same seed gives the same report.
	opt := defaults()
	opt.out = dir
	adviceRunDefaults(&opt, map[string]bool{})
	opt.steps = 12
	aopt := adviceDefaults()
	aopt.maxTraces, aopt.maxSets, aopt.maxAggregations = 4, 3, 4
	aopt.early.budgets, aopt.early.lrs, aopt.early.streams, aopt.early.steps = []int{1, 7}, []float64{0.25, 4}, 16, 2
	var err error
	if aopt.reference, err = parseConfig("advice-reference", "4,3,2,2"); err != nil {
		t.Fatal(err)
	}
	if aopt.former, err = parseConfig("advice-former", "4,2,2,2,uniform"); err != nil {
		t.Fatal(err)
	}
	res, err := runAdvice(opt, aopt)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, adviceFile))
	if err != nil {
		t.Fatal(err)
	}
	if res.report() != string(data) {
		t.Error("the same seed gave another report")
	}
	for _, a := range res.arms {
		// Equal tokens per step: within half a problem's tokens of the
		// step's budget, so within one problem's tokens of each other.
		if d := a.stepTokens() - res.stepBudget; 2*max(d, -d) > a.cand.Tokens {
			t.Errorf("%s: %d tokens per step, budget %d: more than half of one problem's %d off", a.name, a.stepTokens(), res.stepBudget, a.cand.Tokens)
		}
		if len(a.streams) != opt.replicates {
			t.Errorf("%s: %d streams, want %d", a.name, len(a.streams), opt.replicates)
		}
		for _, s := range a.streams {
			if len(s.checkpoints) != len(res.checkpointSteps) {
				t.Fatalf("%s: %d checkpoints, want %d", a.name, len(s.checkpoints), len(res.checkpointSteps))
			}
			for _, c := range s.checkpoints {
				for _, x := range []float64{c.Search, c.Objective, c.Found} {
					if !(x >= 0 && x <= 1) {
						t.Errorf("%s: a probability %v out of [0, 1]", a.name, x)
					}
				}
			}
		}
		// The advisor's variance at the start is exact for the toy.
		if z := (a.init.noise.mean - a.init.predicted) / a.init.noise.se; math.Abs(z) > 4 {
			t.Errorf("%s: measured variance %v ± %v at the start, the advisor's %v (z = %.1f)", a.name, a.init.noise.mean, a.init.noise.se, a.init.predicted, z)
		}
		// The reward model's Correct is the search success at the start,
		// and the objective is Found (1 - (1 - Correct)^n) there.
		s0 := a.streams[0].checkpoints[0]
		if s0.Search != 0.5 || s0.Objective != 0.5*(1-math.Pow(0.5, float64(a.cand.Config.SetSize))) {
			t.Errorf("%s: start search %v, objective %v", a.name, s0.Search, s0.Objective)
		}
		// The noiseless path starts where every stream does, and the
		// advisor's signal is the exact gradient's squared norm there.
		if len(a.exact) != len(res.checkpointSteps) || a.exact[0].Objective != s0.Objective {
			t.Errorf("%s: noiseless path of %d checkpoints from %v", a.name, len(a.exact), a.exact[0].Objective)
		}
		sig := ratFloat(a.cand.Variance.Signal) + ratFloat(a.cand.Aggregation.Signal)
		if got := s0.GradSearch*s0.GradSearch + s0.GradAgg*s0.GradAgg; math.Abs(got-sig) > 1e-12 {
			t.Errorf("%s: ||grad J||^2 = %v at the start, the advisor's signal %v", a.name, got, sig)
		}
	}
	if res.arms[0].cand.ImprovementPerToken.Cmp(res.arms[1].cand.ImprovementPerToken) <= 0 {
		t.Errorf("advised improvement per token %v not above the reference's %v", res.arms[0].cand.ImprovementPerToken, res.arms[1].cand.ImprovementPerToken)
	}
	// The early check: at each budget the top is the ranking's first at that
	// budget, each arm trains the step's tokens over its own, every gain is
	// a gain of the arm's objective, and at lambda = 0 one step's expected
	// gain is lr ||G||^2 to first order, so it is not below zero by more
	// than its noise.
	if len(res.early) != 4 {
		t.Fatalf("%d early checks, want 2 curvatures x 2 budgets", len(res.early))
	}
	for _, b := range res.early {
		if b.arms[0].rank != 1 {
			t.Errorf("lambda %v budget %d: top of rank %d", b.curvature, b.refProblems, b.arms[0].rank)
		}
		for _, a := range b.arms {
			if d := int64(a.problems)*a.cand.Tokens - b.tokens; 2*max(d, -d) > a.cand.Tokens && a.problems > 1 {
				t.Errorf("lambda %v budget %d %s: %d problems of %d tokens for %d", b.curvature, b.refProblems, a.name, a.problems, a.cand.Tokens, b.tokens)
			}
			if a.cand.Problems.Cmp(big.NewRat(int64(a.problems), 1)) != 0 {
				t.Errorf("%s: predicted at B = %v, trains %d", a.name, a.cand.Problems, a.problems)
			}
			for l, lr := range aopt.early.lrs {
				if trained := a.one[l].se > 0; trained != b.stable(lr) {
					t.Errorf("lambda %v lr %v: trained %v", b.curvature, lr, trained)
				}
				if b.curvature == 0 && a.one[l].mean < -4*a.one[l].se {
					t.Errorf("lambda %v budget %d %s lr %v: one-step gain %v", b.curvature, b.refProblems, a.name, aopt.early.lrs[l], a.one[l])
				}
			}
		}
	}
	_, _, d := res.compare(res.outcomes()[0].get)
	if want := verdictOf(d); !strings.HasPrefix(f["verdict"], "the predicted ordering (advised above reference) "+want+" ") {
		t.Errorf("verdict %q, want %q from difference %v ± %v", f["verdict"], want, d.mean, d.se)
	}
}

// TestAdviceOptions checks that bad -advice options are errors naming the
// option.
func TestAdviceOptions(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-advice", "-advice-reference", "8,4,4"}, "advice-reference"},
		{[]string{"-advice", "-advice-reference", "8,x,4,4"}, "field 2"},
		{[]string{"-advice", "-advice-reference", "4,5,2,2"}, "advice-reference"},
		{[]string{"-advice", "-replicates", "1"}, "replicates = 1"},
		{[]string{"-advice", "-batch", "0"}, "batch = 0"},
		{[]string{"-advice", "-advice-reference", "4,2,2,2", "-advice-max-traces", "9"}, "advise: max_traces: 9 outside [0, 8]"},
		{[]string{"-advice", "-advice-reference", "5,2,2,2", "-advice-max-traces", "4", "-advice-max-sets", "3", "-advice-max-aggregations", "4"}, "not among the advisor's"},
		{[]string{"-advice", "-advice-reference", "4,3,2,1", "-advice-max-traces", "4"}, "advice-reference: advise: config.aggregations_per_set: 1 outside [2, 16]"},
		{[]string{"-advice", "-advice-former", "4,2,2,2,tuples"}, "advice-former"},
		{[]string{"-advice", "-advice-budgets", "0"}, "advice-budgets"},
		{[]string{"-advice", "-advice-lrs", "1,-1"}, "advice-lrs"},
		{[]string{"-advice", "-advice-curvatures", "-4"}, "advice-curvatures"},
		{[]string{"-advice", "-advice-curvatures", "0,4", "-advice-lrs", "1,2"}, "no learning rate below 2/lambda = 0.5"},
		{[]string{"-advice", "-advice-early-streams", "1"}, "advice-early-streams = 1"},
	} {
		var stdout, stderr bytes.Buffer
		if status := cli(&stdout, &stderr, append(tc.args, "-out", t.TempDir())); status != 1 {
			t.Errorf("%v: exit status %d, want 1", tc.args, status)
		}
		if !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: stderr %q does not name %q", tc.args, stderr.String(), tc.want)
		}
	}
}

// TestRewardModelExact checks the reward model against a direct reading of
// the toy: the gradient of J at the start has the find-one closed form
// d J/d p = Found n (1 - p)^(n-1) for the search, and P(ctx) s (1 - s) on
// the aggregation logits of a context with a correct candidate.
func TestRewardModelExact(t *testing.T) {
	m, err := rewardModel(7)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := m.Correct.Float64()
	found, _ := m.Found.Float64()
	for n := 1; n <= 7; n++ {
		pol := newAdvicePolicy(n)
		gs := make([]float64, adviceToy.V)
		ga := make([][actions]float64, len(pol.agg))
		st := gradJ(pol, n, gs, ga)
		// d J / d logit_answer = dJ/dp * p (1 - p).
		want := found * float64(n) * math.Pow(1-p, float64(n-1)) * p * (1 - p)
		if math.Abs(gs[adviceProblem.answer]-want) > 1e-12 || math.Abs(gs[1-adviceProblem.answer]+want) > 1e-12 {
			t.Errorf("n = %d: search gradient %v, want ±%v", n, gs, want)
		}
		if want := found * (1 - math.Pow(1-p, float64(n))); math.Abs(st.Objective-want) > 1e-12 {
			t.Errorf("n = %d: J = %v, want %v", n, st.Objective, want)
		}
		syms := make([]int, n)
		for c := range ga {
			decodeContext(syms, c, adviceToy.V)
			if encodeContext(syms, adviceToy.V) != c {
				t.Fatalf("context %d does not round-trip: %v", c, syms)
			}
			want := 0.0
			if slices.Contains(syms, adviceProblem.answer) {
				want = math.Pow(p, float64(n)) * found * (1 - found) // P(ctx) = 2^-n = p^n at p = 1/2
			}
			if math.Abs(ga[c][adopt]-want) > 1e-12 || math.Abs(ga[c][synthesize]+want) > 1e-12 {
				t.Errorf("n = %d, context %v: aggregation gradient %v, want ±%v", n, syms, ga[c], want)
			}
		}
	}
}

// TestDocsAdviceCurrent checks that the committed copy of the default
// -advice run's report, docs/toytrain/advice.txt, is what the program
// writes now. The advisor's search over the whole space takes about half a
// minute, so only with SPIRAL_LONG=1.
func TestDocsAdviceCurrent(t *testing.T) {
	spiraltest.SkipUnlessLong(t)
	want, err := os.ReadFile(filepath.Join("..", "..", "docs", "toytrain", adviceFile))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	if status := cli(&stdout, &stderr, []string{"-advice", "-out", dir}); status != 0 {
		t.Fatalf("exit status %d: %s", status, stderr.String())
	}
	got, err := os.ReadFile(filepath.Join(dir, adviceFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/toytrain/advice.txt is not the default -advice run's report: rerun go run ./examples/toytrain -advice and copy out/toytrain/advice.txt to docs/toytrain/")
	}
}
