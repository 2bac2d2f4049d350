package policy

import (
	"slices"
	"strings"
)

// gitValueOptions are git's options before the subcommand that take the
// next word as their value.
var gitValueOptions = []string{"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env", "--list-cmds"}

// gitCall is a git command line split into its global options and its
// subcommand.
type gitCall struct {
	opts    []word // the options before the subcommand
	configs []word // the values of -c and --config-env: key=value
	sub     string // the subcommand, "" when none or computed
	known   bool   // sub is literal (or there is none)
	args    []word // the words after the subcommand
}

// parseGit splits git's words (words[0] is git itself).
func parseGit(words []word) gitCall {
	var g gitCall
	i := 1
	for i < len(words) {
		w := words[i]
		if w.computed() {
			g.opts = words[1:i]
			return g // the subcommand, or an option, is computed
		}
		v := w.value
		if !strings.HasPrefix(v, "-") {
			break
		}
		name, value, hasValue := strings.Cut(v, "=")
		switch {
		case strings.HasPrefix(v, "-c") && len(v) > 2 && !strings.HasPrefix(v, "--"):
			g.configs = append(g.configs, literalWord(v[2:]))
		case name == "--config-env" && hasValue:
			g.configs = append(g.configs, literalWord(value))
		case slices.Contains(gitValueOptions, name) && !hasValue:
			if i+1 < len(words) && (name == "-c" || name == "--config-env") {
				g.configs = append(g.configs, words[i+1])
			}
			i++
		}
		i++
	}
	g.known = true
	g.opts = words[1:min(i, len(words))]
	if i < len(words) {
		g.sub = words[i].value
		g.args = words[i+1:]
	}
	return g
}

// gitNotes finds what a git command does that the policy must ask about:
// settings given with -c that make git run a program, and writes to the
// repository's .git, which courier keeps read-only for commands.
func (a *analyzer) gitNotes(words []word) []finding {
	g := parseGit(words)
	if len(g.opts) > 0 {
		a.around(wordsSource(words[:len(g.opts)+1]))
	}
	var notes []finding
	subject := wordsSource(words)
	for _, c := range g.configs {
		if key, why := gitProgramSetting(c); why != "" {
			notes = append(notes, finding{check: checkRunsCode, key: checkRunsCode + " git -c", subject: subject,
				detail: "-c " + key + " " + why + ", which courier cannot check"})
			a.gitSettingCode(key, c, subject)
		}
	}
	a.gitRuns(g, subject)
	switch {
	case !g.known:
		notes = append(notes, finding{check: checkGitWrite, key: checkGitWrite, subject: subject,
			detail: "its subcommand is only known at run time, and it may write the repository's .git, which is protected; approving lets it write .git"})
	case gitWrites(g):
		detail := "writes the repository's .git, which is protected; approving lets it write .git"
		if g.sub == "init" {
			detail = "creates or reinitialises a repository's .git, which is protected; approving lets it write .git"
		}
		notes = append(notes, finding{check: checkGitWrite, key: checkGitWrite + " " + g.sub, subject: subject, detail: detail})
	}
	return notes
}

// gitRuns reads the commands some subcommands run for each step, so that
// they meet the rules: git submodule foreach CMD, git bisect run CMD...,
// git rebase --exec CMD.
func (a *analyzer) gitRuns(g gitCall, subject string) {
	switch {
	case g.sub == "submodule" && len(g.args) > 1 && g.args[0].value == "foreach":
		rest := g.args[1:]
		for len(rest) > 0 && strings.HasPrefix(rest[0].value, "-") {
			rest = rest[1:]
		}
		a.code(codeSource{prog: "git submodule foreach", subject: subject, words: rest})
	case g.sub == "bisect" && len(g.args) > 1 && g.args[0].value == "run":
		a.command(g.args[1:], stdin{})
	case g.sub == "rebase":
		for i, w := range g.args {
			name, value, hasValue := strings.Cut(w.value, "=")
			switch {
			case (name == "--exec" || name == "-x") && hasValue:
				a.code(codeSource{prog: "git rebase --exec", subject: subject, words: []word{literalWord(value)}})
			case (name == "--exec" || name == "-x") && i+1 < len(g.args):
				a.code(codeSource{prog: "git rebase --exec", subject: subject, words: g.args[i+1 : i+2]})
			}
		}
	}
}

