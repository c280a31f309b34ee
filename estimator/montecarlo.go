package estimator

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"

	"spiral/advantage"
	"spiral/combin"
	"spiral/internal/credit"
	"spiral/lengthgate"
)

// SortedBySymbol is the content-dependent presentation order that the
// findings study beside combin's two (docs/findings.md#presentation-order):
// each set's candidates sorted by symbol value, ties keeping their order,
// as sorting real traces by length would. No trainer configures it and it
// is not one of combin's orders; estimator's functions accept it wherever
// they take a combin.Order, beside combin.IndexOrder (a set's traces in the
// order the family gives them: ascending index for subsets, drawn order for
// tuples) and combin.Shuffled (a fresh uniformly random order per set).
const SortedBySymbol = combin.Order(-1)

// MaxReplicates bounds the replicate count R of [MonteCarlo.Run] (hours of
// work at the paper's configuration), and
// MaxMonteCarloSymbols the policy's V, whose statistics and scores take
// (V+3)^2 + V^2 float64s per worker.
const (
	MaxReplicates        = 1 << 30
	MaxMonteCarloSymbols = 1000
)

// MonteCarloChunk is the number of replicates that share one random stream.
// Replicates are cut into chunks of this size (the last may be shorter);
// chunk c draws from rand.New(rand.NewPCG(seed, c)), and the chunks'
// statistics are merged in chunk order. The result of [MonteCarlo.Run]
// therefore depends on the seed and the replicate count, never on the
// number of workers or on scheduling.
const MonteCarloChunk = 1 << 13

// MonteCarlo simulates the SPIRAL search estimator on a toy policy, one
// replicate at a time. A replicate is one SPIRAL step on one problem:
//
//  1. draw N = Family.Traces() traces y_1..y_N independently from Policy (a trace
//     is a symbol);
//  2. draw K distinct sets uniformly from Family (a combin.Sampler);
//  3. present each set's traces in the order set by Order and
//     score the presented tuple with Objective: f_i = f(y_{G_i}) (the
//     presentation orders f's arguments only: the credit below is computed
//     on the groups as drawn);
//  4. if N2 > 0, draw N2 aggregation rewards r_ij ~ Bernoulli(f_i) for each
//     group (noisy set scores); if N2 == 0, give each group the single exact
//     reward f_i;
//  5. compute the credit with the library's own kernel (internal/credit,
//     which advantage.ComputeBatch runs after its checks), then, if Gate is enabled, gate the search advantages with
//     lengthgate (a trace of symbol v has length Lengths[v]);
//  6. record the V-vector g below and the search-advantage statistics of
//     [MonteCarloResult].
//
// The estimator of one replicate is
//
//	g = sum_{i=1..N} A_search(y_i) * grad_theta log pi(y_i)
//	  = sum_i A_search(y_i) * (e_{y_i} - p).
//
// By Proposition 3.1, E[g] = M * grad J with M = (N/n) q_K - 1 and
// J = E[f(y_1..y_n)], for either family, whenever the presentation order does
// not depend on the traces' content (combin.IndexOrder, combin.Shuffled) and
// the gate is off. Under SortedBySymbol a set is scored by the symmetric
// objective f(sort(y)), so E[g] = M * grad J_sort with
// J_sort = E[f(sort(y_1..y_n))] instead (docs/findings.md#presentation-order). The
// zero Gate does nothing; Lengths is then ignored.
type MonteCarlo struct {
	Family    combin.Family
	K         int // sets per replicate, 1 <= K <= T
	N2        int // aggregation rewards per set; 0 means exact set scores
	Policy    *Categorical
	Objective *Table // V symbols, arity Family.SetSize()
	Order     combin.Order
	Gate      lengthgate.Gate // applied to search advantages only
	Lengths   []int           // length of each symbol's trace, when Gate is enabled
	// Workers is the number of goroutines; 0 means runtime.GOMAXPROCS(0).
	// It changes the speed of Run, never its result. Run starts at most
	// GOMAXPROCS goroutines (more would not be faster, and each holds its
	// own scratch and statistics), and at most one per chunk.
	Workers int
}

// Estimate is a Monte Carlo estimate and its standard error.
type Estimate struct {
	Value  float64
	StdErr float64
}

