package eval

// PassAtKLarge exposes the Stirling-series path of PassAtK to the tests,
// which check it against exact products at sizes the product path would
// otherwise take.
var PassAtKLarge = passAtKLarge

// ProductMax is the most factors PassAtK multiplies.
const ProductMax = productMax

// EmpiricalQuantile is the bootstrap's quantile rule.
var EmpiricalQuantile = empiricalQuantile
