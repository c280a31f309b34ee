package advantage

import (
	"math"
	"math/big"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"spiral/internal/spiraltest"
)

// bessel returns the mean and the Bessel-corrected standard deviation of
// xs (two passes; 0 for fewer than two values).
func bessel(xs []float64) (mean, std float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1))
}

// TestNeMoRLPresetsMatchVectors runs every case of testdata/trainers/nemo-rl
// (1,200 cases per preset: groups of one, all-equal groups, one reward
// apart from equal others, 0/1, one-hot and continuous rewards of several
// magnitudes, rows masked by valid_mask, rows of no tokens, float32 and
// float64) through its preset and compares each row with NeMo-RL's
// output: within 1e-9 (float64; plus 2^-24 where a standard deviation
// divides, NeMo-RL's Bessel factor being a float32 tensor) or 3e-5
// (float32) of max(1, |A|), plus NeMo-RL's own rounding where it is
// magnified: the cancellation of its E[r^2] - E[r]^2, 4u (r_max/s)^2 with
// u the dtype's unit roundoff and s the standard deviation that divides,
// and, in an all-equal group, a residue of its mean divided by at least
// 1e-6. Rows whose other rewards are all equal are left undivided here and
// must equal r_i minus the others' mean; NeMo-RL divides some of them by
// its residue plus 1e-6 (they are counted, not compared). A masked row
// gets 0 here. Reinforce++'s cases with a group of one are checked to
// report it (NeMo-RL whitens that row's 0 with the others), and its rows
// of no tokens are not compared (no loss reads them).
func TestNeMoRLPresetsMatchVectors(t *testing.T) {
	files, err := filepath.Glob("testdata/trainers/nemo-rl/*.json.gz")
	if err != nil || len(files) != 3 {
		t.Fatalf("vectors: %v %v", files, err)
	}
	for _, file := range files {
		v := readTrainerVectors(t, file)
		var p Preset
		if err := p.UnmarshalText([]byte(v.Preset)); err != nil {
			t.Fatal(err)
		}
		opt, _ := p.Options()
		opt.NaNUnscorable = true // valid_mask 0
		rows, worst, divided, residues := 0, 0.0, 0, 0
		for n, c := range v.Cases {
			rewards := make([]float64, len(c.Rewards))
			group := map[int][]float64{}
			for i, r := range c.Rewards {
				rewards[i] = math.NaN()
				if r != nil {
					rewards[i] = *r
					group[c.IDs[i]] = append(group[c.IDs[i]], *r)
				}
			}
			got := make([]float64, len(rewards))
			tol, u := 1e-9, 0x1p-53
			if opt.Scale != ScaleNone {
				tol += 0x1p-24
			}
			if c.Dtype == "float32" {
				tol, u = 3e-5, 0x1p-24
			}
			rep, err := groupInDtype(got, rewards, c.IDs, c.Lengths, opt, c.Dtype)
			if err != nil {
				t.Fatalf("%s case %d: %v", v.Preset, n, err)
			}
			if opt.Whiten != WhitenNone && len(rep.Singletons) > 0 {
				continue // NeMo-RL whitens the singleton's 0 with the others
			}
			top := 0.0
			for _, r := range rewards {
				if r == r {
					top = max(top, math.Abs(r))
				}
			}
			for i, w := range c.Want {
				if rewards[i] != rewards[i] {
					if got[i] != 0 {
						t.Fatalf("%s case %d row %d: a masked row got %v", v.Preset, n, i, got[i])
					}
					continue
				}
				if opt.Whiten != WhitenNone && c.Lengths[i] == 0 {
					continue
				}
				rows++
				want := math.NaN()
				if w != nil {
					want = *w
				}
				g := group[c.IDs[i]]
				gtop := 0.0
				for _, r := range g {
					gtop = max(gtop, math.Abs(r))
				}
				allow := tol
				_, s := bessel(g)
				if opt.Scale == ScaleOthers {
					var others []float64
					skipped := false
					for _, r := range g {
						if r == rewards[i] && !skipped {
							skipped = true
							continue
						}
						others = append(others, r)
					}
					om, os := bessel(others)
					equal := len(g) >= 2
					for _, r := range others {
						equal = equal && r == others[0]
					}
					if equal && s > 0 {
						// Left undivided here: r_i minus the others' mean.
						if d := math.Abs(got[i] - float32or64(c.Dtype, rewards[i]-om)); d > 1e-12*max(1, math.Abs(got[i])) {
							t.Fatalf("%s case %d row %d: %v, want r - mean of the others %v", v.Preset, n, i, got[i], rewards[i]-om)
						}
						if math.Abs(want-got[i]) > tol*max(1, math.Abs(want)) {
							divided++
						}
						continue
					}
					s = os
				}
				if opt.Scale != ScaleNone && s > 0 {
					allow += 4 * u * (gtop / s) * (gtop / s)
				}
				if s == 0 && opt.Whiten == WhitenNone && len(g) >= 2 {
					// An all-equal group: NeMo-RL's residue over std + 1e-6.
					allow = max(allow, 8*u*gtop/1e-6)
					if want != 0 {
						residues++
					}
				}
				d := math.Abs(got[i]-want) / max(1, math.Abs(want))
				if c.Dtype == "float64" {
					worst = max(worst, d)
				}
				if opt.Whiten != WhitenNone {
					// A residue of NeMo-RL's means (a few units u of the
					// largest reward) divided by a spread of at least 1e-4,
					// as in TestPresetsMatchTrainerVectors.
					d = max(0, d-1e4*8*u*top)
				}
				if !(d <= allow) {
					t.Fatalf("%s case %d (%s): row %d (reward %v) = %.9g, NeMo-RL %.9g (allowed %.2g); group %v",
						v.Preset, n, c.Dtype, i, rewards[i], got[i], want, allow, g)
				}
			}
		}
		t.Logf("%s: %d cases, %d rows; largest float64 difference %.2g; rows whose others are equal that NeMo-RL divides: %d; all-equal rows with a NeMo-RL residue: %d",
			v.Preset, len(v.Cases), rows, worst, divided, residues)
	}
}

