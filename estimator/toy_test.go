package estimator

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
)

func rats(xs ...string) []*big.Rat {
	out := make([]*big.Rat, len(xs))
	for i, x := range xs {
		r, ok := new(big.Rat).SetString(x)
		if !ok {
			panic("bad rational " + x)
		}
		out[i] = r
	}
	return out
}

func TestNewCategoricalErrors(t *testing.T) {
	for _, tc := range []struct {
		p    []*big.Rat
		want string
	}{
		{nil, "estimator: p: len = 0 outside [1, 4096], the most symbols"},
		{[]*big.Rat{big.NewRat(1, 2), nil}, "estimator: p[1]: nil"},
		{rats("1/2", "0", "1/2"), "estimator: p[1]: 0, want > 0"},
		{rats("3/2", "-1/2"), "estimator: p[1]: -1/2, want > 0"},
		{rats("1/3", "1/3"), "sum to 2/3"},
	} {
		_, err := NewCategorical(tc.p)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewCategorical(%v) error = %v, want containing %q", tc.p, err, tc.want)
		}
	}
}

func TestCategoricalScore(t *testing.T) {
	c, err := NewCategorical(rats("1/6", "1/3", "1/2"))
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"5/6", "-1/3", "-1/2"},
		{"-1/6", "2/3", "-1/2"},
		{"-1/6", "-1/3", "1/2"},
	}
	dst := make([]float64, 3)
	mean := []*big.Rat{new(big.Rat), new(big.Rat), new(big.Rat)}
	for v := range 3 {
		s := c.Score(v)
		c.ScoreTo(dst, v)
		for u := range 3 {
			if s[u].RatString() != want[v][u] {
				t.Errorf("Score(%d)[%d] = %s, want %s", v, u, s[u].RatString(), want[v][u])
			}
			f, _ := s[u].Float64()
			if math.Abs(dst[u]-f) > 1e-15 {
				t.Errorf("ScoreTo(%d)[%d] = %v, want %v", v, u, dst[u], f)
			}
			mean[u].Add(mean[u], new(big.Rat).Mul(c.Prob(v), s[u]))
		}
	}
	// The score has mean zero under the policy.
	for u, m := range mean {
		if m.Sign() != 0 {
			t.Errorf("E[score][%d] = %s, want 0", u, m.RatString())
		}
	}
	// Prob returns a copy.
	c.Prob(0).SetInt64(7)
	if c.Prob(0).RatString() != "1/6" {
		t.Error("Prob does not return a copy")
	}
}

func TestCategoricalSample(t *testing.T) {
	c, err := NewCategorical(rats("1/10", "3/10", "6/10"))
	if err != nil {
		t.Fatal(err)
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	const draws = 100000
	counts := make([]int, 3)
	for range draws {
		counts[c.Sample(rnd)]++
	}
	for v, p := range c.Float64s() {
		se := math.Sqrt(p * (1 - p) / draws)
		if got := float64(counts[v]) / draws; math.Abs(got-p) > 5*se {
			t.Errorf("frequency of %d = %v, want %v within 5 SE = %v", v, got, p, 5*se)
		}
	}
}

func TestNewTableErrors(t *testing.T) {
	for _, tc := range []struct {
		V, n int
		vals []*big.Rat
		want string
	}{
		{0, 2, nil, "estimator: V: 0 outside [1, 4096], the most symbols"},
		{2, 0, nil, "estimator: n: 0 outside [1, 64]"},
		{2, 30, nil, "estimator: n: V^n = 2^30 > 1048576, the most entries of a table"},
		{2, 2, rats("0", "1", "1"), "estimator: values: len = 3, want V^n = 2^2 = 4"},
		{2, 1, []*big.Rat{nil, big.NewRat(1, 1)}, "estimator: values[0]: nil"},
		{2, 1, rats("0", "3/2"), "estimator: values[1]: 3/2 outside [0, 1]"},
		{2, 1, rats("-1/3", "1"), "estimator: values[0]: -1/3 outside [0, 1]"},
	} {
		_, err := NewTable(tc.V, tc.n, tc.vals)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewTable(%d, %d, ...) error = %v, want containing %q", tc.V, tc.n, err, tc.want)
		}
	}
	if _, err := RandomTable(nil, 2, 2, 3); err == nil || !strings.Contains(err.Error(), "estimator: rnd: nil") {
		t.Errorf("RandomTable(nil) error = %v", err)
	}
	if _, err := RandomTable(rand.New(rand.NewPCG(1, 1)), 2, 2, 0); err == nil || !strings.Contains(err.Error(), "estimator: denom: 0 outside [1, 2^30]") {
		t.Errorf("RandomTable(denom 0) error = %v", err)
	}
	if _, err := CoverTable(3, 2, 3); err == nil || !strings.Contains(err.Error(), "estimator: m: 3 outside [1, n = 2]") {
		t.Errorf("CoverTable(m > n) error = %v", err)
	}
	if _, err := FirstTable(3, 2, rats("0", "1")); err == nil || !strings.Contains(err.Error(), "estimator: values: len = 2, want V = 3") {
		t.Errorf("FirstTable error = %v", err)
	}
}

