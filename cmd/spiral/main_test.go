package main

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// long reports whether the longer test campaign was asked for (SPIRAL_LONG=1).
func long() bool { return os.Getenv("SPIRAL_LONG") == "1" }

// runCmd runs the program with args and stdin and returns its outputs and
// exit status.
func runCmd(t tester, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), code
}

// tester is what testing.TB and *rapid.T have in common that the helpers use.
type tester interface {
	Helper()
	Fatalf(format string, args ...any)
}

// outputLines splits output into lines, requiring a final newline.
func outputLines(t tester, out string) []string {
	t.Helper()
	if out == "" {
		return nil
	}
	if !strings.HasSuffix(out, "\n") {
		t.Fatalf("output does not end in a newline: %q", out)
	}
	return strings.Split(strings.TrimSuffix(out, "\n"), "\n")
}

// workedExampleLine is a problem at the paper's configuration with the set
// scores of docs/method.md#worked-example.
const workedExampleLine = `{"traces":8,"sets":[[0,1,2,3],[4,5,6,7],[0,2,4,6],[1,3,5,7]],"rewards":[[1,1,1,0],[0.5,0.5,0.5,0.5],[0,0.5,0.5,0],[1,0,1,0]]}`

// TestWorkedExample pins the set scores of the worked example of
// docs/method.md#worked-example on another layout: f = (0.75, 0.5, 0.25,
// 0.5) gives fbar = 0.5 and A_set = (0.25, 0, -0.25, 0); traces 0 and 2,
// only in G1 and G3, get A_search = (0.25 - 0.25)/2 = 0; G1's rewards
// (1, 1, 1, 0) give A_agg = (0.25, 0.25, 0.25, -0.75). The other values are
// the same formulas by hand: traces 1 and 3 (G1, G4) get (0.25 + 0)/2,
// traces 4 and 6 (G2, G3) get (0 - 0.25)/2, traces 5 and 7 (G2, G4) get 0.
func TestWorkedExample(t *testing.T) {
	stdout, stderr, code := runCmd(t, workedExampleLine+"\n", "credit")
	if code != exitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	lines := outputLines(t, stdout)
	if len(lines) != 1 {
		t.Fatalf("%d output lines, want 1", len(lines))
	}
	var got creditOutput
	dec := json.NewDecoder(strings.NewReader(lines[0]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatal(err)
	}
	want := creditOutput{
		Search:          []float64{0, 0.125, 0, 0.125, -0.125, 0, -0.125, 0},
		Aggregation:     [][]float64{{0.25, 0.25, 0.25, -0.75}, {0, 0, 0, 0}, {-0.25, 0.25, 0.25, -0.25}, {0.5, -0.5, 0.5, -0.5}},
		SetScores:       []float64{0.75, 0.5, 0.25, 0.5},
		SetAdvantages:   []float64{0.25, 0, -0.25, 0},
		Appearances:     []int{2, 2, 2, 2, 2, 2, 2, 2},
		ScoredOutputs:   []int{4, 4, 4, 4},
		InNoSet:         0,
		NoSignal:        false,
		SearchGate:      gateReport{Outputs: 8, Positive: 2},
		AggregationGate: gateReport{Outputs: 16, Positive: 7},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("worked example (-want +got):\n%s", diff)
	}
}

// TestWorkedExampleGated pins the gates on the worked example with every
// length exactly at the target: the default boundary zeroes every positive
// advantage (traces 1 and 3, the seven positive A_agg, 2.25 in all) and
// keeps the negative ones; -boundary keep changes nothing.
func TestWorkedExampleGated(t *testing.T) {
	var line map[string]any
	if err := json.Unmarshal([]byte(workedExampleLine), &line); err != nil {
		t.Fatal(err)
	}
	line["search_lengths"] = []int{10, 10, 10, 10, 10, 10, 10, 10}
	line["aggregation_lengths"] = [][]int{{20, 20, 20, 20}, {20, 20, 20, 20}, {20, 20, 20, 20}, {20, 20, 20, 20}}
	in, _ := json.Marshal(line)
	for _, tt := range []struct {
		boundary string
		want     creditOutput
	}{
		{"gate", creditOutput{
			Search:          []float64{0, 0, 0, 0, -0.125, 0, -0.125, 0},
			Aggregation:     [][]float64{{0, 0, 0, -0.75}, {0, 0, 0, 0}, {-0.25, 0, 0, -0.25}, {0, -0.5, 0, -0.5}},
			SearchGate:      gateReport{Outputs: 8, Positive: 2, AtTarget: 2, Gated: 2, MassRemoved: 0.25},
			AggregationGate: gateReport{Outputs: 16, Positive: 7, AtTarget: 7, Gated: 7, MassRemoved: 2.25},
		}},
		{"keep", creditOutput{
			Search:          []float64{0, 0.125, 0, 0.125, -0.125, 0, -0.125, 0},
			Aggregation:     [][]float64{{0.25, 0.25, 0.25, -0.75}, {0, 0, 0, 0}, {-0.25, 0.25, 0.25, -0.25}, {0.5, -0.5, 0.5, -0.5}},
			SearchGate:      gateReport{Outputs: 8, Positive: 2, AtTarget: 2},
			AggregationGate: gateReport{Outputs: 16, Positive: 7, AtTarget: 7},
		}},
	} {
		stdout, stderr, code := runCmd(t, string(in), "credit", "-search-target", "10", "-aggregation-target", "20", "-boundary", tt.boundary)
		if code != exitOK {
			t.Fatalf("-boundary %s: exit %d, stderr %q", tt.boundary, code, stderr)
		}
		var got creditOutput
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatal(err)
		}
		tt.want.SetScores = []float64{0.75, 0.5, 0.25, 0.5}
		tt.want.SetAdvantages = []float64{0.25, 0, -0.25, 0}
		tt.want.Appearances = []int{2, 2, 2, 2, 2, 2, 2, 2}
		tt.want.ScoredOutputs = []int{4, 4, 4, 4}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("-boundary %s (-want +got):\n%s", tt.boundary, diff)
		}
	}
}

