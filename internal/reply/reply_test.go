package reply

import (
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/session"
)

// A reply's hash names its text, however it was encoded, and is the same
// whether Decode copied the text or not.
func TestHashTextIsTheTextsHash(t *testing.T) {
	for _, raw := range []string{"", "[DONE]\nok\n[/DONE]\n", "a\r\nb\r\n", "\xef\xbb\xbfx\n", strings.Repeat("long line\r\n", 20000)} {
		text, err := Decode([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := hashText([]byte(raw), text), session.Hash([]byte(text)); got != want {
			t.Errorf("hash of %.20q = %s, want %s", raw, got, want)
		}
	}
}
