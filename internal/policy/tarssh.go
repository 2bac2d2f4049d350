package policy

import (
	"slices"
	"strings"
)

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

// helperCode reads the command a program is told to run, so that it
// meets the rules too.
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
	a.code(codeSource{prog: prog, subject: wordsSource(words), words: []word{code}})
}

// sshCommandKeys are the ssh settings whose value is a local command.
var sshCommandKeys = []string{"proxycommand", "localcommand", "knownhostscommand"}

// sshNotes asks about ssh, scp and sftp told to run a local program (the
// *Command settings of -o, -S, sftp's -D) or to read settings courier
// cannot (-F), and reads the commands. ProxyCommand is asked about rather
// than denied: jump hosts need it.
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
