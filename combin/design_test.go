package combin

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// balancedMethods lists the two ways a BalancedSampler can produce a design:
// the rounds construction (with its fallback) and the fallback alone.
var balancedMethods = []struct {
	name  string
	draws int
}{{"rounds", maxRoundDraws}, {"fallback", 0}}

// checkBalanced fails unless flat holds K distinct sorted n-subsets of
// {0..N-1} in which every index appears floor(K*n/N) or one more times,
// exactly (K*n) mod N of them one more.
func checkBalanced(t tester, f Family, K int, flat []int) {
	t.Helper()
	checkSample(t, f, K, flat)
	N, n := f.Traces(), f.SetSize()
	count := make([]int, N)
	for _, v := range flat {
		count[v]++
	}
	r, extra := K*n/N, K*n%N
	more := 0
	for i, c := range count {
		switch c {
		case r:
		case r + 1:
			more++
		default:
			t.Fatalf("%v, K = %d: index %d appears %d times, want %d or %d (design %v)", f, K, i, c, r, r+1, flat)
		}
	}
	if more != extra {
		t.Fatalf("%v, K = %d: %d indices appear r+1 = %d times, want (K*n) mod N = %d", f, K, more, r+1, extra)
	}
}

// TestBalancedRapid: on random (N, n, K) with K up to C(N, n), both methods
// return K distinct n-subsets with the promised replication, and the
// sampler's Replication agrees.
func TestBalancedRapid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		N := rapid.IntRange(1, 12).Draw(t, "N")
		n := rapid.IntRange(1, N).Draw(t, "n")
		f, _ := Subsets(N, n)
		T, _ := f.Count64()
		K := rapid.IntRange(0, int(min(T, 40))).Draw(t, "K")
		m := rapid.SampledFrom(balancedMethods).Draw(t, "method")
		rnd := rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 0))
		s := newBalancedSampler(f, K, m.draws)
		dst := make([]int, s.Len())
		for range 3 {
			if err := s.SampleTo(dst, rnd); err != nil {
				t.Fatalf("%v, K = %d, %s: %v", f, K, m.name, err)
			}
			checkBalanced(t, f, K, dst)
		}
		if r, extra := s.Replication(); r*N+extra != K*n || extra >= N {
			t.Fatalf("Replication() = %d, %d for K*n = %d, N = %d", r, extra, K*n, N)
		}
	})
}

// TestBalancedWholeFamily: K = C(N, n) leaves one design, the whole family,
// which both methods must find.
func TestBalancedWholeFamily(t *testing.T) {
	for _, c := range [][2]int{{5, 2}, {6, 3}, {7, 4}, {4, 4}, {5, 1}} {
		f := mustFamily(t, false, c[0], c[1])
		T, _ := f.Count64()
		for _, m := range balancedMethods {
			s := newBalancedSampler(f, int(T), m.draws)
			dst := make([]int, s.Len())
			if err := s.SampleTo(dst, rand.New(rand.NewPCG(1, 2))); err != nil {
				t.Fatal(err)
			}
			checkBalanced(t, f, int(T), dst)
		}
	}
}

// designKey returns a canonical string for a design: its sorted sets in
// increasing order.
func designKey(flat []int, n int) string {
	sets := make([]string, len(flat)/n)
	for k := range sets {
		g := slices.Clone(flat[k*n : (k+1)*n])
		slices.Sort(g)
		sets[k] = intsKey(g)
	}
	slices.Sort(sets)
	return strings.Join(sets, "")
}

// TestBalancedPaperLaw: at N = 8, n = 4, K = 4 every design is two distinct
// splits into halves, {A, A^c, B, B^c}, and the 595 such designs are equally
// likely (chi-square, 594 degrees of freedom, fixed seed).
func TestBalancedPaperLaw(t *testing.T) {
	f := mustFamily(t, false, 8, 4)
	s, err := NewBalancedSampler(f, 4)
	if err != nil {
		t.Fatal(err)
	}
	const designs = 595 // C(35, 2) pairs of distinct splits
	R := budget(designs * 20)
	rnd := rand.New(rand.NewPCG(8, 4))
	dst := make([]int, s.Len())
	counts := map[string]int{}
	for range R {
		if err := s.SampleTo(dst, rnd); err != nil {
			t.Fatal(err)
		}
		// Sets 0,1 and 2,3 are complementary halves, from different splits.
		for _, p := range [][2]int{{0, 1}, {2, 3}} {
			var all []int
			all = append(all, dst[p[0]*4:p[0]*4+4]...)
			all = append(all, dst[p[1]*4:p[1]*4+4]...)
			slices.Sort(all)
			if !slices.Equal(all, []int{0, 1, 2, 3, 4, 5, 6, 7}) {
				t.Fatalf("sets %d and %d of %v are not complementary", p[0], p[1], dst)
			}
		}
		counts[designKey(dst, 4)]++
	}
	if len(counts) > designs {
		t.Fatalf("%d distinct designs, want at most %d", len(counts), designs)
	}
	observed := make([]int, designs)
	expected := make([]float64, designs)
	i := 0
	for _, c := range counts {
		observed[i] = c
		i++
	}
	for i := range expected {
		expected[i] = float64(R) / designs
	}
	stat, df := chiSquare(observed, expected)
	if limit := chiSquareThreshold(df); stat > limit {
		t.Errorf("designs: chi-square %.1f > %.1f (df %d, %d draws, %d distinct)", stat, limit, df, R, len(counts))
	}
}