func TestTableIndexing(t *testing.T) {
	// V = 3, n = 2: idx = 3*y1 + y2; value idx/8.
	vals := make([]*big.Rat, 9)
	for i := range vals {
		vals[i] = big.NewRat(int64(i), 8)
	}
	tab, err := NewTable(3, 2, vals)
	if err != nil {
		t.Fatal(err)
	}
	if got := tab.At([]int{2, 1}).RatString(); got != "7/8" {
		t.Errorf("At(2,1) = %s, want 7/8", got)
	}
	if got := tab.Float([]int{1, 2}); got != 5.0/8 {
		t.Errorf("Float(1,2) = %v, want 0.625", got)
	}
	if tab.V() != 3 || tab.Arity() != 2 || tab.Len() != 9 {
		t.Errorf("V, Arity, Len = %d, %d, %d", tab.V(), tab.Arity(), tab.Len())
	}
	vals[0].SetInt64(1) // the table holds copies
	if tab.At([]int{0, 0}).Sign() != 0 {
		t.Error("NewTable does not copy its values")
	}
}

func TestSymmetricAndCoverTables(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	for _, tab := range []*Table{
		must(SymmetricRandomTable(rnd, 3, 3, 7)),
		must(CoverTable(3, 4, 2)),
	} {
		V, n := tab.V(), tab.Arity()
		y := make([]int, n)
		z := make([]int, n)
		for i := range tab.Len() {
			decode(y, i, V)
			// Every transposition of neighbours leaves f unchanged.
			for p := 0; p+1 < n; p++ {
				copy(z, y)
				z[p], z[p+1] = z[p+1], z[p]
				if tab.At(y).Cmp(tab.At(z)) != 0 {
					t.Fatalf("table not symmetric at %v vs %v", y, z)
				}
			}
		}
	}
	cover := must(CoverTable(3, 4, 2))
	for _, tc := range []struct {
		y    []int
		want int64
	}{{[]int{0, 0, 0, 0}, 0}, {[]int{0, 0, 1, 0}, 1}, {[]int{2, 1, 0, 2}, 1}} {
		if got := cover.At(tc.y); got.Cmp(big.NewRat(tc.want, 1)) != 0 {
			t.Errorf("CoverTable(3,4,2).At(%v) = %s, want %d", tc.y, got.RatString(), tc.want)
		}
	}
	// A random asymmetric table is (with this seed) not symmetric.
	r := must(RandomTable(rnd, 2, 2, 5))
	if r.At([]int{0, 1}).Cmp(r.At([]int{1, 0})) == 0 {
		t.Errorf("RandomTable unexpectedly symmetric at (0,1): %s", r.At([]int{0, 1}).RatString())
	}
}

func TestFirstTable(t *testing.T) {
	tab := must(FirstTable(3, 3, rats("0", "1/2", "1")))
	y := make([]int, 3)
	for i := range tab.Len() {
		decode(y, i, 3)
		if want := big.NewRat(int64(y[0]), 2); tab.At(y).Cmp(want) != 0 {
			t.Fatalf("FirstTable.At(%v) = %s, want %s", y, tab.At(y).RatString(), want.RatString())
		}
	}
}

func TestSortedIndex(t *testing.T) {
	y := []int{2, 0, 1, 0}
	if got, want := sortedIndex(y, 3), ((0*3+0)*3+1)*3+2; got != want {
		t.Errorf("sortedIndex(%v) = %d, want %d", y, got, want)
	}
	if y[0] != 2 {
		t.Error("sortedIndex modified its argument")
	}
}

func must[T any](x T, err error) T {
	if err != nil {
		panic(err)
	}
	return x
}
