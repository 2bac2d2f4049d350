package policy

import (
	"regexp"
	"strings"

	"github.com/courier-agent/courier/internal/human"
)

var awks = map[string]bool{"awk": true, "gawk": true, "mawk": true, "nawk": true, "busybox-awk": true}

// awkRuns finds system(), pipes, coprocesses and extensions in awk code.
var awkRuns = regexp.MustCompile(`\bsystem\s*\(|\|\s*getline|\|&|\bprintf?\b[^;{}\n]*[^|]\|[^|]|@load\b`)

// awkNotes asks about awk programs that run commands (see scriptNotes).
func awkNotes(words []word) []finding {
	var progs []word
	fromFile, sandboxed := false, false
	for _, o := range getopt(words, optSpec{values: "fEileFvW", long: []string{"--file", "--exec", "--include", "--load", "--source", "--field-separator", "--assign"}}) {
		at := o.at
		if o.name == "--" {
			at++
		}
		if o.name == "" || o.name == "--" || words[at].computed() && len(progs) == 0 && !fromFile {
			if len(progs) == 0 && !fromFile && at < len(words) {
				progs = append(progs, words[at])
			}
			break
		}
		switch o.name {
		case "-f", "-E", "-i", "-l", "--file", "--exec", "--include", "--load":
			fromFile = true
		case "-e", "--source":
			progs = append(progs, o.value)
		case "-S", "--sandbox":
			sandboxed = true
		}
	}
	return scriptNotes("awk", "an awk program", words, progs, fromFile, sandboxed, func(p string) string {
		if m := awkRuns.FindString(awkCode(p)); m != "" {
			return "runs commands (" + human.OneLine(m, maxSubject) + ")"
		}
		return ""
	})
}

// scriptNotes asks about a program's scripts (kind: "an awk program")
// that runs says run commands, or that cannot be read (from a file,
// computed), unless its --sandbox forbids running commands.
func scriptNotes(prog, kind string, words, scripts []word, fromFile, sandboxed bool, runs func(string) string) []finding {
	its := "its " + kind[strings.IndexByte(kind, ' ')+1:]
	switch {
	case sandboxed:
		return nil
	case fromFile:
		return []finding{runsCode(prog, words, "runs "+kind+" from a file, which courier cannot check")}
	}
	for _, s := range scripts {
		if s.computed() {
			return []finding{runsCode(prog, words, its+" is only known at run time")}
		}
		if what := runs(s.value); what != "" {
			return []finding{runsCode(prog, words, its+" "+what)}
		}
	}
	return nil
}

