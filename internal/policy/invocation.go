package policy

import (
	"path"
	"strings"
)

// Invocation is one program a command would start.
type Invocation struct {
	// Name is as written after quote removal ("sudo" for `"sud""o"`); a
	// computed one stays as written ("$CMD").
	Name    string
	Dynamic bool // the program is only known at run time
	// Function is set when Name is a function the command defines; rules
	// still apply to it by name.
	Function bool

	base  string // the base name rules match, "sudo" for /usr/bin/sudo
	path  string // the cleaned path when the name is literal
	words []word
	// notes are what the checks noticed about the arguments; the person's
	// own rule for the program, when one matches, decides instead.
	notes []finding
}

func (inv Invocation) source() string { return wordsSource(inv.words) }

func (a *analyzer) invocation(words []word) Invocation {
	inv := Invocation{Name: words[0].shown(), words: words}
	base, ok := programBase(words[0])
	inv.Dynamic = !ok
	inv.base = base
	if ok && !words[0].computed() {
		inv.path = path.Clean(words[0].value)
		inv.Function = a.funcs[words[0].value]
	}
	return inv
}

// programBase returns the base name of the program a word names: known
// for literal words, and for paths like "$HOME"/bin/tool whose computed
// part is quoted and comes before the last "/".
func programBase(w word) (string, bool) {
	if !w.computed() {
		return path.Base(w.value), true
	}
	if w.glob || w.split {
		return "", false
	}
	i := strings.LastIndexByte(w.tail, '/')
	if i < 0 || i == len(w.tail)-1 {
		return "", false
	}
	return w.tail[i+1:], true
}

// wordsSource shows words as written, as the reasons quote them.
func wordsSource(words []word) string {
	parts := make([]string, 0, len(words))
	for _, w := range words {
		if !w.hidden {
			parts = append(parts, w.src)
		}
	}
	return strings.Join(parts, " ")
}