// TestOrderedFlag checks that -ordered makes sets tuples: the same traces
// in two orders are two sets of a plan, but one subset repeated without
// the flag.
func TestOrderedFlag(t *testing.T) {
	line := `{"traces":4,"sets":[[0,1,2],[2,1,0]],"rewards":[[1],[0]]}`
	stdout, _, code := runCmd(t, line, "credit", "-ordered")
	if code != exitOK || !strings.Contains(stdout, `"set_advantages":[0.5,-0.5]`) {
		t.Errorf("-ordered: exit %d, output %s", code, stdout)
	}
	stdout, _, code = runCmd(t, line, "credit")
	if code != exitLineError || !strings.Contains(stdout, "sets[1]: identical to set 0") {
		t.Errorf("without -ordered: exit %d, output %s", code, stdout)
	}
	// Without -ordered, a subset may come in any presentation order.
	stdout, _, code = runCmd(t, `{"traces":3,"sets":[[2,0],[1,0]],"rewards":[[1],[0]]}`, "credit")
	if code != exitOK || !strings.Contains(stdout, `"search":[0,-0.5,0.5]`) {
		t.Errorf("shuffled subsets: exit %d, output %s", code, stdout)
	}
}

// jsonKeys returns the JSON keys of a struct type's fields, recursively
// for struct-typed fields.
func jsonKeys(t reflect.Type) []string {
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		keys = append(keys, key)
		if f.Type.Kind() == reflect.Struct {
			keys = append(keys, jsonKeys(f.Type)...)
		}
	}
	return keys
}

// TestHelp checks that -h on every command prints its help on stdout with
// status 0, naming every flag, and every JSON key the command reads or
// writes (taken from the types the code uses, so a new key cannot go
// undocumented).
func TestHelp(t *testing.T) {
	for _, tt := range []struct {
		cmd   string
		flags []string
		keys  []string
	}{
		{"credit", []string{"search-target", "aggregation-target", "boundary", "ordered"},
			slices.Concat(jsonKeys(reflect.TypeFor[creditLine]()), jsonKeys(reflect.TypeFor[creditOutput]()), []string{"line", "error"})},
		{"passk", []string{"k"}, slices.Concat(jsonKeys(reflect.TypeFor[passkLine]()), []string{"pass_at_k", "line", "error"})},
		{"constants", []string{"traces", "size", "sets", "ordered", "balanced"}, jsonKeys(reflect.TypeFor[constantsOutput]())},
		{"plan", []string{"traces", "size", "sets", "ordered", "shuffle", "balanced", "seed", "step", "problems"}, []string{"sets"}},
		{"group", []string{"preset", "scale", "epsilon", "bessel", "leave-one-out"},
			slices.Concat(jsonKeys(reflect.TypeFor[groupLine]()), jsonKeys(reflect.TypeFor[groupOutput]()), []string{"line", "error"})},
		{"vectors", []string{"out"}, nil},
	} {
		for _, h := range []string{"-h", "-help", "--help"} {
			stdout, stderr, code := runCmd(t, "", tt.cmd, h)
			if code != exitOK || stderr != "" {
				t.Errorf("%s %s: exit %d, stderr %q", tt.cmd, h, code, stderr)
			}
			if !strings.HasPrefix(stdout, "usage: spiral "+tt.cmd) {
				t.Errorf("%s %s: help starts %q", tt.cmd, h, stdout[:min(len(stdout), 40)])
			}
			for _, f := range tt.flags {
				if !strings.Contains(stdout, "-"+f+" ") {
					t.Errorf("%s help does not document -%s", tt.cmd, f)
				}
			}
			for _, k := range tt.keys {
				if !strings.Contains(stdout, `"`+k+`"`) {
					t.Errorf("%s help does not document key %q", tt.cmd, k)
				}
			}
		}
		viaHelp, _, code := runCmd(t, "", "help", tt.cmd)
		direct, _, _ := runCmd(t, "", tt.cmd, "-h")
		if code != exitOK || viaHelp != direct {
			t.Errorf("spiral help %s differs from spiral %s -h", tt.cmd, tt.cmd)
		}
	}
	for _, args := range [][]string{{"-h"}, {"help"}, {"--help"}} {
		stdout, _, code := runCmd(t, "", args...)
		if code != exitOK || !strings.Contains(stdout, "Commands:") {
			t.Errorf("spiral %v: exit %d, %q", args, code, stdout)
		}
	}
}

