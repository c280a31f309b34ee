package combin

import (
	"fmt"
	"slices"

	"spiral/internal/inputerr"
)

// A SetErrorReason says what is wrong with a set (see [SetError]).
type SetErrorReason int

const (
	// Empty: set Set (the InputError's) has a size, the InputError's
	// Value, below 1.
	Empty SetErrorReason = iota + 1
	// Length: the sizes do not match len(members). Either set Set, of size
	// Value, runs past the end of members (it would start at member Other),
	// or the member at Output (with value Value) and those after it are in
	// no set: the sets end before it (Other is -1).
	Length
	// OutOfRange: member Output of set Set is Value, outside [0, Traces).
	OutOfRange
	// Repeated: member Output of set Set is Value, which is also its
	// member Other < Output.
	Repeated
	// Duplicate: set Set is identical to the earlier set Other: the same
	// members as a set for subsets, the same sequence for tuples.
	Duplicate
)

// String returns the reason's name, such as "duplicate".
func (r SetErrorReason) String() string {
	switch r {
	case Empty:
		return "empty"
	case Length:
		return "length"
	case OutOfRange:
		return "out of range"
	case Repeated:
		return "repeated"
	case Duplicate:
		return "duplicate"
	}
	return fmt.Sprintf("SetErrorReason(%d)", int(r))
}

// A SetError is the reason a set is bad, on the Err of the *[InputError]
// that [CheckSets] returns: the InputError names the set (Set, numbered
// from 0), the member (Output, numbered from 0 within the set) and the
// offending trace index or size (Value), as the Reason's documentation
// says; the SetError adds what the reason relates them to. Its message
// states the reason only.
type SetError struct {
	Reason SetErrorReason
	Other  int // the earlier member (Repeated), the earlier set (Duplicate), the set's start (Length), or -1
	Traces int // the bound: members lie in [0, Traces)
}

func (e *SetError) Error() string {
	switch e.Reason {
	case Empty:
		return "empty set"
	case Length:
		if e.Other < 0 {
			return "in no set (the sets end before it)"
		}
		return fmt.Sprintf("the set, from member %d, runs past the end of members", e.Other)
	case OutOfRange:
		return fmt.Sprintf("out of range [0, %d)", e.Traces)
	case Repeated:
		return fmt.Sprintf("repeats member %d of the set", e.Other)
	case Duplicate:
		return fmt.Sprintf("identical to set %d", e.Other)
	}
	return e.Reason.String()
}

// InputError describes one bad entry of a caller's input: the field or
// argument (one of the Field constants: "members", "sizes", "traces", a
// family's "N1", "n", "K", Rank's "g", Unrank's "r", a Design or Order's
// text, the "Family" a method is called on), the set and the member (Set
// and Output, -1 where they do not apply), the value and why (Err, a
// *[SetError] for a bad set, [ErrTooCostly] for an exact answer beyond its
// cost bound). It is the module's one input error type, also
// spiral.InputError and advantage.InputError; recover it with errors.As.
type InputError = inputerr.InputError

// The fields an *InputError of this package names.
const (
	FieldMembers = "members" // a member of a set, or len(members)
	FieldSizes   = "sizes"   // a set's size
	FieldTraces  = "traces"  // N1, the trace count
	FieldN1      = "N1"      // a family's trace count (Subsets, Tuples)
	FieldN       = "n"       // a family's set size
	FieldK       = "K"       // a number of sets to draw or count
	FieldFamily  = "Family"  // the Family a method is called on: zero, or too large for an exact answer
	FieldSet     = "g"       // the set argument of Rank and Rank64
	FieldRank    = "r"       // the rank argument of Unrank, Unrank64 and UnrankTo
	FieldDesign  = "Design"  // a Design value (Constants, MarshalText, UnmarshalText)
	FieldOrder   = "Order"   // an Order value (MarshalText, UnmarshalText)
	FieldRand    = "rnd"     // the random generator argument, nil
)

// ErrTooCostly is the reason, on an *[InputError]'s Err, for arguments
// that are valid but whose exact answer would cost more memory or time than
// the function allows (errors.Is(err, ErrTooCostly) tells it); the error's
// text names the bound. It is eval.ErrTooCostly too.
var ErrTooCostly = inputerr.ErrTooCostly

