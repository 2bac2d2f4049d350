package policy

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// maxDepth bounds how often code inside code (bash -c, eval, here-documents
// fed to a shell) is parsed again; deeper code is not run without asking.
const maxDepth = 8

// analysis is everything found in one command text.
type analysis struct {
	invs     []Invocation
	findings []finding
	errs     []error
	// downloads are the files downloaders save, by base name (see
	// noteDownloads).
	downloads []string
	// shape is what the command adds around its programs; see
	// Verdict.Shape.
	shape []string
}

// finding is something a built-in check noticed, such as a write to a
// device, which the policy then decides on like a rule.
type finding struct {
	check   string // one of the check names, e.g. checkDownload
	subject string // what the reason quotes
	detail  string // why, for the reason
	// key is what approving "all like it" remembers, when it should be
	// narrower than the check ("@git-write commit"); "" means the check.
	key string
}

// stdinKind says where a command's standard input comes from, which
// matters for shells that read their code from it.
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

// analyzer walks one parsed piece of shell code. Code run by a shell inside
// it gets a child analyzer that shares the output.
type analyzer struct {
	src   string
	depth int
	out   *analysis
	funcs map[string]bool
	piped map[*syntax.Stmt]stdin
	// fetched remembers which pipeline stages download.
	fetched map[*syntax.Stmt]bool
	// scratch analyzers only collect program names, to see whether a part
	// of a command downloads; they skip checks and nested code.
	scratch bool
	printer *syntax.Printer
}

func newAnalyzer(out *analysis, depth int, printer *syntax.Printer) *analyzer {
	if printer == nil {
		printer = syntax.NewPrinter(syntax.SingleLine(true))
	}
	return &analyzer{out: out, depth: depth, piped: map[*syntax.Stmt]stdin{}, fetched: map[*syntax.Stmt]bool{}, printer: printer}
}

// analyze finds every program a command would start and everything the
// built-in checks notice.
func analyze(command string) *analysis {
	out := &analysis{}
	newAnalyzer(out, 0, nil).run(command, "", "the command")
	return out
}

// run parses src as shell code and walks it. subject is what reasons
// quote, what names the code in error messages.
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

// functions lists the shell functions the code defines.
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

// walk visits every statement, including those in function bodies,
// substitutions, here-documents and compound commands.
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

// inherit passes a piped standard input on to the statements of a group,
// so that `curl x | { sh; }` is seen like `curl x | sh`.
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
			if hasProcSubst(r.Word) {
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

// command handles one simple command: it records the program and looks
// through wrappers and shells for the programs they start in turn.
func (a *analyzer) command(words []word, in stdin) {
	inv := a.invocation(words)
	a.out.invs = append(a.out.invs, inv)
	if inv.Dynamic {
		return
	}
	if !a.scratch {
		a.deviceArgs(inv, words)
		idx := len(a.out.invs) - 1
		notes := a.programNotes(inv, words, in)
		a.out.invs[idx].notes = notes
	}
	a.dispatch(inv.base, words, in)
}

func isPipe(n *syntax.BinaryCmd) bool {
	return n.Op == syntax.Pipe || n.Op == syntax.PipeAll
}

// stageDownloads reports whether a pipeline, or one stage of it,
// downloads. Results are kept, so a long pipeline is looked at once per
// stage rather than once per pair of stages.
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

// downloads reports whether a part of a command starts a program that
// fetches from the network.
func (a *analyzer) downloads(n syntax.Node) bool {
	s := newAnalyzer(&analysis{}, maxDepth, a.printer)
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

// print renders a node as shell text, for parts that have no source text
// of their own, such as brace-expanded words.
func (a *analyzer) print(n syntax.Node) string {
	var b strings.Builder
	if err := a.printer.Print(&b, n); err != nil {
		return ""
	}
	return b.String()
}
