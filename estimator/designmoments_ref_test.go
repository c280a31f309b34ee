package estimator

import (
	"math/rand/v2"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"spiral/combin"
)

// contractReference is the contraction written plainly, the reference that
// contract must equal: each selection builds its credit weights
// w_k(i) = L w_S(i, H_k) as full N-vectors and contracts the whole N x N
// coefficient block of every pair of its sets with them.
func (e *momentEngine) contractReference() (*Moments, error) {
	L, err := e.contractBound()
	if err != nil {
		return nil, err
	}
	d := e.d
	V, N, T := e.V, e.N, e.T
	NN := N * N
	count := make([]int, N)
	w := make([]int64, d.maxK*N) // w[k*N+i] = L w_S(i, H_k)
	tmp := make([]int64, N)
	sums := newMomentSums(V)
	d.runs(func(s []int) {
		K := len(s)
		clear(count)
		for _, h := range s {
			for _, i := range d.groups[h] {
				count[i]++
			}
		}
		for _, c := range count {
			if c > 0 {
				sums.accCover++
			}
		}
		invK := L / int64(K)
		for k, h := range s {
			row := w[k*N : (k+1)*N]
			for i, c := range count {
				if c > 0 {
					row[i] = -invK
				} else {
					row[i] = 0
				}
			}
			for _, i := range d.groups[h] {
				row[i] += L / int64(count[i])
			}
		}
		for k, h := range s {
			row := w[k*N : (k+1)*N]
			r := e.r1[h*N*V : (h+1)*N*V]
			for v := range V {
				var x int64
				for i, wi := range row {
					x += wi * r[i*V+v]
				}
				sums.accMean[v].add(x)
			}
		}
		var sq, a2 int64
		for k, h := range s {
			wk := w[k*N : (k+1)*N]
			for l := k; l < K; l++ {
				h2 := s[l]
				wl := w[l*N : (l+1)*N]
				blk := e.q[(h*T+h2)*NN : (h*T+h2+1)*NN]
				for i := range N {
					row := blk[i*N : (i+1)*N]
					var x int64
					for j, wj := range wl {
						x += row[j] * wj
					}
					tmp[i] = x
				}
				var x, y int64
				for i, wi := range wk {
					x += wi * tmp[i]
					y += wi * wl[i]
				}
				y *= e.pp[h*T+h2]
				if l != k {
					x, y = 2*x, 2*y
				}
				sq += x
				a2 += y
			}
		}
		sums.accSq.add(sq)
		sums.accA2.add(a2)
	}, sums.flush)
	return e.assemble(sums, L), nil
}

// TestMomentsContractMatchesReference: the engine's coefficients (each set
// or pair of sets enumerated over its own traces) are those of
// coefficientsReference (every outcome of the N traces), and its
// contraction (pair coefficients restricted to the sets' members, closed
// form for the uniform design) gives the same rationals as
// contractReference, on random listed designs (selections of mixed sizes,
// sets in any order and presentation), on the uniform (up to 3,000
// selections) and balanced designs of every small family of both kinds
// (N <= 5; N <= 7 under SPIRAL_LONG=1), and on random policies, tables,
// orders and N2.
func TestMomentsContractMatchesReference(t *testing.T) {
	check := func(t fataler, d *SetDistribution, c *Categorical, tab *Table, p combin.Order, N2 int) {
		t.Helper()
		e, err := newMomentEngine(d, c, tab, p, N2)
		if err != nil {
			t.Fatal(err)
		}
		e.coefficients()
		ref, err := newMomentEngine(d, c, tab, p, N2)
		if err != nil {
			t.Fatal(err)
		}
		ref.coefficientsReference()
		if !slices.Equal(e.r1, ref.r1) || !slices.Equal(e.q, ref.q) || !slices.Equal(e.pp, ref.pp) {
			t.Fatalf("coefficients differ from coefficientsReference")
		}
		got, err := e.contract()
		if err != nil {
			t.Fatal(err)
		}
		want, err := ref.contractReference()
		if err != nil {
			t.Fatal(err)
		}
		if !designMomentsEqual(got, want) {
			t.Fatalf("contract:\n%v\nreference:\n%v", got, want)
		}
	}
	t.Run("listed", func(t *testing.T) {
		checkProperty(t, 100, func(t *rapid.T) {
			N := rapid.IntRange(2, 6).Draw(t, "N")
			n := rapid.IntRange(1, N).Draw(t, "n")
			d := drawDesign(t, N, n, 5)
			V := rapid.IntRange(2, 3).Draw(t, "V")
			if V == 3 && N == 6 {
				V = 2
			}
			p := rapid.SampledFrom([]combin.Order{combin.IndexOrder, combin.Shuffled, SortedBySymbol}).Draw(t, "presentation")
			check(t, d, drawCategorical(t, V, "p"), drawTable(t, V, n), p, rapid.IntRange(0, 3).Draw(t, "N2"))
		})
	})
	t.Run("families", func(t *testing.T) {
		maxN := 5
		if long() {
			maxN = 7
		}
		rnd := rand.New(rand.NewPCG(7, 7))
		c := must(NewCategorical(rats("2/7", "5/7")))
		for N := 2; N <= maxN; N++ {
			for n := 1; n <= min(N, 4); n++ {
				for _, ordered := range []bool{false, true} {
					f := family(t, ordered, N, n)
					T, _ := f.Count64()
					if ordered && T > 30 {
						continue
					}
					for K := 1; K <= min(int(T), 6); K++ {
						ds := []*SetDistribution{}
						if u, err := UniformSets(f, K); err == nil && binomial(int(T), K) <= 3000 {
							ds = append(ds, u)
						}
						if !ordered {
							if b, err := BalancedSets(f, K); err == nil {
								ds = append(ds, b)
							}
						}
						for _, d := range ds {
							tab := must(RandomTable(rnd, 2, n, 6))
							p := []combin.Order{combin.IndexOrder, combin.Shuffled, SortedBySymbol}[rnd.IntN(3)]
							check(t, d, c, tab, p, rnd.IntN(3))
						}
					}
				}
			}
		}
	})
}

