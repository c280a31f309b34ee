package main

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"spiral"
	"spiral/advantage"
	"spiral/combin"
)

// TestPlanStepMatchesGo checks that plan -seed S -step T writes the plans
// that a Go trainer's Planner.PlanTo draws for the same problems with
// rand.New(rand.NewPCG(S, T)), for several steps, configurations and
// designs; and that different steps give different plans.
func TestPlanStepMatchesGo(t *testing.T) {
	for _, tt := range []struct {
		flags []string
		c     spiral.Config
	}{
		{nil, spiral.Paper()},
		{[]string{"-shuffle"}, spiral.Config{SearchTraces: 8, SetSize: 4, Sets: 4, AggregationsPerSet: 4, Order: combin.Shuffled}},
		{[]string{"-balanced"}, spiral.Config{SearchTraces: 12, SetSize: 4, Sets: 5, AggregationsPerSet: 4, Design: combin.Balanced}},
		{[]string{"-ordered"}, spiral.Config{SearchTraces: 6, SetSize: 3, Sets: 5, AggregationsPerSet: 2, Ordered: true}},
	} {
		const seed, problems = 2026, 256
		var previous string
		for _, step := range []uint64{0, 1, 2, 1 << 40} {
			args := append([]string{"plan", "-traces", strconv.Itoa(tt.c.SearchTraces), "-size", strconv.Itoa(tt.c.SetSize),
				"-sets", strconv.Itoa(tt.c.Sets), "-seed", strconv.Itoa(seed), "-step", strconv.FormatUint(step, 10),
				"-problems", strconv.Itoa(problems)}, tt.flags...)
			stdout, stderr, code := runCmd(t, "", args...)
			if code != exitOK {
				t.Fatalf("%v: exit %d: %s", args, code, stderr)
			}
			// The Go trainer's step, as the README writes it.
			p, err := tt.c.NewPlanner()
			if err != nil {
				t.Fatal(err)
			}
			var plans spiral.Plans
			keys := make([]uint64, problems)
			for q := range keys {
				keys[q] = uint64(q)
			}
			if err := p.PlanTo(&plans, uint64(seed), step, keys); err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, line := range outputLines(t, stdout) {
				var plan struct {
					Sets [][]int `json:"sets"`
				}
				if err := json.Unmarshal([]byte(line), &plan); err != nil {
					t.Fatal(err)
				}
				got = append(got, slices.Concat(plan.Sets...)...)
			}
			if !slices.Equal(got, plans.AppendMembers(nil)) {
				t.Errorf("%v: the bridge's plans differ from Planner.PlanTo's", args)
			}
			if stdout == previous {
				t.Errorf("%v: the same plans as the previous step", args)
			}
			previous = stdout
		}
	}
	// No -step is step 0.
	a, _, _ := runCmd(t, "", "plan", "-traces", "8", "-size", "4", "-sets", "4", "-seed", "5", "-problems", "3")
	b, _, _ := runCmd(t, "", "plan", "-traces", "8", "-size", "4", "-sets", "4", "-seed", "5", "-step", "0", "-problems", "3")
	if a != b || a == "" {
		t.Errorf("without -step %q, with -step 0 %q", a, b)
	}
}

