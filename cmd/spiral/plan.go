package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"spiral"
	"spiral/combin"
)

const planHelp = `usage: spiral plan -traces N1 -size n -sets K [-ordered] [-shuffle] [-balanced] -seed S [-step T] (-problems P | -keys K1,K2,...)

plan draws the sets of P problems with the root package's Planner: for each
problem, K distinct sets drawn uniformly without replacement from the
C(N1, n) unordered n-subsets of the N1 search traces (or, with -ordered, from
the (N1)_n ordered n-tuples), and writes one line per problem. With
-balanced the K subsets of each problem are a balanced design instead
(combin.Balanced: every trace in K n / N1 sets, or in the two nearest whole
numbers when N1 does not divide K n).

Flags:
  -traces N1    the number of search traces per problem, 1 <= N1 <= 2^24 (required)
  -size n       the set size, 1 <= n <= N1 (required)
  -sets K       the number of sets per problem, 1 <= K <= the family size,
                K n <= 2^24 (required)
  -ordered      draw ordered tuples; a tuple's order is its presentation order
  -shuffle      present each subset's candidates in a uniformly random order
                instead of ascending index order (not with -ordered)
  -balanced     draw a balanced design (not with -ordered)
  -seed S       the seed, an unsigned 64-bit integer (required)
  -step T       the training step, an unsigned 64-bit integer (default 0)
  -problems P   the number of problems, P >= 0: the problems of keys 0..P-1
  -keys K1,...  the problems' keys instead, unsigned 64-bit integers separated
                by commas (a rank's shard, the problems a step resamples);
                one of -problems and -keys is required

The plans are those that Go's

    p, _ := cfg.NewPlanner()
    p.PlanTo(&plans, S, T, keys)   // keys = []uint64{0, 1, ..., P-1} or -keys

draws: the plan of a problem is a function of (S, T, its key) alone
(spiral.StreamSeed), whatever the other keys: a Go trainer and a trainer
using this command draw the same plans for the same seed, step and keys, on
every machine, and a rank that plans its own shard's keys gets the lines
that one process planning every key writes for them.

Output: one line per key, in the order of the keys:
  {"sets": [[y, ...], ...]}   K sets of n trace indices in [0, N1), in
                              presentation order: the "sets" of a credit
                              input line

Exit status: 0 on success, 2 for bad flags or values (the error on stderr)
or a write error.
`

func runPlan(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("plan", stderr)
	N := fs.Int("traces", 0, "")
	n := fs.Int("size", 0, "")
	K := fs.Int("sets", 0, "")
	ordered := fs.Bool("ordered", false, "")
	shuffle := fs.Bool("shuffle", false, "")
	balanced := fs.Bool("balanced", false, "")
	seed := fs.Uint64("seed", 0, "")
	step := fs.Uint64("step", 0, "")
	problems := fs.Int("problems", 0, "")
	var keys keysFlag
	fs.Var(&keys, "keys", "")
	if code, done := parseFlags(fs, planHelp, args, stdout, stderr); done {
		return code
	}
	if err := requireFlags(fs, "traces", "size", "sets", "seed"); err != nil {
		return usageError(stderr, "plan", err.Error())
	}
	switch err := requireFlags(fs, "problems"); {
	case err == nil && keys.set:
		return usageError(stderr, "plan", "-problems and -keys: give one of them")
	case err != nil && !keys.set:
		return usageError(stderr, "plan", "flag -problems or -keys is required")
	case *problems < 0:
		return usageError(stderr, "plan", fmt.Sprintf("-problems = %d < 0", *problems))
	}
	c := spiral.Config{SearchTraces: *N, SetSize: *n, Sets: *K, AggregationsPerSet: 1}
	c.Ordered = *ordered
	if *shuffle {
		c.Order = combin.Shuffled
	}
	if *balanced {
		c.Design = combin.Balanced
	}
	p, err := c.NewPlanner()
	if err != nil {
		return usageError(stderr, "plan", sizeError(err))
	}
	next := func(q int) uint64 { return uint64(q) }
	count := *problems
	if keys.set {
		next, count = func(q int) uint64 { return keys.keys[q] }, len(keys.keys)
	}
	if err := writePlans(stdout, p, *seed, *step, count, next); err != nil {
		fmt.Fprintf(stderr, "spiral plan: %v\n", err)
		return exitUsage
	}
	return exitOK
}

// keysFlag is the -keys flag: unsigned 64-bit integers separated by commas.
type keysFlag struct {
	keys []uint64
	set  bool
}

func (f *keysFlag) String() string { return "" }

func (f *keysFlag) Set(s string) error {
	f.keys, f.set = f.keys[:0], true
	for i, k := range strings.Split(s, ",") {
		key, err := strconv.ParseUint(strings.TrimSpace(k), 10, 64)
		if err != nil {
			return fmt.Errorf("key %d: %s is not an unsigned 64-bit integer", i, clip(strconv.Quote(k)))
		}
		f.keys = append(f.keys, key)
	}
	return nil
}

// writePlans writes the plans of problems problems, problem q of key
// key(q), drawn by p at seed and step, one line each, reusing one buffer.
func writePlans(out io.Writer, p *spiral.Planner, seed, step uint64, problems int, key func(q int) uint64) error {
	c := p.Config()
	k, n := c.Sets, c.SetSize
	var plans spiral.Plans
	var flat []int
	one := make([]uint64, 1)
	w := bufio.NewWriterSize(out, readSize)
	var line []byte
	for q := range problems {
		one[0] = key(q)
		if err := p.PlanTo(&plans, seed, step, one); err != nil {
			return err
		}
		flat = plans.AppendMembers(flat[:0])
		line = append(line[:0], `{"sets":[`...)
		for i := range k {
			if i > 0 {
				line = append(line, ',')
			}
			line = append(line, '[')
			for j, y := range flat[i*n : (i+1)*n] {
				if j > 0 {
					line = append(line, ',')
				}
				line = strconv.AppendInt(line, int64(y), 10)
			}
			line = append(line, ']')
		}
		line = append(line, "]}\n"...)
		if _, err := w.Write(line); err != nil {
			return fmt.Errorf("writing standard output: %w", err)
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("writing standard output: %w", err)
	}
	return nil
}
