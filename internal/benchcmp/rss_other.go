//go:build !linux

package benchcmp

import (
	"errors"
	"os"
)

// peakRSS is measured on Linux only, where the benchmarks run.
func peakRSS(*os.ProcessState) (int64, error) {
	return 0, errors.New("peak memory is measured on linux only")
}

func forgetOwnPeak() error { return nil }
