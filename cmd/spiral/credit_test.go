package main

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"spiral"
	"spiral/advantage"
	"spiral/combin"
	"spiral/internal/spiraltest"
	"spiral/lengthgate"
)

// drawCredit draws a random credit problem: sizes, family, a plan drawn by
// the library, ragged rewards of awkward magnitudes, gate flags and
// lengths. It returns the input line, the command line and the Config the
// bridge should build for it.
func drawCredit(t *rapid.T) (creditIn, []string, spiral.Config) {
	n1 := rapid.IntRange(1, 12).Draw(t, "N1")
	if rapid.IntRange(0, 9).Draw(t, "large") == 0 {
		n1 = rapid.IntRange(13, 200).Draw(t, "N1 large")
	}
	n := rapid.IntRange(1, n1).Draw(t, "n")
	c := spiral.Config{SearchTraces: n1, SetSize: n, AggregationsPerSet: rapid.IntRange(1, 5).Draw(t, "N2")}
	args := []string{"credit"}
	if rapid.Bool().Draw(t, "ordered") {
		c.Ordered = true
		args = append(args, "-ordered")
	} else {
		c.Order = combin.Shuffled
	}
	fam, err := combin.NewFamily(n1, n, c.Ordered)
	if err != nil {
		t.Fatal(err)
	}
	maxK := 10
	if T, fits := fam.Count64(); fits && T < 10 {
		maxK = int(T)
	}
	c.Sets = rapid.IntRange(1, maxK).Draw(t, "K")
	p, err := c.Plan(rapid.Uint64().Draw(t, "seed"), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	reward := rapid.OneOf(
		rapid.SampledFrom([]float64{0, 1, 0.5, math.Copysign(0, -1), 5e-324, -1e30, 1e30, 0.1}),
		rapid.Float64Range(0, 1),
		rapid.Float64Range(-1e30, 1e30),
	)
	in := creditIn{Traces: n1, Sets: p.Sets, Rewards: make([][]float64, c.Sets)}
	for i := range in.Rewards {
		in.Rewards[i] = rapid.SliceOfN(reward, 1, c.AggregationsPerSet).Draw(t, "rewards")
	}
	// The bridge's N2 is the longest set.
	longest := 1
	for _, rs := range in.Rewards {
		longest = max(longest, len(rs))
	}
	c.AggregationsPerSet = longest
	length := rapid.IntRange(0, 30)
	if st := rapid.IntRange(0, 20).Draw(t, "search target"); st > 0 {
		c.Gates.Search.Target = st
		args = append(args, "-search-target", strconv.Itoa(st))
	}
	if at := rapid.IntRange(0, 20).Draw(t, "aggregation target"); at > 0 {
		c.Gates.Aggregation.Target = at
		args = append(args, "-aggregation-target", strconv.Itoa(at))
	}
	if rapid.Bool().Draw(t, "keep") {
		c.Gates.Search.Boundary = lengthgate.KeepAtTarget
		c.Gates.Aggregation.Boundary = lengthgate.KeepAtTarget
		args = append(args, "-boundary", "keep")
	}
	if c.Gates.Search.Enabled() || rapid.Bool().Draw(t, "search lengths") {
		in.SearchLengths = rapid.SliceOfN(length, n1, n1).Draw(t, "search lengths")
	}
	if c.Gates.Aggregation.Enabled() || rapid.Bool().Draw(t, "aggregation lengths") {
		in.AggregationLengths = make([][]int, c.Sets)
		for i, rs := range in.Rewards {
			in.AggregationLengths[i] = rapid.SliceOfN(length, len(rs), len(rs)).Draw(t, "aggregation lengths")
		}
	}
	return in, args, c
}

// sameFloats reports whether a and b hold the same float64s, bit for bit.
func sameFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// TestCreditMatchesLibrary is a property test: for random problems, with
// random gates and ragged sets, the bridge's output read back from JSON is
// bit for bit what spiral.Config.Credit returns for the same problem. The
// JSON round trip loses nothing.
func TestCreditMatchesLibrary(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in, args, c := drawCredit(t)
		line, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		stdout, stderr, code := runCmd(t, string(line)+"\n", args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s %s", args, code, stdout, stderr)
		}
		var got creditOutput
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatal(err)
		}
		want, err := c.Credit(spiral.Plan{Sets: in.Sets}, in.Rewards, spiral.Lengths{Search: in.SearchLengths, Aggregation: in.AggregationLengths})
		if err != nil {
			t.Fatal(err)
		}
		same := sameFloats(got.Search, want.Search) &&
			sameFloats(got.SetScores, want.SetScores) &&
			sameFloats(got.SetAdvantages, want.SetAdvantages) &&
			len(got.Aggregation) == len(want.Aggregation) &&
			got.InNoSet == inNoSet(want.Appearances) && got.NoSignal == want.NoSignal &&
			got.SearchGate == gateOf(c.Gates.Search, want.Gates.Search, want.Search) &&
			got.AggregationGate == gateOf(c.Gates.Aggregation, want.Gates.Aggregation, slices.Concat(want.Aggregation...))
		for i := range got.Aggregation {
			same = same && sameFloats(got.Aggregation[i], want.Aggregation[i])
		}
		for y := range got.Appearances {
			same = same && got.Appearances[y] == want.Appearances[y]
		}
		if !same || len(got.Appearances) != len(want.Appearances) {
			t.Fatalf("%v on %s:\nbridge  %+v\nlibrary %+v", args, line, got, want)
		}
	})
}

