package numeric

import (
	"testing"

	"spiral/internal/spiraltest"
)

// TestMain fixes rapid's seed (spiraltest.Seed) unless the run sets one, so
// that the property tests are deterministic.
func TestMain(m *testing.M) { spiraltest.Main(m) }
