package protocol

import (
	"cmp"
	"strings"

	"github.com/courier-agent/courier/internal/command"
)

func isCloserOf(s, name string) bool {
	closer, ok := closerName(s)
	return ok && strings.ToUpper(closer) == name
}

// build makes a command from its tag and body in cmd, a zero command, or
// says what is wrong with it (see tagProblem). line is the 1-based line of
// the opening tag.
func build(cmd *command.Command, t *tagLine, body string, line int) string {
	cmd.Type = t.typ
	m, problem := tagAttrs(t)
	selfClosing := t.typ == command.DeleteFile || t.typ == command.ReadFile
	if problem == "" && t.trailing != "" && leadText(t) == "" && !selfClosing {
		problem = trailingProblem(t)
	}
	if t.escaped {
		cmd.Note = escapedNote
	}
	var p, note string
	switch t.typ {
	case command.DeleteFile, command.ReadFile:
		// "[READ_FILE path=...][/READ_FILE]" is the tag alone.
		if cmd.Path, p = tagPath(m); p == "" && t.trailing != "" && !isCloserOf(t.trailing, t.name) {
			p = trailingProblem(t)
		}
		if p == "" && t.typ == command.ReadFile {
			cmd.StartLine, cmd.EndLine, p = readRange(m)
		}
	case command.CreateFile:
		cmd.Path, p = tagPath(m)
		cmd.Content, note = fileText(body, t.indent, cmd.Path)
		cmd.NoOverwrite = noOverwrite(m)
	case command.EditFile:
		p = buildEdit(cmd, m, body, t.indent, line)
	case command.RunCommand:
		cmd.Command, note = commandText(body, t.indent)
		cmd.Dir, _ = m.get("cwd")
		if cmd.Dir != "" {
			p = strings.Replace(checkPath(cmd.Dir), "path", "cwd", 1)
		}
		if p == "" {
			cmd.Timeout, p = timeoutAttr(m)
		}
		if p == "" && cmd.Command == "" {
			p = "has an empty body; put the shell command between [RUN_COMMAND] and [/RUN_COMMAND]"
		}
	case command.Message, command.Done:
		cmd.Text = plainText(body, t.indent)
	}
	addNote(cmd, note)
	if problem == "" && p == "" {
		p = cardProblem(cmd.Content + cmd.Command) // one of them is ""
	}
	return cmp.Or(problem, p)
}

// buildEdit makes an EDIT_FILE: a line range when start_line/end_line are
// given, search/replace pairs otherwise.
func buildEdit(cmd *command.Command, m attrs, body string, indent, line int) string {
	var p string
	if cmd.Path, p = tagPath(m); p != "" {
		return p
	}
	start, end, p := lineAttrs(m, false)
	if p != "" {
		return p
	}
	text, note := stripChrome(dedent(body, indent), fileLabels(cmd.Path), false)
	addNote(cmd, note)
	markup := isMarkup(cmd.Path)
	edits, p, hasPairs := parseEdits(text, markup, line+1)
	switch {
	case start != 0 && hasPairs:
		return "has start_line/end_line and also SEARCH/REPLACE markers; use one form per EDIT_FILE"
	case start != 0:
		cmd.StartLine, cmd.EndLine = start, end
		cmd.Content = unfence(text, markup)
		return ""
	case !hasPairs:
		return editFormsProblem(cmd.Path)
	case p != "":
		return p
	}
	cmd.Edits = edits
	return ""
}
