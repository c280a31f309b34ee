package spiral

import (
	"spiral/advantage"
	"spiral/internal/inputerr"
)

// ErrTooCostly is the reason, on an *[InputError]'s Err, for arguments
// that are valid but whose exact answer would cost more than the function
// allows (errors.Is(err, ErrTooCostly) tells it). It is combin.ErrTooCostly
// and eval.ErrTooCostly: one value at every layer.
var ErrTooCostly = inputerr.ErrTooCostly

// InputError describes one bad entry of a caller's input: Field, the
// caller's own name for it (one of the Field constants below, or a Config
// field as "Config.<Field>"); Problem, Set and Output, its problem, set and
// position (-1 where they do not apply); Value, the bad value; and Err, the
// reason (advantage.ErrNotFinite or ErrTooLarge for a reward, a
// *combin.SetError for a set, a description otherwise). Its method In
// returns a copy renamed for a caller one layer up.
//
// It is the module's one error type for bad input: combin, lengthgate,
// advantage, loss and eval export it under the same name (each an alias,
// as [advantage.InputError] is), each naming its own fields, and this
// package renames theirs to its own. One errors.As target, *InputError,
// recovers an error of any of them; its Error prints
// "spiral: Batch.Rewards: problem 2, set 1, output 3 = NaN: reward is not
// finite", an integer value exactly.
type InputError = advantage.InputError

// BatchError lists every bad problem of a batch, each with its first
// *InputError, in problem order; it is [advantage.BatchError].
type BatchError = advantage.BatchError

// The fields an *InputError of this package names (InputError.Field), for
// a program that tells them apart; a Config's own fields are named
// "Config.<Field>".
const (
	FieldPlans              = "Batch.Plans"              // a problem's plan, or the Plans as a whole
	FieldRewards            = "Batch.Rewards"            // a reward, or len(Rewards)
	FieldRewardCounts       = "Batch.RewardCounts"       // a set's count of outputs
	FieldUnscorable         = "Batch.Unscorable"         // len(Unscorable)
	FieldSearchLengths      = "Batch.SearchLengths"      // a search trace's length
	FieldAggregationLengths = "Batch.AggregationLengths" // an aggregation output's length
	FieldMembers            = "members"                  // CheckPlans' argument
	FieldKeys               = "keys"                     // PlanTo's argument
	FieldPlanSets           = "Plan.Sets"                // CheckPlan's and Credit's plan
	FieldDst                = "dst"                      // a nil destination
	FieldBatch              = "Batch"                    // a batch of more outputs than loss.MaxRows
	FieldCredit             = "credit"                   // LossCoefficients' credit: nil, or of another Config
	FieldCreditSearch       = "credit.Search"            // an advantage of the credit, times its multiplier
	FieldCreditAggregation  = "credit.Aggregation"       // an advantage of the credit, times its multiplier
	FieldSearch             = "search"                   // AdvantageCoefficients' argument
	FieldAggregation        = "aggregation"              // AdvantageCoefficients' argument
	FieldUpdate             = "LossOptions.Update"       // an undefined update
	FieldReduction          = "LossOptions.Reduction"    // an undefined reduction
	FieldMissingRate        = "LossOptions.MissingRate"  // a missing rate outside [0, 1)
)