// MonteCarloResult holds the statistics of [MonteCarlo.Run] over its
// replicates. Variances and covariances use the divisor R-1; a standard error
// is sqrt(variance/R).
type MonteCarloResult struct {
	Replicates int // R
	// Mean[v] estimates E[g_v]; StdErr[v] is its standard error.
	Mean, StdErr []float64
	// Variance[v] is the sample variance of g_v over replicates, and
	// Covariance[u*V+v] the sample covariance of g_u and g_v (row-major V x V).
	Variance, Covariance []float64
	// SearchMean and SearchMeanSquare estimate E[A] and E[A^2] for the search
	// advantage A = A_search(y_I) of one trace I chosen uniformly (after the
	// gate, if any); SearchVariance estimates Var(A) = E[A^2] - E[A]^2, with
	// a delta-method standard error. A trace in no set has A = 0, so the
	// variance given that the trace has credit is
	// SearchMeanSquare/(1-NoCredit) - (SearchMean/(1-NoCredit))^2.
	SearchMean, SearchMeanSquare, SearchVariance Estimate
	// NoCredit estimates the probability that a trace is in no sampled set,
	// exactly Family.MissProb(K). Its standard error is that of the mean of
	// the replicates' no-credit fractions (the traces of one replicate are
	// dependent, so it is not the binomial one).
	NoCredit Estimate
}

// Extra statistics recorded per replicate after the V components of g.
const (
	statSearchMean = iota
	statSearchMeanSquare
	statNoCredit
	numExtraStats
)

// validate checks mc and returns the number of rewards per set in the
// advantage batch (N2, or 1 for exact scores).
func (mc *MonteCarlo) validate() (rewardsPerSet int, err error) {
	f := mc.Family
	if f.SetSize() == 0 {
		return 0, argError("Family", -1, 0, "the zero Family, want one made by combin.Subsets or combin.Tuples")
	}
	if mc.Policy == nil {
		return 0, argError("Policy", -1, 0, "nil")
	}
	if mc.Objective == nil {
		return 0, argError("Objective", -1, 0, "nil")
	}
	if V := mc.Policy.Size(); V > MaxMonteCarloSymbols {
		return 0, argError("Policy", -1, V, "V = %d symbols > %d, the most simulated (the statistics hold (V+3)^2 numbers)", V, MaxMonteCarloSymbols)
	}
	if V := mc.Policy.Size(); mc.Objective.V() != V {
		return 0, argError("Objective", -1, mc.Objective.V(), "V = %d symbols, the Policy has V = %d", mc.Objective.V(), V)
	}
	if n := f.SetSize(); mc.Objective.Arity() != n {
		return 0, argError("Objective", -1, mc.Objective.Arity(), "arity %d, the Family %v has set size n = %d", mc.Objective.Arity(), f, n)
	}
	if mc.K < 1 {
		return 0, argError("K", -1, mc.K, "%d, want >= 1", mc.K)
	}
	if mc.N2 < 0 {
		return 0, argError("N2", -1, mc.N2, "%d, want >= 0 (0 for exact set scores)", mc.N2)
	}
	rewardsPerSet = max(mc.N2, 1)
	if mc.K > combin.MaxSize/rewardsPerSet {
		return 0, argError("N2", -1, mc.N2, "K*N2 = %d*%d > %d, the most rewards of a replicate", mc.K, mc.N2, combin.MaxSize)
	}
	switch mc.Order {
	case combin.IndexOrder, combin.Shuffled, SortedBySymbol:
	default:
		return 0, undefinedError("Order", int(mc.Order), "presentation")
	}
	if err := mc.Gate.Validate(); err != nil {
		if e, ok := errors.AsType[*lengthgate.InputError](err); ok {
			return 0, e.In("estimator", "Gate."+e.Field)
		}
		return 0, fmt.Errorf("estimator: Gate: %w", err)
	}
	if mc.Gate.Enabled() {
		if len(mc.Lengths) != mc.Policy.Size() {
			return 0, argError("Lengths", -1, len(mc.Lengths), "len = %d, want V = %d (the Gate is enabled)", len(mc.Lengths), mc.Policy.Size())
		}
		for v, l := range mc.Lengths {
			if l < 0 {
				return 0, argError("Lengths", v, l, "length < 0")
			}
		}
	}
	if mc.Workers < 0 {
		return 0, argError("Workers", -1, mc.Workers, "%d, want >= 0 (0 for GOMAXPROCS)", mc.Workers)
	}
	// Errors the samplers and the advantage batch would report (K > T,
	// N > combin.MaxSize) are caught by building one worker.
	return rewardsPerSet, nil
}

