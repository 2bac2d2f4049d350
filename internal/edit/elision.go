package edit

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// placeholderOpeners are how an elision line starts: a comment marker, an
// ellipsis, or a bracket around the note.
var placeholderOpeners = []string{"//", "#", "/*", "<!--", "{/*", "--", ";", "%", "...", "…", "[", "("}

// spacedOpeners must be followed by a space or dots to open a note: "--" and
// the rest start command-line flags and other code far more often than
// comments.
var spacedOpeners = map[string]bool{"--": true, ";": true, "%": true}

// elidedThing names what LLMs say they left out.
const elidedThing = `(code|file|function|functions|class|methods?|implementation|module|components?|body|logic|contents?|script|page|template|tests?|struct|config|document|imports|styles|css|html|jsx|markup|elements|cases|fields|props|routes|handlers|declarations|quer(y|ies)|rules|entries|items|options|settings|sections?|steps|dependencies|program)`

// elisionPhrase matches the words LLMs use for code they left out.
var elisionPhrase = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b(` +
		`(rest|remainder) of (the )?(\w+ )?` + elidedThing +
		`|existing (\w+ )?` + elidedThing +
		`|unchanged|remains? (the )?(same|unchanged)|stays? the same|same as (before|above|original|previous)|as before` +
		`|for brevity|(code|content|implementation|details|rest|body|methods|functions) (omitted|elided|not shown)` +
		`|(previous|original|other) (code|methods|functions|content|implementation|fields|cases|tests)` +
		`|keep (the )?(rest|existing)` +
		`)\b`)
})

// dotsOnly matches a comment whose text is only an ellipsis, like "// ...".
var dotsOnly = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(//+|#+|/\*|<!--|\{/\*|--|\[|\()\s*(\.{3,}|…)\s*(\*/\}?|-->|\]|\))?$`)
})

// HasElision returns the first line (1-based) of body that is a
// placeholder an LLM wrote instead of code: a comment or bracketed note
// that is only an ellipsis ("// ...") or says code was left out ("# ...
// rest of the code unchanged", "<!-- existing code -->"). A bare "..." is
// valid Python and prose, and not reported.
func HasElision(body string) (line int, text string, found bool) {
	for i, l := range splitLines(body) {
		if isElision(l) {
			return i + 1, strings.TrimRight(l, "\r"), true
		}
	}
	return 0, "", false
}

// isElision checks one line: it must start like a note and be only dots or
// a left-out phrase with little else.
func isElision(line string) bool {
	s := strings.TrimSpace(line)
	if !opensNote(s) {
		return false
	}
	if dotsOnly().MatchString(s) {
		return true
	}
	if !elisionPhrase().MatchString(s) {
		return false
	}
	// A placeholder says little besides the phrase; a real comment that
	// mentions "existing code" goes on to say something about it.
	extra := 0
	for _, w := range word().FindAllString(elisionPhrase().ReplaceAllString(s, " "), -1) {
		if !slices.Contains(fillerWords, strings.ToLower(w)) {
			extra++
		}
	}
	return extra <= maxExtraWords
}

// maxExtraWords is how many words a placeholder may have beyond its phrase
// and filler ("// ... existing code too": one).
const maxExtraWords = 1

// word matches a word of a comment.
var word = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[\p{L}\p{N}_']+`) })

// fillerWords do not count as saying something more.
var fillerWords = strings.Fields(`here there as is it the a an etc below above goes go and or of to in
	from same all everything else remains remain stays omitted unchanged before previous like`)

// opensNote reports whether a trimmed line starts like a placeholder note.
func opensNote(s string) bool {
	for _, o := range placeholderOpeners {
		if !strings.HasPrefix(s, o) {
			continue
		}
		rest := s[len(o):]
		return !spacedOpeners[o] || rest == "" || strings.HasPrefix(rest, " ") || strings.HasPrefix(rest, ".")
	}
	return false
}
