package agentspaces

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/courier-agent/courier/internal/human"
)

// maxLineBytes cuts single lines of readFile content in a chat request, as
// the tag protocol cuts the lines of a file it shows, so that one minified
// line cannot fill the request.
const maxLineBytes = 2000

// cutContent shortens a readFile event's content for a chat request, the
// way the tag protocol shortens READ_FILE: at most maxLines lines (0: no
// limit on lines), each at most maxLineBytes, a cut line ending in a mark
// that says how much more it has. Base64 content is cut to maxLineBytes
// characters (whole bytes). The event's "note" then says what was left
// out and how to read it, since readFile has no line range. A program's
// events ('courier ops') are never cut: they have the protocol's own
// 10 MB limit.
func cutContent(e *Event, maxLines int) {
	if e.Type != EventReadFile || !e.Success {
		return
	}
	if e.Encoding == Base64 {
		cutBase64(e)
		return
	}
	text := e.Content
	var b strings.Builder
	lines, shown, cut := 0, 0, 0
	for rest := text; rest != ""; {
		line, after, found := strings.Cut(rest, "\n")
		lines++
		if maxLines > 0 && shown == maxLines {
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
		return
	}
	e.Content = b.String()
	var note []string
	if shown < lines {
		note = append(note, fmt.Sprintf("the content shows lines 1-%d of %s (the read_lines setting); readFile has no line range, so read the rest with a shell operation, e.g. sed -n '%d,%dp' %s",
			shown, human.Thousands(lines), shown+1, shown+maxLines, shellQuote(e.Path)))
	}
	if cut > 0 {
		note = append(note, fmt.Sprintf("%s longer than %s characters end in a [... courier cut this line] mark", human.Count(cut, "line", ""), human.Thousands(maxLineBytes)))
	}
	e.Note = "Shortened for this request: " + strings.Join(note, "; ") + "."
}

// cutBase64 keeps the first maxLineBytes characters of base64 content, a
// whole number of bytes.
func cutBase64(e *Event) {
	if len(e.Content) <= maxLineBytes {
		return
	}
	keep := maxLineBytes / 4 * 4
	n := keep / 4 * 3
	e.Content = e.Content[:keep]
	e.Note = fmt.Sprintf("Shortened for this request: the content shows the first %s of the file's %s bytes, as base64; read other parts with a shell operation, e.g. od -A d -t x1 -j %d -N %d %s.",
		human.Thousands(n), human.Thousands(int(e.Size)), n, n, shellQuote(e.Path))
}

// shellQuote quotes a path for the shell command a note suggests.
func shellQuote(p string) string {
	if p != "" && strings.Trim(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/-") == "" {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}