// TestPlanKeysMatchGo: plan -keys writes, for any keys in any order, the
// plans Go's Planner.PlanTo draws for the same keys; the plan of a key is
// the same whatever the other keys, so a rank's shard of the keys gets the
// lines one process planning 0..P-1 writes for them.
func TestPlanKeysMatchGo(t *testing.T) {
	c := spiral.Config{SearchTraces: 8, SetSize: 4, Sets: 4, AggregationsPerSet: 4, Order: combin.Shuffled}
	base := []string{"plan", "-traces", "8", "-size", "4", "-sets", "4", "-shuffle", "-seed", "2026", "-step", "3"}
	all, stderr, code := runCmd(t, "", append(base, "-problems", "64")...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	every := outputLines(t, all)
	keys := []uint64{63, 5, 0, 17, 5, 1 << 40, math.MaxUint64}
	text := make([]string, len(keys))
	for i, k := range keys {
		text[i] = strconv.FormatUint(k, 10)
	}
	shard, stderr, code := runCmd(t, "", append(base, "-keys", strings.Join(text, ", "))...)
	if code != exitOK {
		t.Fatalf("-keys: exit %d: %s", code, stderr)
	}
	lines := outputLines(t, shard)
	if len(lines) != len(keys) {
		t.Fatalf("-keys %v: %d lines", keys, len(lines))
	}
	p, err := c.NewPlanner()
	if err != nil {
		t.Fatal(err)
	}
	var plans spiral.Plans
	if err := p.PlanTo(&plans, 2026, 3, keys); err != nil {
		t.Fatal(err)
	}
	for q, k := range keys {
		var plan struct {
			Sets [][]int `json:"sets"`
		}
		if err := json.Unmarshal([]byte(lines[q]), &plan); err != nil {
			t.Fatal(err)
		}
		want := plans.Plan(q).Sets
		if got := slices.Concat(plan.Sets...); !slices.Equal(got, slices.Concat(want...)) {
			t.Errorf("key %d: the bridge's plan %v, Go's %v", k, got, want)
		}
		if k < 64 && lines[q] != every[k] {
			t.Errorf("key %d: %s, but -problems 64 wrote %s", k, lines[q], every[k])
		}
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-keys", "1,x"}, `-keys: key 1: "x" is not an unsigned 64-bit integer`},
		{[]string{"-keys", "-1"}, `key 0: "-1"`},
		{[]string{"-keys", "18446744073709551616"}, `key 0: "18446744073709551616"`},
		{[]string{"-keys", "1", "-problems", "2"}, "-problems and -keys: give one of them"},
		{nil, "flag -problems or -keys is required"},
	} {
		stdout, stderr, code := runCmd(t, "", append(base, tt.args...)...)
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q, want %q", tt.args, code, stdout, stderr, tt.want)
		}
	}
}

