package agentspaces

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/courier-agent/courier/internal/human"
	"mvdan.cc/sh/v3/syntax"
)

// maxLineBytes cuts single lines of readFile content in a chat request, as
// the tag protocol does: one minified line must not fill it.
const maxLineBytes = 2000

// cutContent shortens a readFile event's content for a chat request as
// the tag protocol shortens READ_FILE: at most maxLines lines (0: any),
// each at most maxLineBytes, and no more once they fill room bytes (none
// when room <= 0); base64 to maxLineBytes. The "note" says what was left
// out and how to read it. It returns the bytes kept.
func cutContent(e *Event, maxLines, room int) int {
	if e.Type != EventReadFile || !e.Success {
		return 0
	}
	if room <= 0 {
		e.Content = ""
		e.Note = "Left out for room: the readFile events before this one fill what this request may show of files (the token_budget setting); readFile it again in a later reply."
		return 0
	}
	if e.Encoding == Base64 && len(e.Content) > maxLineBytes {
		keep := maxLineBytes / 4 * 4 // whole bytes
		n := keep / 4 * 3
		e.Content = e.Content[:keep]
		e.Note = fmt.Sprintf("Shortened for this request: the content shows the first %s of the file's %s bytes, as base64; read other parts with a shell operation, e.g. od -A d -t x1 -j %d -N %d %s.",
			human.Thousands(n), human.Thousands(int(e.Size)), n, n, shellQuote(e.Path))
	}
	if e.Encoding == Base64 {
		return len(e.Content)
	}
	text := e.Content
	var b strings.Builder
	lines, shown, cut := 0, 0, 0
	full := false // the room was filled
	for rest := text; rest != ""; {
		line, after, found := strings.Cut(rest, "\n")
		lines++
		full = full || b.Len() >= room
		if maxLines > 0 && shown == maxLines || full {
			rest = after
			if !found {
				break
			}
			continue
		}
		shown++
		if len(line) > maxLineBytes {
			keep := maxLineBytes
			for keep > 0 && !utf8.RuneStart(line[keep]) {
				keep--
			}
			fmt.Fprintf(&b, "%s [... courier cut this line: %s more characters]", line[:keep], human.Thousands(utf8.RuneCountInString(line[keep:])))
			cut++
		} else {
			b.WriteString(line)
		}
		if found {
			b.WriteByte('\n')
		}
		rest = after
	}
	if shown == lines && cut == 0 {
		return len(text)
	}
	e.Content = b.String()
	var note []string
	if shown < lines {
		why := "the read_lines setting"
		if full {
			why = "what this request may show of files, the token_budget setting"
		}
		note = append(note, fmt.Sprintf("the content shows lines 1-%d of %s (%s); readFile has no line range, so read the rest with a shell operation, e.g. sed -n '%d,%dp' %s",
			shown, human.Thousands(lines), why, shown+1, shown+max(maxLines, shown), shellQuote(e.Path)))
	}
	if cut > 0 {
		note = append(note, fmt.Sprintf("%s longer than %s characters end in a [... courier cut this line] mark", human.Count(cut, "line", ""), human.Thousands(maxLineBytes)))
	}
	e.Note = "Shortened for this request: " + strings.Join(note, "; ") + "."
	return len(e.Content)
}

func shellQuote(p string) string {
	q, _ := syntax.Quote(p, syntax.LangPOSIX) // validation refused what it cannot quote (NUL)
	return q
}