// float32or64 rounds x to the case's dtype.
func float32or64(dtype string, x float64) float64 {
	if dtype == "float32" {
		return float64(float32(x))
	}
	return x
}

// TestScaleOthersDirect compares nemo-rl-grpo with the leave-one-out
// formula in exact rational arithmetic, row by row, on random groups of
// two to 24 rows: 0/1 rewards, one reward apart from equal others,
// continuous rewards about a common offset, and one reward far from
// others that nearly agree (their spread 1e-9 of their value); a quarter of
// them again times 2^-1000. Within 1e-12 of max(1, |A|), and exactly
// r_i - v where the others all hold v.
func TestScaleOthersDirect(t *testing.T) {
	opt, _ := NeMoRLGRPO.Options()
	rng := rand.New(rand.NewPCG(37, 1))
	for n := range 600 {
		g := 2 + rng.IntN(23)
		rewards := make([]float64, g)
		switch n % 4 {
		case 0:
			for i := range rewards {
				rewards[i] = float64(rng.IntN(2))
			}
		case 1:
			for i := range rewards {
				rewards[i] = 0.3
			}
			rewards[rng.IntN(g)] = rng.NormFloat64()
		case 2:
			off := []float64{0, 1, 1e3}[rng.IntN(3)]
			for i := range rewards {
				rewards[i] = off + rng.NormFloat64()*[]float64{1e-3, 1, 10}[rng.IntN(3)]
			}
		case 3:
			for i := range rewards {
				rewards[i] = 0.3 + 1e-10*rng.NormFloat64()
			}
			rewards[rng.IntN(g)] = 5 + rng.NormFloat64()
		}
		got := make([]float64, g)
		if _, err := GroupRelative(got, rewards, make([]int, g), opt); err != nil {
			t.Fatal(err)
		}
		exact := exactOthers(rewards)
		for i, r := range rewards {
			others := append(append([]float64(nil), rewards[:i]...), rewards[i+1:]...)
			equal := true
			for _, o := range others {
				equal = equal && o == others[0]
			}
			if equal && got[i] != r-others[0] {
				t.Fatalf("case %d row %d: %v, want r - others' reward = %v exactly; rewards %v", n, i, got[i], r-others[0], rewards)
			}
			want := exact[i]
			if d := math.Abs(got[i]-want) / max(1, math.Abs(want)); d > 1e-12 {
				t.Fatalf("case %d row %d: %.17g, exact %.17g; rewards %v", n, i, got[i], want, rewards)
			}
		}
		if n%8 < 6 {
			continue
		}
		// The same rewards times 2^-1000 (a lifted group): the others'
		// spread is negligible beside Epsilon, so A_i = (r_i - m_-i)/1e-6
		// where the others differ.
		tiny := make([]float64, g)
		for i, r := range rewards {
			tiny[i] = r * 0x1p-1000
		}
		if _, err := GroupRelative(got, tiny, make([]int, g), opt); err != nil {
			t.Fatal(err)
		}
		exact = exactOthers(tiny)
		for i, want := range exact {
			if d := math.Abs(got[i]-want) / max(0x1p-1000, math.Abs(want)); d > 1e-12 {
				t.Fatalf("case %d row %d, times 2^-1000: %.17g, exact %.17g", n, i, got[i], want)
			}
		}
	}
}

