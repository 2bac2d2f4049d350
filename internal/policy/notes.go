package policy

import "strings"

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
		a.rsyncCode(words)
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

// eachOption reads a program's options as getopt does: --name=value,
// --name value for names in longTakes, and clusters of short options
// whose letters in shortTakes take a value (a computed word starting with
// "-" is read as options too); operand gets the other words.
func eachOption(words []word, longTakes []string, shortTakes string, option func(name string, value word), operand func(word)) {
	for i := 1; i < len(words); {
		switch w := words[i]; {
		case !strings.HasPrefix(w.value, "-") || w.value == "-":
			if operand != nil {
				operand(w)
			}
			i++
		case strings.HasPrefix(w.value, "--"):
			name, value, n := longValue(words, i, longTakes)
			option(name, value)
			i += n
		default:
			i += shortValues(words, i, shortTakes, func(c byte, value word) { option("-"+string(c), value) })
		}
	}
}

// shortValues reads a cluster of short options like -xzf or -oKey=v at
// words[i], calling seen with each letter and its value (for letters in
// values: the rest of the cluster, or the next word). It returns how many
// words the cluster took.
func shortValues(words []word, i int, values string, seen func(letter byte, value word)) int {
	v := words[i].value
	for j := 1; j < len(v); j++ {
		c := v[j]
		if strings.IndexByte(values, c) < 0 {
			seen(c, word{})
			continue
		}
		if j < len(v)-1 {
			seen(c, partOf(words[i], v[j+1:]))
			return 1
		}
		if i+1 < len(words) {
			seen(c, words[i+1])
			return 2
		}
		seen(c, word{})
		return 1
	}
	return 1
}

// longValue reads --name=value, or --name value when name is one of
// takes, at words[i]; it returns how many words it took.
func longValue(words []word, i int, takes []string) (string, word, int) {
	name, value, hasValue := strings.Cut(words[i].value, "=")
	if hasValue {
		return name, partOf(words[i], value), 1
	}
	for _, t := range takes {
		if name == t && i+1 < len(words) {
			return name, words[i+1], 2
		}
	}
	return name, word{}, 1
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
