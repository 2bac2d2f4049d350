package policy

import (
	"slices"
	"strings"
)

// gitValueOptions are git's options before the subcommand that take a value.
var gitValueOptions = []string{"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env", "--list-cmds"}

// gitCall is a git command line: options, subcommand and its arguments.
type gitCall struct {
	opts    []word
	configs []word // the values of -c and --config-env: key=value
	sub     string // "" when none or computed
	known   bool   // sub is literal (or there is none)
	args    []word
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

// gitNotes finds -c settings that make git run a program, and writes to
// the repository's .git, which courier keeps read-only for commands.
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
	const protected = ", which is protected; approving lets it write .git"
	switch {
	case !g.known:
		notes = append(notes, finding{check: checkGitWrite, key: checkGitWrite, subject: subject,
			detail: "its subcommand is only known at run time, and it may write the repository's .git" + protected})
	case g.sub == "init":
		notes = append(notes, finding{check: checkGitWrite, key: checkGitWrite + " init", subject: subject,
			detail: "creates or reinitialises a repository's .git" + protected})
	case gitWrites(g):
		notes = append(notes, finding{check: checkGitWrite, key: checkGitWrite + " " + g.sub, subject: subject,
			detail: "writes the repository's .git" + protected})
	}
	return notes
}

// gitRuns reads the commands of git submodule foreach, git bisect run and
// git rebase --exec, so that they meet the rules.
func (a *analyzer) gitRuns(g gitCall, subject string) {
	switch {
	case g.sub == "submodule" && len(g.args) > 1 && g.args[0].value == "foreach":
		rest := g.args[1:]
		for len(rest) > 0 && strings.HasPrefix(rest[0].value, "-") {
			rest = rest[1:]
		}
		a.code("git submodule foreach", subject, rest...)
	case g.sub == "bisect" && len(g.args) > 1 && g.args[0].value == "run":
		a.command(g.args[1:], stdin{})
	case g.sub == "rebase":
		for i, w := range g.args {
			name, value, hasValue := strings.Cut(w.value, "=")
			switch {
			case (name == "--exec" || name == "-x") && hasValue:
				a.code("git rebase --exec", subject, literalWord(value))
			case (name == "--exec" || name == "-x") && i+1 < len(g.args):
				a.code("git rebase --exec", subject, g.args[i+1:i+2]...)
			}
		}
	}
}

// gitProgramSetting returns a -c key=value's key in lower case, and how it
// makes git run a program ("" when it does not).
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
	case gitProgramSections[section] || gitProgramKeys[section+"."+name]:
		return key, "names a program git runs"
	}
	return key, ""
}

// gitSettingCode reads a setting's value as the code git runs, so that it
// meets the rules too.
func (a *analyzer) gitSettingCode(key string, c word, subject string) {
	_, value, ok := strings.Cut(c.code, "=")
	if !ok {
		return
	}
	prog, code := "git -c "+key, value
	if strings.HasPrefix(key, "alias.") {
		prog = "git alias"
		if code, ok = strings.CutPrefix(value, "!"); !ok {
			code = "git " + value
		}
	}
	a.code(prog, subject, word{value: code, code: code, src: c.src, expands: c.expands})
}

// harmlessCore are core settings that run nothing.
var harmlessCore = set("autocrlf quotepath filemode ignorecase safecrlf eol whitespace abbrev precomposeunicode longpaths " +
	"symlinks logallrefupdates compression bigfilethreshold checkstat trustctime untrackedcache " +
	"preloadindex commentchar commentstring sparsecheckout protectntfs protecthfs")

// gitProgramSections are sections whose settings name programs or code.
var gitProgramSections = set("credential filter pager include includeif hook mergetool difftool browser man sendemail instaweb gpg " +
	"sequence uploadpack protocol init submodule")

// gitProgramKeys are single settings (section.name) that name programs.
var gitProgramKeys = set("diff.external diff.command diff.textconv merge.driver remote.uploadpack remote.receivepack web.browser")

// gitWrites reports whether a git subcommand writes the repository's .git.
func gitWrites(g gitCall) bool {
	l := newGitArgs(g.args)
	if reads, ok := gitReadForms[g.sub]; ok {
		return !slices.Contains(reads, l.first())
	}
	f, ok := gitWriteRules[g.sub]
	return gitAlwaysWrites[g.sub] || ok && f(l)
}

// gitArgList is a subcommand's arguments, with its operands.
type gitArgList struct {
	toks     []token
	operands []string
	computed bool
}

func newGitArgs(words []word) gitArgList {
	l := gitArgList{toks: tokens(words)}
	for _, t := range l.toks {
		switch t.kind {
		case tokOperand:
			l.operands = append(l.operands, t.value)
		case tokComputed:
			l.computed = true
		}
	}
	return l
}

// has reports whether one of the options was given (-d also in -df).
func (l gitArgList) has(opts ...string) bool {
	return slices.ContainsFunc(opts, func(o string) bool { return hasOption(l.toks, o, surely) })
}

func (l gitArgList) first() string { return append(l.operands, "")[0] }

// gitAlwaysWrites are the subcommands that always write .git.
var gitAlwaysWrites = set("add am commit checkout switch reset rebase merge gc fetch pull cherry-pick revert init mv rm " +
	"restore prune repack update-index update-ref write-tree commit-tree read-tree bisect filter-branch filter-repo " +
	"fast-import unpack-objects prune-packed pack-refs maintenance mktag mktree index-pack checkout-index merge-index")

// gitReadForms are the subcommands that write .git unless their first
// operand is one of these ("" for none).
var gitReadForms = map[string][]string{
	"rerere": {"status", "diff", "remaining"}, "stash": {"list", "show"}, "notes": {"", "list", "show"},
	"worktree": {"list"}, "submodule": {"", "status", "summary"}, "sparse-checkout": {"list"},
	"commit-graph": {"verify"}, "multi-pack-index": {"verify"},
}

// gitWriteRules decide for the other subcommands that may write .git
// from their arguments (listing forms only read).
var gitWriteRules = map[string]func(gitArgList) bool{
	"branch": listOrCreate("-d -D -m -M -c -C -f -u --delete --move --copy --force --set-upstream-to --unset-upstream "+
		"--edit-description --track --no-track --create-reflog",
		"-l --list -a --all -r --remotes --show-current --contains --no-contains --merged --no-merged --points-at -v --verbose"),
	"tag": listOrCreate("-d --delete -a --annotate -s --sign -u --local-user -m --message -F --file -f --force -e --edit",
		"-l --list -n --contains --no-contains --merged --no-merged --points-at -v --verify"),
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
	"reflog":       func(l gitArgList) bool { return slices.Contains([]string{"expire", "delete"}, l.first()) },
	"symbolic-ref": func(l gitArgList) bool { return len(l.operands) > 1 || l.has("-d", "--delete") },
	"hash-object":  func(l gitArgList) bool { return l.has("-w") },
	"apply":        func(l gitArgList) bool { return l.has("--index", "--cached", "-3", "--3way", "--intent-to-add") },
	"replace":      func(l gitArgList) bool { return !(len(l.operands) == 0 || l.has("-l", "--list")) },
}

// listOrCreate decides for git branch and tag: the writes options write,
// and without a listing option an operand names one to create.
func listOrCreate(writes, listing string) func(gitArgList) bool {
	return func(l gitArgList) bool {
		return l.has(strings.Fields(writes)...) || !l.has(strings.Fields(listing)...) && (len(l.operands) > 0 || l.computed)
	}
}
