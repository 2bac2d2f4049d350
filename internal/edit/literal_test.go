package edit

import (
	"strings"
	"testing"

	"github.com/courier-agent/courier/internal/command"
)

// Literal edits replace the first occurrence exactly, in order, take the
// replacement as plain text, and change nothing when one pair is missing.
func TestApplyLiteral(t *testing.T) {
	tests := []struct {
		name    string
		content string
		edits   []command.Edit
		want    string
		fail    string
	}{
		{"first occurrence only", "a a a", []command.Edit{{Search: "a", Replace: "b"}}, "b a a", ""},
		{"in order, on the text left", "x", []command.Edit{{Search: "x", Replace: "yy"}, {Search: "yy", Replace: "z"}}, "z", ""},
		{"replacement patterns are text", "cost: 5", []command.Edit{{Search: "5", Replace: "$& and $1 and $$"}}, "cost: $& and $1 and $$", ""},
		{"no whitespace tolerance", "\tindented\n", []command.Edit{{Search: "  indented", Replace: "x"}}, "", "edit 1 of 1: its oldContent was not found"},
		{"all or nothing", "one two", []command.Edit{{Search: "one", Replace: "1"}, {Search: "three", Replace: "3"}}, "", "edit 2 of 2"},
		{"empty search inserts at the start", "body", []command.Edit{{Search: "", Replace: "head "}}, "head body", ""},
		{"CRLF matched byte for byte", "a\r\nb\r\n", []command.Edit{{Search: "a\r\nb", Replace: "c"}}, "c\r\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ApplyLiteral(tt.content, tt.edits)
			if tt.fail != "" {
				if err == nil || !strings.Contains(err.Error(), tt.fail) || got != tt.content {
					t.Errorf("got %q, %v; want the content unchanged and an error with %q", got, err, tt.fail)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
