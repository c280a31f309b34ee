package spiral

import (
	"errors"
	"math"
	"testing"

	"spiral/internal/inputerr"
)

// TestInputErrorText: the message's forms (a field alone, an index, a problem, set
// and position), exact integers beyond 2^53, an element without a value,
// and In's renaming, which keeps everything else.
func TestInputErrorText(t *testing.T) {
	why := errors.New("why")
	for _, tc := range []struct {
		e    *InputError
		want string
	}{
		{inputerr.New("p", "", InputError{Field: "f", Problem: -1, Set: -1, Output: -1, Err: why}), "p: f: why"},
		{inputerr.New("", "", InputError{Field: "f", Problem: -1, Set: -1, Output: -1, Err: why}), "f: why"},
		{inputerr.New("p", "", InputError{Field: "f", Problem: -1, Set: -1, Output: 3, Value: math.NaN(), Err: why}), "p: f[3] = NaN: why"},
		{inputerr.New("p", "output", InputError{Field: "f", Problem: 2, Set: 1, Output: 3, Value: 0.5, Err: why}), "p: f: problem 2, set 1, output 3 = 0.5: why"},
		{inputerr.New("p", "", InputError{Field: "f", Problem: 2, Set: -1, Output: 3, Value: -8, Err: why}), "p: f: problem 2, position 3 = -8: why"},
		{inputerr.New("p", "member", InputError{Field: "f", Problem: -1, Set: 1, Output: 0, Value: 9, Err: why}), "p: f, set 1, member 0 = 9: why"},
		{inputerr.New("p", "", InputError{Field: "f", Problem: 4, Set: -1, Output: -1}), "p: f: problem 4"},
		{inputerr.Int("p", "", InputError{Field: "f", Problem: -1, Set: -1, Output: 1, Err: why}, int64(math.MaxInt64)), "p: f[1] = 9223372036854775807: why"},
		{inputerr.New("p", "", InputError{Field: "f", Problem: -1, Set: -1, Output: 1, Value: 1 << 62, Err: why}), "p: f[1] = 4611686018427387904: why"},
		{inputerr.Element("p", InputError{Field: "f", Problem: -1, Set: -1, Output: 2, Err: why}), "p: f[2]: why"},
		{inputerr.New("p", "", InputError{Field: "f[].N", Problem: -1, Set: -1, Output: 1, Value: 4, Err: why}), "p: f[1].N = 4: why"},
		{inputerr.Element("p", InputError{Field: "f[].N", Problem: -1, Set: -1, Output: 0, Err: why}), "p: f[0].N: why"},
		{inputerr.New("p", "", InputError{Field: "f", Problem: -1, Set: -1, Output: 1, Value: 1, Err: why}).In("q", "g"), "q: g[1] = 1: why"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
	e := inputerr.Int("p", "", InputError{Field: "f", Problem: -1, Set: -1, Output: 1, Err: why}, int64(math.MaxInt64))
	c := e.In("q", "g")
	c.Value = 2 // a caller's change of the value on the copy shows
	if got, want := c.Error(), "q: g[1] = 2: why"; got != want || e.Field != "f" {
		t.Errorf("changed copy: %q (original field %q), want %q", got, e.Field, want)
	}
	if !errors.Is(e, why) {
		t.Error("errors.Is does not reach Err")
	}
}

// TestBatchErrorText: the problems without their prefix, at most three, and
// errors.As and errors.Is through them.
func TestBatchErrorText(t *testing.T) {
	why := errors.New("why")
	var ps []*InputError
	for q := range 5 {
		ps = append(ps, inputerr.New("p", "", InputError{Field: "f", Problem: q, Set: -1, Output: -1, Err: why}))
	}
	b := inputerr.NewBatch("p", ps)
	if got, want := b.Error(), "p: 5 bad problems: f: problem 0: why; f: problem 1: why; f: problem 2: why; and 2 more"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	r := b.In("q", func(f string) string { return "g." + f })
	var e *InputError
	if !errors.As(r, &e) || e.Field != "g.f" || e.Error() != "q: g.f: problem 0: why" || !errors.Is(r, why) {
		t.Errorf("renamed: %v, first %v", r, e)
	}
}

// TestRename: inputerr.Rename renames every *InputError and *BatchError in
// an error, alone or joined at any depth, and leaves any other error as it
// is.
func TestRename(t *testing.T) {
	why := errors.New("why")
	field := func(f string) string { return "out." + f }
	one := inputerr.New("in", "", InputError{Field: "A", Problem: -1, Set: -1, Output: 2, Value: 3, Err: why})
	batch := inputerr.NewBatch("in", []*InputError{
		{Field: "B", Problem: 1, Set: -1, Output: -1, Value: 4, Err: why},
	})
	other := errors.New("other")
	got := inputerr.Rename(errors.Join(one, errors.Join(batch, other)), "up", field)
	want := "up: out.A[2] = 3: why\nup: 1 bad problem: out.B: problem 1: why\nother"
	if got.Error() != want {
		t.Errorf("got %q, want %q", got.Error(), want)
	}
	var e *InputError
	if !errors.As(got, &e) || e.Field != "out.A" || e.Output != 2 || !errors.Is(e, why) {
		t.Errorf("errors.As: %+v", e)
	}
	if inputerr.Rename(other, "up", field) != other {
		t.Error("another error was not returned as it is")
	}
	if inputerr.Rename(nil, "up", field) != nil {
		t.Error("nil was not returned as nil")
	}
}
