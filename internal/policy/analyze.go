package policy

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// maxDepth bounds how often code inside code (bash -c, eval...) is parsed
// again; deeper code is not run without asking.
const maxDepth = 8

// analysis is everything found in one command text.
type analysis struct {
	invs      []Invocation
	findings  []finding
	downloads []string // the files downloaders save (see noteDownloads)
	shape     []string // see Verdict.Shape
}

// finding is something a built-in check noticed, decided on like a rule.
type finding struct {
	check   string // e.g. checkDownload
	subject string // what the reason quotes
	detail  string // why, for the reason
	// key is what approving "all like it" remembers when narrower than
	// the check ("@git-write commit").
	key string
}

// stdin is where a command's standard input comes from, for programs
// that read their code from it: a file, the terminal, or nothing, unless
// another command's output (pipe) or a here-document or here-string (text).
type stdin struct {
	pipe     bool
	download bool   // the producing command downloads from the network
	src      string // the pipeline or statement, for messages
	text     *word  // the here-document or here-string
	file     *word  // the file redirected in with <, when literal
}

// analyzer walks one parsed piece of shell code; code inside it that a
// shell runs gets a child analyzer sharing the output.
type analyzer struct {
	src     string
	depth   int
	out     *analysis
	funcs   map[string]bool
	piped   map[*syntax.Stmt]stdin
	fetched map[*syntax.Stmt]bool // which pipeline stages download
	scratch bool                  // only collect programs (see downloads)
}

func newAnalyzer(out *analysis, depth int) *analyzer {
	return &analyzer{out: out, depth: depth, piped: map[*syntax.Stmt]stdin{}, fetched: map[*syntax.Stmt]bool{}}
}

func analyze(command string) *analysis {
	out := &analysis{}
	newAnalyzer(out, 0).run(command, "", "the command")
	return out
}

// run parses src as shell code and walks it; subject is what reasons
// quote, what names the code in errors.
func (a *analyzer) run(src, subject, what string) {
	f, err := parse(src)
	if err != nil {
		if subject == "" {
			subject = src
		}
		a.finding(checkUnparseable, subject, fmt.Sprintf("cannot parse %s as shell: %v", what, err))
		return
	}
	a.src = src
	a.funcs = functions(f)
	a.walk(f)
}

// parse reads shell code as bash, and as POSIX shell when bash will not.
func parse(src string) (*syntax.File, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err == nil {
		return f, nil
	}
	if f, perr := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(src), ""); perr == nil {
		return f, nil
	}
	return nil, err
}

func functions(f *syntax.File) map[string]bool {
	names := map[string]bool{}
	syntax.Walk(f, func(n syntax.Node) bool {
		if d, ok := n.(*syntax.FuncDecl); ok {
			if d.Name != nil {
				names[d.Name.Value] = true
			}
			for _, l := range d.Names {
				names[l.Value] = true
			}
		}
		return true
	})
	return names
}

func (a *analyzer) walk(n syntax.Node) {
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			a.stmt(n)
		case *syntax.BinaryCmd:
			if !a.scratch && isPipe(n) {
				a.piped[n.Y] = stdin{pipe: true, download: a.stageDownloads(n.X), src: a.text(n)}
			}
		}
		return true
	})
}

func (a *analyzer) stmt(s *syntax.Stmt) {
	in := a.stdinOf(s)
	if !a.scratch {
		for _, r := range s.Redirs {
			a.redirect(s, r)
		}
		a.noteRedirectDownload(s)
	}
	switch c := s.Cmd.(type) {
	case *syntax.CallExpr:
		for _, as := range c.Assigns {
			a.around(a.text(as))
		}
		if words := a.words(c.Args); len(words) > 0 {
			a.command(words, in)
		}
	case *syntax.Block:
		a.inherit(in, c.Stmts)
	case *syntax.Subshell:
		a.inherit(in, c.Stmts)
	case *syntax.DeclClause:
		a.around(a.text(c))
	case *syntax.ForClause:
		// A loop's variable may be one the shell exports, such as PATH.
		if w, ok := c.Loop.(*syntax.WordIter); ok {
			a.around("for " + w.Name.Value)
		}
	}
}

