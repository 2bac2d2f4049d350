package protocol

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/frontend"
	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/workspace"
	"github.com/courier-agent/courier/prompts"
)

// headerTask is how much of a task the HEADER shows when the task is in
// full elsewhere.
const headerTask = 120

// Continuation is the PROMPT of every outbox after the first.
const Continuation = "Continue working on the task based on the results above. If the task is complete, send [DONE] with a summary."

// NoCommandsNotice goes to the LLM when its reply held no command at all:
// it says so plainly and restates the format in two lines.
const NoCommandsNotice = `Your last reply contained no commands, so nothing was done.
Answer with command blocks, each tag on its own line: [CREATE_FILE path="a.txt"] ... [/CREATE_FILE], [RUN_COMMAND] ... [/RUN_COMMAND], and [DONE] ... [/DONE] when the task is complete.`

// Layout is what sets one front end's requests apart; the rest (the
// HEADER, the environment, the person's messages, the workspace listing,
// the requested files, the PROMPT) every front end writes alike.
type Layout struct {
	// Protocol is the PROTOCOL section; Reminder stands for it in the later
	// requests of a chat when the person pastes it once.
	Protocol, Reminder string
	// Results writes the section on the last reply, called ResultsTitle:
	// o's notices and what each of the reply's commands came to, results
	// (asking t for the commands if it shows them).
	Results      func(b *strings.Builder, o frontend.Request, results []command.Result, t frontend.Turn)
	ResultsTitle string
	// Continuation is the PROMPT of a request that continues the work.
	Continuation string
}

// tagsLayout is the layout of the tag protocol's requests.
func tagsLayout() Layout {
	return Layout{Protocol: prompts.Protocol, Reminder: prompts.Reminder, Results: renderResults,
		ResultsTitle: "Previous Command Results", Continuation: Continuation}
}

// RenderLayout writes the request of turn t as layout l has it: HEADER,
// PROTOCOL, CONTEXT and PROMPT; and the sizes of its parts.
func RenderLayout(t frontend.Turn, l Layout) (string, []frontend.Part) {
	b := new(strings.Builder)
	o := t.Head()
	// Each part's Bytes holds where it starts until the end is known.
	var parts []frontend.Part
	part := func(name string) { parts = append(parts, frontend.Part{Name: name, Bytes: b.Len()}) }
	section := func(name string) { part(name); b.WriteString("## " + name + "\n") }
	line := func(s string) { b.WriteString(strings.TrimRight(s, "\n") + "\n") }
	part("Header")
	prompt := o.Prompt
	if prompt == "" && o.Sequence <= 1 {
		prompt = o.Task
	}
	b.WriteString("=== HEADER ===\n")
	fmt.Fprintf(b, "Session: %s\nSequence: %d\n", o.Session, o.Sequence)
	// The task is written in full once: in the PROMPT when it is asked for
	// there, else in the HEADER (unless the chat has it already).
	task := human.OneLine(o.Task, 0)
	if prompt == o.Task || o.Reminder {
		task = human.FirstLine(task, headerTask)
	}
	fmt.Fprintf(b, "Task: %s\n", task)
	for i, f := range o.FollowUps {
		fmt.Fprintf(b, "Follow-up task %d: %s\n", i+1, human.OneLine(f, headerTask))
	}
	b.WriteString("\n")
	part("Protocol")
	b.WriteString("=== PROTOCOL ===\n")
	if o.Reminder {
		line(l.Reminder)
	} else {
		line(l.Protocol)
	}
	b.WriteString("\n=== CONTEXT ===\n")
	if o.Environment != "" {
		section("Environment")
		line(o.Environment)
		b.WriteString("\n")
	}
	if len(o.Messages) > 0 {
		section("Message from the user")
		for _, m := range o.Messages {
			line(m)
		}
		b.WriteString("\n")
	}
	section("Workspace Files")
	renderFiles(b, t.Listing())
	if results := t.LastResults(); o.Sequence > 1 || len(o.Notices) > 0 || results != nil {
		b.WriteString("\n")
		section(l.ResultsTitle)
		l.Results(b, o, results, t)
	}
	requested, leftOut := t.RequestedFiles()
	pack := t.FirstPack()
	if len(requested) > 0 || pack != nil {
		b.WriteString("\n")
		section("Requested File Contents")
		file := func(f frontend.FileContent) {
			part("file " + ShowName(f.Path) + shownLines(f))
			writeRequested(b, f)
		}
		for _, f := range requested {
			file(f)
		}
		b.WriteString(leftOut)
		if pack != nil {
			pack.Files(file)
		}
	}
	b.WriteString("\n")
	part("Prompt")
	b.WriteString("=== PROMPT ===\n")
	if prompt != "" {
		b.WriteString(strings.TrimSpace(prompt))
	} else {
		b.WriteString(l.Continuation)
	}
	b.WriteString("\n")
	end := b.Len()
	for i := len(parts) - 1; i >= 0; i-- {
		start := parts[i].Bytes
		parts[i].Bytes, end = end-start, start
	}
	return b.String(), parts
}