// gitProgramSetting tells whether a -c key=value makes git run a program,
// and how; it returns the key in lower case and "" when it does not.
func gitProgramSetting(c word) (string, string) {
	key, _, _ := strings.Cut(c.value, "=")
	key = strings.ToLower(key)
	if c.computed() && strings.ContainsAny(key, "$`*?[") {
		return key, "sets a setting whose name is only known at run time"
	}
	section, rest, _ := strings.Cut(key, ".")
	name := rest
	if i := strings.LastIndexByte(rest, '.'); i >= 0 {
		name = rest[i+1:]
	}
	switch {
	case section == "alias":
		return key, "defines an alias, which may run any program or git command"
	case section == "core" && !harmlessCore[name]:
		return key, "changes a core setting, several of which run programs (fsmonitor, sshCommand, pager, editor, hooksPath)"
	case gitProgramSections[section]:
		return key, "names a program git runs"
	case gitProgramKeys[section+"."+name]:
		return key, "names a program git runs"
	}
	return key, ""
}

// gitSettingCode reads the value of a setting that git runs with a shell,
// so that what it runs meets the rules too.
func (a *analyzer) gitSettingCode(key string, c word, subject string) {
	_, value, ok := strings.Cut(c.code, "=")
	if !ok {
		return
	}
	if strings.HasPrefix(key, "alias.") {
		code, isShell := strings.CutPrefix(value, "!")
		if !isShell {
			code = "git " + value
		}
		a.code(codeSource{prog: "git alias", subject: subject, words: []word{{value: code, code: code, src: c.src, expands: c.expands}}})
		return
	}
	a.code(codeSource{prog: "git -c " + key, subject: subject, words: []word{{value: value, code: value, src: c.src, expands: c.expands}}})
}

// harmlessCore are core settings that change how git reads and writes
// files but run nothing.
var harmlessCore = map[string]bool{
	"autocrlf": true, "quotepath": true, "filemode": true, "ignorecase": true, "safecrlf": true,
	"eol": true, "whitespace": true, "abbrev": true, "precomposeunicode": true, "longpaths": true,
	"symlinks": true, "logallrefupdates": true, "compression": true, "bigfilethreshold": true,
	"checkstat": true, "trustctime": true, "untrackedcache": true, "preloadindex": true,
	"commentchar": true, "commentstring": true, "sparsecheckout": true, "protectntfs": true, "protecthfs": true,
}

// gitProgramSections are sections whose settings name programs or code.
var gitProgramSections = map[string]bool{
	"credential": true, "filter": true, "pager": true, "include": true, "includeif": true,
	"hook": true, "mergetool": true, "difftool": true, "browser": true, "man": true,
	"sendemail": true, "instaweb": true, "gpg": true, "sequence": true, "uploadpack": true,
	"protocol": true, "init": true, "submodule": true,
}

// gitProgramKeys are single settings (section.name) that name programs.
var gitProgramKeys = map[string]bool{
	"diff.external": true, "diff.command": true, "diff.textconv": true, "merge.driver": true,
	"remote.uploadpack": true, "remote.receivepack": true, "web.browser": true,
}

// gitWrites reports whether a git subcommand writes the repository's .git.
func gitWrites(g gitCall) bool {
	if g.sub == "" {
		return false
	}
	if f, ok := gitWriteRules[g.sub]; ok {
		return f == nil || f(gitArgs(g.args))
	}
	return false
}

// gitArgList is a subcommand's arguments split into options and operands.
type gitArgList struct {
	opts     []string // option names, without "=value"
	operands []string
	computed bool
}

func gitArgs(words []word) gitArgList {
	var l gitArgList
	ended := false
	for _, w := range words {
		switch {
		case w.computed():
			l.computed = true
		case !ended && w.value == "--":
			ended = true
		case !ended && len(w.value) > 1 && w.value[0] == '-':
			name, _, _ := strings.Cut(w.value, "=")
			l.opts = append(l.opts, name)
		default:
			l.operands = append(l.operands, w.value)
		}
	}
	return l
}

// has reports whether one of the options was given; a single-letter one
// also counts inside a cluster (-df).
func (l gitArgList) has(opts ...string) bool {
	for _, o := range l.opts {
		for _, want := range opts {
			if o == want || (len(want) == 2 && !strings.HasPrefix(o, "--") && strings.ContainsRune(o[1:], rune(want[1]))) {
				return true
			}
		}
	}
	return false
}