// Run simulates R replicates with the given seed and returns their
// statistics. The work is spread over min(Workers, GOMAXPROCS) goroutines;
// the result depends only on mc, R and seed (see [MonteCarloChunk]). Each
// replicate allocates nothing; Run allocates O(V^2) statistics and scores
// per worker, whatever R and Workers, plus per-worker scratch of
// O(N1 + K n + K N2).
//
// Run returns an error if R is not in [2, MaxReplicates] or mc is not valid:
// a zero Family, a nil Policy or Objective, V > MaxMonteCarloSymbols, an
// Objective whose V or arity does not match the Policy or the Family, K < 1
// or K > T, N2 < 0, K*N2 > combin.MaxSize, N1 > combin.MaxSize, an order
// other than combin.IndexOrder, combin.Shuffled and SortedBySymbol, an
// invalid Gate, an enabled Gate without one non-negative length per symbol,
// or Workers < 0.
func (mc MonteCarlo) Run(R int, seed uint64) (MonteCarloResult, error) {
	if R < 2 || R > MaxReplicates {
		return MonteCarloResult{}, argError("R", -1, R, "%d outside [2, %d], the most replicates (the work grows with R)", R, MaxReplicates)
	}
	mc.Lengths = append([]int(nil), mc.Lengths...) // the caller may change theirs
	rewardsPerSet, err := mc.validate()
	if err != nil {
		return MonteCarloResult{}, err
	}
	chunks := (R-1)/MonteCarloChunk + 1 // without overflow for R = MaxInt
	workers := runtime.GOMAXPROCS(0)
	if mc.Workers > 0 {
		workers = min(workers, mc.Workers)
	}
	workers = min(workers, chunks)

	ws := make([]*mcWorker, workers)
	for i := range ws {
		if ws[i], err = newMCWorker(&mc, rewardsPerSet); err != nil {
			return MonteCarloResult{}, err
		}
	}
	// Chunks run in rounds of a few per worker; each round's statistics are
	// merged in chunk order before the next, so memory does not grow with R.
	dim := mc.Policy.Size() + numExtraStats
	round := 4 * workers
	stats := make([]moments, min(round, chunks))
	for c := range stats {
		stats[c] = newMoments(dim)
	}
	errs := make([]error, len(stats))
	total := newMoments(dim)
	for first := 0; first < chunks; first += round {
		inRound := min(round, chunks-first)
		var next atomic.Int64
		var wg sync.WaitGroup
		for _, w := range ws {
			wg.Go(func() {
				for {
					i := int(next.Add(1) - 1)
					if i >= inRound {
						return
					}
					c := first + i
					reps := min(MonteCarloChunk, R-c*MonteCarloChunk)
					stats[i].reset()
					errs[i] = w.runChunk(&stats[i], reps, seed, uint64(c))
				}
			})
		}
		wg.Wait()
		for i := range inRound {
			if errs[i] != nil {
				return MonteCarloResult{}, errs[i] // cannot happen for a validated mc
			}
			total.merge(&stats[i])
		}
	}
	return total.result(mc.Policy.Size()), nil
}

// mcWorker holds the scratch memory of one goroutine of Run.
type mcWorker struct {
	mc      *MonteCarlo
	pcg     *rand.PCG
	rnd     *rand.Rand
	sampler *combin.Sampler
	batch   advantage.Batch[float64] // one problem; Members are the groups
	credit  credit.Output[float64]   // its credit
	span    credit.Span              // the problem in batch and credit
	symbols []int                    // y_1..y_N
	present []int                    // one group in presentation order
	lengths []int                    // Lengths[y_i], when the gate is enabled
	scores  []float64                // scores[v*V:(v+1)*V] = e_v - p
	x       []float64                // one replicate: g, then the extra statistics
}

