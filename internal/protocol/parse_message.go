package protocol

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/human"
)

// The PARSE_ERROR texts are read by the LLM in the next outbox: each names
// the command, its path and line, says what is wrong and what to resend.

// show quotes text from the reply for a message: short, and with control
// characters escaped so they cannot disturb a terminal.
func show(s string) string {
	s = human.Cut(s, 60)
	for _, r := range s {
		if r < ' ' || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\'' || r == utf8.RuneError {
			return strconv.Quote(s)
		}
	}
	return "'" + s + "'"
}

// what names a block: "CREATE_FILE for 'src/app.py' (line 12)".
func what(typ command.Type, path string, line int) string {
	if path != "" {
		return fmt.Sprintf("%s for %s (line %d)", typ, show(path), line)
	}
	return fmt.Sprintf("%s (line %d)", typ, line)
}

// tagProblem is the message for a block whose tag or body is wrong.
func tagProblem(t *tagLine, line int, path, problem string) string {
	resend := "block"
	if t.typ == command.DeleteFile || t.typ == command.ReadFile {
		resend = "tag"
	}
	return fmt.Sprintf("%s %s. %s; resend the corrected %s.", what(t.typ, path, line), problem, notDone[t.typ], resend)
}

// notDone says what did not happen because a block was refused.
var notDone = map[command.Type]string{
	command.CreateFile: "Nothing was written", command.EditFile: "The file was not changed",
	command.DeleteFile: "Nothing was deleted", command.ReadFile: "Nothing was read",
	command.RunCommand: "The command was not run", command.Message: "The message was not shown",
	command.Done: "The task was not marked done",
}

func trailingProblem(t *tagLine) string {
	return fmt.Sprintf("has text after the tag (%s); the tag must be alone on its line, with the body on the lines after it", show(t.trailing))
}

// unclosedMessage explains a block without its closing tag.
func unclosedMessage(t *tagLine, line0 int, path string, sc bodyScan) string {
	var b strings.Builder
	closer := "[/" + string(t.typ) + "]"
	fmt.Fprintf(&b, "%s has no closing %s", what(t.typ, path, line0+1), closer)
	if sc.stop.name == "" {
		b.WriteString("; the reply looks cut off, or the closing tag is missing.")
	} else {
		fmt.Fprintf(&b, " before the %s tag at line %d.", sc.stop.name, sc.stop.line+1)
	}
	if sc.wrong.name != "" {
		fmt.Fprintf(&b, " Line %d has [/%s], which does not close it.", sc.wrong.line+1, sc.wrong.name)
	}
	switch t.typ {
	case command.Done:
		b.WriteString(" The task was not marked done; put [DONE] ... [/DONE] last in the reply.")
	case command.Message:
		b.WriteString(" The message was not shown; resend it ending with " + closer + ".")
	case command.CreateFile:
		b.WriteString(" Nothing was written to that file; resend the whole block, ending with " + closer + ".")
	default:
		b.WriteString(" " + notDone[t.typ] + "; resend the whole block, ending with " + closer + ".")
	}
	if sc.nSkipped > 0 {
		fmt.Fprintf(&b, " The %s inside the unclosed block %s not run either (%s); resend %s too.",
			human.Count(sc.nSkipped, "command tag", ""), pick(sc.nSkipped, "was", "were"), listTags(sc.skipped, sc.nSkipped), pick(sc.nSkipped, "it", "them"))
	}
	return b.String()
}

// pick is one for 1, many for other counts.
func pick(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func listTags(tags []tagAt, total int) string {
	parts := make([]string, 0, len(tags)+1)
	for _, t := range tags {
		parts = append(parts, fmt.Sprintf("%s at line %d", t.name, t.line+1))
	}
	if total > len(tags) {
		parts = append(parts, fmt.Sprintf("and %d more", total-len(tags)))
	}
	return strings.Join(parts, ", ")
}

// unknownMessage explains a tag courier does not know.
func unknownMessage(words string, line0, end0 int, closed bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] at line %d is not a courier command", words, line0+1)
	if closed {
		fmt.Fprintf(&b, ", so its block (lines %d-%d) was ignored.", line0+1, end0)
	} else {
		b.WriteString(", so it was ignored.")
	}
	if typ := nearMiss(words); typ != "" {
		fmt.Fprintf(&b, " Did you mean [%s]?", typ)
	}
	names := make([]string, len(command.Types))
	for i, t := range command.Types {
		names[i] = string(t)
	}
	fmt.Fprintf(&b, " The commands are %s, each tag written exactly so, alone at the start of its line.", strings.Join(names, ", "))
	return b.String()
}

// strayMessage explains a closing tag whose opening tag was not found.
func strayMessage(typ command.Type, line0 int) string {
	return fmt.Sprintf("[/%s] at line %d closes nothing: no [%s] tag starts a line before it, so that block was ignored. "+
		"Put the opening tag alone at the start of its own line (not inside other text or formatting) and resend the block.",
		typ, line0+1, typ)
}

// moreProblems summarises the problems beyond maxErrors.
func moreProblems(n, line int) string {
	return fmt.Sprintf("The reply has %s from line %d on that are not listed; fix the ones above and resend the rest of the reply.", human.Count(n, "more problem", ""), line)
}
