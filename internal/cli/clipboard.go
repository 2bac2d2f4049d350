package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/courier-agent/courier/internal/atomicfile"
	"github.com/courier-agent/courier/internal/clipboard"
	"github.com/courier-agent/courier/internal/hint"
	"github.com/courier-agent/courier/internal/runner"
	"github.com/courier-agent/courier/internal/protocol"
	"github.com/courier-agent/courier/internal/session"
)

// clipboard returns the system clipboard, or nil after saying once (as a
// hint, never an error) why there is none.
func (g *globals) clipboard() *clipboard.Clipboard {
	cb, err := clipboard.Detect(g.io.Environ)
	if err != nil {
		if !g.warnedClipboard {
			g.warnedClipboard = true
			fmt.Fprintf(g.io.Err, "courier: hint: %v; copy the outbox by hand (or use 'courier show')\n", err)
		}
		return nil
	}
	return cb
}

// copyOutbox puts an outbox on the clipboard and reports whether it did.
func (g *globals) copyOutbox(text string) bool {
	cb := g.clipboard()
	if cb == nil {
		return false
	}
	if err := cb.Copy(text); err != nil {
		if !g.warnedClipboard {
			g.warnedClipboard = true
			fmt.Fprintf(g.io.Err, "courier: hint: could not copy the request to the clipboard (%v); copy it by hand\n", err)
		}
		return false
	}
	return true
}

// saveReply writes a reply taken from the clipboard into the inbox under a
// name that routes it to the session, and returns its path.
func saveReply(l *runner.Loop, id, text string) (string, error) {
	name := fmt.Sprintf("%s_reply_%s.txt", id, time.Now().Format("20060102-150405.000"))
	p := filepath.Join(l.Paths.Inbox, name)
	if err := atomicfile.Write(p, []byte(text), 0o644); err != nil {
		return "", fmt.Errorf("save reply: %w", err)
	}
	return p, nil
}

// commandCount counts the command blocks of a reply, parse errors included:
// they too show that the text was meant as commands.
func commandCount(text string) int { return len(protocol.Parse(text).Commands) }

func newPasteCmd(g *globals) *cobra.Command {
	var id string
	cmd := &cobra.Command{
		Use:   "paste [ID]",
		Short: "Save the clipboard's text into inbox/ as the reply of a session",
		Long: `Save the text on the clipboard (the LLM's answer you copied from the chat)
into inbox/, named so that it goes to the session ID (default: the most
recently updated incomplete one). A running 'courier watch' applies it; or
run 'courier process'.`,
		Example: `  courier paste
  courier paste 3f9a1c2e && courier process`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id = optionalArg(args)
			l, st, err := g.resolve(id)
			if err != nil {
				return err
			}
			cb, err := clipboard.Detect(g.io.Environ)
			if err != nil {
				return hint.Wrap(err, "save the answer into inbox/ by hand instead")
			}
			text, err := cb.Paste()
			if err != nil && !errors.Is(err, clipboard.ErrEmpty) {
				return fmt.Errorf("read the clipboard: %w", err)
			}
			if strings.TrimSpace(text) == "" {
				return hint.Wrap(errors.New("the clipboard is empty"), "copy the LLM's answer in the chat first")
			}
			if protocol.IsOutbox(text) {
				return hint.Wrap(errors.New("the clipboard holds courier's request, not the LLM's answer"),
					"paste it into the chat, then copy the chat's answer and run 'courier paste' again")
			}
			p, err := saveReply(l, st.SessionID, text)
			if err != nil {
				return err
			}
			con := g.newConsole(l)
			fmt.Fprintf(g.io.Out, "Saved the clipboard (%d bytes) as %s for session %s\n", len(text), con.rel(p), st.SessionID)
			if commandCount(text) == 0 {
				fmt.Fprintf(g.io.Err, "courier: warning: the text holds no command blocks; the LLM will be told so\n")
			}
			return nil
		},
	}
	return cmd
}

// watchClipboard takes LLM answers the person copies: text that holds
// command blocks, is not courier's own request and differs from what was on
// the clipboard before, is saved into the inbox for the session. It runs
// until ctx is done.
func (g *globals) watchClipboard(ctx context.Context, l *runner.Loop, st *session.State, con *console) {
	cb := g.clipboard()
	if cb == nil {
		return
	}
	last, _ := cb.Paste()
	tick := time.NewTicker(700 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		text, err := cb.Paste()
		if err != nil || text == last {
			continue
		}
		last = text
		if protocol.IsOutbox(text) || commandCount(text) == 0 {
			continue
		}
		if r := protocol.Parse(text); r.Session != "" && r.Session != st.SessionID {
			continue
		}
		p, err := saveReply(l, st.SessionID, text)
		if err != nil {
			report(g.io.Err, err)
			continue
		}
		fmt.Fprintf(g.io.Out, "Took the answer from the clipboard: %s\n", con.rel(p))
	}
}
