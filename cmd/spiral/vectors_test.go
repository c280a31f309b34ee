package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"spiral/internal/spiraltest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"spiral"
	"spiral/combin"
)

// vectorsDir holds the checked-in conformance vectors.
const vectorsDir = "testdata/vectors"

// generatedVectors returns vectors(), generated once for the tests that
// compare against it (deterministic: same files every call).
var generatedVectors = func() func(t *testing.T) []vectorFile {
	var (
		once  sync.Once
		files []vectorFile
		err   error
	)
	return func(t *testing.T) []vectorFile {
		t.Helper()
		once.Do(func() { files, err = vectors() })
		if err != nil {
			t.Fatal(err)
		}
		return files
	}
}()

// TestVectorsUpToDate regenerates the conformance vectors in memory and
// fails on any difference from the checked-in files, or a file missing or
// left over.
func TestVectorsUpToDate(t *testing.T) {
	files := generatedVectors(t)
	const fix = "if the change is intended: go run ./cmd/spiral vectors -out cmd/spiral/testdata/vectors"
	entries, err := os.ReadDir(vectorsDir)
	if err != nil {
		t.Fatal(err)
	}
	var onDisk, generated []string
	for _, e := range entries {
		onDisk = append(onDisk, e.Name())
	}
	for _, f := range files {
		generated = append(generated, f.Name)
		want, err := os.ReadFile(filepath.Join(vectorsDir, f.Name))
		if err != nil {
			t.Errorf("%v (%s)", err, fix)
			continue
		}
		if !bytes.Equal(want, f.Data) {
			t.Errorf("%s differs from the regenerated file at line %d (%s)", f.Name, firstDifference(want, f.Data), fix)
		}
	}
	if !slices.Equal(onDisk, generated) {
		t.Errorf("files in %s: %v, generated: %v", vectorsDir, onDisk, generated)
	}
}

// firstDifference returns the number of the first line where a and b
// differ, from 1.
func firstDifference(a, b []byte) int {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return i + 1
		}
	}
	return min(len(la), len(lb)) + 1
}