// TestNeMoRLGDPOByComponents checks what [NeMoRLGRPO]'s documentation says
// of GDPO against NeMo-RL's GDPOAdvantageEstimator
// (testdata/trainers/nemo-rl/gdpo, 400 cases of two or three components,
// 0/1 and continuous, with and without reward_weights, float32 and
// float64): nemo-rl-grpo on each component, weighted and added, then
// standardised over the batch (the mean and Bessel standard deviation of
// every row; only the mean where that is 0) gives NeMo-RL's advantages,
// within 1e-9 + 2^-24 (float64) or 1e-4 (float32) of max(1, |A|), where
// the weighted sum does not cancel to rounding (there NeMo-RL divides its
// residue by its own standard deviation).
func TestNeMoRLGDPOByComponents(t *testing.T) {
	var v struct {
		Cases []struct {
			Dtype      string      `json:"dtype"`
			IDs        []int       `json:"ids"`
			Components [][]float64 `json:"components"`
			Weights    []float64   `json:"weights"`
			Want       []float64   `json:"want"`
		} `json:"cases"`
	}
	spiraltest.ReadJSONGz(t, "testdata/trainers/nemo-rl/gdpo/nemo-rl-gdpo.json.gz", &v)
	opt, _ := NeMoRLGRPO.Options()
	worst, degenerate := 0.0, 0
	for n, c := range v.Cases {
		sum := make([]float64, len(c.IDs))
		a := make([]float64, len(c.IDs))
		top := 0.0 // the largest weighted component advantage
		for k, comp := range c.Components {
			if _, err := groupInDtype(a, comp, c.IDs, make([]int, len(comp)), opt, c.Dtype); err != nil {
				t.Fatal(err)
			}
			w := 1.0
			if c.Weights != nil {
				w = c.Weights[k]
			}
			for i := range a {
				sum[i] += w * a[i]
				top = max(top, math.Abs(w*a[i]))
			}
		}
		m, s := bessel(sum)
		tol, u := 1e-9+0x1p-24, 0x1p-53
		if c.Dtype == "float32" {
			tol, u = 1e-4, 0x1p-24
		}
		if s < 64*u*top {
			// The components cancel (exactly, or to rounding): NeMo-RL
			// divides its rounding residue by its own standard deviation.
			degenerate++
			continue
		}
		for i, want := range c.Want {
			got := sum[i] - m
			if s > 0 {
				got /= s
			}
			d := math.Abs(got-want) / max(1, math.Abs(want))
			if d > tol {
				t.Fatalf("case %d (%s) row %d: %.9g, NeMo-RL %.9g; ids %v components %v weights %v", n, c.Dtype, i, got, want, c.IDs, c.Components, c.Weights)
			}
			if c.Dtype == "float64" {
				worst = max(worst, d)
			}
		}
	}
	t.Logf("%d cases; largest float64 difference %.2g; %d cases whose weighted sum cancels, not compared", len(v.Cases), worst, degenerate)
}

// exactOthers is nemo-rl-grpo's advantage of every row in exact rational
// arithmetic: (r_i - m_-i)/(s_-i + 1e-6), s_-i the Bessel standard
// deviation of the others (S_-i = sum_{j != i} r_j^2 - (sum_{j != i} r_j)^2/(G-1),
// exact; its square root taken in float64), undivided where it is 0.
func exactOthers(rewards []float64) []float64 {
	rs := make([]*big.Rat, len(rewards))
	sum, sq := new(big.Rat), new(big.Rat)
	for j, r := range rewards {
		rs[j] = new(big.Rat).SetFloat64(r)
		sum.Add(sum, rs[j])
		sq.Add(sq, new(big.Rat).Mul(rs[j], rs[j]))
	}
	n := int64(len(rewards) - 1)
	out := make([]float64, len(rewards))
	for i, r := range rs {
		os := new(big.Rat).Sub(sum, r)
		m := new(big.Rat).Quo(os, big.NewRat(n, 1))
		num, _ := new(big.Rat).Sub(r, m).Float64()
		ss := new(big.Rat).Sub(sq, new(big.Rat).Mul(r, r))
		ss.Sub(ss, new(big.Rat).Mul(os, m))
		out[i] = num
		if ss.Sign() > 0 && n >= 2 {
			v, _ := ss.Quo(ss, big.NewRat(n-1, 1)).Float64()
			out[i] = num / (math.Sqrt(v) + 1e-6)
		}
	}
	return out
}