// TestGroupPresets checks the group command against each preset's formula
// computed by hand on one line: group "a" holds 0/1 rewards (1, 0, 0),
// group 7 two equal rewards, group "s" one reward, group "c" continuous
// rewards (0.2, 0.6, 1.0, 0.2), in verl's interleaved layout.
//
// Group a: mean 1/3, deviations (2/3, -1/3, -1/3), sum of squares 2/3, so
// std = sqrt(1/3) with n-1 (torch.std) and sqrt(2/9) with n; RLOO's
// baseline is the mean of the others: (0, 1/2, 1/2).
// Group c: mean 0.5, deviations (-0.3, 0.1, 0.5, -0.3), sum of squares
// 0.44, std = sqrt(0.44/3) with n-1; RLOO: r - (2 - r)/3.
// Batch std (trl-grpo-batch): the 10 rewards (sum 6) about their mean 0.6,
// sum of squares 5*0.16 (the 1s) + 2*0.16 (the 0.2s) + 2*0.36 (the 0s) +
// 0 (the 0.6) = 1.84, with n-1 = 9.
func TestGroupPresets(t *testing.T) {
	line := `{"ids":["a",7,"c","a","s","c",7,"c","a","c"],"rewards":[1,1,0.2,0,1,0.6,1,1.0,0,0.2]}`
	stdA, stdC := math.Sqrt(1.0/3), math.Sqrt(0.44/3)
	stdBatch := math.Sqrt(1.84 / 9)
	devA := []float64{2.0 / 3, -1.0 / 3, -1.0 / 3} // rows 0, 3, 8
	devC := []float64{-0.3, 0.1, 0.5, -0.3}        // rows 2, 5, 7, 9
	rlooA := []float64{1 - 0, 0 - 0.5, 0 - 0.5}
	rlooC := []float64{0.2 - 1.8/3, 0.6 - 1.4/3, 1.0 - 1.0/3, 0.2 - 1.8/3}
	// layout places group a's and c's values in their rows; the rows of
	// groups 7 and "s" get 0.
	layout := func(a, c []float64) []float64 {
		out := make([]float64, 10)
		for k, row := range []int{0, 3, 8} {
			out[row] = a[k]
		}
		for k, row := range []int{2, 5, 7, 9} {
			out[row] = c[k]
		}
		return out
	}
	scale := func(x []float64, s float64) []float64 {
		y := make([]float64, len(x))
		for i := range x {
			y[i] = x[i] / s
		}
		return y
	}
	plain := layout(devA, devC)
	rloo := layout(rlooA, rlooC)
	grpo := func(eps float64) []float64 { return layout(scale(devA, stdA+eps), scale(devC, stdC+eps)) }
	for _, tt := range []struct {
		flags []string
		want  []float64
	}{
		{[]string{"-preset", "dr-grpo"}, plain},
		{[]string{"-preset", "verl-dr-grpo"}, plain},
		{[]string{"-preset", "trl-dr-grpo"}, plain},
		{[]string{"-preset", "openrlhf-dr-grpo"}, plain},
		{nil, plain},
		{[]string{"-preset", "rloo"}, rloo},
		{[]string{"-preset", "verl-rloo"}, rloo},
		{[]string{"-preset", "trl-rloo"}, rloo},
		{[]string{"-preset", "openrlhf-rloo"}, rloo},
		{[]string{"-scale", "none", "-leave-one-out"}, rloo},
		{[]string{"-preset", "verl-grpo"}, grpo(1e-6)},
		{[]string{"-preset", "trl-grpo"}, grpo(1e-4)},
		{[]string{"-preset", "openrlhf-grpo"}, grpo(1e-9)},
		{[]string{"-scale", "group", "-bessel", "-epsilon", "0.5"}, grpo(0.5)},
		{[]string{"-scale", "group"}, layout(scale(devA, math.Sqrt(2.0/9)), scale(devC, math.Sqrt(0.11)))},
		{[]string{"-preset", "trl-grpo-batch"}, scale(plain, stdBatch+1e-4)},
	} {
		stdout, stderr, code := runCmd(t, line+"\n", append([]string{"group"}, tt.flags...)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s %s", tt.flags, code, stdout, stderr)
		}
		var got groupOutput
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatal(err)
		}
		for i := range tt.want {
			if math.Abs(got.Advantages[i]-tt.want[i]) > 1e-14 {
				t.Errorf("%v: advantages %v, want %v", tt.flags, got.Advantages, tt.want)
				break
			}
		}
		// Groups 7 (all equal) and "s" (one row) are exactly 0 and listed.
		if got.Advantages[1] != 0 || got.Advantages[6] != 0 || got.Advantages[4] != 0 || got.Groups != 4 ||
			fmt.Sprint(rawStrings(got.ZeroVariance), rawStrings(got.Singletons)) != `[7] ["s"]` {
			t.Errorf("%v: %s", tt.flags, stdout)
		}
	}
}

func rawStrings(l []json.RawMessage) []string {
	s := make([]string, len(l))
	for i, r := range l {
		s[i] = string(r)
	}
	return s
}

// TestGroupUsage checks the flag errors of group, and that its help lists
// every preset the library defines.
func TestGroupUsage(t *testing.T) {
	help, _, _ := runCmd(t, "", "group", "-h")
	for p := advantage.Preset(0); ; p++ {
		name, err := p.MarshalText()
		if err != nil {
			if p < 12 {
				t.Errorf("preset %d: %v", p, err)
			}
			break
		}
		if !strings.Contains(help, "  "+string(name)+" ") {
			t.Errorf("group -h does not list -preset %s", name)
		}
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"group", "-preset", "grpo"}, `-preset = "grpo" is not one of`},
		{[]string{"group", "-preset", "verl-grpo", "-bessel"}, "not both"},
		{[]string{"group", "-scale", "std"}, `-scale = "std" is not one of`},
		{[]string{"group", "-scale", "group", "-epsilon", "-1"}, "-epsilon"},
		{[]string{"group", "-scale", "group", "-epsilon", "NaN"}, "-epsilon"},
	} {
		stdout, stderr, code := runCmd(t, "", tt.args...)
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q, want %q", tt.args, code, stdout, stderr, tt.want)
		}
	}
}

