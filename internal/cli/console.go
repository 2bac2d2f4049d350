package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/loop"
	"github.com/courier-agent/courier/internal/termtext"
)

// console prints what happens in a turn for the person: a line per command
// as it finishes, then a summary and the next step.
type console struct {
	w     io.Writer
	color bool
	quiet bool
	root  string
	// progress, when set, shows the elapsed time of a running command.
	progress *progress
}

const (
	green  = "\x1b[32m"
	red    = "\x1b[31m"
	yellow = "\x1b[33m"
	bold   = "\x1b[1m"
	dim    = "\x1b[2m"
	reset  = "\x1b[0m"
)

func (c *console) paint(code, s string) string {
	if !c.color {
		return s
	}
	return code + s + reset
}

// rel shows a path relative to the root when it is inside it.
func (c *console) rel(p string) string {
	if r, err := filepath.Rel(c.root, p); err == nil && !strings.HasPrefix(r, "..") {
		return termtext.Safe(r)
	}
	return termtext.Safe(p)
}

// Started shows a running command's elapsed time, on a terminal.
func (c *console) Started(_ int, cmd command.Command) {
	if cmd.Type == command.RunCommand && c.progress != nil {
		c.progress.start(firstLine(cmd.Command, 50))
	}
}

// Finished prints one command's line.
func (c *console) Finished(_ int, cmd command.Command, r command.Result) {
	if c.progress != nil {
		c.progress.stop()
	}
	if cmd.Type == command.Message {
		fmt.Fprintf(c.w, "  %s %s\n", c.paint(bold, "MESSAGE"), indentAfterFirst(cmd.Text, "    "))
		return
	}
	if c.quiet && r.Success() {
		return
	}
	mark := c.paint(green, "✓")
	if !r.Success() {
		mark = c.paint(red, "✗")
	}
	fmt.Fprintf(c.w, "  %s %s\n", mark, termtext.Safe(describe(cmd, r)))
}

// describe is the console line of a command: what it did, compactly.
func describe(cmd command.Command, r command.Result) string {
	switch cmd.Type {
	case command.RunCommand:
		s := "RUN_COMMAND " + firstLine(cmd.Command, 60)
		switch {
		case r.ExitCode != nil:
			s += fmt.Sprintf("  exit %d, %s", *r.ExitCode, (time.Duration(r.DurationMS) * time.Millisecond).Round(10*time.Millisecond))
		default:
			s += "  " + r.Summary
		}
		return s
	case command.CreateFile, command.EditFile, command.DeleteFile:
		s := fmt.Sprintf("%s %s", cmd.Type, cmd.Path)
		if r.Success() {
			if r.Added > 0 || r.Removed > 0 {
				s += fmt.Sprintf("  +%d -%d", r.Added, r.Removed)
			}
			return s
		}
		return s + "  " + r.Summary
	case command.ReadFile:
		if r.Success() {
			return "READ_FILE " + cmd.Path
		}
		return "READ_FILE " + cmd.Path + "  " + r.Summary
	case command.Done:
		return "DONE"
	case command.ParseError:
		return "PARSE_ERROR " + firstLine(r.Summary, 200)
	}
	return fmt.Sprintf("%s  %s", cmd.Type, r.Summary)
}

// summary prints the end of a turn: counts, file changes and what to do
// next.
func (c *console) summary(out loop.Outcome) {
	res := out.Engine.Results
	ok, bad := 0, 0
	var created, edited, deleted, added, removed int
	for i, r := range res {
		if r.Success() {
			ok++
		} else {
			bad++
			continue
		}
		switch out.Engine.Commands[i].Type {
		case command.CreateFile:
			created++
		case command.EditFile:
			edited++
		case command.DeleteFile:
			deleted++
		}
		added += r.Added
		removed += r.Removed
	}
	if c.quiet && bad == 0 && !out.State.IsComplete {
		return
	}
	line := fmt.Sprintf("%d commands: %d ok", len(res), ok)
	if bad > 0 {
		line += ", " + c.paint(red, fmt.Sprintf("%d failed", bad))
	}
	if created+edited+deleted > 0 {
		line += fmt.Sprintf("; files: %d created, %d edited, %d deleted (+%d -%d)", created, edited, deleted, added, removed)
	}
	fmt.Fprintf(c.w, "%s\n", line)
	st := out.State
	switch {
	case st.IsComplete:
		fmt.Fprintf(c.w, "%s session %s is complete\n", c.paint(green, "DONE:"), st.SessionID)
		if s := strings.TrimSpace(st.Summary); s != "" {
			fmt.Fprintf(c.w, "  %s\n", indentAfterFirst(s, "  "))
		}
	}
}

// firstLine shortens reply or command text to its first line, made safe
// for the terminal.
func firstLine(s string, max int) string {
	s = termtext.Safe(strings.TrimSpace(s))
	more := false
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s, more = s[:i], true
	}
	if r := []rune(s); len(r) > max {
		s, more = string(r[:max]), true
	}
	if more {
		s += " …"
	}
	return s
}

// indentAfterFirst indents the lines of reply text after its first, made
// safe for the terminal.
func indentAfterFirst(s, indent string) string {
	return strings.ReplaceAll(termtext.Safe(strings.TrimSpace(s)), "\n", "\n"+indent)
}
