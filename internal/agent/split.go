package agent

import (
	"errors"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// SplitCommand splits a command line into words the way a POSIX shell
// would (quotes, backslashes, comments), for --agent-command 'llm -m
// gpt-4o'. Nothing is ever run by a shell, so everything a shell would do
// beyond splitting words is refused with an error saying so: pipes,
// command lists, redirections, variables and command substitutions, globs,
// assignments.
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

// notShell explains why a command line is refused.
func notShell(line, what string) error {
	return fmt.Errorf("agent command %q has %s, but courier runs the program directly, never through a shell; write a script and name it instead", line, what)
}

// describeCommand names a compound command for the refusal.
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

// literalWord returns the value of a word made only of literal text and
// quotes, or an error naming what it has besides.
func literalWord(w *syntax.Word) (string, error) {
	var b strings.Builder
	for _, part := range w.Parts {
		if err := literalPart(&b, part); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

func literalPart(b *strings.Builder, part syntax.WordPart) error {
	switch p := part.(type) {
	case *syntax.Lit:
		if strings.ContainsAny(p.Value, "*?[") {
			return errors.New("a glob pattern (*, ? or [); quote it to pass it as is")
		}
		if strings.HasPrefix(p.Value, "~") {
			return errors.New("a ~ (write the full path)")
		}
		b.WriteString(unescape(p.Value))
	case *syntax.SglQuoted:
		if p.Dollar {
			return errors.New("a $'...' string")
		}
		b.WriteString(p.Value)
	case *syntax.DblQuoted:
		for _, inner := range p.Parts {
			lit, ok := inner.(*syntax.Lit)
			if !ok {
				return describePart(inner)
			}
			b.WriteString(unescapeDouble(lit.Value))
		}
	default:
		return describePart(part)
	}
	return nil
}

func describePart(part syntax.WordPart) error {
	switch part.(type) {
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
	}
	return errors.New("shell syntax")
}

// unescape removes the backslashes of an unquoted literal: each escapes
// the next character, and a backslash before a new line joins lines.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapeDouble removes the backslashes a double-quoted string gives
// meaning to: before $, `, ", \ and a new line.
func unescapeDouble(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