// first returns the first operand, or "".
func (l gitArgList) first() string {
	if len(l.operands) == 0 {
		return ""
	}
	return l.operands[0]
}

// gitWriteRules lists the subcommands that write .git: nil means always,
// a function decides from the arguments (listing forms only read).
var gitWriteRules = map[string]func(gitArgList) bool{
	"add": nil, "am": nil, "commit": nil, "checkout": nil, "switch": nil, "reset": nil,
	"rebase": nil, "merge": nil, "gc": nil, "fetch": nil, "pull": nil, "cherry-pick": nil,
	"revert": nil, "init": nil, "mv": nil, "rm": nil, "restore": nil, "prune": nil, "repack": nil,
	"update-index": nil, "update-ref": nil, "write-tree": nil, "commit-tree": nil, "read-tree": nil,
	"bisect": nil, "filter-branch": nil, "filter-repo": nil, "fast-import": nil, "unpack-objects": nil,
	"prune-packed": nil, "pack-refs": nil, "maintenance": nil, "mktag": nil, "mktree": nil,
	"index-pack": nil, "checkout-index": nil, "merge-index": nil, "rerere": func(l gitArgList) bool {
		return !slices.Contains([]string{"status", "diff", "remaining"}, l.first())
	},
	"stash": func(l gitArgList) bool { return !slices.Contains([]string{"list", "show"}, l.first()) },
	"branch": func(l gitArgList) bool {
		if l.has("-d", "-D", "-m", "-M", "-c", "-C", "-f", "-u", "--delete", "--move", "--copy", "--force",
			"--set-upstream-to", "--unset-upstream", "--edit-description", "--track", "--no-track", "--create-reflog") {
			return true
		}
		listing := l.has("-l", "--list", "-a", "--all", "-r", "--remotes", "--show-current", "--contains", "--no-contains",
			"--merged", "--no-merged", "--points-at", "-v", "--verbose")
		return !listing && (len(l.operands) > 0 || l.computed)
	},
	"tag": func(l gitArgList) bool {
		if l.has("-d", "--delete", "-a", "--annotate", "-s", "--sign", "-u", "--local-user", "-m", "--message", "-F", "--file", "-f", "--force", "-e", "--edit") {
			return true
		}
		listing := l.has("-l", "--list", "-n", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "-v", "--verify")
		return !listing && (len(l.operands) > 0 || l.computed)
	},
	"config": func(l gitArgList) bool {
		switch l.first() {
		case "get", "list":
			return false
		case "set", "unset", "rename-section", "remove-section", "edit":
			return true
		}
		if l.has("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool", "-l", "--list") {
			return false
		}
		return len(l.operands) != 1 || l.computed || l.has("-e", "--edit", "--unset", "--unset-all", "--add",
			"--replace-all", "--rename-section", "--remove-section")
	},
	"remote": func(l gitArgList) bool {
		return len(l.operands) > 0 && !slices.Contains([]string{"show", "get-url"}, l.first())
	},
	"notes":           func(l gitArgList) bool { return !slices.Contains([]string{"", "list", "show"}, l.first()) },
	"reflog":          func(l gitArgList) bool { return slices.Contains([]string{"expire", "delete"}, l.first()) },
	"worktree":        func(l gitArgList) bool { return l.first() != "list" },
	"submodule":       func(l gitArgList) bool { return !slices.Contains([]string{"", "status", "summary"}, l.first()) },
	"sparse-checkout": func(l gitArgList) bool { return l.first() != "list" },
	"symbolic-ref":    func(l gitArgList) bool { return len(l.operands) > 1 || l.has("-d", "--delete") },
	"hash-object":     func(l gitArgList) bool { return l.has("-w") },
	"apply":           func(l gitArgList) bool { return l.has("--index", "--cached", "-3", "--3way", "--intent-to-add") },
	"replace":         func(l gitArgList) bool { return !(len(l.operands) == 0 || l.has("-l", "--list")) },
	"commit-graph":    func(l gitArgList) bool { return l.first() != "verify" },
	"multi-pack-index": func(l gitArgList) bool {
		return l.first() != "verify"
	},
}
