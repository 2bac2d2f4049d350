package policy

import (
	"slices"
	"strings"
)

// programNotes runs the checks on what one program is told to do: git
// writing .git or running programs from settings, awk, sed, tar and ssh
// running commands, inline code that deletes files or starts programs. It
// also notes files downloaded, and flags a program run from one.
func (a *analyzer) programNotes(inv Invocation, words []word, in stdin) []finding {
	a.noteDownloads(inv, words, in)
	if strings.Contains(inv.Name, "/") && !words[0].computed() && a.downloaded(words[0]) {
		a.finding(checkDownload, inv.source(), "runs "+words[0].value+", a file downloaded from the network")
	}
	switch name := strings.ToLower(inv.base); {
	case name == "git":
		return a.gitNotes(words)
	case awks[name]:
		return awkNotes(words)
	case name == "sed" || name == "gsed":
		return sedNotes(words)
	case name == "tar" || name == "gtar" || name == "bsdtar":
		return a.tarNotes(words)
	case name == "ssh" || name == "scp" || name == "sftp" || name == "slogin":
		return a.sshNotes(name, words)
	case name == "rsync":
		for _, o := range getopt(words, optSpec{values: "eBfTM", long: []string{"--rsh"}}) {
			if o.name == "-e" || o.name == "--rsh" {
				a.helperCode("rsync "+o.name, words, o.value)
			}
		}
	default:
		if spec, ok := interpreterSpec(name); ok {
			return inlineNotes(name, spec, words, in)
		}
	}
	return nil
}

// runsCode notes a program told to run code courier cannot check;
// approving "all like it" covers that program only.
func runsCode(prog string, words []word, detail string) finding {
	return finding{check: checkRunsCode, key: checkRunsCode + " " + prog, subject: wordsSource(words), detail: detail}
}

// optSpec says which of a program's options take a value.
type optSpec struct {
	values   string   // short options that take one: -f x, -fx
	optional string   // short options that take only the rest of their cluster (sed -i.bak)
	long     []string // long options that take the next word unless written --name=value
}

// arg is an option ("-x", "--name") with its value, or an operand.
type arg struct {
	name  string // "" for an operand
	value word
	at    int // the index of the word it is read from
}

// getopt reads a program's arguments as GNU getopt does: clusters of
// short options, long options and operands anywhere. "--" is an option
// for the caller to end the options with. A computed word is read by what
// is known of it; callers for programs that do not reorder their
// arguments stop at the first operand or computed word.
func getopt(words []word, spec optSpec) []arg {
	var out []arg
	for i := 1; i < len(words); i++ {
		w := words[i]
		v := w.value
		switch {
		case len(v) < 2 || v[0] != '-':
			out = append(out, arg{value: w, at: i})
		case v[1] == '-':
			o := arg{at: i}
			var value string
			var ok bool
			if o.name, value, ok = strings.Cut(v, "="); ok {
				o.value = partOf(w, value)
			} else if slices.Contains(spec.long, o.name) && i+1 < len(words) {
				i++
				o.value = words[i]
			}
			out = append(out, o)
		default:
			for j := 1; j < len(v); j++ {
				if v[j] == '-' {
					continue // not to be taken for "--"
				}
				o := arg{name: "-" + v[j:j+1], at: i}
				takes := strings.IndexByte(spec.values, v[j]) >= 0
				if takes || strings.IndexByte(spec.optional, v[j]) >= 0 {
					if j+1 < len(v) {
						o.value = partOf(w, v[j+1:])
					} else if takes && i+1 < len(words) {
						i++
						o.value = words[i]
					}
					j = len(v)
				}
				out = append(out, o)
			}
		}
	}
	return out
}

// partOf makes a word of part of w's value, computed if w is.
func partOf(w word, s string) word {
	p := literalWord(s)
	p.expands, p.glob = w.expands, w.glob
	if w.computed() {
		p.src = s
	}
	return p
}
