package benchcmp

import (
	"os/exec"
	"testing"
)

// A small program started after the bench held much must not be charged
// with the bench's peak: the resident memory row would then measure the
// bench, not courier.
func TestPeakRSSIsTheChildsOwn(t *testing.T) {
	held := make([]byte, 96<<20)
	for i := range held {
		held[i] = 1 // resident, not only reserved
	}
	held = nil
	if err := forgetOwnPeak(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	rss, err := peakRSS(cmd.ProcessState)
	if err != nil {
		t.Fatal(err)
	}
	if rss > 48<<20 {
		t.Fatalf("'true' was charged a peak of %d MB, the 96 MB this test held and gave back", rss>>20)
	}
}