// costError returns the *InputError about field, whose value is the
// integer v, with a reason that is ErrTooCostly.
func costError(field string, v int, format string, args ...any) *InputError {
	return inputerr.Int("combin", "", InputError{Field: field, Problem: -1, Set: -1, Output: -1, Err: inputerr.TooCostly(fmt.Sprintf(format, args...))}, v)
}

// familyError returns the *InputError about the Family a method is
// called on.
func familyError(err error) *InputError {
	return inputerr.New("combin", "", InputError{Field: FieldFamily, Problem: -1, Set: -1, Output: -1, Err: err})
}

// argError returns the *InputError about argument field, whose value is
// the integer v.
func argError(field string, v int, format string, args ...any) *InputError {
	return inputerr.Int("combin", "", InputError{Field: field, Problem: -1, Set: -1, Output: -1, Err: fmt.Errorf(format, args...)}, v)
}

// setError returns the *InputError about field (FieldMembers or
// FieldSizes), set i and member p (-1 where they do not apply), with the
// trace index or size v, whose reason is se.
func setError(field string, i, p, v int, se SetError) *InputError {
	return inputerr.Int("combin", "member", InputError{Field: field, Problem: -1, Set: i, Output: p, Err: &se}, v)
}

// stackScratch is the number of int32 of scratch that CheckSets keeps on the
// stack; larger inputs allocate.
const stackScratch = 256

// CheckSets checks a list of sets of trace indices laid out flat: set i
// holds members[o_i : o_i+sizes[i]], with o_0 = 0 and o_{i+1} = o_i +
// sizes[i]. It returns nil when every size is at least 1, the sizes add up
// to len(members), every index lies in [0, traces), no index appears twice
// in one set, and no two sets are identical: the same members in any order
// when ordered is false (subsets), the same sequence when ordered is true
// (tuples). Otherwise it returns an *[InputError] about [FieldMembers] or
// [FieldSizes] for the first problem, sets in order and, within a set,
// range before repetition: its Set, Output and Value give the set, the
// member and the trace index or size, and its Err is a *[SetError] saying
// why. An empty list (no sizes and no members) is valid. The error is
// about [FieldTraces] if traces is not in [1, MaxSize], or about
// FieldMembers if len(members) > MaxSize.
//
// CheckSets takes O(m log s) time for m = len(members) and sets of size at
// most s, by sorting a copy of each set and hashing the sets. It does not
// allocate when m + 5K <= 256 for K = len(sizes) (such as 16 sets of 8);
// otherwise it allocates one scratch slice of at most 4m + 20K bytes.
func CheckSets(traces int, ordered bool, sizes []int, members []int) error {
	if err := checkSetArgs(traces, len(members)); err != nil {
		return err
	}
	return checkSets(traces, ordered, sizes, 0, members, nil)
}

// CheckSets is [CheckSets] for sets of f: it checks len(members)/n sets of
// n = f.SetSize() members each, against N1 = f.Traces() traces and the
// identity of f's kind (sets for Subsets, sequences for Tuples). A length
// that is not a multiple of n is an *InputError at the first member in no
// set, wrapping a *SetError with Reason Length. Subsets need not be sorted.
func (f Family) CheckSets(members []int) error {
	if err := f.check(); err != nil {
		return err
	}
	if err := checkSetArgs(f.size, len(members)); err != nil {
		return err
	}
	return checkSets(f.size, f.ordered, nil, f.n, members, nil)
}

// A SetChecker checks sets as [Family.CheckSets] does, keeping the scratch
// memory of large inputs from call to call: once it has grown to the
// largest input it checked, it allocates nothing but the error it returns.
// The zero value is ready to use; a nil *SetChecker checks as
// Family.CheckSets does, allocating the scratch of a large input every
// call. A SetChecker must not be used by two goroutines at the same time.
type SetChecker struct {
	scratch []int32
}

// Check is f.CheckSets(members), with c's scratch memory.
func (c *SetChecker) Check(f Family, members []int) error {
	if err := f.check(); err != nil {
		return err
	}
	if err := checkSetArgs(f.size, len(members)); err != nil {
		return err
	}
	if c == nil {
		return checkSets(f.size, f.ordered, nil, f.n, members, nil)
	}
	return checkSets(f.size, f.ordered, nil, f.n, members, &c.scratch)
}

