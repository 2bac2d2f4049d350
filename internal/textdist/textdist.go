// Package textdist measures how far apart two short strings are, for the
// "did you mean" suggestions courier makes about misspelt names.
package textdist

// Levenshtein returns the number of single-byte insertions, deletions and
// substitutions that turn a into b. Names are ASCII, so bytes are letters.
func Levenshtein(a, b string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Nearest returns the known name closest to word within a slip of about
// one character in three (at least one), the first of equals winning; ""
// when none is that close.
func Nearest(word string, known []string) string {
	best, bestDist := "", 0
	for _, k := range known {
		d := Levenshtein(word, k)
		if d <= max(1, len(k)/3) && (best == "" || d < bestDist) {
			best, bestDist = k, d
		}
	}
	return best
}
