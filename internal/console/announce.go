package console

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/courier-agent/courier/internal/frontend"
	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/runner"
	"github.com/courier-agent/courier/internal/termtext"
)

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
	sort.SliceStable(parts, func(i, j int) bool { return parts[i].Bytes > parts[j].Bytes })
	var named []string
	for _, p := range parts {
		if len(named) == 3 || int64(p.Bytes) < size/10 {
			break
		}
		named = append(named, fmt.Sprintf("%s %s", p.Name, human.Bytes(int64(p.Bytes))))
	}
	advice := "the largest parts are " + strings.Join(named, ", ")
	switch {
	case len(parts) > 0 && strings.HasPrefix(parts[0].Name, "file "):
		advice += "; ask the LLM to read line ranges (lines=\"A-B\") instead of whole files, or lower read_lines"
	case len(parts) > 0 && parts[0].Name == "Previous Command Results":
		advice += "; lower max_output, or ask the LLM for quieter commands"
	case len(parts) > 0 && parts[0].Name == "Events of your last operations":
		advice += "; file content there is cut at read_lines lines and command output at max_output: lower them, or ask the LLM to read and print less at once"
	case len(parts) > 0 && parts[0].Name == "Workspace Files":
		advice += "; add what the LLM need not see to .gitignore, or lower list_limit"
	}
	return advice
}
