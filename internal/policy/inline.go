package policy

import "strings"

// inlineNotes asks about inline interpreter code (python3 -c, perl -e, a
// here-document fed to one) that deletes files or starts programs.
func inlineNotes(name string, spec interpSpec, words []word, in stdin) []finding {
	family := strings.TrimRight(name, "0123456789.")
	src := interpreterSource(spec, words)
	var code word
	switch {
	case src.inline != nil:
		code = *src.inline
	case (src.script >= len(words) || isStdinPath(words[src.script].value)) && in.kind == stdinText:
		code = *in.text
	default:
		return nil
	}
	if code.computed() && src.inline != nil && src.computed {
		return nil // computedCode already asks
	}
	if m := spec.runs.FindString(code.value); m != "" {
		return []finding{runsCode(family, words, "its inline "+family+" code may delete files or start programs ("+m+"), which courier cannot follow")}
	}
	return nil
}