// around notes something the command adds around the programs the rules
// judge (see Verdict.Shape).
func (a *analyzer) around(s string) {
	if !a.scratch {
		a.out.shape = append(a.out.shape, s)
	}
}

// inherit passes a piped standard input on to a group's statements, so
// that `curl x | { sh; }` is seen like `curl x | sh`.
func (a *analyzer) inherit(in stdin, stmts []*syntax.Stmt) {
	if !in.pipe {
		return
	}
	for _, s := range stmts {
		if _, ok := a.piped[s]; !ok {
			a.piped[s] = in
		}
	}
}

// stdinOf works out where a statement's standard input comes from; the
// last redirection of it wins, as in the shell.
func (a *analyzer) stdinOf(s *syntax.Stmt) stdin {
	in := a.piped[s]
	if a.scratch {
		return in
	}
	for _, r := range s.Redirs {
		if r.N != nil && r.N.Value != "0" {
			continue
		}
		switch r.Op {
		case syntax.RdrIn:
			in = stdin{src: a.text(s)}
			if w := a.word(r.Word); !w.computed() {
				in.file = &w
			}
			if hasSubstitution(r.Word, false) {
				in = stdin{pipe: true, download: a.downloads(r.Word), src: a.text(s)}
			}
		case syntax.RdrInOut:
			in = stdin{}
		case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			w := a.hereDoc(r)
			in = stdin{text: &w, src: a.text(s)}
		}
	}
	return in
}

// command records one simple command's program and looks through
// wrappers and shells for the programs they start.
func (a *analyzer) command(words []word, in stdin) {
	inv := a.invocation(words)
	a.out.invs = append(a.out.invs, inv)
	if inv.Dynamic {
		return
	}
	if !a.scratch {
		a.deviceArgs(inv, words)
		a.out.invs[len(a.out.invs)-1].notes = a.programNotes(inv, words, in)
	}
	a.dispatch(inv.base, words, in)
}

func isPipe(n *syntax.BinaryCmd) bool {
	return n.Op == syntax.Pipe || n.Op == syntax.PipeAll
}

// stageDownloads reports whether a pipeline stage downloads, remembered
// so that a long pipeline costs no more than its length.
func (a *analyzer) stageDownloads(s *syntax.Stmt) bool {
	if d, ok := a.fetched[s]; ok {
		return d
	}
	var d bool
	if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && isPipe(b) && len(s.Redirs) == 0 {
		d = a.stageDownloads(b.X) || a.stageDownloads(b.Y)
	} else {
		d = a.downloads(s)
	}
	a.fetched[s] = d
	return d
}

// downloads reports whether a part of a command starts a downloader.
func (a *analyzer) downloads(n syntax.Node) bool {
	s := newAnalyzer(&analysis{}, maxDepth)
	s.scratch = true
	s.src = a.src
	s.funcs = a.funcs
	s.walk(n)
	return slices.ContainsFunc(s.out.invs, func(inv Invocation) bool { return downloaders[inv.base] })
}

func (a *analyzer) finding(check, subject, detail string) {
	if a.scratch {
		return
	}
	a.out.findings = append(a.out.findings, finding{check: check, subject: subject, detail: detail})
}

// text returns the source text of a node, or prints it when it has none.
func (a *analyzer) text(n syntax.Node) string {
	pos, end := n.Pos(), n.End()
	start, stop := int(pos.Offset()), int(end.Offset())
	if !pos.IsValid() || !end.IsValid() || stop > len(a.src) || start > stop {
		return a.print(n)
	}
	return a.src[start:stop]
}

func (a *analyzer) print(n syntax.Node) string {
	var b strings.Builder
	if err := syntax.NewPrinter(syntax.SingleLine(true)).Print(&b, n); err != nil {
		return ""
	}
	return b.String()
}

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

// programNotes runs the checks on what one program is told to do (see
// the package documentation), and notes the files it downloads.
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
			return a.interpreter(name, spec, words, in)
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

