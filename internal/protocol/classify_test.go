package protocol

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// classify reads most tag lines through shortcuts (classifyName,
// classifyPlain, classifyJunk) that skip the general reading's cleaned
// copy; each must say exactly what the general reading says, or decline.
// These lines are built from the pieces that tell them apart: names in
// either case, invisible characters and odd spaces inside and around
// the tag, list markers, attributes, text after the ']'.
var classifyPieces = []string{
	"", " ", "\t", "\u200b", "\u200d", "\ufeff", "\u2060", "\u00a0", "\u3000", "\u2000", "\u2028",
	"-", "* ", "1.", "[", "[", "[", "]", "]", "]", "/", "/]", "[/",
	"RUN_COMMAND", "run_command", "DONE", "NOTE", "note", "x", "CREATE_FILE", "Message",
	`path="a"`, ` path="a"`, "=", `"`, "\r", "é", "\xff", "(", "_", "a b", ":",
}

func checkClassifyAgrees(t *testing.T, line string) {
	t.Helper()
	var up upperNames
	for _, full := range []bool{false, true} {
		var got, want tagLine
		got.classify(line, full, &up)
		want.classifyGeneral(line, full, &up)
		if len(got.attrs) == 0 {
			got.attrs = nil
		}
		if len(want.attrs) == 0 {
			want.attrs = nil
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("classify(%q, full=%v) = %+v\nthe general reading says %+v", line, full, got, want)
		}
	}
}

func TestClassifyShortcutsAgree(t *testing.T) {
	for _, line := range []string{
		"\ufeff[RUN_COMMAND\u200b]", "\u200b[NOTE]", "\u00a0- [x] done", "[/ RUN_COMMAND \u200b]",
		"[RUN\u200b_COMMAND]", "[RUN_COMMAND\u00a0]", "[/DONE]\u3000", "[\u200bDONE]", "- \u200b[done]",
	} {
		checkClassifyAgrees(t, line)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for range 300000 {
		b.Reset()
		for range 1 + rng.IntN(7) {
			b.WriteString(classifyPieces[rng.IntN(len(classifyPieces))])
		}
		checkClassifyAgrees(t, b.String())
	}
}

func FuzzClassifyShortcuts(f *testing.F) {
	for _, p := range classifyPieces {
		f.Add("[" + p + "RUN_COMMAND" + p + "]")
	}
	f.Fuzz(func(t *testing.T, line string) {
		if strings.IndexByte(line, '\n') >= 0 {
			return // classify sees one line at a time
		}
		checkClassifyAgrees(t, line)
	})
}