// awkCode empties an awk program's strings and drops its comments, so
// that printf "%4d | %s\n" is no pipe. A program with a "/" is read as it
// is: a regular expression may hold a quote and so turn code into string.
func awkCode(prog string) string {
	var b strings.Builder
	for i := 0; i < len(prog); i++ {
		switch c := prog[i]; c {
		case '"':
			// To the closing quote or the line's end; a backslash
			// escapes the next character, a newline too.
			for i++; i < len(prog) && prog[i] != '"' && prog[i] != '\n'; i++ {
				if prog[i] == '\\' {
					i++
				}
			}
			b.WriteString(`""`)
		case '#':
			for i+1 < len(prog) && prog[i+1] != '\n' {
				i++
			}
		case '/':
			return prog
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// sedNotes asks about sed scripts that run commands or write files they
// name (see scriptNotes).
func sedNotes(words []word) []finding {
	var scripts, operands []word
	fromFile, sandboxed := false, false
	last := 0 // the computed word last read as an operand
	// -i takes the rest of its cluster as a suffix.
options:
	for _, o := range getopt(words, optSpec{values: "efl", optional: "i", long: []string{"--expression", "--file", "--line-length"}}) {
		if o.name == "" || words[o.at].computed() && o.at != last {
			operands = append(operands, words[o.at])
			last = o.at
		}
		if o.name == "" || words[o.at].computed() {
			continue
		}
		switch o.name {
		case "--":
			operands = append(operands, words[o.at+1:]...)
			break options
		case "-e", "--expression":
			scripts = append(scripts, o.value)
		case "-f", "--file":
			fromFile = true
		case "--sandbox":
			sandboxed = true
		}
	}
	if len(scripts) == 0 && !fromFile && len(operands) > 0 {
		scripts = operands[:1]
	}
	return scriptNotes("sed", "a sed script", words, scripts, fromFile, sandboxed, sedRuns)
}

// sedRuns reads a sed script command by command and says what in it runs
// a command or writes a file (e, w, W, and s///e and s///w). sed compiles
// the whole script before running it, so a script this reading loses its
// way in is one sed refuses too.
func sedRuns(script string) string {
	r := sedReader{s: script}
	for r.i < len(r.s) {
		r.skip(" \t\n;")
		if r.i >= len(r.s) {
			break
		}
		if r.s[r.i] == '#' {
			r.toLineEnd()
			continue
		}
		r.address()
		if r.peek() == ',' {
			r.i++
			r.address()
		}
		r.skip(" \t")
		if r.peek() == '!' {
			r.i++
			r.skip(" \t")
		}
		if r.i >= len(r.s) {
			break
		}
		c := r.s[r.i]
		r.i++
		switch c {
		case 'e':
			return "runs a command (the e command)"
		case 'w', 'W':
			return "writes a file it names (the " + string(c) + " command)"
		case 's':
			d := r.next()
			r.until(d)
			r.until(d)
			for r.i < len(r.s) && strings.IndexByte("gpiImMe0123456789w", r.s[r.i]) >= 0 {
				switch r.s[r.i] {
				case 'e':
					return "runs the text it makes as a command (the e flag of s)"
				case 'w':
					return "writes a file it names (the w flag of s)"
				}
				r.i++
			}
		case 'y':
			d := r.next()
			r.until(d)
			r.until(d)
		case 'a', 'i', 'c', 'r', 'R':
			r.toLineEnd()
		case ':', 'b', 't', 'T', 'v':
			r.label()
		}
	}
	return ""
}

// sedReader walks a sed script.
type sedReader struct {
	s string
	i int
}

func (r *sedReader) peek() byte {
	if r.i < len(r.s) {
		return r.s[r.i]
	}
	return 0
}

func (r *sedReader) next() byte {
	c := r.peek()
	r.i++
	return c
}

func (r *sedReader) skip(set string) {
	for r.i < len(r.s) && strings.IndexByte(set, r.s[r.i]) >= 0 {
		r.i++
	}
}

// label skips a label or version, to a ";" or the line's end, as GNU sed.
func (r *sedReader) label() {
	for r.i < len(r.s) && r.s[r.i] != '\n' && r.s[r.i] != ';' {
		r.i++
	}
}

// toLineEnd skips text or a file name.
func (r *sedReader) toLineEnd() {
	for r.i < len(r.s) && r.s[r.i] != '\n' {
		if r.s[r.i] == '\\' {
			r.i++
		}
		r.i++
	}
}

// until skips past the next unescaped d.
func (r *sedReader) until(d byte) {
	for r.i < len(r.s) {
		c := r.s[r.i]
		r.i++
		switch {
		case c == '\\':
			r.i++
		case c == d:
			return
		}
	}
}

// address skips a line number, $, /regex/ or \cregexc, with GNU's forms
// and flags.
func (r *sedReader) address() {
	switch c := r.peek(); {
	case c >= '0' && c <= '9', c == '+', c == '~':
		r.i++
		r.skip("0123456789~")
	case c == '$':
		r.i++
	case c == '/':
		r.i++
		r.until('/')
		r.skip("IM")
	case c == '\\':
		r.i++
		r.until(r.next())
		r.skip("IM")
	}
}
