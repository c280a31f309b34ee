package main

import (
	"strings"
	"testing"
)

// TestSizeErrorsNameFlags checks that a size the library rejects is
// reported with the library's message and the mapping from flags to its
// symbols, so that "N = 0 < 1" can be traced to -traces.
func TestSizeErrorsNameFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"constants", "-traces", "0", "-size", "1", "-sets", "1"}, []string{"N1 = 0 < 1", "-traces is N"}},
		{[]string{"constants", "-traces", "8", "-size", "4", "-sets", "71"}, []string{"K = 71 > T = 70", "-sets is K"}},
		{[]string{"plan", "-traces", "8", "-size", "9", "-sets", "1", "-seed", "1", "-problems", "1"}, []string{"SetSize (n) = 9 > SearchTraces (N1) = 8", "-size is SetSize"}},
	} {
		_, stderr, code := runCmd(t, "", tc.args...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d", tc.args, code, exitUsage)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: stderr %q does not contain %q", tc.args, stderr, w)
			}
		}
	}
}
