package policy

import (
	"regexp"
	"slices"
	"strings"

	"github.com/courier-agent/courier/internal/human"
)

var awks = set("awk gawk mawk nawk busybox-awk")

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

// scriptNotes asks about scripts (kind: "an awk program") that run
// commands or cannot be read, unless --sandbox forbids running commands.
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
		switch {
		case o.name == "" || words[o.at].computed():
			if o.at != last {
				operands = append(operands, words[o.at])
				last = o.at
			}
		case o.name == "--":
			operands = append(operands, words[o.at+1:]...)
			break options
		case o.name == "-e" || o.name == "--expression":
			scripts = append(scripts, o.value)
		case o.name == "-f" || o.name == "--file":
			fromFile = true
		case o.name == "--sandbox":
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
func sedRuns(s string) string {
	i := 0
	peek := func() byte {
		if i < len(s) {
			return s[i]
		}
		return 0
	}
	skip := func(set string) {
		for i < len(s) && strings.IndexByte(set, s[i]) >= 0 {
			i++
		}
	}
	// past moves past the next character of stop, where with escapes a
	// backslash escapes the character after it.
	past := func(stop string, escapes bool) {
		for i < len(s) {
			i++
			if c := s[i-1]; c == '\\' && escapes {
				i++
			} else if strings.IndexByte(stop, c) >= 0 {
				return
			}
		}
	}
	// delimited moves past n parts ending in the delimiter at i (/re/).
	delimited := func(n int) {
		d := s[min(i, len(s)):min(i+1, len(s))]
		i++
		for range n {
			past(d, true)
		}
	}
	// address skips a line number, $, /regex/ or \cregexc, with GNU's
	// forms and flags.
	address := func() {
		switch c := peek(); {
		case c >= '0' && c <= '9', c == '+', c == '~':
			i++
			skip("0123456789~")
		case c == '$':
			i++
		case c == '/', c == '\\':
			if c == '\\' {
				i++
			}
			delimited(1)
			skip("IM")
		}
	}
	for i < len(s) {
		skip(" \t\n;")
		if peek() == '#' {
			past("\n", true)
			continue
		}
		address()
		if peek() == ',' {
			i++
			address()
		}
		skip(" \t")
		if peek() == '!' {
			i++
			skip(" \t")
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		i++
		switch c {
		case 'e':
			return "runs a command (the e command)"
		case 'w', 'W':
			return "writes a file it names (the " + string(c) + " command)"
		case 's', 'y':
			delimited(2)
			for c == 's' && i < len(s) && strings.IndexByte("gpiImMe0123456789w", s[i]) >= 0 {
				switch s[i] {
				case 'e':
					return "runs the text it makes as a command (the e flag of s)"
				case 'w':
					return "writes a file it names (the w flag of s)"
				}
				i++
			}
		case 'a', 'i', 'c', 'r', 'R':
			past("\n", true)
		case ':', 'b', 't', 'T', 'v':
			past("\n;", false)
		}
	}
	return ""
}

// tarRunners are GNU tar's options whose value is a program it runs.
var tarRunners = []string{"--checkpoint-action", "--to-command", "--use-compress-program",
	"--info-script", "--new-volume-script", "--rsh-command", "--rmt-command"}

// tarNotes asks about tar told to run programs, and reads their commands.
func (a *analyzer) tarNotes(words []word) []finding {
	var runs, unknown []string
	if w := words[1:]; len(w) > 0 && !w[0].computed() && w[0].value != "" && !strings.HasPrefix(w[0].value, "-") {
		// The old form: "cIf" is -c -I -f.
		if i := strings.IndexAny(w[0].value, "IF"); i >= 0 {
			runs = append(runs, "-"+w[0].value[i:i+1])
		}
	}
	for _, o := range getopt(words, optSpec{values: "fCbgKLNTVXHIF", long: tarRunners}) {
		switch name, value, opt := o.name, o.value, tarRunner(o.name); {
		case strings.ContainsAny(name, "$`"):
			unknown = append(unknown, name)
		case name == "-I" || name == "-F":
			runs = append(runs, name)
			a.helperCode("tar "+name, words, value)
		// Of the checkpoint actions only exec= runs a program.
		case opt != "" && (opt != "--checkpoint-action" || value.computed() || strings.HasPrefix(value.value, "exec")):
			runs = append(runs, opt)
			a.helperCode("tar "+opt, words, value)
		}
	}
	switch {
	case len(runs) > 0:
		return []finding{runsCode("tar", words, "tar "+strings.Join(runs, ", ")+" runs a program or shell command")}
	case len(unknown) > 0:
		return []finding{runsCode("tar", words, "tar "+strings.Join(unknown, ", ")+" is an option named at run time, which may run a program")}
	}
	return nil
}

// tarRunner returns the runner a long option is or abbreviates, or "".
func tarRunner(name string) string {
	if len(name) < 5 || name == "--checkpoint" || strings.HasPrefix("--checkpoint", name) {
		return ""
	}
	for _, r := range tarRunners {
		if strings.HasPrefix(r, name) {
			return r
		}
	}
	return ""
}

// helperCode reads the command a program is told to run by the rules too.
func (a *analyzer) helperCode(prog string, words []word, value word) {
	code := value
	if !value.computed() {
		// --checkpoint-action=exec=CMD runs CMD; other actions run nothing.
		if rest, ok := strings.CutPrefix(value.value, "exec="); ok {
			code = literalWord(rest)
		}
	}
	if code.value == "" && !code.computed() {
		return
	}
	a.code(prog, wordsSource(words), code)
}

// sshCommandKeys are the ssh settings whose value is a local command.
var sshCommandKeys = []string{"proxycommand", "localcommand", "knownhostscommand"}

// sshNotes asks about ssh, scp and sftp told to run a local program or
// read settings (-F); ProxyCommand asks rather than denies: jump hosts need it.
func (a *analyzer) sshNotes(prog string, words []word) []finding {
	var notes []finding
	for _, o := range getopt(words, optSpec{values: "BbcDEeFIiJLlmOoPpQRSWw"}) {
		switch name, value := o.name, o.value; {
		case name == "-o":
			key, cmd := sshOption(value)
			if slices.Contains(sshCommandKeys, key) {
				notes = append(notes, runsCode(prog, words, "its "+key+" setting runs a local command"))
				a.helperCode(prog+" "+key, words, cmd)
			}
		case name == "-F" && value.value != "/dev/null":
			notes = append(notes, runsCode(prog, words, "it reads ssh settings from "+value.shown()+", which may run local commands (ProxyCommand, Match exec) that courier cannot check"))
		case name == "-S" && prog != "ssh", name == "-D" && prog == "sftp":
			notes = append(notes, runsCode(prog, words, name+" names a local program it runs"))
			a.helperCode(prog+" "+name, words, value)
		}
	}
	return notes
}

// sshOption splits an -o value, "Key=Value" or "Key Value", into its key
// in lower case and its value.
func sshOption(w word) (string, word) {
	v := strings.TrimLeft(w.value, " \t")
	i := strings.IndexAny(v, "= \t")
	if i < 0 {
		return strings.ToLower(v), word{}
	}
	rest := strings.TrimLeft(v[i:], " \t")
	rest = strings.TrimLeft(strings.TrimPrefix(rest, "="), " \t")
	return strings.ToLower(v[:i]), partOf(w, rest)
}
