package main

import (
	"testing"

	"spiral/internal/spiraltest"
)

// TestMain fixes rapid's default seed, as in every package of the module.
func TestMain(m *testing.M) { spiraltest.Main(m) }
