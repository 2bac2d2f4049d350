package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/protocol"
	"github.com/courier-agent/courier/internal/termtext"
)

type parseOptions struct {
	g    *globals
	file string
	json bool
}

func newParseCmd(g *globals) *cobra.Command {
	o := &parseOptions{g: g}
	cmd := &cobra.Command{
		Use:   "parse FILE",
		Short: "Show the commands a reply contains, without running anything",
		Example: `  courier parse inbox/answer.txt
  courier parse --json inbox/answer.txt | jq '.[].type'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.file = args[0]
			return runParse(o)
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print the commands as a JSON array")
	return cmd
}

func runParse(o *parseOptions) error {
	raw, err := os.ReadFile(o.file)
	if err != nil {
		return fmt.Errorf("read reply: %w", err)
	}
	text, err := protocol.Decode(raw)
	if err != nil {
		return fmt.Errorf("reply %s: %w", o.file, err)
	}
	reply := protocol.Parse(text)
	cmds := reply.Commands
	if cmds == nil {
		cmds = []command.Command{}
	}
	w := o.g.io.Out
	if o.json {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(cmds)
	}
	if reply.Session != "" {
		fmt.Fprintf(w, "Session: %s  Sequence: %d\n", reply.Session, reply.Sequence)
	}
	if len(cmds) == 0 {
		fmt.Fprintln(w, "No commands found.")
		return nil
	}
	for i, c := range cmds {
		fmt.Fprintf(w, "%d. %s\n", i+1, termtext.Safe(parseLine(c)))
	}
	return nil
}

// parseLine describes a parsed command on one line.
func parseLine(c command.Command) string {
	at := fmt.Sprintf(" (line %d)", c.Line)
	switch c.Type {
	case command.CreateFile:
		return fmt.Sprintf("CREATE_FILE %s: %d lines%s", c.Path, strings.Count(c.Content, "\n"), at)
	case command.EditFile:
		if len(c.Edits) > 0 {
			return fmt.Sprintf("EDIT_FILE %s: %d search/replace edits%s", c.Path, len(c.Edits), at)
		}
		return fmt.Sprintf("EDIT_FILE %s: lines %d-%d%s", c.Path, c.StartLine, c.EndLine, at)
	case command.DeleteFile, command.ReadFile:
		s := fmt.Sprintf("%s %s", c.Type, c.Path)
		if c.StartLine != 0 || c.EndLine != 0 {
			s += fmt.Sprintf(" lines %d-%d", c.StartLine, c.EndLine)
		}
		return s + at
	case command.RunCommand:
		return "RUN_COMMAND " + firstLine(c.Command, 70) + at
	case command.Message, command.Done:
		return fmt.Sprintf("%s %s%s", c.Type, firstLine(c.Text, 70), at)
	case command.ParseError:
		return fmt.Sprintf("PARSE_ERROR%s: %s", at, c.Error)
	}
	return string(c.Type) + at
}
