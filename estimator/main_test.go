package estimator

import (
	"flag"
	"os"
	"strconv"
	"testing"

	"pgregory.net/rapid"
)

// rapidChecksSet records whether the run sets -rapid.checks itself.
var rapidChecksSet bool

// TestMain fixes rapid's seed, so that the property tests are
// deterministic, unless the run sets one (-rapid.seed or RAPID_SEED).
func TestMain(m *testing.M) {
	flag.Parse()
	flag.Visit(func(f *flag.Flag) { rapidChecksSet = rapidChecksSet || f.Name == "rapid.checks" })
	if f := flag.Lookup("rapid.seed"); f != nil && f.Value.String() == "0" && os.Getenv("RAPID_SEED") == "" {
		if err := f.Value.Set("20260603"); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}

// long reports whether the long campaigns run (SPIRAL_LONG=1): the exact
// enumerations at the paper's configuration and the large Monte Carlo runs.
// Every test keeps a smaller default version that still catches a wrong
// constant.
func long() bool { return os.Getenv("SPIRAL_LONG") == "1" }

// checkProperty runs prop as rapid.Check does, with n test cases by default
// and 10n under SPIRAL_LONG=1, for properties whose cases enumerate
// exactly; a -rapid.checks flag on the command line overrides both.
func checkProperty(t *testing.T, n int, prop func(*rapid.T)) {
	t.Helper()
	if !rapidChecksSet {
		if long() {
			n *= 10
		}
		f := flag.Lookup("rapid.checks")
		old := f.Value.String()
		if err := f.Value.Set(strconv.Itoa(n)); err != nil {
			t.Fatal(err)
		}
		defer f.Value.Set(old)
	}
	rapid.Check(t, prop)
}