// orbits sets labelled designs into their classes under relabelling, by
// applying all N! permutations to the first design of each class seen.
type orbits struct {
	N, n   int
	perms  [][]int
	class  map[string]int // labelled design -> class
	member [][]string     // class -> its distinct labelled designs
}

func newOrbits(N, n int) *orbits {
	o := &orbits{N: N, n: n, class: map[string]int{}}
	perms, err := Tuples(N, N) // every permutation of the N indices
	if err != nil {
		panic(err)
	}
	for p := range perms.All() {
		o.perms = append(o.perms, slices.Clone(p))
	}
	return o
}

// classOf returns the class of the design flat and its key.
func (o *orbits) classOf(flat []int) (int, string) {
	key := designKey(flat, o.n)
	if c, ok := o.class[key]; ok {
		return c, key
	}
	c := len(o.member)
	o.member = append(o.member, nil)
	img := make([]int, len(flat))
	for _, p := range o.perms {
		for i, v := range flat {
			img[i] = p[v]
		}
		k := designKey(img, o.n)
		if _, ok := o.class[k]; !ok {
			o.class[k] = c
			o.member[c] = append(o.member[c], k)
		}
	}
	return c, key
}

// TestBalancedExchangeable: within every class of designs equal up to
// relabelling, each labelled design is equally likely, which is what
// exchangeability of the indices means. Pearson's statistic is summed over
// the classes (each with its own draw count), for both methods, on
// configurations with and without sets straddling two rounds. Every label
// pattern of "which index lands where" is a cell.
func TestBalancedExchangeable(t *testing.T) {
	configs := [][3]int{{6, 3, 4}, {5, 2, 4}}
	if long() {
		configs = append(configs, [3]int{6, 4, 6}, [3]int{5, 3, 5})
	}
	for _, c := range configs {
		for _, m := range balancedMethods {
			t.Run(fmt.Sprintf("N=%d,n=%d,K=%d/%s", c[0], c[1], c[2], m.name), func(t *testing.T) {
				f := mustFamily(t, false, c[0], c[1])
				s := newBalancedSampler(f, c[2], m.draws)
				o := newOrbits(c[0], c[1])
				counts := map[string]int{}
				perClass := map[int]int{}
				rnd := rand.New(rand.NewPCG(uint64(c[0]*100+c[1]*10+c[2]), uint64(m.draws)))
				dst := make([]int, s.Len())
				R := budget(10000)
				for range R {
					if err := s.SampleTo(dst, rnd); err != nil {
						t.Fatal(err)
					}
					checkBalanced(t, f, c[2], dst)
					cl, key := o.classOf(dst)
					counts[key]++
					perClass[cl]++
				}
				var stat float64
				var df int
				for cl, total := range perClass {
					members := o.member[cl]
					obs := make([]int, len(members))
					exp := make([]float64, len(members))
					for i, k := range members {
						obs[i] = counts[k]
						exp[i] = float64(total) / float64(len(members))
					}
					s, d := chiSquare(obs, exp)
					stat += s
					df += d
				}
				if df == 0 {
					t.Fatalf("no degrees of freedom (classes %v)", perClass)
				}
				if limit := chiSquareThreshold(df); stat > limit {
					t.Errorf("chi-square %.1f > %.1f (df %d, classes %v)", stat, limit, df, perClass)
				}
			})
		}
	}
}

// TestBalancedMembership: on a configuration too large to enumerate its
// classes, each index is equally likely to be in each set. A set is
// marginally a uniform n-subset, so its membership counts over R draws have
// covariance R p(1-p) N/(N-1) (I - J/N), p = n/N, and
// sum_i (O_i - E_i)^2 / (E_i (1-p)) * (N-1)/N is chi-square with N-1 degrees
// of freedom. Each set is tested at level 1e-4/K.
func TestBalancedMembership(t *testing.T) {
	for _, c := range [][3]int{{12, 5, 7}, {10, 3, 20}} {
		N, n, K := c[0], c[1], c[2]
		f := mustFamily(t, false, N, n)
		s, err := NewBalancedSampler(f, K)
		if err != nil {
			t.Fatal(err)
		}
		R := budget(5000)
		in := make([][]int, K)
		for k := range in {
			in[k] = make([]int, N)
		}
		rnd := rand.New(rand.NewPCG(uint64(N), uint64(K)))
		dst := make([]int, s.Len())
		for range R {
			if err := s.SampleTo(dst, rnd); err != nil {
				t.Fatal(err)
			}
			for k := range K {
				for _, v := range dst[k*n : (k+1)*n] {
					in[k][v]++
				}
			}
		}
		p := float64(n) / float64(N)
		e := float64(R) * p
		limit := chiSquareQuantile(N-1, 1e-4/float64(K))
		for k := range K {
			var stat float64
			for _, o := range in[k] {
				d := float64(o) - e
				stat += d * d / (e * (1 - p))
			}
			stat *= float64(N-1) / float64(N)
			if stat > limit {
				t.Errorf("N=%d, n=%d, K=%d: set %d membership chi-square %.1f > %.1f", N, n, K, k, stat, limit)
			}
		}
	}
}

