package protocol

import (
	"fmt"
	"io"
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
	// Results writes the section on the last reply: its notices and what
	// each of its commands came to.
	Results func(b *strings.Builder, o frontend.Request)
	// Continuation is the PROMPT of a request that continues the work.
	Continuation string
}

// Render writes the outbox text of the tag protocol: HEADER, PROTOCOL,
// CONTEXT and PROMPT.
func Render(o frontend.Request) string { return RenderLayout(o, tagsLayout()) }

// tagsLayout is the layout of the tag protocol's requests.
func tagsLayout() Layout {
	return Layout{Protocol: prompts.Protocol, Reminder: prompts.Reminder, Results: renderResults, Continuation: Continuation}
}

// RenderLayout writes a request's text as layout l has it.
func RenderLayout(o frontend.Request, l Layout) string {
	var b strings.Builder
	// Sized up front: a first request may pack a whole project.
	b.Grow(renderSize(o, l))
	writeLayout(&b, &b, o, l)
	return b.String()
}

// WriteLayout writes the text of RenderLayout to w, the first request's
// pack file by file as it is read: a request of a whole project is never
// held whole. It returns w's first error.
func WriteLayout(w io.Writer, o frontend.Request, l Layout) error {
	sw := &stickyWriter{w: w}
	var b strings.Builder
	writeLayout(&b, sw, o, l)
	sw.WriteString(b.String())
	return sw.err
}

// stickyWriter keeps the first error of w and writes nothing after it, so
// that a request's parts need not each be checked.
type stickyWriter struct {
	w   io.Writer
	err error
}

func (s *stickyWriter) WriteString(str string) (int, error) {
	if s.err == nil {
		_, s.err = io.WriteString(s.w, str)
	}
	return len(str), s.err
}

// renderSize is about how long a request is.
func renderSize(o frontend.Request, l Layout) int {
	size := len(l.Protocol) + len(o.Task)*2 + 1024 + 80*len(o.Files)
	for _, f := range o.Requested {
		size += len(f.Text) + 2*len(f.Path) + 32
	}
	size += len(o.LeftOut)
	if o.Pack != nil {
		size += o.Pack.Size
	}
	for _, r := range o.Results {
		size += len(r.Summary) + len(r.Output) + len(r.Diff) + 64
	}
	return size
}

// writeLayout writes a request into b, but for its pack, which goes to
// out after what b holds (out is b itself when the whole request is
// built in memory).
func writeLayout(b *strings.Builder, out io.StringWriter, o frontend.Request, l Layout) {
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
	b.WriteString("\n=== PROTOCOL ===\n")
	if o.Reminder {
		b.WriteString(strings.TrimRight(l.Reminder, "\n"))
	} else {
		b.WriteString(strings.TrimRight(l.Protocol, "\n"))
	}
	b.WriteString("\n\n=== CONTEXT ===\n")
	if o.Environment != "" {
		b.WriteString("## Environment\n")
		b.WriteString(strings.TrimRight(o.Environment, "\n"))
		b.WriteString("\n\n")
	}
	if len(o.Messages) > 0 {
		b.WriteString("## Message from the user\n")
		for _, m := range o.Messages {
			b.WriteString(strings.TrimRight(m, "\n"))
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	renderFiles(b, o.Files)
	if o.Sequence > 1 || len(o.Notices) > 0 || o.Results != nil {
		l.Results(b, o)
	}
	if len(o.Requested) > 0 || o.Pack != nil {
		b.WriteString("\n## Requested File Contents\n")
		for _, f := range o.Requested {
			writeRequested(b, f)
		}
		b.WriteString(o.LeftOut)
		if o.Pack != nil {
			if out != io.StringWriter(b) {
				out.WriteString(b.String())
				b.Reset()
			}
			o.Pack.Files(func(f frontend.FileContent) { writeRequested(out, f) })
		}
	}
	b.WriteString("\n=== PROMPT ===\n")
	if prompt != "" {
		b.WriteString(strings.TrimSpace(prompt))
	} else {
		b.WriteString(l.Continuation)
	}
	b.WriteString("\n")
}

// writeRequested writes one requested file between its marker lines.
func writeRequested(b io.StringWriter, f frontend.FileContent) {
	name := ShowName(f.Path)
	b.WriteString("--- ")
	b.WriteString(name)
	b.WriteString(shownLines(f))
	b.WriteString(" ---\n")
	b.WriteString(f.Text)
	if f.Text != "" && !strings.HasSuffix(f.Text, "\n") {
		b.WriteString("\n")
	}
	b.WriteString("--- end ")
	b.WriteString(name)
	b.WriteString(" ---\n")
}

// renderResults writes the tag protocol's results section: the notices,
// then one line (and detail) per command.
func renderResults(b *strings.Builder, o frontend.Request) {
	b.WriteString("\n## Previous Command Results\n")
	for _, n := range o.Notices {
		b.WriteString(strings.TrimRight(n, "\n"))
		b.WriteString("\n")
	}
	for _, r := range o.Results {
		renderResult(b, r)
	}
	if len(o.Notices) == 0 && len(o.Results) == 0 {
		b.WriteString("(no commands were run)\n")
	}
}

func renderFiles(b *strings.Builder, files []workspace.Entry) {
	b.WriteString("## Workspace Files\n")
	if len(files) == 0 {
		b.WriteString("(empty workspace)\n")
		return
	}
	for _, f := range files {
		switch {
		case f.IsDir:
			// A summary counts files, not bytes: sizes cost a lookup of
			// every file, and only shown files are looked up.
			fmt.Fprintf(b, "  %s (%s)\n", ShowName(f.Path), human.Count(f.Files, "file", ""))
		case f.Binary:
			fmt.Fprintf(b, "  %s (%s, binary)\n", ShowName(f.Path), exactBytes(f.Size))
		default:
			fmt.Fprintf(b, "  %s (%s)\n", ShowName(f.Path), exactBytes(f.Size))
		}
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

// exactBytes writes a file's size to the byte, as the listing gives it.
func exactBytes(n int64) string { return human.Count(int(n), "byte", "") }

// Part is one part of an outbox and its size.
type Part struct {
	Name  string
	Bytes int
}

// Measure splits an outbox into its parts (the protocol, the workspace
// listing, the results or a JSON request's events, each requested file,
// the prompt) with their sizes,
// so the person can see what makes a request large.
func Measure(text string) []Part {
	var parts []Part
	cur := Part{Name: "Header"}
	flush := func(next string) {
		if cur.Bytes > 0 {
			parts = append(parts, cur)
		}
		cur = Part{Name: next}
	}
	for _, line := range strings.SplitAfter(text, "\n") {
		trimmed := strings.TrimRight(line, "\n")
		switch {
		case trimmed == "=== PROTOCOL ===":
			flush("Protocol")
		case trimmed == "=== PROMPT ===":
			flush("Prompt")
		case trimmed == "## Workspace Files", trimmed == "## Previous Command Results", trimmed == "## Requested File Contents",
			trimmed == "## Environment", trimmed == "## Message from the user", trimmed == "## Events of your last operations":
			flush(strings.TrimPrefix(trimmed, "## "))
		case strings.HasPrefix(trimmed, "--- ") && strings.HasSuffix(trimmed, " ---") && !strings.HasPrefix(trimmed, "--- end "):
			// Results indent their diffs, so a line starting "--- " is a
			// requested file's header.
			flush("file " + strings.TrimSuffix(strings.TrimPrefix(trimmed, "--- "), " ---"))
		}
		cur.Bytes += len(line)
	}
	flush("")
	return parts
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
