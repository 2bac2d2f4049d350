// Package console is what the person sees and answers in the terminal: the
// text reporter (a line per command as it finishes, then a summary and the
// next step), the JSON-lines reporter for programs, and the approver that
// asks on the terminal. Every text taken from a reply or a command's output
// is made safe for the terminal before it is printed.
package console

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/frontend"
	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/runner"
	"github.com/courier-agent/courier/internal/termtext"
)

// Options say where and how the text reporter writes.
type Options struct {
	Out io.Writer // the turn's lines
	Err io.Writer // warnings, hints and the progress line
	// Root is courier's root; paths are shown relative to Here, or to
	// Root without it.
	Root, Here string
	Color      bool
	// Quiet prints only failures, messages and what to do next.
	Quiet bool
	// Progress shows a running command's elapsed time (Err is a terminal).
	Progress    bool
	TokenBudget int    // warn about requests estimated above it (0: never)
	Copier      Copier // puts each new request on the clipboard
	// Unattended: an agent answers, the person is not asked to paste.
	Unattended bool
	// Notify calls the person's attention (the terminal bell, a desktop
	// notification) to a request on the clipboard or a question.
	Notify func(message string)
}

// Copier puts text on the clipboard.
type Copier interface {
	Copy(text string) error
}

// Text is the text reporter.
type Text struct {
	o        Options
	progress *progress
	mu       sync.Mutex
	// started is set between a new session and its first request, which is
	// then named as the session's outbox.
	started bool
	// answerer is the agent whose reply a turn resumed after approval
	// carried out: the next request is its to answer.
	answerer string
}

// NewText returns a text reporter.
func NewText(o Options) *Text {
	t := &Text{o: o}
	if o.Progress {
		t.progress = &progress{w: o.Err, delay: 2 * time.Second, every: time.Second}
	}
	return t
}

const (
	green  = "\x1b[32m"
	red    = "\x1b[31m"
	yellow = "\x1b[33m"
	bold   = "\x1b[1m"
	dim    = "\x1b[2m"
	reset  = "\x1b[0m"
)

func (t *Text) paint(code, s string) string {
	if !t.o.Color {
		return s
	}
	return code + s + reset
}

