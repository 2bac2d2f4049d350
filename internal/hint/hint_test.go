package hint

import (
	"errors"
	"fmt"
	"testing"
)

func TestHint(t *testing.T) {
	base := errors.New("session not found")
	err := fmt.Errorf("status: %w", Wrap(base, "run 'courier sessions'"))
	if got := Of(err); got != "run 'courier sessions'" {
		t.Errorf("Of = %q", got)
	}
	if !errors.Is(err, base) {
		t.Error("the hinted error does not unwrap to its cause")
	}
	if err.Error() != "status: session not found" {
		t.Errorf("the hint leaked into the message: %q", err)
	}
	if Wrap(nil, "x") != nil {
		t.Error("Wrap(nil) is not nil")
	}
	if Of(base) != "" {
		t.Error("a plain error has a hint")
	}
}