// TestUsageErrors checks that bad command lines exit with status 2, write
// nothing to stdout and say what is wrong on stderr.
func TestUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string // in stderr
	}{
		{nil, "usage: spiral <command>"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"credit", "-nope"}, "flag provided but not defined: -nope"},
		{[]string{"credit", "file.jsonl"}, `unexpected argument "file.jsonl"`},
		{[]string{"credit", "-boundary", "maybe"}, `want gate or keep, got "maybe"`},
		{[]string{"credit", "-search-target", "-1"}, "-search-target = -1 < 0"},
		{[]string{"credit", "-aggregation-target", "-5"}, "-aggregation-target = -5 < 0"},
		{[]string{"credit", "-search-target", "x"}, `invalid value "x" for flag -search-target`},
		{[]string{"passk"}, "flag -k is required"},
		{[]string{"passk", "-k", ""}, `"" is not an integer >= 1`},
		{[]string{"passk", "-k", "1,0"}, `"0" is not an integer >= 1`},
		{[]string{"passk", "-k", "1,x"}, `"x" is not an integer >= 1`},
		{[]string{"passk", "-k", "1,,2"}, `"" is not an integer >= 1`},
		{[]string{"passk", "-k", "8,1,8"}, "k = 8 appears twice"},
		{[]string{"constants", "-traces", "8", "-size", "4"}, "flag -sets is required"},
		{[]string{"constants", "-traces", "4", "-size", "5", "-sets", "1"}, "-size: 5 > N1 = 4"},
		{[]string{"constants", "-traces", "8", "-size", "4", "-sets", "71"}, "71"},
		{[]string{"constants", "-traces", "8", "-size", "4", "-sets", "0"}, "-sets: 0 < 1"},
		{[]string{"plan", "-traces", "8", "-size", "4", "-sets", "4", "-problems", "2"}, "flag -seed is required"},
		{[]string{"plan", "-traces", "8", "-size", "4", "-sets", "4", "-seed", "1", "-problems", "-1"}, "-problems = -1 < 0"},
		{[]string{"plan", "-traces", "8", "-size", "4", "-sets", "71", "-seed", "1", "-problems", "1"}, "-sets: 71 > C(8, 4) = 70"},
		{[]string{"plan", "-traces", "8", "-size", "4", "-sets", "4", "-ordered", "-shuffle", "-seed", "1", "-problems", "1"}, "-shuffle: shuffled tuples"},
		{[]string{"vectors"}, "flag -out is required"},
	} {
		stdout, stderr, code := runCmd(t, "", tt.args...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d", tt.args, code, exitUsage)
		}
		if stdout != "" {
			t.Errorf("%v: stdout %q, want nothing", tt.args, stdout)
		}
		if !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: stderr %q does not contain %q", tt.args, stderr, tt.want)
		}
	}
}

// TestExitStatus checks the exit status and the stderr summary of the
// stream commands.
func TestExitStatus(t *testing.T) {
	for _, tt := range []struct {
		stdin      string
		code       int
		lines      int
		wantStderr string
	}{
		{"", exitOK, 0, ""},
		{workedExampleLine, exitOK, 1, ""},
		{workedExampleLine + "\n" + workedExampleLine + "\r\n", exitOK, 2, ""},
		{"\n", exitLineError, 1, "1 of 1 lines failed"},
		{workedExampleLine + "\n{}\n" + workedExampleLine + "\n", exitLineError, 3, "1 of 3 lines failed"},
	} {
		stdout, stderr, code := runCmd(t, tt.stdin, "credit")
		if code != tt.code || len(outputLines(t, stdout)) != tt.lines {
			t.Errorf("input %.30q: exit %d with %d lines, want %d with %d", tt.stdin, code, len(outputLines(t, stdout)), tt.code, tt.lines)
		}
		if !strings.Contains(stderr, tt.wantStderr) || (tt.wantStderr == "" && stderr != "") {
			t.Errorf("input %.30q: stderr %q, want %q", tt.stdin, stderr, tt.wantStderr)
		}
	}
}
