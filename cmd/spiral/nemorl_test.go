package main

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"spiral/internal/spiraltest"
)

// TestGroupNeMoRLVectors runs the float64 cases of NeMo-RL's vectors
// (advantage/testdata/trainers/nemo-rl, from NeMo-RL's own estimators)
// through group -preset, a row NeMo-RL's valid_mask leaves out marked
// unscorable, and compares each row with NeMo-RL's advantage: within
// 1e-9 + 2^-24 (NeMo-RL's Bessel factor is a float32 tensor) of
// max(1, |A|), on the rows of mixed groups whose other rows' rewards
// differ and, for reinforce-pp, of lines without a group of one (NeMo-RL
// whitens that row's 0; the advantage package's test documents both).
func TestGroupNeMoRLVectors(t *testing.T) {
	files, err := filepath.Glob("../../advantage/testdata/trainers/nemo-rl/*.json.gz")
	if err != nil || len(files) != 3 {
		t.Fatalf("vectors: %v %v", files, err)
	}
	for _, file := range files {
		var v struct {
			Preset string
			Cases  []struct {
				Dtype   string     `json:"dtype"`
				IDs     []int      `json:"ids"`
				Rewards []*float64 `json:"rewards"`
				Lengths []int      `json:"lengths"`
				Want    []*float64 `json:"want"`
			}
		}
		spiraltest.ReadJSONGz(t, file, &v)
		var lines strings.Builder
		var kept []int
		for n, c := range v.Cases {
			if c.Dtype != "float64" || n%8 != 1 {
				continue
			}
			in := map[string]any{"ids": c.IDs, "lengths": c.Lengths}
			rewards, unscorable := make([]float64, len(c.IDs)), make([]bool, len(c.IDs))
			for i, r := range c.Rewards {
				if r == nil {
					unscorable[i] = true
				} else {
					rewards[i] = *r
				}
			}
			in["rewards"], in["unscorable"] = rewards, unscorable
			b, _ := json.Marshal(in)
			lines.Write(append(b, '\n'))
			kept = append(kept, n)
		}
		stdout, stderr, code := runCmd(t, lines.String(), "group", "-preset", v.Preset)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", v.Preset, code, stderr)
		}
		out := outputLines(t, stdout)
		if len(out) != len(kept) {
			t.Fatalf("%s: %d lines out for %d in", v.Preset, len(out), len(kept))
		}
		compared := 0
		for k, line := range out {
			c := v.Cases[kept[k]]
			var got groupOutput
			if err := json.Unmarshal([]byte(line), &got); err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(v.Preset, "reinforce-pp") && len(got.Singletons) > 0 {
				continue
			}
			group := map[int][]float64{}
			for i, r := range c.Rewards {
				if r != nil {
					group[c.IDs[i]] = append(group[c.IDs[i]], *r)
				}
			}
			for i, w := range c.Want {
				if c.Rewards[i] == nil {
					if got.Advantages[i] != 0 {
						t.Fatalf("%s case %d row %d: a masked row got %v", v.Preset, kept[k], i, got.Advantages[i])
					}
					continue
				}
				if !othersDiffer(group[c.IDs[i]], *c.Rewards[i]) || (strings.HasSuffix(v.Preset, "reinforce-pp") && c.Lengths[i] == 0) {
					continue
				}
				compared++
				if d := math.Abs(got.Advantages[i]-*w) / max(1, math.Abs(*w)); d > 1e-9+0x1p-24 {
					t.Fatalf("%s case %d row %d: %v, NeMo-RL %v", v.Preset, kept[k], i, got.Advantages[i], *w)
				}
			}
		}
		if compared < 500 {
			t.Errorf("%s: %d rows compared", v.Preset, compared)
		}
	}
}

// othersDiffer reports whether the rewards of g other than one row holding
// r are not all equal.
func othersDiffer(g []float64, r float64) bool {
	var others []float64
	skipped := false
	for _, x := range g {
		if x == r && !skipped {
			skipped = true
			continue
		}
		others = append(others, x)
	}
	for _, x := range others {
		if x != others[0] {
			return true
		}
	}
	return false
}

// TestLossNeMoRLGradient runs loss/testdata/nemo-rl-loss.json.gz (autograd's
// gradients through NeMo-RL's ClippedPGLossFn over ranks and micro-batches
// of unequal counts; see the loss package's TestNeMoRLGradient) through
// loss -reduction nemo-rl-token and nemo-rl-sequence, one line per global
// batch of its rows of sample_mask 1: NeMo-RL's weight of each row times
// its coefficient must be scale times its update, within 1e-12 relative.
func TestLossNeMoRLGradient(t *testing.T) {
	var v struct {
		Reductions map[string][]struct {
			Lengths    []int     `json:"lengths"`
			SampleMask []int     `json:"sample_mask"`
			Advantages []float64 `json:"advantages"`
			Gradient   []float64 `json:"gradient"`
		}
	}
	spiraltest.ReadJSONGz(t, "../../loss/testdata/nemo-rl-loss.json.gz", &v)
	for name, cases := range v.Reductions {
		var lines strings.Builder
		var weights, updates [][]float64
		for n, c := range cases {
			var w, u []float64
			var lengths []int
			for o, m := range c.SampleMask {
				if m == 1 {
					w = append(w, -c.Gradient[o]/c.Advantages[o])
					u = append(u, math.Cos(float64(n+o)))
					lengths = append(lengths, c.Lengths[o])
				}
			}
			if len(u) == 0 {
				continue // every row masked: no line
			}
			b, _ := json.Marshal(map[string]any{"update": u, "lengths": lengths})
			lines.Write(append(b, '\n'))
			weights, updates = append(weights, w), append(updates, u)
		}
		stdout, stderr, code := runCmd(t, lines.String(), "loss", "-reduction", name)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
		for n, line := range outputLines(t, stdout) {
			var out lossOutput
			if err := json.Unmarshal([]byte(line), &out); err != nil {
				t.Fatal(err)
			}
			for k, c := range out.Coefficients {
				if weights[n][k] == 0 && c == 0 {
					continue // a row of no tokens
				}
				got, want := weights[n][k]*c, out.Scale*updates[n][k]
				if math.Abs(got-want) > 1e-12*math.Abs(want) {
					t.Fatalf("%s case %d row %d: NeMo-RL's gradient %v, want scale x update %v", name, n, k, got, want)
				}
			}
		}
	}
}
