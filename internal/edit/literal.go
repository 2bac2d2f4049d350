package edit

import (
	"fmt"
	"strings"

	"github.com/courier-agent/courier/internal/command"
)

// ApplyLiteral applies search/replace pairs exactly and in order, all or
// nothing: the first occurrence of each Search, byte for byte, becomes
// Replace, taken literally. This is the Agent Spaces protocol's editFile;
// the tag protocol's EDIT_FILE is the tolerant ApplyEdits.
func ApplyLiteral(content string, edits []command.Edit) (string, error) {
	text := content
	for i, e := range edits {
		at := strings.Index(text, e.Search)
		if at < 0 {
			return content, fmt.Errorf("edit %d of %d: its oldContent was not found in the file (it must match exactly, whitespace and line ends included)\n%s",
				i+1, len(edits), excerpt(e.Search))
		}
		text = text[:at] + e.Replace + text[at+len(e.Search):]
	}
	return text, nil
}

// excerpt shows the start of a text that was looked for.
func excerpt(s string) string {
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "") + "..."
	}
	return "oldContent: " + fmt.Sprintf("%q", s)
}
