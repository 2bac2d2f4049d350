package policy

import (
	"cmp"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// wrapperSpec describes a program that runs the program named after its
// own options and operands.
type wrapperSpec struct {
	values   string   // short options that take a value
	long     []string // long options that take a value unless written --opt=value
	operands int      // operands before the program, like timeout's duration
	assigns  bool     // NAME=value words may come before the program, as for env
	stops    string   // short options that mean no program is run (command -v)
}

// wrappers start the program named in their arguments; sudo and friends,
// denied by rule, are looked through so that every program shows up.
var wrappers = map[string]wrapperSpec{
	"nohup":   {},
	"builtin": {},
	"busybox": {},
	"setsid":  {},
	"exec":    {values: "a"},
	"command": {stops: "vV"},
	"timeout": {values: "sk", long: []string{"--signal", "--kill-after"}, operands: 1},
	"nice":    {values: "n", long: []string{"--adjustment"}},
	"ionice":  {values: "cnpPuU", long: []string{"--class", "--classdata", "--pid", "--pgid", "--uid"}},
	"stdbuf":  {values: "ioe", long: []string{"--input", "--output", "--error"}},
	"chroot":  {long: []string{"--userspec", "--groups"}, operands: 1},
	"time":    {values: "fo", long: []string{"--format", "--output"}},
	"env":     {values: "uCS", long: []string{"--unset", "--chdir", "--split-string"}, assigns: true},
	"sudo":    {values: "CDghpRrtTUu", long: []string{"--close-from", "--chdir", "--group", "--host", "--prompt", "--chroot", "--role", "--type", "--command-timeout", "--other-user", "--user"}, assigns: true},
	"doas":    {values: "uC"},
	"pkexec":  {long: []string{"--user"}},
	// xargs gives the program arguments read from its input.
	"xargs": {values: "aEIdLnPs", long: []string{"--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"}},
}

// dispatch looks into a program that runs other programs or code.
func (a *analyzer) dispatch(name string, words []word, in stdin) {
	if name == "eval" || name == "alias" || name == "trap" || name == "source" || name == "." || name == "watch" || shells[name] {
		a.around(wordsSource(words))
	}
	switch {
	case name == "find":
		a.find(words, in)
	case name == "watch":
		a.watch(words)
	case name == "eval":
		args := words[1:]
		if len(args) > 0 && !args[0].computed() && args[0].value == "--" {
			args = args[1:] // eval accepts "--" before its operands
		}
		a.code("eval", wordsSource(words), args...)
	case name == "alias":
		a.alias(words)
	case name == "trap":
		a.trap(words)
	case (name == "source" || name == ".") && len(words) > 1:
		a.script(words[0].value, words, 1, in) // a script run in the current shell
	case shells[name]:
		a.shell(name, words, in)
	default:
		if spec, ok := wrappers[name]; ok {
			next, opts, stop := skipOptions(spec, words)
			a.around(wordsSource(words[:next]))
			// env -S runs a string it splits as a shell would.
			split := slices.IndexFunc(opts, func(o arg) bool { return o.name == "-S" || o.name == "--split-string" })
			switch prog := words[next:]; {
			case name == "env" && split >= 0:
				a.code("env -S", wordsSource(words), append([]word{opts[split].value}, prog...)...)
			case name == "xargs":
				a.xargs(words[1:next], opts, prog)
			case !stop && len(prog) > 0:
				a.command(prog, in)
			}
		}
	}
}

// skipOptions steps over a wrapper's options, NAME=value words and
// operands to the program it runs, which may be a computed word.
func skipOptions(spec wrapperSpec, words []word) (next int, opts []arg, stop bool) {
	for _, o := range getopt(words, optSpec{values: spec.values, long: spec.long}) {
		switch {
		case o.name == "--":
			return min(o.at+1+spec.operands, len(words)), opts, stop
		case words[o.at].computed() || o.name == "" && !(spec.assigns && (o.value.value == "-" || isAssignment(o.value.value))):
			return min(o.at+spec.operands, len(words)), opts, stop
		case o.name != "":
			opts = append(opts, o)
			stop = stop || len(o.name) == 2 && strings.Contains(spec.stops, o.name[1:])
		}
	}
	return len(words), opts, stop
}

// isAssignment reports whether a word is NAME=value.
func isAssignment(v string) bool {
	name, _, ok := strings.Cut(v, "=")
	return ok && syntax.ValidName(name)
}

// literalWord makes a word of known text.
func literalWord(s string) word {
	return word{value: s, code: s, src: s, tail: s}
}

// xargs gives a program arguments read from its input: a hidden computed
// word stands for them, or with -I the words holding the replacement
// string are computed.
func (a *analyzer) xargs(own []word, opts []arg, prog []word) {
	replace := ""
	for _, w := range own {
		v := w.value
		switch {
		case strings.HasPrefix(v, "--replace"):
			replace = "{}"
			if _, r, ok := strings.Cut(v, "="); ok {
				replace = r
			}
		case strings.HasPrefix(v, "-i"):
			replace = cmp.Or(v[2:], "{}")
		}
	}
	for _, o := range opts {
		if o.name == "-I" {
			replace = o.value.value
		}
	}
	inner := slices.Clone(prog)
	if len(inner) == 0 {
		inner = []word{literalWord("echo")}
	}
	if replace == "" {
		inner = append(inner, word{src: "{input}", expands: true, optLike: true, hidden: true})
	} else {
		markReplaced(inner, replace, true)
	}
	a.command(inner, stdin{})
}

// markReplaced marks the words holding a placeholder filled in at run
// time (xargs -I, find -exec's {}) as computed.
func markReplaced(words []word, placeholder string, optLike bool) {
	for i := range words {
		w := &words[i]
		if !w.computed() && strings.Contains(w.value, placeholder) {
			w.expands = true
			w.optLike = optLike && strings.HasPrefix(w.value, placeholder)
		}
	}
}

// find runs the program of every -exec, -execdir, -ok and -okdir; the
// paths it fills in for {} are never options.
func (a *analyzer) find(words []word, in stdin) {
	for i := 1; i < len(words); i++ {
		if !slices.Contains([]string{"-exec", "-execdir", "-ok", "-okdir"}, words[i].value) {
			continue
		}
		start := i + 1
		j := start
		for ; j < len(words); j++ {
			v := words[j].value
			if v == ";" || (v == "+" && j > start && words[j-1].value == "{}") {
				break
			}
		}
		a.around(wordsSource(words))
		clause := slices.Clone(words[start:j])
		markReplaced(clause, "{}", false)
		if len(clause) > 0 {
			a.command(clause, in)
		}
		i = j
	}
}

// watch runs its arguments joined by sh -c, or with -x as a program.
func (a *analyzer) watch(words []word) {
	next, opts, _ := skipOptions(wrapperSpec{values: "nq", long: []string{"--interval", "--equexit"}}, words)
	switch rest := words[next:]; {
	case len(rest) == 0:
	case slices.ContainsFunc(opts, func(o arg) bool { return o.name == "-x" || o.name == "--exec" }):
		a.command(rest, stdin{})
	default:
		a.code("watch", wordsSource(words), rest...)
	}
}