// TestGroupEmptyBatch: an empty batch was answered "advantages":null on
// the first line and [] after any other line. Every empty batch now gets
// the same answer, wherever it comes.
func TestGroupEmptyBatch(t *testing.T) {
	const empty = `{"ids":[],"rewards":[]}`
	const want = `{"advantages":[],"groups":0,"singletons":[],"zero_variance":[],"unscored":[],"unscorable":0}`
	stdout, _, code := runCmd(t, empty+"\n"+`{"ids":[1],"rewards":[1]}`+"\n"+empty+"\n", "group")
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if code != exitOK || len(lines) != 3 || lines[0] != want || lines[2] != want {
		t.Errorf("exit %d, answers:\n%s\nwant the first and last:\n%s", code, stdout, want)
	}
}

// TestConstantsBounded runs constants on configurations whose exact
// answer is out of reach: each is answered with floats (and null fractions
// where exact numbers would exceed combin.MaxExactBits) or refused with a
// message naming the flag, and the time each took is logged.
func TestConstantsBounded(t *testing.T) {
	for _, tt := range []struct {
		args   []string
		refuse string // "" for an answer
		exact  bool   // whether the answer has exact fractions
	}{
		{[]string{"-traces", "1048576", "-size", "524288", "-sets", "2"}, "", false},
		{[]string{"-traces", "64", "-size", "32", "-sets", "65536"}, "", false},
		{[]string{"-traces", "1000", "-size", "500", "-sets", "200000"}, "-sets: K*n = 200000*500", false},
		{[]string{"-traces", "16777216", "-size", "8", "-sets", "9223372036854775807"}, "-sets", false}, // the flag package refuses it where int has 32 bits
		{[]string{"-traces", "16777216", "-size", "2", "-sets", "3"}, "", true},
		{[]string{"-traces", "16777216", "-size", "8", "-sets", "2097152", "-balanced"}, "", true},
	} {
		start := time.Now()
		stdout, stderr, code := runCmd(t, "", append([]string{"constants"}, tt.args...)...)
		t.Logf("%v: %v", tt.args, time.Since(start))
		if tt.refuse != "" {
			if code != exitUsage || !strings.Contains(stderr, tt.refuse) {
				t.Errorf("%v: exit %d, stderr %q, want a refusal naming %q", tt.args, code, stderr, tt.refuse)
			}
			continue
		}
		var got constantsOutput
		if code != exitOK || json.Unmarshal([]byte(stdout), &got) != nil {
			t.Fatalf("%v: exit %d: %s %s", tt.args, code, stdout, stderr)
		}
		if (got.M != nil) != tt.exact || math.IsNaN(got.MFloat) || got.MFloat < -1 || got.CoverProbFloat < 0 || got.CoverProbFloat > 1 {
			t.Errorf("%v: %s", tt.args, stdout)
		}
	}
}

