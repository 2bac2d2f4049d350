package policy

import (
	"path"
	"strings"
)

// Invocation is one program a command would start.
type Invocation struct {
	// Name is the program as written, after quote removal: "sudo" for
	// `"sud""o"`, "/usr/bin/sudo" for a path. A computed name is shown as
	// written, like "$CMD".
	Name string
	// Args are the arguments after quote removal; computed ones are shown
	// as written, like "$f" or "*.go".
	Args []string
	// Dynamic is set when the program itself is only known at run time.
	Dynamic bool
	// Function is set when Name is a shell function the command defines.
	// Rules still apply to it by name, so a function cannot hide a denied
	// program's name.
	Function bool

	base  string // the base name rules match, "sudo" for /usr/bin/sudo
	path  string // the cleaned path when the name is literal
	words []word // the program and its arguments, for rule matching
	// notes are what the built-in checks noticed about this program's
	// arguments (a sed e command, a git write); the person's own rule for
	// the program, when one matches, decides instead.
	notes []finding
}

// source returns the program and its arguments as written, for reasons.
func (inv Invocation) source() string {
	return wordsSource(inv.words)
}

// invocation builds the Invocation for a simple command's words.
func (a *analyzer) invocation(words []word) Invocation {
	inv := Invocation{Name: words[0].shown(), words: words}
	for _, w := range words[1:] {
		if !w.hidden {
			inv.Args = append(inv.Args, w.shown())
		}
	}
	base, ok := programBase(words[0])
	inv.Dynamic = !ok
	inv.base = base
	if ok && !words[0].computed() {
		inv.path = path.Clean(words[0].value)
		inv.Function = a.funcs[words[0].value]
	}
	return inv
}

// programBase returns the base name of the program a word names. It is
// known for literal words, and for paths like "$HOME"/bin/tool whose
// computed part is quoted (so it cannot split into several words) and
// comes before the last "/".
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
