package edit

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/courier-agent/courier/internal/human"
)

// Tuning of the "did you mean" search.
const (
	// lineWeight is what a whole equal line is worth against one shared
	// token: equal lines pin the place down far better than common words.
	lineWeight = 4
	// refineTop is how many of the best coarse windows are compared line by
	// line.
	refineTop = 16
	// showLines caps the excerpt in a not-found error.
	showLines = 20
	// quoteLen caps a line quoted inside a sentence.
	quoteLen = 100
)

// mostSimilar returns the first line (0-based) of the window of
// len(search) file lines most like the search text; false when none shares
// anything with it. A coarse pass slides the window once, counting shared
// lines and tokens, so a hostile reply costs O(file + search); only the
// best few windows are compared line by line.
func mostSimilar(file, search []string) (start int, ok bool) {
	n := min(len(search), len(file))
	if n == 0 {
		return 0, false
	}
	k := keyer{}
	fileKeys := k.keysOf(file)
	searchKeys := k.keysOf(search)
	need := make([]int, len(k))
	for _, ks := range searchKeys {
		for _, key := range ks {
			need[key.id] += key.weight
		}
	}
	w := slider{need: need, have: make([]int, len(need))}
	var scores []int // of the window ending at each line
	for i := range file {
		w.add(fileKeys[i], 1)
		if i >= n {
			w.add(fileKeys[i-n], -1)
		}
		if i >= n-1 {
			scores = append(scores, w.score)
		}
	}
	// The best windows are compared line by line; ties go to the higher
	// coarse score, then to the earlier window.
	order := make([]int, len(scores))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return scores[b] - scores[a] })
	if scores[order[0]] == 0 {
		return 0, false
	}
	best, bestFine := order[0], -1.0
	for _, c := range order[:min(refineTop, len(order))] {
		if scores[c] == 0 {
			break
		}
		fine := 0.0
		for j := 0; j < len(search) && c+j < len(file); j++ {
			fine += lineSimilarity(search[j], file[c+j])
		}
		if fine > bestFine {
			best, bestFine = c, fine
		}
	}
	return best, true
}

// key is a hashed whole line or token with its weight in the score.
type key struct{ id, weight int }

// keyer interns normalized lines and tokens as small integers; a line's
// key starts with a newline, which no token holds, so the two never meet.
type keyer map[string]int

func (k keyer) id(s string) int {
	id, ok := k[s]
	if !ok {
		id = len(k)
		k[s] = id
	}
	return id
}

// keysOf returns, per line, the keys of the whole line and of its tokens.
// Blank lines have none: they are everywhere and prove nothing.
func (k keyer) keysOf(lines []string) [][]key {
	out := make([][]key, len(lines))
	for i, l := range lines {
		norm := normalizeSpace(l)
		if norm == "" {
			continue
		}
		ks := []key{{k.id("\n" + norm), lineWeight}}
		for _, t := range tokens(norm) {
			ks = append(ks, key{k.id(t), 1})
		}
		out[i] = ks
	}
	return out
}

// slider keeps the score of a window: the weight of keys it shares with the
// search text, each key counted at most as often as the search has it.
type slider struct {
	need, have []int
	score      int
}

func (s *slider) add(keys []key, sign int) {
	for _, k := range keys {
		before := min(s.have[k.id], s.need[k.id])
		s.have[k.id] += sign * k.weight
		s.score += min(s.have[k.id], s.need[k.id]) - before
	}
}

// lineSimilarity is 1 for lines equal but for spacing, else the mean of
// the Dice coefficients of their tokens and of their character pairs: the
// tokens find the right kind of line, the character pairs tell a misspelt
// name ("mull" for "mul") from a different one ("add").
func lineSimilarity(a, b string) float64 {
	na, nb := normalizeSpace(a), normalizeSpace(b)
	if na == "" || nb == "" {
		return 0
	}
	if na == nb {
		return 1
	}
	return (dice(tokens(na), tokens(nb)) + dice(bigrams(na), bigrams(nb))) / 2
}

// dice is the Dice coefficient of two multisets.
func dice[T comparable](a, b []T) float64 {
	if len(a)+len(b) == 0 {
		return 0
	}
	count := map[T]int{}
	for _, x := range a {
		count[x]++
	}
	shared := 0
	for _, x := range b {
		if count[x] > 0 {
			count[x]--
			shared++
		}
	}
	return 2 * float64(shared) / float64(len(a)+len(b))
}

// bigrams are the pairs of adjacent characters of s.
func bigrams(s string) [][2]rune {
	r := []rune(s)
	var out [][2]rune
	for i := 0; i+1 < len(r); i++ {
		out = append(out, [2]rune{r[i], r[i+1]})
	}
	return out
}

// normalizeSpace trims a line and collapses inner runs of whitespace.
func normalizeSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// tokens splits a line into words of letters, digits and underscores.
func tokens(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// notFound builds the error for a search text that matches nowhere, showing
// the most similar part of the file.
func notFound(m *matcher, search, replace string, n int) error {
	e := &editError{Reason: fmt.Sprintf("search text of edit %d was not found in the file", n)}
	m.loadLines()
	sl := bodyLines(search)
	start, ok := mostSimilar(m.lines, sl)
	var b strings.Builder
	if !ok {
		b.WriteString("no part of the file resembles it; read the file again and copy the search text from it\n")
	} else {
		end := min(start+len(sl), len(m.lines))
		e.Lines = []int{start + 1}
		fmt.Fprintf(&b, "the most similar part of the file is %s:\n", span(start+1, end))
		b.WriteString(numberLines(m.lines[start:min(end, start+showLines)], start+1, end))
		if end-start > showLines {
			fmt.Fprintf(&b, "[... %s]\n", human.Count(end-start-showLines, "more line", ""))
		}
		b.WriteString(firstDifference(m.lines[start:end], sl, start+1))
		b.WriteString("copy the search text exactly from the file as it is now\n")
	}
	if isBlank(replace) {
		b.WriteString("(if this text was already removed, this edit is not needed)\n")
	}
	e.Detail = b.String()
	return e
}

// span writes "line 4" or "lines 4-9".
func span(first, last int) string {
	if first == last {
		return fmt.Sprintf("line %d", first)
	}
	return fmt.Sprintf("lines %d-%d", first, last)
}

// firstDifference points at the first window line that differs from the
// search text, which is usually the line the LLM misremembered.
func firstDifference(window, search []string, first int) string {
	for j := range min(len(window), len(search)) {
		if normalizeSpace(window[j]) != normalizeSpace(search[j]) {
			return fmt.Sprintf("the first difference is at line %d: the file has %s where your search text has %s\n",
				first+j, quote(window[j]), quote(search[j]))
		}
	}
	if len(search) > len(window) {
		return fmt.Sprintf("your search text has %d lines but the file only %d\n", len(search), len(window))
	}
	return "these lines differ from your search text only in whitespace (inside lines, or indentation that is not shifted evenly)\n"
}

// quote shows a line inside a sentence, trimmed and capped.
func quote(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > quoteLen {
		s = strings.ToValidUTF8(s[:quoteLen], "") + "..."
	}
	if s == "" {
		return "an empty line"
	}
	return "`" + s + "`"
}