// BenchmarkMomentsContract: the contraction over the 916,895 selections of
// the uniform design at the paper's configuration (V = 2, first-candidate
// table, index order), coefficients computed once outside the loop: the
// engine's (closed form for the uniform design), the engine's enumeration
// of the selections, and contractReference.
func BenchmarkMomentsContract(b *testing.B) {
	d := must(UniformSets(family(b, false, 8, 4), 4))
	c := must(NewCategorical(rats("1/3", "2/3")))
	e := must(newMomentEngine(d, c, must(FirstTable(2, 4, rats("1/4", "1"))), combin.IndexOrder, 0))
	e.coefficients()
	b.Run("engine", func(b *testing.B) {
		for b.Loop() {
			must(e.contract())
		}
	})
	b.Run("enumerate", func(b *testing.B) {
		for b.Loop() {
			L := must(e.contractBound())
			sums := newMomentSums(e.V)
			e.enumerate(e.pairs(), L, sums)
			e.assemble(sums, L)
		}
	})
	b.Run("reference", func(b *testing.B) {
		for b.Loop() {
			must(e.contractReference())
		}
	})
}

// coefficientsReference enumerates the V^N outcomes and fills r1, q and
// pp, the plain form of coefficients.
func (e *momentEngine) coefficientsReference() {
	V, N, T := e.V, e.N, e.T
	NN := N * N
	e.r1 = make([]int64, T*N*V)
	e.q = make([]int64, T*T*NN)
	e.pp = make([]int64, T*T)
	y := make([]int, N)
	f1 := make([]int64, T)
	f2 := make([]int64, T)
	dotY := make([]int64, NN)
	sn := make([]int64, N*V)
	outcomes := 1
	for range N {
		outcomes *= V
	}
	for range outcomes {
		pn := int64(1)
		for _, s := range y {
			pn *= e.pnum[s]
		}
		for h, g := range e.d.groups {
			idx := 0
			for _, i := range g {
				idx = idx*V + y[i]
			}
			f1[h], f2[h] = e.f1[idx], e.f2[idx]
		}
		for i, yi := range y {
			for j := i; j < N; j++ {
				dotY[i*N+j] = e.dot[yi*V+y[j]]
			}
			for v := range V {
				x := -e.pnum[v]
				if v == yi {
					x += e.dp
				}
				sn[i*V+v] = x
			}
		}
		for h := range T {
			if f1[h] == 0 {
				continue
			}
			c := pn * f1[h]
			row := e.r1[h*N*V : (h+1)*N*V]
			for k, s := range sn {
				row[k] += c * s
			}
		}
		for h := range T {
			for h2 := h; h2 < T; h2++ {
				var F int64
				if h == h2 {
					F = e.b * f2[h]
				} else {
					F = e.a * f1[h] * f1[h2]
				}
				if F == 0 {
					continue
				}
				c := pn * F
				e.pp[h*T+h2] += c
				blk := e.q[(h*T+h2)*NN : (h*T+h2+1)*NN]
				for i := range N {
					for j := i; j < N; j++ {
						blk[i*N+j] += c * dotY[i*N+j]
					}
				}
			}
		}
		for k := N - 1; k >= 0; k-- { // next outcome, y_N least significant
			y[k]++
			if y[k] < V {
				break
			}
			y[k] = 0
		}
	}
	// Mirror each block to full symmetric form, and the pairs (h2 > h).
	for h := range T {
		for h2 := h; h2 < T; h2++ {
			blk := e.q[(h*T+h2)*NN : (h*T+h2+1)*NN]
			for i := range N {
				for j := i + 1; j < N; j++ {
					blk[j*N+i] = blk[i*N+j]
				}
			}
			if h2 != h {
				copy(e.q[(h2*T+h)*NN:(h2*T+h+1)*NN], blk)
				e.pp[h2*T+h] = e.pp[h*T+h2]
			}
		}
	}
}
