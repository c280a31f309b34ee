// Command nonselection computes the chance that a search trace gets no
// credit at the paper's configuration (docs/method.md#proposition-31): with
// N1 = 8 search traces and K = 4 sets drawn uniformly without replacement
// from the C(8, 4) = 70 sets of n = 4 traces, a given trace is in none of the
// sets with probability C(35, 4)/C(70, 4) = 52360/916895 = 88/1541, about
// 5.71%.
//
// It computes that probability three ways, side by side: by the exact formula
// (combin's MissProb), by enumerating every choice of K sets out of 70 and
// counting the choices in which trace 0 is in no set, and by simulation with
// combin's Sampler, with its standard error. It exits with status 1 if an
// enumeration disagrees with the exact formula. Then it does the same for
// K = 1..10, enumerating where the number of choices C(70, K) is at most
// -enum (default 2e7, so up to K = 5).
//
// Usage:
//
//	go run ./examples/nonselection [-seed 1] [-draws 1000000] [-enum 20000000]
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"text/tabwriter"

	"spiral/combin"
)

// config is what one run computes.
type config struct {
	N1, n     int    // search traces and set size: the paper's 8 and 4
	paperK    int    // the paper's K = 4
	maxK      int    // the table covers K = 1..maxK
	draws     int    // simulated draws per K
	seed      uint64 // the simulation's seed
	maxChoice uint64 // enumerate only when C(T, K) <= maxChoice
}

// row is the probability that trace 0 is in none of K sets, three ways.
type row struct {
	K int

	exact      *big.Rat // C(T_avoid, K)/C(T, K), reduced
	exactNum   *big.Int // C(T_avoid, K)
	exactDen   *big.Int // C(T, K)
	exactFloat float64  // MissProbFloat

	enumerated bool
	avoiding   uint64 // choices of K sets in which trace 0 is in no set
	choices    uint64 // all choices of K sets, C(T, K)

	simulated float64 // fraction of draws in which trace 0 is in no set
	stdErr    float64 // its standard error sqrt(p (1-p) / draws) at the exact p
	draws     int
}

func main() {
	cfg := config{N1: 8, n: 4, paperK: 4, maxK: 10}
	flag.Uint64Var(&cfg.seed, "seed", 1, "seed of the simulation")
	flag.IntVar(&cfg.draws, "draws", 1_000_000, "simulated draws of K sets, for each K")
	flag.Uint64Var(&cfg.maxChoice, "enum", 20_000_000, "enumerate every choice of K sets when there are at most this many")
	flag.Parse()
	if err := run(os.Stdout, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "nonselection:", err)
		os.Exit(1)
	}
}

// run computes the rows for K = 1..maxK and writes the report.
func run(w io.Writer, cfg config) error {
	rows, err := compute(cfg)
	if err != nil {
		return err
	}
	return report(w, cfg, rows)
}

func compute(cfg config) ([]row, error) {
	if cfg.draws < 1 {
		return nil, fmt.Errorf("draws = %d < 1", cfg.draws)
	}
	f, err := combin.Subsets(cfg.N1, cfg.n)
	if err != nil {
		return nil, err
	}
	T, _ := f.Count64()
	// containsZero[r] reports whether the set of rank r contains trace 0.
	var containsZero []bool
	for g := range f.All() {
		containsZero = append(containsZero, g[0] == 0)
	}
	rows := make([]row, 0, cfg.maxK)
	for K := 1; K <= cfg.maxK; K++ {
		r := row{K: K, draws: cfg.draws}
		if r.exact, err = f.MissProb(K); err != nil {
			return nil, err
		}
		if r.exactFloat, err = f.MissProbFloat(K); err != nil {
			return nil, err
		}
		r.exactNum = new(big.Int).Binomial(must(f.Avoiding()).Int64(), int64(K))
		r.exactDen = new(big.Int).Binomial(int64(T), int64(K))
		if r.exactDen.IsUint64() && r.exactDen.Uint64() <= cfg.maxChoice {
			r.enumerated = true
			r.avoiding, r.choices, err = enumerate(containsZero, K)
			if err != nil {
				return nil, err
			}
			if e := big.NewRat(int64(r.avoiding), int64(r.choices)); e.Cmp(r.exact) != 0 {
				return nil, fmt.Errorf("at K = %d, enumeration gives %v, the exact formula %v", K, e, r.exact)
			}
		}
		rnd := rand.New(rand.NewPCG(cfg.seed, uint64(K)))
		if r.simulated, err = simulate(f, K, cfg.draws, rnd); err != nil {
			return nil, err
		}
		r.stdErr = math.Sqrt(r.exactFloat * (1 - r.exactFloat) / float64(cfg.draws))
		rows = append(rows, r)
	}
	return rows, nil
}

