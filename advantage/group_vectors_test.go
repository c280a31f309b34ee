package advantage

import (
	"math"
	"path/filepath"
	"testing"

	"spiral/internal/spiraltest"
)

// trainerVectors is a file of testdata/trainers: cases run through the
// trainers' own functions (see testdata/trainers/README.md).
type trainerVectors struct {
	Preset     string `json:"preset"`
	Repository string `json:"repository"`
	Source     string `json:"source"`
	Cases      []struct {
		Dtype   string     `json:"dtype"`
		IDs     []int      `json:"ids"`
		Rewards []*float64 `json:"rewards"` // null: NaN
		Lengths []int      `json:"lengths"`
		Want    []*float64 `json:"want"`  // null: NaN
		Error   bool       `json:"error"` // the trainer raised
	} `json:"cases"`
}

// readTrainerVectors reads a file of testdata/trainers.
func readTrainerVectors(t *testing.T, file string) trainerVectors {
	t.Helper()
	var v trainerVectors
	spiraltest.ReadJSONGz(t, file, &v)
	return v
}

// groupInDtype is GroupRelativeTokens on rewards rounded to dtype
// ("float32" or "float64"), its results written to got as float64.
func groupInDtype(got, rewards []float64, ids, lengths []int, opt GroupOptions, dtype string) (GroupReport[int], error) {
	if dtype != "float32" {
		return GroupRelativeTokens(got, rewards, ids, lengths, opt)
	}
	r32, g32 := make([]float32, len(rewards)), make([]float32, len(rewards))
	for i, r := range rewards {
		r32[i] = float32(r)
	}
	rep, err := GroupRelativeTokens(g32, r32, ids, lengths, opt)
	for i, a := range g32 {
		got[i] = float64(a)
	}
	return rep, err
}

// TestPresetsMatchTrainerVectors runs every case of testdata/trainers
// (about 2,400 groups per preset: groups of one, all-equal groups, 0/1,
// one-hot and continuous rewards of several magnitudes, NaN rows, rows of
// no tokens, float32 and float64) through the preset and compares each row
// with the trainer's own output: within 1e-9 (float64) or 3e-5 (float32,
// where the trainers sum in float32) of max(1, |A|). The documented
// differences: the trainers' float32 sums leave a residue that whitening
// a batch of (nearly) equal advantages magnifies up to 1e4 times, where
// here the arithmetic is float64; where verl's grpo_passk raises on a group of one, the
// group gets 0 and is reported; OpenRLHF whitens in float32 (its .float())
// whatever the rewards' dtype.
func TestPresetsMatchTrainerVectors(t *testing.T) {
	files, err := filepath.Glob("testdata/trainers/*.json.gz")
	if err != nil || len(files) == 0 {
		t.Fatalf("no vectors: %v", err)
	}
	for _, file := range files {
		v := readTrainerVectors(t, file)
		var p Preset
		if err := p.UnmarshalText([]byte(v.Preset)); err != nil {
			t.Fatal(err)
		}
		opt, _ := p.Options()
		rows, worst := 0, 0.0
		for n, c := range v.Cases {
			rewards := make([]float64, len(c.Rewards))
			for i, r := range c.Rewards {
				rewards[i] = math.NaN()
				if r != nil {
					rewards[i] = *r
				}
			}
			top := 0.0 // the largest reward magnitude
			for _, r := range rewards {
				if r == r {
					top = max(top, math.Abs(r))
				}
			}
			got := make([]float64, len(rewards))
			tol := 1e-9
			if p == OpenRLHFReinforceBaseline {
				tol = 3e-5 // OpenRLHF whitens in float32 (.float()) whatever the rewards' dtype
			}
			if c.Dtype == "float32" {
				tol = 3e-5
			}
			rep, err := groupInDtype(got, rewards, c.IDs, c.Lengths, opt, c.Dtype)
			if err != nil {
				t.Fatalf("%s case %d: %v", v.Preset, n, err)
			}
			if c.Error {
				// verl raises on a group of one; here it gets 0 and is reported.
				if len(rep.Singletons) == 0 {
					t.Errorf("%s case %d: the trainer raised, but no group of one is reported", v.Preset, n)
				}
				continue
			}
			for i, w := range c.Want {
				rows++
				want := math.NaN()
				if w != nil {
					want = *w
				}
				d := math.Abs(got[i]-want) / max(1, math.Abs(want))
				if c.Dtype == "float32" && opt.Whiten != WhitenNone {
					// A float32 residue in the trainer's mean (a few units of
					// 2^-24 of the largest reward) divided by a vanishing
					// spread (sigma >= 1e-4): up to 1e4 times larger.
					d = max(0, d-1e4*0x1p-21*top)
				}
				if !(d <= tol) {
					t.Fatalf("%s (%s) case %d (%s): row %d (id %d, reward %v, length %d) = %.9g, trainer %.9g\nrewards %v\nids %v\nlengths %v",
						v.Preset, v.Source, n, c.Dtype, i, c.IDs[i], rewards[i], c.Lengths[i], got[i], want, rewards, c.IDs, c.Lengths)
				}
				if c.Dtype == "float64" && p != OpenRLHFReinforceBaseline {
					worst = max(worst, d)
				}
			}
		}
		t.Logf("%s: %d cases, %d rows; largest float64 difference %.2g", v.Preset, len(v.Cases), rows, worst)
	}
}

// TestOpenRLHFClipLoneRight: under openrlhf-grpo a lone right answer among
// 128 has (127/128)/(sqrt(1/128) + 1e-9) = 11.23 (Bessel: the variance is
// 1/128) before OpenRLHF's
// default clip range and 10 after it; the wrong answers, -0.088, are kept.
func TestOpenRLHFClipLoneRight(t *testing.T) {
	rewards, ids, got := make([]float64, 128), make([]int, 128), make([]float64, 128)
	rewards[5] = 1
	opt, _ := OpenRLHFGRPO.Options()
	if _, err := GroupRelative(got, rewards, ids, opt); err != nil {
		t.Fatal(err)
	}
	wrong := (-1.0 / 128) / (math.Sqrt(1.0/128) + 1e-9)
	if got[5] != 10 || math.Abs(got[0]-wrong) > 1e-15 {
		t.Errorf("right %v (want 10), wrong %v (want %v)", got[5], got[0], wrong)
	}
	opt.Clip = Range{}
	if _, err := GroupRelative(got, rewards, ids, opt); err != nil || got[5] < 11.22 || got[5] > 11.23 {
		t.Errorf("without the clip: right %v, %v, want 11.23", got[5], err)
	}
}
