package spiral

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"spiral/loss"
)

// TestNilPlans: a nil *Plans holds no problem, and PlanTo and CheckPlans
// given one return an *InputError naming dst instead of panicking.
func TestNilPlans(t *testing.T) {
	var p *Plans
	if got := p.Problems(); got != 0 {
		t.Errorf("(*Plans)(nil).Problems() = %d, want 0", got)
	}
	c := Paper()
	var e *InputError
	if err := c.CheckPlans(nil, make([]int, c.PlanSize())); !errors.As(err, &e) || e.Field != "dst" {
		t.Errorf("CheckPlans(nil, ...) = %v, want an *InputError about dst", err)
	}
	pl, err := c.NewPlanner()
	if err != nil {
		t.Fatal(err)
	}
	if err := pl.PlanTo(nil, 1, 0, []uint64{0}); !errors.As(err, &e) || e.Field != "dst" {
		t.Errorf("PlanTo(nil, ...) = %v, want an *InputError about dst", err)
	}
}

// TestEmptyPlansMessage: the empty Plans a refused CheckPlans leaves are
// reported as holding no plans, not as made for N1 = 0, n = 0, K = 0.
func TestEmptyPlansMessage(t *testing.T) {
	c := Paper()
	var plans Plans
	if err := c.CheckPlans(&plans, make([]int, 3)); err == nil {
		t.Fatal("CheckPlans of 3 members: no error")
	}
	var dst BatchCredit
	err := c.CreditBatch(&dst, Batch{Plans: &plans})
	var e *InputError
	if !errors.As(err, &e) || e.Field != "Batch.Plans" || strings.Contains(err.Error(), "N1 = 0") || !strings.Contains(err.Error(), "holds no plans") {
		t.Errorf("CreditBatch with empty Plans: %v", err)
	}
}

// TestIntegersPrintAsIntegers: an integer at fault prints in decimal
// digits, exactly, at every layer: a member of math.MaxInt, a length of
// MaxLength+1.
func TestIntegersPrintAsIntegers(t *testing.T) {
	c := Paper()
	members := make([]int, c.PlanSize())
	for i := range members {
		members[i] = i % c.SearchTraces
	}
	members[1] = math.MaxInt
	var plans Plans
	err := c.CheckPlans(&plans, members)
	if err == nil || !strings.Contains(err.Error(), strconv.Itoa(math.MaxInt)) || strings.Contains(err.Error(), "e+") {
		t.Errorf("member math.MaxInt: %v", err)
	}
	_, err = loss.Coefficients(make([]float64, 1), loss.Rows{Update: []float64{1}, Lengths: []int{loss.MaxLength + 1}}, loss.Sum)
	if err == nil || !strings.Contains(err.Error(), "536870913") || strings.Contains(err.Error(), "e+") {
		t.Errorf("length MaxLength+1: %v", err)
	}
}
