package main

import (
	"bytes"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"spiral"
	"spiral/advise"
	"spiral/budget"
	"spiral/combin"
)

// A small run (N1 <= 5, K <= 3, N2 <= 3) writes a PNG file and prints the
// frontier, whose first row is its cheapest candidate.
func TestFrontierSmall(t *testing.T) {
	out := filepath.Join(t.TempDir(), "f.png")
	req := advise.Request{Budget: 12 * 4096, Lengths: budget.PaperLimits(0), MaxTraces: 5, MaxSets: 3, MaxAggregations: 3,
		Reward: advise.RewardModel{Correct: big.NewRat(1, 4), Found: big.NewRat(3, 4), Missed: big.NewRat(1, 10), Rule: advise.Majority}}
	var w bytes.Buffer
	if err := run(&w, req, out); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("%s is not a PNG: % x", out, data[:min(8, len(data))])
	}
	res, err := advise.Advise(req)
	if err != nil {
		t.Fatal(err)
	}
	front := res.Frontier()
	lines := strings.Split(w.String(), "\n")
	if len(lines) < len(front)+3 || !strings.Contains(lines[0], "rule majority") || !strings.Contains(w.String(), "does not fit") {
		t.Fatalf("output:\n%s", w.String())
	}
	first := strings.Fields(lines[2])
	if len(first) < 6 || first[5] != big.NewInt(front[0].Tokens).String() || front[0].Tokens != 7*4096 {
		t.Errorf("first frontier row %q, want %d tokens (N1 = 3, K = 2, N2 = 2)", lines[2], 7*4096)
	}
}

// The paper's configuration is marked when it is ranked.
func TestFrontierMarksPaper(t *testing.T) {
	other := spiral.Paper()
	other.AggregationsPerSet = 2
	res := advise.Result{Candidates: []advise.Candidate{{Config: other, Tokens: 65536, ImprovementPerToken: big.NewRat(2, 1e9)}, {Config: spiral.Paper(), Tokens: 98304, ImprovementPerToken: big.NewRat(1, 1e9)}}}
	if r := paperRank(res, combin.IndexOrder); r != 1 {
		t.Fatalf("paper rank %d, want 1", r)
	}
	_, legend, err := frontierPlot(res, res.Frontier(), 1, advise.Request{Budget: 98304})
	if err != nil {
		t.Fatal(err)
	}
	if len(legend) != 3 || legend[2] != "the paper's 8/4/4/4 u (rank 2)" {
		t.Errorf("legend %q, want the paper's configuration last", legend)
	}
	if _, legend, _ := frontierPlot(res, res.Frontier(), -1, advise.Request{Budget: 98304}); len(legend) != 2 {
		t.Errorf("legend %q without the paper's rank", legend)
	}
}

func TestFrontierNoCandidate(t *testing.T) {
	req := advise.Request{Budget: 4 * 4096, Lengths: budget.PaperLimits(0),
		Reward: advise.RewardModel{Correct: big.NewRat(1, 4), Found: big.NewRat(3, 4), Missed: big.NewRat(1, 10)}}
	if err := run(new(bytes.Buffer), req, filepath.Join(t.TempDir(), "f.png")); err == nil {
		t.Error("no error when nothing fits")
	}
}
