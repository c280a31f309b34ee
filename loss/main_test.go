package loss

import (
	"testing"

	"spiral/internal/spiraltest"
)

func TestMain(m *testing.M) { spiraltest.Main(m) }