func newMCWorker(mc *MonteCarlo, rewardsPerSet int) (*mcWorker, error) {
	f := mc.Family
	N, n, V := f.Traces(), f.SetSize(), mc.Policy.Size()
	sampler, err := combin.NewSampler(f, mc.K)
	if e, ok := errors.AsType[*combin.InputError](err); ok {
		field := "Family"
		if e.Field == combin.FieldK {
			field = "K"
		}
		return nil, e.In("estimator", field)
	} else if err != nil {
		return nil, fmt.Errorf("estimator: %w", err)
	}
	batch, err := advantage.NewUniformBatch[float64](1, N, mc.K, n, rewardsPerSet)
	if err != nil {
		return nil, fmt.Errorf("estimator: %w", err)
	}
	pcg := rand.NewPCG(0, 0)
	w := &mcWorker{
		mc:      mc,
		pcg:     pcg,
		rnd:     rand.New(pcg),
		sampler: sampler,
		batch:   batch,
		span:    credit.Span{Traces: N, Sets: mc.K, Members: len(batch.Members), Rewards: len(batch.Rewards)},
		symbols: make([]int, N),
		present: make([]int, n),
		scores:  make([]float64, V*V),
		x:       make([]float64, V+numExtraStats),
	}
	for v := range V {
		mc.Policy.ScoreTo(w.scores[v*V:(v+1)*V], v)
	}
	w.credit.Resize(1, N, mc.K, len(batch.Rewards), N, mc.K)
	if mc.Gate.Enabled() {
		w.lengths = make([]int, N)
	}
	return w, nil
}

// runChunk adds reps replicates drawn from the stream (seed, stream) to m.
func (w *mcWorker) runChunk(m *moments, reps int, seed, stream uint64) error {
	w.pcg.Seed(seed, stream)
	for range reps {
		if err := w.replicate(); err != nil {
			return err
		}
		m.add(w.x)
	}
	return nil
}

// replicate simulates one replicate and leaves its statistics in w.x.
func (w *mcWorker) replicate() error {
	mc, rnd := w.mc, w.rnd
	for i := range w.symbols {
		w.symbols[i] = mc.Policy.Sample(rnd)
	}
	groups := w.batch.Members
	if err := w.sampler.SampleTo(groups, rnd); err != nil {
		return err
	}
	n, V := mc.Family.SetSize(), mc.Policy.Size()
	rewardsPerSet := len(w.batch.Rewards) / mc.K
	for k := range mc.K {
		// The credit is computed on the groups as drawn; the presentation
		// only orders the arguments of f, in a scratch copy (two tuples with
		// the same members may be presented identically, yet they are
		// distinct draws).
		g := groups[k*n : (k+1)*n]
		if mc.Order != combin.IndexOrder {
			g = w.present
			copy(g, groups[k*n:(k+1)*n])
		}
		switch mc.Order {
		case combin.Shuffled:
			for j := n - 1; j > 0; j-- {
				t := rnd.IntN(j + 1)
				g[j], g[t] = g[t], g[j]
			}
		case SortedBySymbol:
			for j := 1; j < n; j++ { // insertion sort by symbol, stable
				for t := j; t > 0 && w.symbols[g[t]] < w.symbols[g[t-1]]; t-- {
					g[t], g[t-1] = g[t-1], g[t]
				}
			}
		}
		idx := 0
		for _, y := range g {
			idx = idx*V + w.symbols[y]
		}
		f := mc.Objective.FloatAt(idx)
		r := w.batch.Rewards[k*rewardsPerSet : (k+1)*rewardsPerSet]
		if mc.N2 == 0 {
			r[0] = f
			continue
		}
		for j := range r {
			// r_ij = 1 if u < f else 0, without a branch: for u, f in
			// [0, 1], u - f is negative (sign bit set) exactly when u < f.
			r[j] = float64(math.Float64bits(rnd.Float64()-f) >> 63)
		}
	}
	// The sampler's draws are K distinct valid sets and the rewards are
	// 0, 1 or set scores in [0, 1]: the kernel that advantage.ComputeBatch
	// runs after its checks needs none on every replicate.
	in := credit.Input[float64]{SetSizes: w.batch.SetSizes, RewardCounts: w.batch.RewardCounts, Members: w.batch.Members, Rewards: w.batch.Rewards}
	credit.Problem(&w.credit, &in, 0, w.span)
	search := w.credit.Search
	if w.lengths != nil {
		for i, y := range w.symbols {
			w.lengths[i] = mc.Lengths[y]
		}
		if _, err := mc.Gate.Apply(search, w.lengths); err != nil {
			return err
		}
	}

	g := w.x[:V]
	clear(g)
	var sum, sumSq float64
	missed := 0
	for i, y := range w.symbols {
		a := search[i]
		for v, s := range w.scores[y*V : (y+1)*V] {
			g[v] += float64(a * s) // explicit rounding: no fused multiply-add
		}
		sum += a
		sumSq += float64(a * a)
		if w.credit.Appearances[i] == 0 {
			missed++
		}
	}
	N := float64(len(w.symbols))
	w.x[V+statSearchMean] = sum / N
	w.x[V+statSearchMeanSquare] = sumSq / N
	w.x[V+statNoCredit] = float64(missed) / N
	return nil
}