// writeRequested writes one requested file between its marker lines.
func writeRequested(b *strings.Builder, f frontend.FileContent) {
	name := ShowName(f.Path)
	fmt.Fprintf(b, "--- %s%s ---\n%s", name, shownLines(f), f.Text)
	if f.Text != "" && !strings.HasSuffix(f.Text, "\n") {
		b.WriteString("\n")
	}
	fmt.Fprintf(b, "--- end %s ---\n", name)
}

// renderResults writes the tag protocol's results section: the notices,
// then one line (and detail) per command.
func renderResults(b *strings.Builder, o frontend.Request, results []command.Result, _ frontend.Turn) {
	for _, n := range o.Notices {
		b.WriteString(strings.TrimRight(n, "\n"))
		b.WriteString("\n")
	}
	for _, r := range results {
		renderResult(b, r)
	}
	if len(o.Notices) == 0 && len(results) == 0 {
		b.WriteString("(no commands were run)\n")
	}
}

func renderFiles(b *strings.Builder, files []workspace.Entry) {
	if len(files) == 0 {
		b.WriteString("(empty workspace)\n")
		return
	}
	for _, f := range files {
		size := human.Count(int(f.Size), "byte", "")
		switch {
		case f.IsDir:
			// A summary counts files, not bytes: sizes cost a lookup of
			// every file, and only shown files are looked up.
			size = human.Count(f.Files, "file", "")
		case f.Binary:
			size += ", binary"
		}
		fmt.Fprintf(b, "  %s (%s)\n", ShowName(f.Path), size)
	}
}

// ShowName writes a file name from the workspace as it goes into a
// request: as it is, or quoted with Go escapes when it holds a newline, a
// control or other invisible character, or bytes that are not UTF-8, so
// that a name a command chose cannot start a line of its own (a forged
// section or result) or hide what it is.
func ShowName(p string) string {
	if strings.HasPrefix(p, `"`) || !utf8.ValidString(p) {
		return strconv.Quote(p)
	}
	for _, r := range p {
		if !unicode.IsPrint(r) {
			return strconv.Quote(p)
		}
	}
	return p
}

// renderResult writes one "[OK] TYPE: summary" line and its detail.
func renderResult(b *strings.Builder, r command.Result) {
	mark := "[OK]"
	if !r.Success() {
		mark = "[FAILED]"
	}
	fmt.Fprintf(b, "%s %s: %s\n", mark, r.Type, r.Summary)
	if r.Type == command.RunCommand && (r.Output != "" || r.ExitCode != nil) {
		writeBlock(b, "Output", r.Output, "(no output)")
	} else if r.Output != "" {
		writeBlock(b, "Detail", r.Output, "")
	}
	if r.Changed != "" {
		// What a command changed, so the LLM learns that go mod tidy
		// rewrote go.sum without another command.
		fmt.Fprintf(b, "  %s\n", r.Changed)
	}
	// A created file's diff would only repeat what the LLM just wrote, and
	// a deleted one's what it chose to drop; edits are where a diff tells.
	if r.Diff != "" && r.Type != command.DeleteFile && !strings.HasPrefix(r.Summary, "Created ") {
		writeBlock(b, "Diff", r.Diff, "")
	}
}

// writeBlock writes a labelled text, inline when it is one line and as an
// indented block otherwise, so it cannot be mistaken for a result line.
func writeBlock(b *strings.Builder, label, text, empty string) {
	text = strings.TrimRight(text, "\n")
	if text == "" {
		if empty != "" {
			fmt.Fprintf(b, "  %s: %s\n", label, empty)
		}
		return
	}
	if !strings.Contains(text, "\n") {
		fmt.Fprintf(b, "  %s: %s\n", label, text)
		return
	}
	fmt.Fprintf(b, "  %s:\n", label)
	for _, line := range strings.Split(text, "\n") {
		b.WriteString("    ")
		b.WriteString(line)
		b.WriteString("\n")
	}
}

// shownLines names the lines a partly shown file shows: " (lines 400-464 of
// 772)", so that two reads of one file are told apart.
func shownLines(f frontend.FileContent) string {
	switch {
	case f.First == 0:
		return ""
	case f.Total < 0:
		return fmt.Sprintf(" (lines %d-%d)", f.First, f.Last)
	}
	return fmt.Sprintf(" (lines %d-%d of %d)", f.First, f.Last, f.Total)
}
