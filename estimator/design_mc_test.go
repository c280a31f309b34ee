package estimator

import (
	"fmt"
	"math"
	"math/rand/v2"

	"spiral/advantage"
	"spiral/combin"
)

// designSim simulates the search estimator under the uniform design (the
// paper's, combin.Sampler) or the balanced one (combin.BalancedSampler), one
// SPIRAL step per replicate, through the library's own credit code
// (advantage.ComputeBatch), the way MonteCarlo does for the uniform design.
type designSim struct {
	f        combin.Family
	K, N2    int // N2 = 0: exact set scores
	balanced bool
	c        *Categorical
	tab      *Table
	p        combin.Order
}

// designSimResult holds estimates with standard errors.
type designSimResult struct {
	R                        int
	mean, meanSE             []float64 // E[g]
	sq, sqSE                 float64   // E||g||^2
	variance, varianceSE     float64   // trace Cov(g), delta-method SE
	searchSquare, searchSqSE float64   // E[A^2], A of a uniform trace
	noCredit, noCreditSE     float64
	normVariance, normVarSE  float64 // variance/M^2, M exact
	normSearch, normSearchSE float64 // searchSquare/M^2
	mExact                   float64
}

// welford accumulates means and the co-moment matrix of vectors.
type welford struct {
	n     int
	mean  []float64
	co    []float64
	delta []float64
}

func newWelford(dim int) *welford {
	return &welford{mean: make([]float64, dim), co: make([]float64, dim*dim), delta: make([]float64, dim)}
}

func (w *welford) add(x []float64) {
	w.n++
	inv := 1 / float64(w.n)
	for i, xi := range x {
		w.delta[i] = xi - w.mean[i]
		w.mean[i] += w.delta[i] * inv
	}
	d := len(x)
	for i, di := range w.delta {
		for j, xj := range x {
			w.co[i*d+j] += di * (xj - w.mean[j])
		}
	}
}

func (w *welford) cov(i, j int) float64 { return w.co[i*len(w.mean)+j] / float64(w.n-1) }

func (s designSim) run(R int, seed uint64, m float64) (designSimResult, error) {
	N, n, V := s.f.Traces(), s.f.SetSize(), s.c.Size()
	var sample func(dst []int, rnd *rand.Rand) error
	if s.balanced {
		b, err := combin.NewBalancedSampler(s.f, s.K)
		if err != nil {
			return designSimResult{}, err
		}
		sample = b.SampleTo
	} else {
		u, err := combin.NewSampler(s.f, s.K)
		if err != nil {
			return designSimResult{}, err
		}
		sample = u.SampleTo
	}
	perSet := max(s.N2, 1)
	batch, err := advantage.NewUniformBatch[float64](1, N, s.K, n, perSet)
	if err != nil {
		return designSimResult{}, err
	}
	if s.f.Ordered() {
		batch.Check = advantage.Tuples
	}
	credit := advantage.BatchCredit[float64]{
		SetScores:     make([]float64, s.K),
		SetAdvantages: make([]float64, s.K),
		Search:        make([]float64, N),
		Appearances:   make([]int, N),
		Aggregation:   make([]float64, len(batch.Rewards)),
	}
	rnd := rand.New(rand.NewPCG(seed, 0x5e7))
	y := make([]int, N)
	order := make([]int, n)
	score := make([]float64, V)
	// x = g_0..g_{V-1}, ||g||^2, mean_i A_i^2, fraction of traces without credit
	x := make([]float64, V+3)
	w := newWelford(len(x))
	for range R {
		for i := range y {
			y[i] = s.c.Sample(rnd)
		}
		if err := sample(batch.Members, rnd); err != nil {
			return designSimResult{}, err
		}
		for k := range s.K {
			copy(order, batch.Members[k*n:(k+1)*n])
			switch s.p {
			case combin.Shuffled:
				for j := n - 1; j > 0; j-- {
					t := rnd.IntN(j + 1)
					order[j], order[t] = order[t], order[j]
				}
			case SortedBySymbol:
				for j := 1; j < n; j++ {
					for t := j; t > 0 && y[order[t]] < y[order[t-1]]; t-- {
						order[t], order[t-1] = order[t-1], order[t]
					}
				}
			}
			idx := 0
			for _, i := range order {
				idx = idx*V + y[i]
			}
			f := s.tab.FloatAt(idx)
			r := batch.Rewards[k*perSet : (k+1)*perSet]
			if s.N2 == 0 {
				r[0] = f
				continue
			}
			for j := range r {
				r[j] = 0
				if rnd.Float64() < f {
					r[j] = 1
				}
			}
		}
		if err := advantage.ComputeBatch(&credit, batch); err != nil {
			return designSimResult{}, err
		}
		clear(x)
		g := x[:V]
		missed := 0
		for i, yi := range y {
			a := credit.Search[i]
			s.c.ScoreTo(score, yi)
			for v, sv := range score {
				g[v] += a * sv
			}
			x[V+1] += a * a
			if credit.Appearances[i] == 0 {
				missed++
			}
		}
		for _, gv := range g {
			x[V] += gv * gv
		}
		x[V+1] /= float64(N)
		x[V+2] = float64(missed) / float64(N)
		w.add(x)
	}
	res := designSimResult{R: R, mean: make([]float64, V), meanSE: make([]float64, V), mExact: m}
	se := func(i int) float64 { return math.Sqrt(w.cov(i, i) / float64(R)) }
	for v := range V {
		res.mean[v], res.meanSE[v] = w.mean[v], se(v)
	}
	res.sq, res.sqSE = w.mean[V], se(V)
	res.searchSquare, res.searchSqSE = w.mean[V+1], se(V+1)
	res.noCredit, res.noCreditSE = w.mean[V+2], se(V+2)
	res.variance = res.sq
	varV := w.cov(V, V)
	for u := range V {
		res.variance -= w.mean[u] * w.mean[u]
		varV -= 4 * w.mean[u] * w.cov(V, u)
		for v := range V {
			varV += 4 * w.mean[u] * w.mean[v] * w.cov(u, v)
		}
	}
	res.varianceSE = math.Sqrt(max(varV, 0) / float64(R))
	res.normVariance, res.normVarSE = res.variance/(m*m), res.varianceSE/(m*m)
	res.normSearch, res.normSearchSE = res.searchSquare/(m*m), res.searchSqSE/(m*m)
	return res, nil
}

func (r designSimResult) String() string {
	return fmt.Sprintf("R %d: Var(g/M) %.5f ± %.5f, E[A^2] %.5f ± %.5f, E[(A/M)^2] %.5f ± %.5f, no credit %.5f ± %.5f",
		r.R, r.normVariance, r.normVarSE, r.searchSquare, r.searchSqSE, r.normSearch, r.normSearchSE, r.noCredit, r.noCreditSE)
}