// Rel shows a path relative to Here (or the root) when it is inside it.
func (t *Text) Rel(p string) string {
	if r, err := filepath.Rel(cmp.Or(t.o.Here, t.o.Root), p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

func (t *Text) out(format string, args ...any) { fmt.Fprintf(t.o.Out, format, args...) }

// Warn prints a warning and its hint in courier's one format.
func (t *Text) Warn(msg, hint string) {
	fmt.Fprintf(t.o.Err, "courier: warning: %s\n", msg)
	if hint != "" {
		fmt.Fprintf(t.o.Err, "courier: hint: %s\n", hint)
	}
}

// lock holds the reporter for one event.
func (t *Text) lock() func() {
	t.mu.Lock()
	return t.mu.Unlock
}

// The methods below implement runner.Reporter.

func (t *Text) SessionStarted(e runner.SessionStarted) {
	defer t.lock()()
	t.out("Session: %s\n", e.Session)
	t.started = true
}

func (t *Text) WaitingForReply(e runner.WaitingForReply) {
	defer t.lock()()
	t.out("Waiting for the reply %s (Ctrl-C to stop)\n", e.From)
}

func (t *Text) ReplyTaken(e runner.ReplyTaken) {
	defer t.lock()()
	t.out("Reply %s → session %s, request %d\n", t.replyName(e.Name), e.Session, e.Sequence)
}

func (t *Text) ReplySkipped(e runner.ReplySkipped) {
	defer t.lock()()
	if e.Why != "" {
		t.Warn(fmt.Sprintf("skipped %s: %s", termtext.Safe(t.Rel(filepath.Join(t.o.Root, "inbox", e.Name))), termtext.Safe(e.Why)), "")
		return
	}
	t.out("Reply %s is for session %s; leaving it for that session\n", t.replyName(e.Name), e.Session)
}

func (t *Text) ReplySetAside(e runner.ReplySetAside) {
	defer t.lock()()
	msg := e.Err.Error()
	if e.MovedTo != "" {
		msg = fmt.Sprintf("%s (moved to %s)", msg, t.Rel(e.MovedTo))
	}
	fmt.Fprintf(t.o.Err, "courier: error: %s\n", termtext.Safe(msg))
}

func (t *Text) ReplyRefused(e runner.ReplyRefused) {
	defer t.lock()()
	hint := ""
	if e.MovedTo != "" {
		hint = "moved to " + t.Rel(e.MovedTo)
	}
	t.Warn(termtext.Safe(e.Reason), hint)
}

func (t *Text) TurnResumed(e runner.TurnResumed) {
	defer t.lock()()
	t.answerer = ""
	if e.AfterApproval {
		t.answerer = e.Agent
		t.out("Session %s: continuing reply %s to request %d\n", e.Session, termtext.Safe(e.Reply), e.Sequence)
	} else {
		t.out("Session %s: finishing reply %s to request %d, which was not finished\n", e.Session, termtext.Safe(e.Reply), e.Sequence)
	}
}

func (t *Text) CommandStarted(e runner.CommandStarted) {
	defer t.lock()()
	if e.Command.Type == command.RunCommand && t.progress != nil {
		t.progress.start(termtext.Safe(human.FirstLine(e.Command.Command, 50)))
	}
}

func (t *Text) ApprovalNeeded(runner.ApprovalNeeded) {
	defer t.lock()()
	t.notify("a command waits for your approval")
}

func (t *Text) ApprovalDecided(e runner.ApprovalDecided) {
	defer t.lock()()
	verb := "Denied"
	if e.Approved {
		verb = "Approved"
	}
	where := ""
	if e.Elsewhere {
		where = " (answered in another terminal)"
	}
	t.out("%s '%s'%s\n", verb, termtext.Safe(human.FirstLine(e.Command, 80)), where)
}

func (t *Text) Warning(e runner.Warning) {
	defer t.lock()()
	t.Warn(termtext.Safe(e.Message), termtext.Safe(e.Hint))
}

// replyName shows a reply's name: a path relative to the root, a bare
// file name (the inbox's) as the inbox's file, others as they are.
func (t *Text) replyName(name string) string {
	if !strings.ContainsAny(name, "/ ") {
		name = filepath.Join(t.o.Root, "inbox", name)
	}
	if filepath.IsAbs(name) {
		return termtext.Safe(t.Rel(name))
	}
	return termtext.Safe(name)
}

func (t *Text) CommandFinished(e runner.CommandFinished) {
	defer t.lock()()
	cmd, r := e.Command, e.Result
	if t.progress != nil {
		t.progress.stop()
	}
	if cmd.Type == command.Message {
		t.out("  %s %s\n", t.paint(bold, "MESSAGE"), indentAfterFirst(termtext.Safe(cmd.Text), "    "))
		return
	}
	if t.o.Quiet && r.Success() {
		return
	}
	mark := t.paint(green, "✓")
	if !r.Success() {
		mark = t.paint(red, "✗")
	}
	t.out("  %s %s\n", mark, termtext.Safe(Describe(cmd, r)))
	if cmd.Type == command.RunCommand && !r.Success() {
		t.out("%s", Tail(r.Output, tailLines))
	}
}

// tailLines is how many of a command's last lines of output the console
// shows: enough to see why it failed, not the flood the LLM reads.
const tailLines = 10

// Tail shows the last n lines of a command's output, made safe for the
// terminal and indented, saying how many it leaves out; "" for none.
func Tail(output string, n int) string {
	output = strings.TrimRight(output, "\n")
	if strings.TrimSpace(output) == "" {
		return ""
	}
	lines := strings.Split(output, "\n")
	var b strings.Builder
	if len(lines) > n {
		fmt.Fprintf(&b, "      … %s above\n", human.Count(len(lines)-n, "line", ""))
		lines = lines[len(lines)-n:]
	}
	for _, l := range lines {
		b.WriteString("      " + termtext.Safe(human.Cut(l, 300)) + "\n")
	}
	return b.String()
}

// Describe says on one line what a command was and how it ended, as the
// console shows it (not yet made safe for the terminal).
func Describe(cmd command.Command, r command.Result) string {
	s := string(cmd.Type)
	switch cmd.Type {
	case command.RunCommand:
		s += " " + human.FirstLine(cmd.Command, 60) + "  "
		if r.ExitCode != nil {
			s += fmt.Sprintf("exit %d, %s", *r.ExitCode, (time.Duration(r.DurationMS) * time.Millisecond).Round(10*time.Millisecond))
		} else {
			s += r.Summary
		}
		if r.ApprovedAll {
			s += "  (approved: all like it)"
		}
		return s
	case command.ParseError:
		return "PARSE_ERROR " + human.FirstLine(r.Summary, 200)
	case command.Message:
		return s + "  " + r.Summary
	case command.CreateFile, command.EditFile, command.DeleteFile, command.ReadFile:
		s += " " + cmd.Path
	}
	if !r.Success() {
		return s + "  " + r.Summary
	}
	if r.Added > 0 || r.Removed > 0 {
		s += fmt.Sprintf("  +%d -%d", r.Added, r.Removed)
	}
	return s
}

// TurnEnded prints the end of a turn: counts, file changes and the
// session's summary when it is complete.
func (t *Text) TurnEnded(e runner.TurnEnded) {
	defer t.lock()()
	bad, added, removed := 0, 0, 0
	done := map[command.Type]int{} // commands that succeeded, by type
	for i, r := range e.Results {
		if !r.Success() {
			bad++
			continue
		}
		done[e.Commands[i].Type]++
		added += r.Added
		removed += r.Removed
	}
	if t.o.Quiet && bad == 0 && !e.Complete {
		return
	}
	line := fmt.Sprintf("%s: %d ok", human.Count(len(e.Results), "command", ""), len(e.Results)-bad)
	if bad > 0 {
		line += ", " + t.paint(red, fmt.Sprintf("%d failed", bad))
	}
	if created, edited, deleted := done[command.CreateFile], done[command.EditFile], done[command.DeleteFile]; created+edited+deleted > 0 {
		line += fmt.Sprintf("; files: %d created, %d edited, %d deleted (+%d -%d)", created, edited, deleted, added, removed)
	}
	t.out("%s\n", line)
	if e.Complete {
		// The check the LLM ended on, as it printed it: the person sees
		// what DONE rests on.
		for i, c := range e.Commands {
			if c.Type == command.RunCommand && i < len(e.Results) {
				if out := Tail(e.Results[i].Output, tailLines); out != "" {
					t.out("  output of %s:\n%s", termtext.Command(human.FirstLine(c.Command, 60), ""), out)
				}
			}
		}
		t.out("%s session %s is complete\n", t.paint(green, "DONE:"), e.Session)
		if s := strings.TrimSpace(e.Summary); s != "" {
			t.out("  %s\n", indentAfterFirst(termtext.Safe(s), "  "))
		}
	}
}

func indentAfterFirst(s, indent string) string {
	return strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n"+indent)
}

func (t *Text) TurnUndone(e runner.TurnUndone) {
	defer t.lock()()
	rep := e.Report
	done := "Undid the changes"
	if rep.Resumed {
		done = "Finished the interrupted undo of the changes"
	}
	t.out("%s of the reply to request %d of session %s\n", done, rep.Sequence, e.Session)
	for _, p := range rep.FoldedRestored() {
		t.out("  restored %s\n", termtext.Safe(p))
	}
	for _, p := range rep.FoldedRemoved() {
		t.out("  removed  %s\n", termtext.Safe(p))
	}
	for _, p := range rep.NotUndone {
		t.Warn("not undone: "+termtext.Safe(p), "")
	}
	for _, p := range slices.Sorted(maps.Keys(rep.Kept)) {
		t.Warn(fmt.Sprintf("%s had changed since that reply; its content was kept in %s", termtext.Safe(p), t.Rel(rep.Kept[p])), "")
	}
}

// AgentRun shows a run of an agent as it happens and how it ended.
func (t *Text) AgentRun(e runner.AgentRun) {
	defer t.lock()()
	who := e.Agent
	if e.Model != "" {
		who += " (" + e.Model + ")"
	}
	received := human.Bytes(e.Bytes)
	if e.Tokens > 0 {
		received += ", " + human.Count(e.Tokens, "token", "")
	}
	switch e.Kind {
	case runner.RunStarted:
		t.out("Asking %s: run %s\n", termtext.Safe(who), e.RunID)
		if t.progress != nil {
			t.progress.start(termtext.Safe(who) + " is answering")
		}
	case runner.RunProgress:
		if t.progress != nil {
			t.progress.set(received)
		}
	case runner.RunRetry:
		t.Warn(fmt.Sprintf("%s: %v; trying again in %s (attempt %d)", termtext.Safe(who), safeErr(e.Err), e.Wait.Round(time.Second), e.Attempt), "")
	case runner.RunRestart:
		t.Warn(fmt.Sprintf("run %s failed: %v; starting run %d in %s", e.RunID, safeErr(e.Err), e.Attempt, e.Wait.Round(time.Second)), "")
	case runner.RunEnded:
		if t.progress != nil {
			t.progress.stop()
		}
		if e.Err != nil {
			t.out("  %s run %s of %s failed after %s: %s\n", t.paint(red, "✗"), e.RunID, termtext.Safe(who), roundElapsed(e.Elapsed), safeErr(e.Err))
			return
		}
		t.out("  %s answered in %s: %s\n", termtext.Safe(who), roundElapsed(e.Elapsed), received)
	}
}

func safeErr(err error) string {
	if err == nil {
		return ""
	}
	return termtext.Safe(err.Error())
}

func roundElapsed(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(100 * time.Millisecond)
}

func (t *Text) notify(msg string) {
	if t.o.Notify != nil {
		t.o.Notify(msg)
	}
}

// RequestWritten tells the person where a request is, how big, whether
// on the clipboard, and what to do with it; above the token budget it
// warns and says what takes the room.
func (t *Text) RequestWritten(e runner.RequestWritten) {
	defer t.lock()()
	if t.started {
		t.started = false
		t.out("Outbox: %s\n", t.Rel(e.Path))
	} else if e.Updated {
		t.out("request %d updated: paste it again\n", e.Sequence)
	} else if e.Resumed {
		switch {
		case e.Damaged:
			t.out("Session %s: rewrote the outbox, which was not as courier wrote it\n", e.Session)
		case e.Rewritten:
			t.out("Session %s: rewrote the missing outbox\n", e.Session)
		}
		t.out("Session %s, request %d\n", e.Session, e.Sequence)
	}
	tokens := e.Tokens
	t.out("Next request: %s (%s, about %s tokens)\n", t.paint(bold, t.Rel(e.Path)), human.Bytes(e.Size), human.Thousands(tokens))
	if t.o.Unattended {
		return
	}
	inbox := t.Rel(filepath.Join(t.o.Root, "inbox")) + "/"
	answerer := t.answerer
	t.answerer = ""
	switch {
	case answerer != "":
		// An agent's turn decided by hand: the agent answers only when
		// given again.
		t.out("  the %s agent gave the last reply: to have it answer this one, run 'courier watch %s' with the agent as you gave it (--agent, --agent-command or courier.toml)\n", termtext.Safe(answerer), e.Session)
		if t.o.Copier != nil && t.copy(e.Text) {
			t.out("  or paste it into the chat (it is on the clipboard), then save or copy the answer (courier paste) into %s\n", inbox)
		} else if !t.o.Quiet {
			t.out("  or paste it into the chat, then save the answer into %s\n", inbox)
		}
	case t.o.Copier != nil && t.copy(e.Text):
		t.out("  it is on the clipboard: paste it into the chat, then save or copy the answer (courier paste) into %s\n", inbox)
		t.notify(fmt.Sprintf("request %d is on the clipboard", e.Sequence))
	case !t.o.Quiet:
		t.out("  paste it into the chat, then save the answer into %s (or copy it and run 'courier paste')\n", inbox)
	}
	if b := t.o.TokenBudget; b > 0 && tokens > b {
		advice := "read less of the workspace at once"
		if len(e.Parts) > 0 {
			advice = budgetAdvice(e.Parts, e.Size)
		}
		t.Warn(fmt.Sprintf("the request is about %s tokens, above the budget of %s", human.Thousands(tokens), human.Thousands(b)), advice)
	}
}

func (t *Text) copy(text string) bool {
	if err := t.o.Copier.Copy(text); err != nil {
		t.Warn(fmt.Sprintf("could not copy the request to the clipboard (%v)", err), "copy it by hand, or use 'courier show'")
		t.o.Copier = nil
		return false
	}
	return true
}

// budgetAdvice names the largest parts of a request and how to shrink them.
func budgetAdvice(parts []frontend.Part, size int64) string {
	parts = slices.Clone(parts)
	slices.SortStableFunc(parts, func(a, b frontend.Part) int { return cmp.Compare(b.Bytes, a.Bytes) })
	var named []string
	for _, p := range parts {
		if len(named) == 3 || int64(p.Bytes) < size/10 {
			break
		}
		named = append(named, fmt.Sprintf("%s %s", p.Name, human.Bytes(int64(p.Bytes))))
	}
	advice := "the largest parts are " + strings.Join(named, ", ")
	switch top := parts[0].Name; {
	case strings.HasPrefix(top, "file "):
		advice += "; ask the LLM to read line ranges (lines=\"A-B\") instead of whole files, or lower read_lines"
	case top == "Previous Command Results":
		advice += "; lower max_output, or ask the LLM for quieter commands"
	case top == "Events of your last operations":
		advice += "; file content there is cut at read_lines lines and command output at max_output: lower them, or ask the LLM to read and print less at once"
	case top == "Workspace Files":
		advice += "; add what the LLM need not see to .gitignore, or lower list_limit"
	}
	return advice
}

// progress shows on a terminal what is under way and for how long, so
// that a long build or a slow model does not look like a hang; one line,
// redrawn, cleared at the end.
type progress struct {
	w io.Writer
	// delay keeps quick work from flashing a line; every is the pause
	// between redraws.
	delay, every time.Duration
	mu           sync.Mutex
	done         chan struct{}
	detail       string // what arrived so far
	wg           sync.WaitGroup
}

// start shows what is under way, unless something already is.
func (p *progress) start(what string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done != nil {
		return
	}
	p.done = make(chan struct{})
	p.detail = ""
	done := p.done
	began := time.Now()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		tick := time.NewTicker(p.every)
		defer tick.Stop()
		shown := false
		for {
			select {
			case <-done:
				if shown {
					fmt.Fprint(p.w, "\r\x1b[K")
				}
				return
			case now := <-tick.C:
				if el := now.Sub(began); el >= p.delay {
					p.mu.Lock()
					detail := p.detail
					p.mu.Unlock()
					if detail != "" {
						detail = "  " + detail
					}
					fmt.Fprintf(p.w, "\r\x1b[K  … %s  %s%s", what, el.Round(time.Second), detail)
					shown = true
				}
			}
		}
	}()
}

func (p *progress) set(detail string) {
	p.mu.Lock()
	p.detail = detail
	p.mu.Unlock()
}

func (p *progress) stop() {
	p.mu.Lock()
	if p.done != nil {
		close(p.done)
		p.done = nil
	}
	p.mu.Unlock()
	p.wg.Wait()
}