func checkSetArgs(traces, m int) error {
	if traces < 1 || traces > MaxSize {
		return inputerr.Int("combin", "", InputError{Field: FieldTraces, Problem: -1, Set: -1, Output: -1,
			Err: fmt.Errorf("%d out of range [1, %d]", traces, MaxSize)}, traces)
	}
	if m > MaxSize {
		return inputerr.Int("combin", "", InputError{Field: FieldMembers, Problem: -1, Set: -1, Output: -1,
			Err: fmt.Errorf("len = %d > %d, the most members checked", m, MaxSize)}, m)
	}
	return nil
}

// checkSets is CheckSets for sizes when n = 0, or, when n >= 1, for sets of
// n members each (sizes unused). Scratch beyond the stack's comes from
// *scratch, grown when too short, or is allocated when scratch is nil.
func checkSets(traces int, ordered bool, sizes []int, n int, members []int, scratch *[]int32) error {
	m := len(members)
	ragged := n == 0
	K := len(sizes)
	if !ragged {
		K = m / n
	}
	// Scratch, all int32 since every value is below MaxSize: a sorted copy
	// of each set, the offsets of ragged sets, and an open-addressing hash
	// table of set numbers + 1 with at least 2K slots.
	// Every set has a member, so set i >= m fails the length check before
	// it is stored: the table and the offsets need at most min(K, m) entries.
	stored := min(K, m)
	slots := 1
	for slots < 2*stored {
		slots <<= 1
	}
	need := m + slots
	if ragged {
		need += stored
	}
	var stack [stackScratch]int32
	var buf []int32
	switch {
	case need <= len(stack):
		buf = stack[:need]
		clear(buf[m:])
	case scratch != nil:
		if cap(*scratch) < need {
			*scratch = make([]int32, need)
		}
		buf = (*scratch)[:need]
		clear(buf[m:])
	default:
		buf = make([]int32, need)
	}
	sorted, table := buf[:m], buf[m:m+slots]
	var offsets []int32
	if ragged {
		offsets = buf[m+slots:]
	}
	mask := slots - 1
	o := 0
	for i := range K {
		size := n
		if ragged {
			size = sizes[i]
			if size < 1 {
				return setError(FieldSizes, i, -1, size, SetError{Reason: Empty, Other: -1, Traces: traces})
			}
			if size > m-o {
				return setError(FieldSizes, i, -1, size, SetError{Reason: Length, Other: o, Traces: traces})
			}
			offsets[i] = int32(o)
		}
		set := members[o : o+size]
		s := sorted[o : o+size]
		for p, v := range set {
			if uint(v) >= uint(traces) {
				return setError(FieldMembers, i, p, v, SetError{Reason: OutOfRange, Other: -1, Traces: traces})
			}
			s[p] = int32(v)
		}
		slices.Sort(s)
		for j := 1; j < size; j++ {
			if s[j] == s[j-1] {
				return repeatedError(i, set, traces)
			}
		}
		var h uint64
		if ordered {
			h = hashSet(set)
		} else {
			h = hashSet(s)
		}
		for slot := int(h) & mask; ; slot = (slot + 1) & mask {
			j := int(table[slot]) - 1
			if j < 0 {
				table[slot] = int32(i + 1)
				break
			}
			jo, js := j*n, n
			if ragged {
				jo, js = int(offsets[j]), sizes[j]
			}
			if js != size {
				continue
			}
			if (ordered && slices.Equal(members[jo:jo+js], set)) || (!ordered && slices.Equal(sorted[jo:jo+js], s)) {
				return setError(FieldMembers, i, -1, 0, SetError{Reason: Duplicate, Other: j, Traces: traces})
			}
		}
		o += size
	}
	if o != m {
		return setError(FieldMembers, -1, o, members[o], SetError{Reason: Length, Other: -1, Traces: traces})
	}
	return nil
}

// repeatedError returns the error for the first member of set (set number
// i) that repeats an earlier member. It is only called when there is one.
func repeatedError(i int, set []int, traces int) error {
	first := make(map[int]int, len(set))
	for p, v := range set {
		if q, ok := first[v]; ok {
			return setError(FieldMembers, i, p, v, SetError{Reason: Repeated, Other: q, Traces: traces})
		}
		first[v] = p
	}
	panic("combin: repeatedError: no repeated member (unreachable)")
}
