//go:build race

package spiral

// raceEnabled reports a build with the race detector, which allocates on
// its own: allocation counts are not checked then.
const raceEnabled = true
