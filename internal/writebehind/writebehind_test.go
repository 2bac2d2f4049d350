package writebehind

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestWriterKeepsOrder(t *testing.T) {
	var out bytes.Buffer
	var want strings.Builder
	w := New(&out, 7, 2)
	for i := range 200 {
		s := strings.Repeat(string(rune('a'+i%26)), i%23)
		want.WriteString(s)
		if i%2 == 0 {
			w.WriteString(s)
		} else {
			w.Write([]byte(s))
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if out.String() != want.String() {
		t.Errorf("wrote %q, want %q", out.String(), want.String())
	}
}

// failing fails its second write.
type failing struct{ n int }

var errFull = errors.New("disk full")

func (f *failing) Write(p []byte) (int, error) {
	if f.n++; f.n == 2 {
		return 0, errFull
	}
	return len(p), nil
}

func TestWriterReportsFirstError(t *testing.T) {
	f := &failing{}
	w := New(f, 4, 2)
	w.WriteString(strings.Repeat("x", 100))
	if err := w.Close(); !errors.Is(err, errFull) {
		t.Errorf("Close = %v, want %v", err, errFull)
	}
	if f.n != 2 {
		t.Errorf("%d writes, want none after the failure", f.n)
	}
}