// moments accumulates the count, mean vector and co-moment matrix
// C[i*dim+j] = sum (x_i - mean_i)(x_j - mean_j) of dim-vectors, by Welford's
// update, and merges accumulators by the pairwise formula of Chan, Golub and
// LeVeque.
type moments struct {
	dim   int
	n     int
	mean  []float64
	co    []float64
	delta []float64 // scratch
	dev   []float64 // scratch
}

func newMoments(dim int) moments {
	return moments{dim: dim, mean: make([]float64, dim), co: make([]float64, dim*dim), delta: make([]float64, dim), dev: make([]float64, dim)}
}

// reset empties m.
func (m *moments) reset() {
	m.n = 0
	clear(m.mean)
	clear(m.co)
}

// add adds the observation x. Every product is rounded by an explicit
// float64 conversion before it is added, so that no architecture fuses a
// multiply-add and the result is the same bits everywhere.
func (m *moments) add(x []float64) {
	m.n++
	inv := 1 / float64(m.n)
	for i, xi := range x {
		m.delta[i] = xi - m.mean[i]
		m.mean[i] += float64(m.delta[i] * inv)
		m.dev[i] = xi - m.mean[i]
	}
	for i, di := range m.delta {
		row := m.co[i*m.dim : (i+1)*m.dim]
		for j, ej := range m.dev {
			row[j] += float64(di * ej)
		}
	}
}

// merge adds the observations of o to m.
func (m *moments) merge(o *moments) {
	if o.n == 0 {
		return
	}
	n := m.n + o.n
	a, b := float64(m.n)/float64(n), float64(o.n)/float64(n)
	for i := range m.delta {
		m.delta[i] = o.mean[i] - m.mean[i]
	}
	w := float64(m.n) * b // n_m n_o / n
	for i, di := range m.delta {
		for j, dj := range m.delta {
			m.co[i*m.dim+j] += o.co[i*m.dim+j] + float64(w*di*dj)
		}
	}
	for i := range m.mean {
		m.mean[i] = float64(a*m.mean[i]) + float64(b*o.mean[i])
	}
	m.n = n
}

// cov returns the sample covariance (divisor n-1) of components i and j.
func (m *moments) cov(i, j int) float64 { return m.co[i*m.dim+j] / float64(m.n-1) }

func (m *moments) estimate(i int) Estimate {
	return Estimate{Value: m.mean[i], StdErr: math.Sqrt(m.cov(i, i) / float64(m.n))}
}

// result converts the statistics of n >= 2 replicates with V gradient
// components into a MonteCarloResult.
func (m *moments) result(V int) MonteCarloResult {
	res := MonteCarloResult{
		Replicates: m.n,
		Mean:       append([]float64(nil), m.mean[:V]...),
		StdErr:     make([]float64, V),
		Variance:   make([]float64, V),
		Covariance: make([]float64, V*V),
	}
	for u := range V {
		for v := range V {
			res.Covariance[u*V+v] = m.cov(u, v)
		}
		res.Variance[u] = m.cov(u, u)
		res.StdErr[u] = math.Sqrt(res.Variance[u] / float64(m.n))
	}
	a, s := V+statSearchMean, V+statSearchMeanSquare
	res.SearchMean = m.estimate(a)
	res.SearchMeanSquare = m.estimate(s)
	res.NoCredit = m.estimate(V + statNoCredit)
	// Var(A) = E[A^2] - E[A]^2; by the delta method its estimator has
	// variance (Var(w) - 4 mu Cov(w, u) + 4 mu^2 Var(u))/R for the replicate
	// means u of A and w of A^2, mu = E[u].
	mu := m.mean[a]
	v := m.cov(s, s) - float64(4*mu*m.cov(s, a)) + float64(4*mu*mu*m.cov(a, a))
	res.SearchVariance = Estimate{
		Value:  m.mean[s] - float64(mu*mu),
		StdErr: math.Sqrt(max(v, 0) / float64(m.n)),
	}
	return res
}
