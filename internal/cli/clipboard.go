package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/courier-agent/courier/internal/clipboard"
	"github.com/courier-agent/courier/internal/inbox"
	"github.com/courier-agent/courier/internal/reply"
	"github.com/courier-agent/courier/internal/runner"
)

type pasteOptions struct {
	g  *globals
	id string
}

func newPasteCmd(g *globals, runF func(*pasteOptions) error) *cobra.Command {
	o := &pasteOptions{g: g}
	return &cobra.Command{
		Use:   "paste [ID]",
		Short: "Save the clipboard's text into inbox/ as the reply of a session",
		Long: `Save the text on the clipboard (the LLM's answer you copied from the chat)
into inbox/, named so that it goes to the session ID (default: the most
recently updated incomplete one). A running 'courier watch' applies it; or
run 'courier process'.`,
		Example: `  courier paste
  courier paste 3f9a1c2e && courier process`,
		Args: cobra.MaximumNArgs(1),
		RunE: optional(o, &o.id, nil, runF, pasteRun),
	}
}

func pasteRun(o *pasteOptions) error {
	b, err := o.g.runner(view{use: writing})
	if err != nil {
		return err
	}
	info, err := b.Status(o.id)
	if err != nil {
		return err
	}
	if info.Complete && o.id == "" {
		return withHint(fmt.Errorf("session %s is complete", info.ID), "name the session to paste for")
	}
	cb, err := clipboard.Detect(o.g.io.Environ)
	if err != nil {
		return withHint(err, fmt.Sprintf("save the answer into %s/ by hand instead", b.text.Rel(b.Paths().Inbox)))
	}
	text, err := cb.Paste()
	if err != nil && !errors.Is(err, clipboard.ErrEmpty) {
		return fmt.Errorf("read the clipboard: %w", err)
	}
	if strings.TrimSpace(text) == "" {
		return withHint(errors.New("the clipboard is empty"), "copy the LLM's answer in the chat first")
	}
	fe, err := b.FrontEnd(info.Protocol)
	if err != nil {
		return err
	}
	// Read in the session's protocol as every reply is (size, text, courier's own request), so
	// that what is saved is what processing it will accept.
	rep, err := reply.New("on the clipboard", text, o.g.cfg.MaxReply, fe)
	var echo *reply.EchoError
	switch {
	case errors.As(err, &echo):
		return withHint(errors.New("the clipboard holds courier's request, not the LLM's answer"),
			"paste it into the chat, then copy the chat's answer and run 'courier paste' again")
	case err != nil:
		return err
	}
	p, err := inbox.Save(b.Paths().Inbox, info.ID, text, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(o.g.io.Out, "Saved the clipboard (%d bytes) as %s for session %s\n", len(text), b.text.Rel(p), info.ID)
	if len(rep.Parsed.Commands) == 0 {
		b.cfg.Reporter.Warning(runner.Warning{Message: "the text holds no command blocks; the LLM will be told so"})
	}
	return nil

}
