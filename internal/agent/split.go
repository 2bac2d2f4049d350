package agent

import (
	"errors"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// SplitCommand splits --agent-command 'llm -m gpt-4o' into words as a
// POSIX shell would. No shell ever runs it, so anything a shell would do
// beyond splitting words (pipes, redirections, variables, globs...) is
// refused, saying so.
func SplitCommand(line string) ([]string, error) {
	if strings.TrimSpace(line) == "" {
		return nil, errors.New("the agent command is empty")
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(line), "")
	if err != nil {
		return nil, fmt.Errorf("agent command %q: %w", line, err)
	}
	if len(f.Stmts) == 0 {
		return nil, errors.New("the agent command is empty")
	}
	if len(f.Stmts) > 1 {
		return nil, notShell(line, "several commands (;, & or a new line)")
	}
	st := f.Stmts[0]
	switch {
	case st.Background:
		return nil, notShell(line, "a background job (&)")
	case st.Negated:
		return nil, notShell(line, "a negation (!)")
	case len(st.Redirs) > 0:
		return nil, notShell(line, "a redirection (<, > or a here-document)")
	}
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok {
		return nil, notShell(line, describeCommand(st.Cmd))
	}
	if len(call.Assigns) > 0 {
		return nil, notShell(line, "a variable assignment (set it in the environment instead)")
	}
	words := make([]string, 0, len(call.Args))
	for _, w := range call.Args {
		s, err := literalWord(w)
		if err != nil {
			return nil, notShell(line, err.Error())
		}
		words = append(words, s)
	}
	if words[0] == "" {
		return nil, errors.New("the agent command starts with an empty word")
	}
	return words, nil
}

func notShell(line, what string) error {
	return fmt.Errorf("agent command %q has %s, but courier runs the program directly, never through a shell; write a script and name it instead", line, what)
}

func describeCommand(cmd syntax.Command) string {
	switch c := cmd.(type) {
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			return "a pipe (|)"
		}
		return "a command list (&& or ||)"
	case *syntax.Subshell, *syntax.Block:
		return "a group of commands"
	}
	return "shell syntax"
}

// literalWord returns the value of a word of literal text and quotes.
func literalWord(w *syntax.Word) (string, error) {
	for _, part := range w.Parts {
		if err := literalPart(part); err != nil {
			return "", err
		}
	}
	fields, err := expand.Fields(nil, w)
	if err != nil {
		return "", err
	}
	if len(fields) != 1 {
		return "", errors.New("a brace expansion ({a,b}); quote it to pass it as is")
	}
	return fields[0], nil
}

func literalPart(part syntax.WordPart) error {
	switch p := part.(type) {
	case *syntax.Lit:
		if strings.ContainsAny(p.Value, "*?[") {
			return errors.New("a glob pattern (*, ? or [); quote it to pass it as is")
		}
		if strings.HasPrefix(p.Value, "~") {
			return errors.New("a ~ (write the full path)")
		}
	case *syntax.SglQuoted:
		if p.Dollar {
			return errors.New("a $'...' string")
		}
	case *syntax.DblQuoted:
		for _, inner := range p.Parts {
			if _, ok := inner.(*syntax.Lit); !ok {
				return literalPart(inner)
			}
		}
	case *syntax.ParamExp:
		return errors.New("a variable ($NAME)")
	case *syntax.CmdSubst:
		return errors.New("a command substitution ($(...) or `...`)")
	case *syntax.ArithmExp:
		return errors.New("an arithmetic expansion ($((...)))")
	case *syntax.ProcSubst:
		return errors.New("a process substitution")
	case *syntax.ExtGlob:
		return errors.New("a glob pattern")
	default:
		return errors.New("shell syntax")
	}
	return nil
}
