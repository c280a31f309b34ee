package eval_test

import (
	"flag"
	"os"
	"testing"
)

// TestMain fixes rapid's seed, so that the property tests draw the same
// cases on every run; -rapid.seed or RAPID_SEED chooses another.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("rapid.seed"); f != nil && f.Value.String() == "0" && os.Getenv("RAPID_SEED") == "" {
		if err := f.Value.Set("20260603"); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}

// long reports whether the long checks run: SPIRAL_LONG=1.
func long() bool { return os.Getenv("SPIRAL_LONG") == "1" }
