package main

import (
	"strings"
	"testing"
)

// TestSizeErrorsNameFlags checks that a size the library rejects is
// reported in the flags' names, with the paper's symbol beside each.
func TestSizeErrorsNameFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"constants", "-traces", "0", "-size", "1", "-sets", "1"}, []string{"-traces: 0 < 1"}},
		{[]string{"constants", "-traces", "8", "-size", "4", "-sets", "71"}, []string{"-sets: 71 > C(8, 4) = 70"}},
		{[]string{"plan", "-traces", "8", "-size", "9", "-sets", "1", "-seed", "1", "-problems", "1"}, []string{"-size: 9 > N1 = 8"}},
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