// TestCreditBadValues checks the errors the library reports through the
// bridge for lines that decode but do not fit a configuration.
func TestCreditBadValues(t *testing.T) {
	for _, tt := range []struct {
		args []string
		line string
		want string
	}{
		{nil, `{"traces":8,"sets":[[0,1],[2,3]],"rewards":[[1],[2e30]]}`, "rewards[1][0] = 2e+30"},
		{nil, `{"traces":8,"sets":[[0,1],[2,3]],"rewards":[[1],[0]],"search_lengths":[1,1,1,1,1,1,1,-1]}`, "search_lengths[7] = -1: length < 0"},
		{[]string{"-search-target", "5"}, `{"traces":8,"sets":[[0,1],[2,3]],"rewards":[[1],[0]]}`, "search_lengths"},
		{[]string{"-aggregation-target", "5"}, `{"traces":8,"sets":[[0,1],[2,3]],"rewards":[[1],[0]]}`, "aggregation_lengths: nil, but the aggregation gate reads it"},
		{[]string{"-ordered"}, `{"traces":2,"sets":[[0,1],[0,1]],"rewards":[[1],[0]]}`, "sets[1]: identical to set 0"},
	} {
		stdout, _, code := runCmd(t, tt.line, append([]string{"credit"}, tt.args...)...)
		if code != exitLineError || !strings.Contains(stdout, `{"line":1,"error":`) || !strings.Contains(stdout, tt.want) {
			t.Errorf("%v %s: exit %d, output %s, want %q", tt.args, tt.line, code, stdout, tt.want)
		}
	}
}

// TestCreditLinesIndependent is a property test: the credit handler decodes
// every line into the same reused slices, so it checks that a stream of
// random lines (good and bad, with and without the optional lengths) gives
// each line the output it gets on its own: 40 streams, 100 with
// SPIRAL_LONG=1.
func TestCreditLinesIndependent(t *testing.T) {
	spiraltest.Check(t, 40, 100, func(t *rapid.T) {
		base := []string{"credit", "-search-target", "15", "-aggregation-target", "15"}
		var all strings.Builder
		var want []string
		for range rapid.IntRange(1, 8).Draw(t, "lines") {
			in, _, _ := drawCredit(t)
			if rapid.Bool().Draw(t, "drop lengths") {
				in.SearchLengths, in.AggregationLengths = nil, nil // an error line under these gates
			}
			line, err := json.Marshal(in)
			if err != nil {
				t.Fatal(err)
			}
			if rapid.IntRange(0, 4).Draw(t, "garble") == 0 {
				line = line[:rapid.IntRange(0, len(line)-1).Draw(t, "cut")]
			}
			alone, _, _ := runCmd(t, string(line)+"\n", base...)
			// Error lines carry their number, 1 when alone.
			want = append(want, strings.Replace(alone, `{"line":1,`, fmt.Sprintf(`{"line":%d,`, len(want)+1), 1))
			all.Write(line)
			all.WriteByte('\n')
		}
		got, _, _ := runCmd(t, all.String(), base...)
		if got != strings.Join(want, "") {
			t.Fatalf("input:\n%s\ntogether:\n%s\nalone:\n%s", all.String(), got, strings.Join(want, ""))
		}
	})
}