// TestCreditTraceBound checks that a short line cannot ask for an answer
// far larger than itself: traces is refused above max(MinTraceBound, the
// line's length), and an accepted line's answer is at most a fixed number
// of bytes per input byte.
func TestCreditTraceBound(t *testing.T) {
	short := `{"traces":1048576,"sets":[[0]],"rewards":[[1]]}`
	stdout, _, _ := runCmd(t, short+"\n", "credit")
	if !strings.Contains(stdout, `"error":"traces = 1048576 > 4096`) {
		t.Errorf("60-byte line with 2^20 traces: %.200s", stdout)
	}
	for _, traces := range []int{MinTraceBound, 50_000} {
		// A line padded with lengths to be as long as traces requires.
		lengths := strings.Repeat("1,", traces-1) + "1"
		line := fmt.Sprintf(`{"traces":%d,"sets":[[0]],"rewards":[[1]],"search_lengths":[%s]}`, traces, lengths)
		stdout, stderr, code := runCmd(t, line+"\n", "credit")
		if code != exitOK {
			t.Fatalf("traces = %d in a %d-byte line: exit %d: %.200s %s", traces, len(line), code, stdout, stderr)
		}
		if ratio := float64(len(stdout)) / float64(len(line)); ratio > 16 {
			t.Errorf("traces = %d: %d bytes in, %d out", traces, len(line), len(stdout))
		}
	}
	over := fmt.Sprintf(`{"traces":%d,"sets":[[0]],"rewards":[[1]]}`, 4097)
	if stdout, _, _ := runCmd(t, over+"\n", "credit"); !strings.Contains(stdout, "traces = 4097 > 4096") {
		t.Errorf("4097 traces in a short line: %s", stdout)
	}
}

// TestCreditNonFinite checks that NaN and the infinities that Python's
// json.dumps writes are named with their position and the way out, and
// that the same outputs marked unscorable are credited without them.
func TestCreditNonFinite(t *testing.T) {
	for _, tt := range []struct{ line, want string }{
		{`{"traces":4,"sets":[[0,1],[2,3]],"rewards":[[1,NaN],[0]]}`, `rewards[0][1] is NaN, which is not a JSON number`},
		{`{"traces":4,"sets":[[0,1],[2,3]],"rewards":[[1,0],[Infinity]]}`, `rewards[1][0] is Infinity`},
		{`{"traces":4,"sets":[[0,1],[2,3]],"rewards":[[1,0],[ -Infinity]]}`, `rewards[1][0] is -Infinity`},
		{`{"traces":4,"sets":[[0,1],[2,3]],"rewards":[[1,0],[0]],"aggregation_lengths":[[1,NaN],[2]]}`, `aggregation_lengths[0][1] is NaN`},
		{`{"traces":4,"sets":[[0,1],[2,3]],"rewards":[[1,0],[0]],"unscorable":[[false,true]]}`, `len(unscorable) = 1, want len(sets) = 2`},
		{`{"traces":4,"sets":[[0,1],[2,3]],"rewards":[[1,0],[0]],"unscorable":[[false,true],[]]}`, `len(unscorable[1]) = 0, want len(rewards[1]) = 1`},
	} {
		stdout, _, _ := runCmd(t, tt.line+"\n", "credit")
		if !strings.Contains(stdout, tt.want) || !strings.HasPrefix(stdout, `{"line":1,"error":`) {
			t.Errorf("%s: %s, want %q", tt.line, stdout, tt.want)
		}
	}
	if stdout, _, _ := runCmd(t, `{"traces":4,"sets":[[0,1],[2,3]],"rewards":[[1,NaN],[0]]}`+"\n", "credit"); !strings.Contains(stdout, "mark the output unscorable") {
		t.Errorf("NaN error does not say what to do: %s", stdout)
	}
	// Marked: set 0's score is its one scored reward, 1; the marked output
	// gets 0.
	stdout, _, code := runCmd(t, `{"traces":4,"sets":[[0,1],[2,3]],"rewards":[[1,0],[0]],"unscorable":[[false,true],[false]]}`+"\n", "credit")
	var got creditOutput
	if code != exitOK || json.Unmarshal([]byte(stdout), &got) != nil {
		t.Fatalf("exit %d: %s", code, stdout)
	}
	if !slices.Equal(got.SetScores, []float64{1, 0}) || !slices.Equal(got.Aggregation[0], []float64{0, 0}) ||
		!slices.Equal(got.ScoredOutputs, []int{1, 1}) || !slices.Equal(got.Search, []float64{0.5, 0.5, -0.5, -0.5}) {
		t.Errorf("unscorable: %s", stdout)
	}
}
