package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/courier-agent/courier/internal/termtext"

	"github.com/spf13/cobra"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/frontend"
	"github.com/courier-agent/courier/internal/human"
	"github.com/courier-agent/courier/internal/reply"
)

type parseOptions struct {
	g        *globals
	file     string
	json     bool
	protocol string
}

func newParseCmd(g *globals, runF func(*parseOptions) error) *cobra.Command {
	o := &parseOptions{g: g}
	cmd := &cobra.Command{
		Use:   "parse FILE",
		Short: "Show the commands a reply contains, without running anything",
		Long: `Read the reply FILE as courier would (the same size limit, decoding and
checks) and show the commands it holds, without running anything. The
reply is read in the protocol of the session it names (its header, or its
file name), as 'courier process' would read it; --protocol chooses one.`,
		Example: `  courier parse inbox/answer.txt
  courier parse --protocol json inbox/answer.md
  courier parse --json inbox/answer.txt | jq '.[].type'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.file = args[0]
			if o.protocol != "" && !slices.Contains(protocolNames(), o.protocol) {
				return usage(withHint(fmt.Errorf("unknown protocol %q", o.protocol), "--protocol "+strings.Join(protocolNames(), " or ")))
			}
			return run(runF, parseRun, o)
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print the commands as a JSON array")
	cmd.Flags().StringVar(&o.protocol, "protocol", "", "read the reply in this protocol: "+strings.Join(protocolNames(), " or ")+" (default: the protocol of the session it names, else tags)")
	_ = cmd.RegisterFlagCompletionFunc("protocol", cobra.FixedCompletions(protocolNames(), cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func parseRun(o *parseOptions) error {
	fes := frontEnds()
	rep, err := reply.Read(o.file, o.file, o.g.cfg.MaxReply, fes[0])
	if err != nil {
		return err
	}
	name := o.protocol
	if name == "" {
		name = o.g.replyProtocol(rep, fes)
	}
	for _, fe := range fes {
		if fe.Name() == name {
			rep = rep.For(fe)
		}
	}
	cmds := rep.Parsed.Commands
	if cmds == nil {
		cmds = []command.Command{}
	}
	w := o.g.io.Out
	if o.json {
		return writeJSON(w, cmds)
	}
	if rep.Parsed.Session != "" {
		fmt.Fprintf(w, "Session: %s  Sequence: %d\n", rep.Parsed.Session, rep.Parsed.Sequence)
	}
	if len(cmds) == 0 {
		fmt.Fprintln(w, "No commands found.")
		if o.protocol == "" && name == fes[0].Name() {
			fmt.Fprintf(o.g.io.Err, "courier: hint: it was read as the %s protocol; give --protocol to read it in another (%s)\n", name, strings.Join(protocolNames(), " or "))
		}
		return nil
	}
	for i, c := range cmds {
		fmt.Fprintf(w, "%d. %s\n", i+1, termtext.Safe(parseLine(c)))
		if c.Note != "" {
			fmt.Fprintf(w, "   %s\n", termtext.Safe(c.Note))
		}
	}
	return nil
}

// replyProtocol is the protocol of the session a reply names, if it
// exists; else the default.
func (g *globals) replyProtocol(rep reply.Reply, fes []frontend.FrontEnd) string {
	id := rep.Route(fes...)
	if id == "" {
		return fes[0].Name()
	}
	b, err := g.runner(view{})
	if err != nil {
		return fes[0].Name()
	}
	info, err := b.Status(id)
	if err != nil || info.Protocol == "" {
		return fes[0].Name()
	}
	return info.Protocol
}

// parseLine describes a parsed command on one line.
func parseLine(c command.Command) string {
	at := fmt.Sprintf(" (line %d)", c.Line)
	switch c.Type {
	case command.CreateFile:
		return fmt.Sprintf("CREATE_FILE %s: %s%s", c.Path, human.Count(human.Lines(c.Content), "line", ""), at)
	case command.EditFile:
		if len(c.Edits) > 0 {
			return fmt.Sprintf("EDIT_FILE %s: %s%s", c.Path, human.Count(len(c.Edits), "search/replace edit", ""), at)
		}
		return fmt.Sprintf("EDIT_FILE %s: lines %d-%d%s", c.Path, c.StartLine, c.EndLine, at)
	case command.DeleteFile, command.ReadFile:
		s := fmt.Sprintf("%s %s", c.Type, c.Path)
		if c.StartLine != 0 || c.EndLine != 0 {
			s += fmt.Sprintf(" lines %d-%d", c.StartLine, c.EndLine)
		}
		return s + at
	case command.RunCommand:
		return "RUN_COMMAND " + human.FirstLine(c.Command, 70) + at
	case command.Message, command.Done:
		return fmt.Sprintf("%s %s%s", c.Type, human.FirstLine(c.Text, 70), at)
	case command.ParseError:
		return fmt.Sprintf("PARSE_ERROR%s: %s", at, c.Error)
	}
	return string(c.Type) + at
}