// getopt reads a program's arguments as GNU getopt does, computed words
// by what is known of them; "--" is an option the caller ends options at.
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

var harmlessDevices = set("/dev/null /dev/zero /dev/full /dev/random /dev/urandom /dev/tty /dev/stdin /dev/stdout /dev/stderr")

var writeOps = map[syntax.RedirOperator]bool{
	syntax.RdrOut: true, syntax.AppOut: true, syntax.RdrClob: true, syntax.AppClob: true,
	syntax.RdrAll: true, syntax.RdrAllClob: true, syntax.AppAll: true, syntax.AppAllClob: true,
	syntax.RdrInOut: true, syntax.DplOut: true,
}

// normalize cleans a path for the device checks: a path climbing with
// "../" may reach /, so what follows is judged as absolute, and
// /proc/PID/root is another name of /.
func normalize(p string) string {
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		c = path.Clean("/" + c)
	}
	if rest, ok := strings.CutPrefix(c, "/proc/"); ok {
		if parts := strings.SplitN(rest, "/", 3); len(parts) == 3 && parts[1] == "root" {
			c = "/" + parts[2]
		}
	}
	return c
}

func isDevice(p string) bool {
	c := normalize(p)
	return strings.HasPrefix(c, "/dev/") && !harmlessDevices[c] && !strings.HasPrefix(c, "/dev/fd/") && !strings.HasPrefix(c, "/dev/shm/")
}

// isNetworkPath reports whether p opens a connection in a bash redirection.
func isNetworkPath(p string) bool {
	c := normalize(p)
	return strings.HasPrefix(c, "/dev/tcp/") || strings.HasPrefix(c, "/dev/udp/")
}

// isKernelFile reports whether p is under /proc or /sys, where a write
// changes the running system; a process's descriptors are not.
func isKernelFile(p string) bool {
	c := normalize(p)
	if strings.HasPrefix(c, "/sys/") {
		return true
	}
	rest, ok := strings.CutPrefix(c, "/proc/")
	if !ok {
		return false
	}
	parts := strings.SplitN(rest, "/", 3)
	return len(parts) < 2 || parts[1] != "fd"
}

// redirect checks where a redirection writes or reads; computed targets
// are not judged.
func (a *analyzer) redirect(s *syntax.Stmt, r *syntax.Redirect) {
	if r.Word == nil || r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc || r.Op == syntax.WordHdoc {
		return
	}
	w := a.word(r.Word)
	dup := r.Op == syntax.DplOut && !w.computed() && (w.value == "-" || strings.Trim(w.value, "0123456789") == "")
	if writeOps[r.Op] && !dup && w.value != "/dev/null" {
		a.around(a.text(r))
	}
	if w.computed() {
		return
	}
	p := w.value
	switch {
	case dup:
		// >&2 duplicates a descriptor; it opens no file.
	case isNetworkPath(p):
		a.finding(checkDevice, a.text(s), "opens a network connection through "+p)
	default:
		a.device(a.text(s), p, writeOps[r.Op])
	}
}

// device notes a use of a device, or a write to one or to a kernel file.
func (a *analyzer) device(subject, p string, write bool) {
	switch {
	case write && (isDevice(p) || isKernelFile(p)):
		a.finding(checkDeviceWrite, subject, "writes to "+p)
	case isDevice(p):
		a.finding(checkDevice, subject, "uses the device "+p)
	}
}

// deviceArgs checks a program's literal arguments for devices: dd's of=
// and tee's files are written, others only used.
func (a *analyzer) deviceArgs(inv Invocation, words []word) {
	for _, w := range words[1:] {
		if w.computed() {
			continue
		}
		p := w.value
		key, val, hasValue := strings.Cut(p, "=")
		if hasValue {
			p = val
		}
		a.device(inv.source(), p, (inv.base == "dd" && hasValue && key == "of") ||
			(inv.base == "tee" && !hasValue && !strings.HasPrefix(p, "-")))
	}
}