// enumerate lists every choice of K of the sets and counts those in which no
// set contains trace 0.
func enumerate(containsZero []bool, K int) (avoiding, choices uint64, err error) {
	choice, err := combin.Subsets(len(containsZero), K)
	if err != nil {
		return 0, 0, err
	}
	for c := range choice.All() {
		choices++
		hit := false
		for _, set := range c {
			if containsZero[set] {
				hit = true
				break
			}
		}
		if !hit {
			avoiding++
		}
	}
	return avoiding, choices, nil
}

// simulate draws K sets draws times with a reused Sampler and returns the
// fraction of draws in which trace 0 is in no set.
func simulate(f combin.Family, K, draws int, rnd *rand.Rand) (float64, error) {
	s, err := combin.NewSampler(f, K)
	if err != nil {
		return 0, err
	}
	dst := make([]int, s.Len())
	missed := 0
	for range draws {
		if err := s.SampleTo(dst, rnd); err != nil {
			return 0, err
		}
		hit := false
		for _, trace := range dst {
			if trace == 0 {
				hit = true
				break
			}
		}
		if !hit {
			missed++
		}
	}
	return float64(missed) / float64(draws), nil
}

func report(w io.Writer, cfg config, rows []row) error {
	f, _ := combin.Subsets(cfg.N1, cfg.n)
	p := rows[cfg.paperK-1]
	fmt.Fprintf(w, "P(a given trace is in none of K sets), the K sets drawn uniformly without\n")
	fmt.Fprintf(w, "replacement from the %v = %v sets of n = %d of N1 = %d traces.\n\n", f, must(f.Count()), cfg.n, cfg.N1)
	fmt.Fprintf(w, "Paper configuration, K = %d:\n", cfg.paperK)
	fmt.Fprintf(w, "  exact       C(%v, %d)/C(%v, %d) = %v/%v = %v = %.6f (%.2f%%)\n",
		must(f.Avoiding()), p.K, must(f.Count()), p.K, p.exactNum, p.exactDen, p.exact, p.exactFloat, 100*p.exactFloat)
	if p.enumerated {
		fmt.Fprintf(w, "  enumerated  %d of the %d choices of %d sets leave trace 0 out = %.6f\n",
			p.avoiding, p.choices, p.K, float64(p.avoiding)/float64(p.choices))
	}
	fmt.Fprintf(w, "  simulated   %d draws (seed %d): %.6f, standard error %.6f, %+.1f s.e. from exact\n\n",
		p.draws, cfg.seed, p.simulated, p.stdErr, (p.simulated-p.exactFloat)/p.stdErr)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "K\texact\t\tenumerated\tsimulated\ts.e.\tz\t\n")
	for _, r := range rows {
		enum := "-"
		if r.enumerated {
			enum = fmt.Sprintf("%d/%d", r.avoiding, r.choices)
		}
		fmt.Fprintf(tw, "%d\t%v\t%.6f\t%s\t%.6f\t%.6f\t%+.1f\t\n",
			r.K, r.exact, r.exactFloat, enum, r.simulated, r.stdErr, (r.simulated-r.exactFloat)/r.stdErr)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nsimulated: %d draws per K, seed %d; s.e. = sqrt(p(1-p)/draws) at the exact p;\nz = (simulated - exact)/s.e.\n", cfg.draws, cfg.seed)
	_, err := fmt.Fprintf(w, "enumerated where C(%v, K) <= %d (-enum).\n", must(f.Count()), cfg.maxChoice)
	return err
}

// must returns x, and panics on an error: the family here is small.
func must(x *big.Int, err error) *big.Int {
	if err != nil {
		panic(err)
	}
	return x
}
