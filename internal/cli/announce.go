package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/courier-agent/courier/internal/protocol"
	"github.com/courier-agent/courier/internal/termtext"
)

// estimateTokens guesses how many tokens a chat model counts for text:
// about four characters a token for English prose and code.
func estimateTokens(text string) int { return (utf8.RuneCountInString(text) + 3) / 4 }

// announce tells the person about a new outbox: where it is, how big, that
// it is on the clipboard (with copy on), and what to do with it; above the
// token budget it warns and says what is taking the room.
func (g *globals) announce(con *console, outbox string) {
	data, err := os.ReadFile(outbox)
	if err != nil {
		fmt.Fprintf(con.w, "Next request: %s\n", con.paint(bold, con.rel(outbox)))
		return
	}
	text := string(data)
	tokens := estimateTokens(text)
	fmt.Fprintf(con.w, "Next request: %s (%s, about %s tokens)\n", con.paint(bold, con.rel(outbox)), humanBytes(len(data)), thousands(tokens))
	inbox := con.rel(filepath.Join(con.root, "inbox")) + string(filepath.Separator)
	switch {
	case g.cfg.Copy && g.copyOutbox(text):
		fmt.Fprintf(con.w, "  it is on the clipboard: paste it into the chat, then save or copy the answer (courier paste) into %s\n", inbox)
	case !con.quiet:
		fmt.Fprintf(con.w, "  paste it into the chat, then save the answer into %s\n", inbox)
	}
	if b := g.cfg.TokenBudget; b > 0 && tokens > b {
		fmt.Fprintf(g.io.Err, "courier: warning: the request is about %s tokens, above the budget of %s\n", thousands(tokens), thousands(b))
		fmt.Fprintf(g.io.Err, "courier: hint: %s\n", termtext.Safe(budgetAdvice(text)))
	}
}

// budgetAdvice names the largest parts of an outbox and how to shrink them.
func budgetAdvice(text string) string {
	parts := protocol.Measure(text)
	sort.Slice(parts, func(i, j int) bool { return parts[i].Bytes > parts[j].Bytes })
	var named []string
	for _, p := range parts {
		if len(named) == 3 || p.Bytes < len(text)/10 {
			break
		}
		named = append(named, fmt.Sprintf("%s %s", p.Name, humanBytes(p.Bytes)))
	}
	advice := "the largest parts are " + strings.Join(named, ", ")
	switch {
	case len(parts) > 0 && strings.HasPrefix(parts[0].Name, "file "):
		advice += "; ask the LLM to read line ranges (lines=\"A-B\") instead of whole files, or lower read_lines"
	case len(parts) > 0 && parts[0].Name == "Previous Command Results":
		advice += "; lower max_output, or ask the LLM for quieter commands"
	case len(parts) > 0 && parts[0].Name == "Workspace Files":
		advice += "; add what the LLM need not see to .gitignore, or lower list_limit"
	}
	return advice
}

func humanBytes(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// thousands writes n with comma separators, as people read token counts.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
