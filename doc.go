// Package spiral computes one SPIRAL training step's bookkeeping ("SPIRAL:
// Learning to Search and Aggregate", arXiv 2606.23595): which sets of search
// traces each aggregation prompt reads, what credit every search trace and
// every aggregation output gets, and the constants that scale the update.
// The symbols are the paper's (docs/method.md#notation): N1 search traces
// per problem, K distinct sets of n of them, N2 aggregation outputs per set.
//
// A [Config] holds the step's shape; [Paper] is the paper's N1 = 8, n = 4,
// K = 4, N2 = 4. A trainer keeps a [Planner] and a [BatchCredit] and, for
// every step (see the package example):
//
//  1. [Planner.PlanTo] draws the [Plans] of a batch of problems: K
//     distinct sets per problem, uniformly without replacement or as a
//     balanced design (combin.Design), each listing its members in
//     presentation order (combin.Order). A problem's plan is a function of
//     (seed, step, the problem's key) alone, on every machine, whatever
//     the batch, its order or the goroutine that plans it.
//  2. The trainer samples the N1 search traces, builds aggregation prompt i
//     from the traces of set i, samples N2 outputs per prompt, and writes
//     their rewards (and, for the length gates, every output's length)
//     into the Batch.
//  3. [Config.CreditBatch] writes every search advantage A_search(y) and
//     aggregation advantage A_agg(i, j) into the [BatchCredit], whose
//     [BatchCredit.Spans] locate each problem
//     (docs/method.md#the-credit-signals, computed by package advantage),
//     with dynamic sampling, reward shaping and the length gates of Eq. 8
//     in the order of passes it documents. Outputs that could not be
//     scored, sets with a dropped output and bad problems are handled in
//     place: a bad problem is reported by problem, set and output, and the
//     others are credited.
//
// [Config.Credit] is the same for one problem in nested slices;
// [Config.CheckPlans] makes Plans of sets that come from outside, and
// [Config.CheckPlan] checks one plan.
//
// The expected search update is M times the gradient of the set objective
// (Proposition 3.1; docs/method.md#proposition-31). [Config.M] and
// [Config.MFloat] give M for the Config's family and design, and
// [Config.RoleWeights] the weights the update puts on the search and
// aggregation gradients under a loss reduction, with the multipliers that
// make it unbiased (docs/findings.md#aggregation-factor-and-role-weights).
//
// Outside data (sizes, plans, rewards, lengths) gets an *[InputError]
// naming the caller's field (Config.SetSize, Batch.Rewards, ...), the
// problem, set and position, and the value; no size makes a call hang or
// exhaust memory. Token accounting
// is in package spiral/budget, the schedule of recursive self-aggregation at
// inference time in package spiral/rsa.
package spiral
