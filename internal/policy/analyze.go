package policy

import (
	"fmt"
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
	errs      []error
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

// stdinKind says where a command's standard input comes from, for
// programs that read their code from it.
type stdinKind uint8

const (
	stdinOther stdinKind = iota // a file, the terminal, or nothing
	stdinPipe                   // another command's output
	stdinText                   // a here-document or here-string
)

type stdin struct {
	kind     stdinKind
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
		a.out.errs = append(a.out.errs, fmt.Errorf("%s: %w", what, err))
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
				a.piped[n.Y] = stdin{kind: stdinPipe, download: a.stageDownloads(n.X), src: a.text(n)}
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
	if in.kind != stdinPipe {
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
				in = stdin{kind: stdinPipe, download: a.downloads(r.Word), src: a.text(s)}
			}
		case syntax.RdrInOut:
			in = stdin{}
		case syntax.Hdoc, syntax.DashHdoc:
			w := a.hereDoc(r)
			in = stdin{kind: stdinText, text: &w, src: a.text(s)}
		case syntax.WordHdoc:
			w := a.word(r.Word)
			in = stdin{kind: stdinText, text: &w, src: a.text(s)}
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
	for _, inv := range s.out.invs {
		if downloaders[inv.base] {
			return true
		}
	}
	return false
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