// loadCases reads index.json.
func loadCases(t *testing.T) []vectorCase {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(vectorsDir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var index struct {
		Cases []vectorCase `json:"cases"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&index); err != nil {
		t.Fatal(err)
	}
	if len(index.Cases) == 0 {
		t.Fatal("index.json lists no cases")
	}
	return index.Cases
}

// readLines returns the lines of a vectors file.
func readLines(t *testing.T, name string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(vectorsDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return outputLines(t, string(data))
}

// TestVectorsReplay runs every case of index.json the way the README tells
// another implementation to, from the checked-in files only, and compares
// with the checked-in output.
func TestVectorsReplay(t *testing.T) {
	for _, c := range loadCases(t) {
		var input []byte
		if c.Input != nil {
			var err error
			if input, err = os.ReadFile(filepath.Join(vectorsDir, *c.Input)); err != nil {
				t.Fatal(err)
			}
		}
		var got []string
		if c.PerLineFlags {
			for line := range bytes.Lines(input) {
				var f struct {
					Traces, Size, Sets int
					Ordered            bool
				}
				if err := json.Unmarshal(line, &f); err != nil {
					t.Fatal(err)
				}
				args := append(slices.Clone(c.Command), "-traces", strconv.Itoa(f.Traces), "-size", strconv.Itoa(f.Size), "-sets", strconv.Itoa(f.Sets))
				if f.Ordered {
					args = append(args, "-ordered")
				}
				out, _, _ := runCmd(t, "", args...)
				got = append(got, outputLines(t, out)...)
			}
		} else {
			out, _, _ := runCmd(t, string(input), c.Command...)
			got = outputLines(t, out)
		}
		want := readLines(t, c.Output)
		if c.Input != nil && len(want) != len(outputLines(t, string(input))) {
			t.Errorf("%s: %d output lines for %d input lines", c.Name, len(want), len(outputLines(t, string(input))))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: replay differs from %s", c.Name, c.Output)
		}
	}
}

// ratOf returns x as an exact rational.

// referenceCredit computes the credit of one line exactly with
// spiraltest.RefCredit (docs/method.md#the-credit-signals, with the
// unscorable outputs left out) and then the gate of Eq. 8
// (docs/method.md#the-length-gate) in rational arithmetic: set scores, set
// advantages, search and aggregation advantages after the gates,
// appearances, scored outputs and the gate reports (counts exact, mass as
// float64).
func referenceCredit(in creditIn, searchTarget, aggTarget int, keep bool) (out creditOutput, search, setScores, setAdv []*big.Rat, agg [][]*big.Rat) {
	ref := spiraltest.RefCredit(in.Traces, in.Sets, spiraltest.Rats(in.Rewards), in.Unscorable)
	setScores, setAdv = ref.SetScores, ref.SetAdvantages
	out.Appearances, out.ScoredOutputs = ref.Appearances, ref.ScoredOutputs
	// gate applies Eq. 8 to a, of an output of length l, and counts.
	gate := func(a *big.Rat, l, target int, rep *gateReport) *big.Rat {
		rep.Outputs++
		if a.Sign() <= 0 {
			return a
		}
		rep.Positive++
		if target == 0 {
			return a
		}
		if l == target {
			rep.AtTarget++
		}
		if l > target || (l == target && !keep) {
			rep.Gated++
			x, _ := a.Float64()
			rep.MassRemoved += x
			return new(big.Rat)
		}
		return a
	}
	allZero := true
	for y, a := range ref.Search {
		if ref.Appearances[y] == 0 {
			out.InNoSet++
		}
		allZero = allZero && a.Sign() == 0
		l := 0
		if in.SearchLengths != nil {
			l = in.SearchLengths[y]
		}
		search = append(search, gate(a, l, searchTarget, &out.SearchGate))
	}
	for i, row := range ref.Aggregation {
		var gated []*big.Rat
		for j, a := range row {
			l := 0
			if in.AggregationLengths != nil {
				l = in.AggregationLengths[i][j]
			}
			allZero = allZero && a.Sign() == 0
			gated = append(gated, gate(a, l, aggTarget, &out.AggregationGate))
		}
		agg = append(agg, gated)
	}
	// no_signal is decided on the credit before the gates.
	out.NoSignal = allZero
	return out, search, setScores, setAdv, agg
}

// closeTo reports whether x is within tol of the exact value r.
func closeTo(x float64, r *big.Rat, tol float64) bool {
	want, _ := r.Float64()
	return math.Abs(x-want) <= tol
}

// flagValue returns the value after flag name in args, or "".
func flagValue(args []string, name string) string {
	if i := slices.Index(args, name); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// TestVectorsCreditReference checks every successful output line of every
// credit case against referenceCredit: each advantage and score within
// 1e-13 of the largest reward magnitude of its line (the float64 result of
// a few sums and one division per value; a wrong formula is off by far
// more), and the appearances, traces in no set, gate counts and no_signal
// exactly. It also checks that the credit cases hold at least one line of
// every kind they claim to cover.
func TestVectorsCreditReference(t *testing.T) {
	checked, gatedLines, atTarget, inNoSet, ragged := 0, 0, 0, 0, 0
	for _, c := range loadCases(t) {
		if c.Command[0] != "credit" {
			continue
		}
		st, _ := strconv.Atoi(flagValue(c.Command, "-search-target"))
		at, _ := strconv.Atoi(flagValue(c.Command, "-aggregation-target"))
		keep := flagValue(c.Command, "-boundary") == "keep"
		inputs, outputs := readLines(t, *c.Input), readLines(t, c.Output)
		for k, line := range outputs {
			if strings.HasPrefix(line, `{"line":`) {
				continue
			}
			var in creditIn
			var got creditOutput
			if err := json.Unmarshal([]byte(inputs[k]), &in); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(line), &got); err != nil {
				t.Fatal(err)
			}
			scale := 1.0
			for _, rs := range in.Rewards {
				for _, r := range rs {
					scale = max(scale, math.Abs(r))
				}
				if len(rs) != len(in.Rewards[0]) {
					ragged++
				}
			}
			tol := 1e-13 * scale
			want, search, scores, setAdv, agg := referenceCredit(in, st, at, keep)
			ok := len(got.Search) == len(search) && len(got.SetScores) == len(scores) && len(got.Aggregation) == len(agg)
			for y := range min(len(got.Search), len(search)) {
				ok = ok && closeTo(got.Search[y], search[y], tol)
			}
			for i := range min(len(got.SetScores), len(scores)) {
				ok = ok && closeTo(got.SetScores[i], scores[i], tol) && closeTo(got.SetAdvantages[i], setAdv[i], tol)
			}
			for i := range min(len(got.Aggregation), len(agg)) {
				ok = ok && len(got.Aggregation[i]) == len(agg[i])
				for j := range min(len(got.Aggregation[i]), len(agg[i])) {
					ok = ok && closeTo(got.Aggregation[i][j], agg[i][j], tol)
				}
			}
			ok = ok && slices.Equal(got.Appearances, want.Appearances) && slices.Equal(got.ScoredOutputs, want.ScoredOutputs) &&
				got.InNoSet == want.InNoSet && got.NoSignal == want.NoSignal
			for _, g := range [][2]gateReport{{got.SearchGate, want.SearchGate}, {got.AggregationGate, want.AggregationGate}} {
				ok = ok && g[0].Outputs == g[1].Outputs && g[0].Positive == g[1].Positive && g[0].AtTarget == g[1].AtTarget &&
					g[0].Gated == g[1].Gated && math.Abs(g[0].MassRemoved-g[1].MassRemoved) <= tol*float64(g[1].Gated)
			}
			if !ok {
				t.Errorf("%s line %d: %s\nreference: %+v", c.Name, k+1, line, want)
			}
			checked++
			gatedLines += min(1, got.SearchGate.Gated+got.AggregationGate.Gated)
			atTarget += got.SearchGate.AtTarget + got.AggregationGate.AtTarget
			inNoSet += got.InNoSet
		}
	}
	t.Logf("%d credit lines checked", checked)
	if checked < 200 || gatedLines == 0 || atTarget == 0 || inNoSet == 0 || ragged == 0 {
		t.Errorf("coverage: %d lines, %d gated, %d at target, %d traces in no set, %d ragged sets", checked, gatedLines, atTarget, inNoSet, ragged)
	}
}

// binomial returns C(n, k) exactly, 0 when k > n.
func binomial(n, k int64) *big.Int {
	if k > n {
		return new(big.Int)
	}
	return new(big.Int).Binomial(n, k)
}

// falling returns (n)_k = n!/(n-k)! exactly.
func falling(n, k int64) *big.Int {
	p := big.NewInt(1)
	for i := range k {
		p.Mul(p, big.NewInt(n-i))
	}
	return p
}

// TestVectorsConstantsReference checks every constants vector against
// Proposition 3.1 computed here with math/big from its definition:
// T = C(N, n) or (N)_n, T_avoid = C(N-1, n) or (N-1)_n, miss =
// C(T_avoid, K)/C(T, K), q_K = 1 - miss, M = (N/n) q_K - 1 and K n / N:
// the fractions exactly, cover_prob_float, m_float and
// expected_appearances as the nearest float64, miss_prob_float within its
// documented relative error 1e-12 (and exactly 0 when K > T_avoid).
func TestVectorsConstantsReference(t *testing.T) {
	inputs, outputs := readLines(t, "constants.in.jsonl"), readLines(t, "constants.out.jsonl")
	if len(inputs) != len(outputs) || len(inputs) < 500 {
		t.Fatalf("%d inputs, %d outputs", len(inputs), len(outputs))
	}
	families := map[bool]int{}
	for k := range inputs {
		var f struct {
			Traces, Size, Sets int64
			Ordered            bool
		}
		var got constantsOutput
		if err := json.Unmarshal([]byte(inputs[k]), &f); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(outputs[k]), &got); err != nil {
			t.Fatal(err)
		}
		families[f.Ordered]++
		N, n, K := f.Traces, f.Size, f.Sets
		T, Tavoid := binomial(N, n), binomial(N-1, n)
		if f.Ordered {
			T, Tavoid = falling(N, n), falling(N-1, n)
			if n > N-1 {
				Tavoid = new(big.Int)
			}
		}
		miss := new(big.Rat).SetFrac(binomial(Tavoid.Int64(), K), binomial(T.Int64(), K))
		if !Tavoid.IsInt64() || !T.IsInt64() {
			t.Fatalf("%s: family too large for this test", inputs[k])
		}
		cover := new(big.Rat).Sub(big.NewRat(1, 1), miss)
		m := new(big.Rat).Mul(big.NewRat(N, n), cover)
		m.Sub(m, big.NewRat(1, 1))
		nearest := func(r *big.Rat) float64 { x, _ := r.Float64(); return x }
		missFloat := nearest(miss)
		ok := deref(got.FamilySize) == T.String() && deref(got.MissProb) == miss.String() && deref(got.CoverProb) == cover.String() && deref(got.M) == m.String() &&
			got.CoverProbFloat == nearest(cover) && got.MFloat == nearest(m) && got.ExpectedAppearances == nearest(big.NewRat(K*n, N)) &&
			math.Abs(got.MissProbFloat-missFloat) <= 1e-12*missFloat
		if K > Tavoid.Int64() {
			ok = ok && got.MissProbFloat == 0
		}
		if !strings.Contains(deref(got.MissProb), "/") || !strings.Contains(deref(got.CoverProb), "/") || !strings.Contains(deref(got.M), "/") {
			ok = false
		}
		if !ok {
			t.Errorf("%s: %s\nwant T %s, miss %s (%v), cover %s, M %s", inputs[k], outputs[k], T, miss, missFloat, cover, m)
		}
	}
	if families[false] < 200 || families[true] < 200 {
		t.Errorf("families covered: %v", families)
	}
}

// TestConstantsPaper pins the paper's numbers: 70 sets, a trace in no set
// with probability C(35, 4)/C(70, 4) = 88/1541, M = 1365/1541, and 2
// expected appearances.
func TestConstantsPaper(t *testing.T) {
	stdout, _, code := runCmd(t, "", "constants", "-traces", "8", "-size", "4", "-sets", "4")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	var got constantsOutput
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	if deref(got.FamilySize) != "70" || deref(got.MissProb) != "88/1541" || deref(got.CoverProb) != "1453/1541" || deref(got.M) != "1365/1541" || got.ExpectedAppearances != 2 {
		t.Errorf("paper constants: %s", stdout)
	}
	if math.Abs(got.MissProbFloat-52360.0/916895) > 1e-17 {
		t.Errorf("miss_prob_float = %v, want C(35,4)/C(70,4) = %v", got.MissProbFloat, 52360.0/916895)
	}
}

// TestVectorsPassKReference checks every pass@k vector against 1 -
// C(n-c, k)/C(n, k) with math/big: within 4(c+1) 2^-53 (PassAtK's
// documented error is about (2c+1) 2^-53), exactly 0 when c = 0 and exactly
// 1 when n - c < k.
func TestVectorsPassKReference(t *testing.T) {
	checked := 0
	for _, c := range loadCases(t) {
		if c.Command[0] != "passk" {
			continue
		}
		var ks []int64
		for s := range strings.SplitSeq(flagValue(c.Command, "-k"), ",") {
			k, _ := strconv.ParseInt(s, 10, 64)
			ks = append(ks, k)
		}
		inputs, outputs := readLines(t, *c.Input), readLines(t, c.Output)
		for i, line := range outputs {
			if strings.HasPrefix(line, `{"line":`) {
				continue
			}
			var in struct{ N, C int64 }
			if err := json.Unmarshal([]byte(inputs[i]), &in); err != nil {
				t.Fatal(err)
			}
			var got struct {
				PassAtK map[string]float64 `json:"pass_at_k"`
			}
			if err := json.Unmarshal([]byte(line), &got); err != nil {
				t.Fatal(err)
			}
			// The keys are in -k order.
			var order []string
			for _, k := range ks {
				order = append(order, fmt.Sprintf(`"%d":`, k))
			}
			if idx := indices(line, order); !slices.IsSorted(idx) || len(got.PassAtK) != len(ks) {
				t.Errorf("%s line %d: keys not in -k order: %s", c.Name, i+1, line)
			}
			for _, k := range ks {
				p := got.PassAtK[strconv.FormatInt(k, 10)]
				exact := new(big.Rat).SetFrac(binomial(in.N-in.C, k), binomial(in.N, k))
				exact.Sub(big.NewRat(1, 1), exact)
				switch {
				case in.C == 0 && p != 0, in.N-in.C < k && p != 1:
					t.Errorf("%s line %d: pass@%d = %v, want exactly %s", c.Name, i+1, k, p, exact.RatString())
				case !closeTo(p, exact, 4*float64(in.C+1)*0x1p-53):
					t.Errorf("%s line %d: pass@%d = %v, want %s", c.Name, i+1, k, p, exact.FloatString(20))
				}
				checked++
			}
		}
	}
	if checked < 500 {
		t.Errorf("%d pass@k values checked", checked)
	}
}

// indices returns the position of each of subs in s.
func indices(s string, subs []string) []int {
	var idx []int
	for _, sub := range subs {
		idx = append(idx, strings.Index(s, sub))
	}
	return idx
}

// TestPlanMatchesLibrary checks that plan writes, problem after problem,
// the plans spiral.Config.Plan draws with rand.New(rand.NewPCG(S, 0)), for
// each family and order, and that each fits its Config.
func TestPlanMatchesLibrary(t *testing.T) {
	for _, tt := range []struct {
		flags []string
		c     spiral.Config
	}{
		{nil, spiral.Config{SearchTraces: 8, SetSize: 4, Sets: 4, AggregationsPerSet: 1}},
		{[]string{"-shuffle"}, spiral.Config{SearchTraces: 8, SetSize: 4, Sets: 4, AggregationsPerSet: 1, Order: combin.Shuffled}},
		{[]string{"-ordered"}, spiral.Config{SearchTraces: 8, SetSize: 4, Sets: 4, AggregationsPerSet: 1, Ordered: true}},
		{[]string{"-ordered"}, spiral.Config{SearchTraces: 3, SetSize: 3, Sets: 6, AggregationsPerSet: 1, Ordered: true}},
		{nil, spiral.Config{SearchTraces: 1000, SetSize: 7, Sets: 30, AggregationsPerSet: 1}},
	} {
		const seed, problems = 99, 50
		args := append([]string{"plan", "-traces", strconv.Itoa(tt.c.SearchTraces), "-size", strconv.Itoa(tt.c.SetSize),
			"-sets", strconv.Itoa(tt.c.Sets), "-seed", strconv.Itoa(seed), "-problems", strconv.Itoa(problems)}, tt.flags...)
		stdout, stderr, code := runCmd(t, "", args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		lines := outputLines(t, stdout)
		if len(lines) != problems {
			t.Fatalf("%v: %d lines", args, len(lines))
		}
		for q, line := range lines {
			var got struct {
				Sets [][]int `json:"sets"`
			}
			dec := json.NewDecoder(strings.NewReader(line))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&got); err != nil {
				t.Fatal(err)
			}
			want, err := tt.c.Plan(uint64(seed), 0, uint64(q))
			if err != nil {
				t.Fatal(err)
			}
			if err := tt.c.CheckPlan(spiral.Plan{Sets: got.Sets}); err != nil {
				t.Errorf("%v problem %d: %v", args, q+1, err)
			}
			if fmt.Sprint(got.Sets) != fmt.Sprint(want.Sets) {
				t.Errorf("%v problem %d: %v, library %v", args, q+1, got.Sets, want.Sets)
			}
		}
	}
	if stdout, _, code := runCmd(t, "", "plan", "-traces", "8", "-size", "4", "-sets", "4", "-seed", "1", "-problems", "0"); code != exitOK || stdout != "" {
		t.Errorf("-problems 0: exit %d, output %q", code, stdout)
	}
}

// TestVectorsCommand checks that "vectors -out DIR" writes the files the
// test compares with.
func TestVectorsCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "v")
	stdout, stderr, code := runCmd(t, "", "vectors", "-out", dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	files := generatedVectors(t)
	if !strings.Contains(stdout, fmt.Sprintf("wrote %d files", len(files))) {
		t.Errorf("stdout %q", stdout)
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, f.Name))
		if err != nil || !bytes.Equal(data, f.Data) {
			t.Errorf("%s: %v", f.Name, err)
		}
	}
	if _, _, code := runCmd(t, "", "vectors", "-out", filepath.Join(dir, "index.json", "x")); code != exitUsage {
		t.Errorf("unwritable directory: exit %d", code)
	}
}
