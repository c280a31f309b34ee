package eval

import "testing"

// TestPassAtKProblemAllocs: the argument check of pass@k allocates nothing
// on valid arguments, as its documentation says.
func TestPassAtKProblemAllocs(t *testing.T) {
	if a := testing.AllocsPerRun(50, func() {
		if arg, _ := passAtKProblem(256, 17, 8); arg != "" {
			t.Fatal(arg)
		}
	}); a != 0 {
		t.Errorf("passAtKProblem: %v allocations on valid arguments, want 0", a)
	}
}
