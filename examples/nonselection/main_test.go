package main

import (
	"bytes"
	"math"
	"math/big"
	"strings"
	"testing"
)

func TestNonselection(t *testing.T) {
	cfg := config{N1: 8, n: 4, paperK: 4, maxK: 10, draws: 20_000, seed: 3, maxChoice: 1_000_000}
	rows, err := compute(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 10 {
		t.Fatalf("%d rows, want K = 1..10", len(rows))
	}
	paper := rows[3]
	if paper.K != 4 || paper.exact.Cmp(big.NewRat(88, 1541)) != 0 || paper.exactNum.Int64() != 52360 || paper.exactDen.Int64() != 916895 {
		t.Errorf("K = 4: exact %v = %v/%v, want 88/1541 = 52360/916895", paper.exact, paper.exactNum, paper.exactDen)
	}
	if !paper.enumerated || paper.avoiding != 52360 || paper.choices != 916895 {
		t.Errorf("K = 4: enumerated %t, %d of %d choices, want 52360 of 916895", paper.enumerated, paper.avoiding, paper.choices)
	}
	for _, r := range rows {
		if r.enumerated != (r.K <= 4) {
			t.Errorf("K = %d: enumerated = %t with at most 1e6 choices", r.K, r.enumerated)
		}
		if r.enumerated && big.NewRat(int64(r.avoiding), int64(r.choices)).Cmp(r.exact) != 0 {
			t.Errorf("K = %d: enumeration %d/%d != exact %v", r.K, r.avoiding, r.choices, r.exact)
		}
		if x, _ := r.exact.Float64(); math.Abs(r.exactFloat-x) > 1e-12*x {
			t.Errorf("K = %d: MissProbFloat %v, exact %v", r.K, r.exactFloat, x)
		}
		if z := (r.simulated - r.exactFloat) / r.stdErr; math.Abs(z) > 5 {
			t.Errorf("K = %d: simulated %v, exact %v: %.1f standard errors", r.K, r.simulated, r.exactFloat, z)
		}
	}
	var out bytes.Buffer
	if err := report(&out, cfg, rows); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"C(35, 4)/C(70, 4) = 52360/916895 = 88/1541 = 0.057106 (5.71%)", "52360 of the 916895 choices", "20000 draws (seed 3)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	if lines := strings.Count(out.String(), "\n"); lines < 20 {
		t.Errorf("report has %d lines:\n%s", lines, out.String())
	}
}

func TestNonselectionBadDraws(t *testing.T) {
	if err := run(new(bytes.Buffer), config{N1: 8, n: 4, paperK: 4, maxK: 10, draws: 0}); err == nil {
		t.Error("draws = 0 gave no error")
	}
}