// TestCreditUnscorableReference is a property test of the unscorable
// marks: for random problems (as TestCreditMatchesLibrary draws them) with
// random outputs marked unscorable and their rewards replaced by anything,
// the bridge's answer matches the exact reference (spiraltest.RefCredit
// and the gates) within 1e-13 of the line's largest reward, and counts,
// appearances exactly, and no_signal exactly unless every exact advantage
// is within that tolerance of 0.
func TestCreditUnscorableReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in, args, _ := drawCredit(t)
		in.Unscorable = make([][]bool, len(in.Rewards))
		for i, rs := range in.Rewards {
			in.Unscorable[i] = rapid.SliceOfN(rapid.Bool(), len(rs), len(rs)).Draw(t, "unscorable")
			for j, u := range in.Unscorable[i] {
				if u {
					in.Rewards[i][j] = rapid.SampledFrom([]float64{0, 1e30, -7}).Draw(t, "ignored reward")
				}
			}
		}
		line, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		stdout, stderr, code := runCmd(t, string(line)+"\n", args...)
		var got creditOutput
		if code != exitOK || json.Unmarshal([]byte(stdout), &got) != nil {
			t.Fatalf("%v: exit %d: %s %s", args, code, stdout, stderr)
		}
		st, _ := strconv.Atoi(flagValue(args, "-search-target"))
		at, _ := strconv.Atoi(flagValue(args, "-aggregation-target"))
		want, search, scores, setAdv, agg := referenceCredit(in, st, at, flagValue(args, "-boundary") == "keep")
		scale := 1.0
		for i, rs := range in.Rewards {
			for j, r := range rs {
				if !in.Unscorable[i][j] {
					scale = max(scale, math.Abs(r))
				}
			}
		}
		tol := 1e-13 * scale
		ok := len(got.Search) == len(search) && len(got.SetScores) == len(scores) && len(got.Aggregation) == len(agg) &&
			slices.Equal(got.Appearances, want.Appearances) && slices.Equal(got.ScoredOutputs, want.ScoredOutputs) &&
			got.InNoSet == want.InNoSet
		// The library writes an advantage within its rounding error of 0
		// as exactly 0, so no_signal may be true where the exact
		// advantages are all within tol of 0 but not all 0.
		tiny := true
		for _, a := range slices.Concat(search, slices.Concat(agg...)) {
			tiny = tiny && closeTo(0, a, tol)
		}
		ok = ok && (got.NoSignal == want.NoSignal || tiny && got.NoSignal)
		for y := range min(len(got.Search), len(search)) {
			ok = ok && closeTo(got.Search[y], search[y], tol)
		}
		for i := range min(len(got.SetScores), len(scores)) {
			ok = ok && closeTo(got.SetScores[i], scores[i], tol) && closeTo(got.SetAdvantages[i], setAdv[i], tol)
		}
		for i := range min(len(got.Aggregation), len(agg)) {
			for j := range min(len(got.Aggregation[i]), len(agg[i])) {
				ok = ok && closeTo(got.Aggregation[i][j], agg[i][j], tol)
				if in.Unscorable[i][j] {
					ok = ok && got.Aggregation[i][j] == 0
				}
			}
		}
		if !ok {
			t.Fatalf("%v on %s:\nbridge    %s\nreference %+v", args, line, stdout, want)
		}
	})
}

