//go:build !linux

package cpubench

// threadCPU is not available here: it returns false.
func threadCPU() (int64, bool) { return 0, false }
