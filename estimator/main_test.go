package estimator

import (
	"testing"

	"pgregory.net/rapid"

	"spiral/internal/spiraltest"
)

func TestMain(m *testing.M) { spiraltest.Main(m) }

// long reports whether the long campaigns run (SPIRAL_LONG=1): the exact
// enumerations at the paper's configuration and the large Monte Carlo runs.
// Every test keeps a smaller default version that still catches a wrong
// constant.
func long() bool { return spiraltest.Long() }

// checkProperty runs prop as rapid.Check does, with n test cases by default
// and 10n under SPIRAL_LONG=1, for properties whose cases enumerate
// exactly; a -rapid.checks flag on the command line overrides both.
func checkProperty(t *testing.T, n int, prop func(*rapid.T)) {
	t.Helper()
	spiraltest.Check(t, n, 10*n, prop)
}
