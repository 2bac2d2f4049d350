// Package human writes numbers and text the way courier shows them to
// people and to the LLM: byte sizes, counts with their noun, thousands
// separators, and the first line of a long text.
package human

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Bytes writes a size to one decimal in the largest unit it reaches
// ("5.2 KB", "2.1 MB", "812 bytes").
func Bytes(n int64) string {
	for i, unit := range []string{"GB", "MB", "KB"} {
		if b := int64(1) << (30 - 10*i); n >= b {
			return fmt.Sprintf("%.1f %s", float64(n)/float64(b), unit)
		}
	}
	return Count(int(n), "byte", "")
}

// ExactBytes writes a limit in the largest unit that divides it, as
// courier.toml sizes are written ("20 MB", "512 KB", "1000 bytes").
func ExactBytes(n int64) string {
	for i, unit := range []string{"GB", "MB", "KB"} {
		if b := int64(1) << (30 - 10*i); n >= b && n%b == 0 {
			return fmt.Sprintf("%d %s", n/b, unit)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// Count writes n with its noun, in the plural unless n is 1: "1 line",
// "3 lines", "2 matches". plural may be "" for the regular -s/-es form.
func Count(n int, noun, plural string) string {
	if n == 1 {
		return "1 " + noun
	}
	if plural == "" {
		plural = noun + "s"
		if strings.HasSuffix(noun, "s") || strings.HasSuffix(noun, "sh") || strings.HasSuffix(noun, "ch") || strings.HasSuffix(noun, "x") {
			plural = noun + "es"
		}
	}
	return fmt.Sprintf("%d %s", n, plural)
}

// Thousands writes n with comma separators, as people read token counts.
func Thousands(n int) string {
	s := fmt.Sprint(max(n, -n))
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if n < 0 {
		s = "-" + s
	}
	return s
}

// FirstLine returns the first line of s, trimmed, cut to max characters
// (0: no cut), with " …" when anything was left out.
func FirstLine(s string, max int) string {
	s = strings.TrimSpace(s)
	i := strings.IndexByte(s, '\n')
	if i < 0 {
		return Cut(s, max)
	}
	s = strings.TrimSpace(s[:i])
	if cut := Cut(s, max); cut != s {
		return cut
	}
	return s + " …"
}

// Cut returns s cut to max characters (0: no cut), with " …" when anything
// was left out; a character is never split.
func Cut(s string, max int) string {
	if max <= 0 || len(s) <= max || utf8.RuneCountInString(s) <= max {
		return s
	}
	// A cut after a space would show two before the ellipsis.
	return strings.TrimRightFunc(string([]rune(s)[:max]), unicode.IsSpace) + " …"
}

// OneLine folds every run of white space in s, line breaks included, into
// one space, and cuts the result as Cut does.
func OneLine(s string, max int) string {
	return Cut(strings.Join(strings.Fields(s), " "), max)
}

// Lines counts the lines of a text, a last line without newline included.
func Lines(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// Tokens guesses how many tokens a chat model counts for text: about four
// characters a token for English prose and code.
func Tokens(text string) int { return (utf8.RuneCountInString(text) + 3) / 4 }

// Duration writes a duration without its zero tails: "2m", not "2m0s".
func Duration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