// TestBalancedCovers: whenever K*n >= N no index is left out, and with
// K*n < N the sets are disjoint.
func TestBalancedCovers(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 3))
	for _, c := range [][3]int{{8, 4, 2}, {8, 3, 3}, {9, 2, 5}, {100, 4, 5}, {1 << 20, 3, 4}} {
		f := mustFamily(t, false, c[0], c[1])
		g, err := f.SampleBalanced(rnd, c[2])
		if err != nil {
			t.Fatal(err)
		}
		checkBalanced(t, f, c[2], slices.Concat(g...))
	}
}

// TestBalancedDeterminism: the same rnd state gives the same design, from
// SampleBalanced and from a reused sampler, and a sampler's state does not
// leak from one call into the next.
func TestBalancedDeterminism(t *testing.T) {
	for _, c := range [][3]int{{8, 4, 4}, {7, 3, 9}, {6, 3, 19}} {
		f := mustFamily(t, false, c[0], c[1])
		s, _ := NewBalancedSampler(f, c[2])
		dst := make([]int, s.Len())
		for seed := range uint64(5) {
			g, err := f.SampleBalanced(rand.New(rand.NewPCG(seed, 9)), c[2])
			if err != nil {
				t.Fatal(err)
			}
			if err := s.SampleTo(dst, rand.New(rand.NewPCG(seed, 9))); err != nil {
				t.Fatal(err)
			}
			if got := slices.Concat(g...); !slices.Equal(got, dst) {
				t.Fatalf("%v K=%d seed %d: SampleBalanced %v, SampleTo %v", f, c[2], seed, got, dst)
			}
		}
	}
}

// TestBalancedAllocs: SampleTo allocates nothing, on the rounds and on the
// fallback path.
func TestBalancedAllocs(t *testing.T) {
	for _, m := range balancedMethods {
		for _, c := range [][3]int{{8, 4, 4}, {12, 4, 30}} {
			f := mustFamily(t, false, c[0], c[1])
			s := newBalancedSampler(f, c[2], m.draws)
			dst := make([]int, s.Len())
			rnd := rand.New(rand.NewPCG(1, 1))
			if a := testing.AllocsPerRun(50, func() { _ = s.SampleTo(dst, rnd) }); a != 0 {
				t.Errorf("%s %v K=%d: %v allocations per SampleTo", m.name, f, c[2], a)
			}
		}
	}
}

func TestBalancedErrors(t *testing.T) {
	sub := mustFamily(t, false, 6, 3)
	tup := mustFamily(t, true, 6, 3)
	cases := []struct {
		f    Family
		K    int
		want string
	}{
		{tup, 2, "not from Tuples(6, 3)"},
		{sub, 21, "K: 21 > T = 20"},
		{sub, -1, "K: -1 < 0"},
		{Family{}, 1, "combin: Family: the zero Family"},
	}
	for _, c := range cases {
		if _, err := NewBalancedSampler(c.f, c.K); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewBalancedSampler(%v, %d) error %v, want %q", c.f, c.K, err, c.want)
		}
		if _, err := c.f.SampleBalanced(rand.New(rand.NewPCG(1, 1)), c.K); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("SampleBalanced(%v, %d) error %v, want %q", c.f, c.K, err, c.want)
		}
	}
	if _, err := sub.SampleBalanced(nil, 2); err == nil || !strings.Contains(err.Error(), "nil") {
		t.Errorf("SampleBalanced(nil rnd) error %v", err)
	}
	s, _ := NewBalancedSampler(sub, 2)
	dst := make([]int, 6)
	if err := s.SampleTo(dst, nil); err == nil || !slices.Equal(dst, make([]int, 6)) {
		t.Errorf("SampleTo(nil rnd) = %v, dst %v", err, dst)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "len(dst) = 5") {
			t.Errorf("SampleTo with a short dst: recover() = %v", r)
		}
	}()
	_ = s.SampleTo(make([]int, 5), rand.New(rand.NewPCG(1, 1)))
}

// TestBalancedExistence: a balanced design exists for every K <= C(N, n)
// (the switching argument in BalancedSampler's documentation); checked by
// the fallback for every K at small (N, n).
func TestBalancedExistence(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 5))
	for N := 1; N <= 7; N++ {
		for n := 1; n <= N; n++ {
			f := mustFamily(t, false, N, n)
			T := new(big.Int).Binomial(int64(N), int64(n)).Int64()
			for K := 0; K <= int(T); K++ {
				s := newBalancedSampler(f, K, 0)
				dst := make([]int, s.Len())
				if err := s.SampleTo(dst, rnd); err != nil {
					t.Fatal(err)
				}
				checkBalanced(t, f, K, dst)
			}
		}
	}
}
