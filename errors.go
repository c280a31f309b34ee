package spiral

import "spiral/advantage"

// InputError describes one bad entry of a caller's input, naming the
// caller's own field, the problem, set and position, and the value; it is
// [advantage.InputError], the one error type every layer of the module
// renames for its caller. Recover it with errors.As. Its Field is one of
// the Field constants below, or a Config field as "Config.<Field>".
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