// TestCreditOverlongAndRange: with -overlong-max and -reward-range the
// bridge gives bit for bit what Config.Credit gives with the same
// Config.Overlong and Config.RewardRange, and reports both; without them the
// two fields are absent.
func TestCreditOverlongAndRange(t *testing.T) {
	line := `{"traces":4,"sets":[[0,1],[2,3],[1,2]],"rewards":[[1,0],[0,0],[1,1]],"search_lengths":[10,20,30,40],"aggregation_lengths":[[100,900],[1000,2000],[500,1100]]}`
	var in creditLine
	if err := json.Unmarshal([]byte(line), &in); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		rng  advantage.RewardRange
		o    *lengthgate.SoftOverlong
		gate int // -aggregation-target
	}{
		{[]string{"-overlong-max", "1000", "-overlong-buffer", "200"}, advantage.RewardRange{}, &lengthgate.SoftOverlong{MaxLength: 1000, Buffer: 200, Factor: 1}, 0},
		{[]string{"-overlong-max", "1000", "-overlong-buffer", "500", "-overlong-factor", "0.5", "-aggregation-target", "1050"}, advantage.RewardRange{}, &lengthgate.SoftOverlong{MaxLength: 1000, Buffer: 500, Factor: 0.5}, 1050},
		{[]string{"-reward-range", "0,0.5"}, advantage.RewardRange{Low: 0, High: 0.5}, nil, 0}, // mean 1/2: out of range
		{[]string{"-reward-range", "0, 1", "-overlong-max", "2000", "-overlong-buffer", "1500"}, advantage.RewardRange{Low: 0, High: 1}, &lengthgate.SoftOverlong{MaxLength: 2000, Buffer: 1500, Factor: 1}, 0},
	} {
		stdout, stderr, code := runCmd(t, line+"\n", append([]string{"credit"}, tt.args...)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s %s", tt.args, code, stdout, stderr)
		}
		var got creditOutput
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatal(err)
		}
		c := spiral.Config{Order: combin.Shuffled, RewardRange: tt.rng, Overlong: tt.o}
		c.Gates.Aggregation.Target = tt.gate
		c.SearchTraces, c.Sets, c.SetSize, c.AggregationsPerSet = in.Traces, len(in.Sets), 2, 2
		want, err := c.Credit(spiral.Plan{Sets: in.Sets}, in.Rewards, spiral.Lengths{Search: in.SearchLengths, Aggregation: in.AggregationLengths})
		if err != nil {
			t.Fatal(err)
		}
		same := sameFloats(got.Search, want.Search) && sameFloats(got.SetScores, want.SetScores) && got.NoSignal == want.NoSignal
		for i := range got.Aggregation {
			same = same && sameFloats(got.Aggregation[i], want.Aggregation[i])
		}
		switch {
		case !same:
			t.Errorf("%v: bridge %+v, library %+v", tt.args, got, want)
		case (got.OutOfRange != nil) != tt.rng.Enabled() || got.OutOfRange != nil && *got.OutOfRange != want.OutOfRange:
			t.Errorf("%v: out_of_range %v, want %v (filter on: %v)", tt.args, got.OutOfRange, want.OutOfRange, tt.rng.Enabled())
		case (got.Overlong != nil) != (tt.o != nil):
			t.Errorf("%v: overlong report %v, want one exactly when the punishment is on", tt.args, got.Overlong)
		case got.Overlong != nil && *got.Overlong != (penaltyReport{want.Overlong.Outputs, want.Overlong.Penalized, want.Overlong.Overlong, want.Overlong.Total}):
			t.Errorf("%v: overlong report %+v, want %+v", tt.args, *got.Overlong, want.Overlong)
		}
	}
	// The third case: mean raw reward 1/2 is not inside (0, 0.5), so every
	// advantage is 0; the fourth: the punishment moves the set scores.
	stdout, _, _ := runCmd(t, line+"\n", "credit", "-reward-range", "0,0.5")
	if !strings.Contains(stdout, `"out_of_range":true`) || !strings.Contains(stdout, `"search":[0,0,0,0]`) {
		t.Errorf("-reward-range 0,0.5: %s, want out of range with zero search credit", stdout)
	}
	stdout, _, _ = runCmd(t, line+"\n", "credit")
	if strings.Contains(stdout, "out_of_range") || strings.Contains(stdout, "overlong") {
		t.Errorf("no filter or punishment asked: %s has their fields", stdout)
	}
}

// TestCreditOverlongAndRangeErrors: bad flag values are usage errors naming
// the flag; a line without aggregation_lengths under -overlong-max is a line
// error naming the flag that reads them.
func TestCreditOverlongAndRangeErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-overlong-max", "100", "-overlong-buffer", "200"}, "-overlong-buffer: 200 > L_max = 100"},
		{[]string{"-overlong-max", "100", "-overlong-buffer", "-1"}, "-overlong-buffer: -1 < 0"},
		{[]string{"-overlong-max", "100", "-overlong-factor", "0"}, "-overlong-factor: 0, want in (0, 1e+30]"},
		// The flag's own name: "MaxFactor" once read "Max-overlong-factor".
		{[]string{"-overlong-max", "100", "-overlong-factor", "1e31"}, "spiral credit: -overlong-factor: 1e+31, want in (0, 1e+30] (DAPO uses 1)\n"},
		{[]string{"-overlong-max", "-1"}, "-overlong-max = -1 < 0"},
		{[]string{"-overlong-buffer", "10"}, "need -overlong-max"},
		{[]string{"-reward-range", "1,0"}, "LOW < HIGH"},
		{[]string{"-reward-range", "0"}, "LOW,HIGH"},
		{[]string{"-reward-range", "a,1"}, "LOW"},
		{[]string{"-reward-range", "0,Inf"}, "LOW < HIGH"},
	} {
		_, stderr, code := runCmd(t, "", append([]string{"credit"}, tt.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q, want usage error containing %q", tt.args, code, stderr, tt.want)
		}
	}
	stdout, _, code := runCmd(t, `{"traces":2,"sets":[[0],[1]],"rewards":[[1],[0]]}`+"\n", "credit", "-overlong-max", "100")
	if code != exitLineError || !strings.Contains(stdout, "aggregation_lengths: nil, but the overlong punishment reads it") {
		t.Errorf("-overlong-max without aggregation_lengths: exit %d, %s", code, stdout)
	}
}
